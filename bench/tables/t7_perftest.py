"""Table 7: whole `kafka-producer-perf-test.sh` runs at a fixed rate, start-up included, as a user measures:
the distribution's own tool, gzip-6 with 1 MiB batches, each provider on the producer against the built-in codec, in
interleaved pairs, on a freshly started broker (one per run) and on a warm one. Figures are perf-test's own output:
its periodic window lines and its final summary (nothing discarded), and the producer JVM's CPU from /proc."""

import os
import re
import time

from benchlib.brokers import Broker, proc_cpu_seconds, run_stream
from benchlib.common import first_line, fmt_int, md_table, median, write_csv
from benchlib.runs import MIN_PAIRS, compare, fmt_cmp, pair_order, produce, ratios
from benchlib.targets import target

RATE = 25_000           # records/s: the rate of the start-up latency measurement (json-records, gzip-6, 1 MiB / 100 ms)
PROPS = {"compression.type": "gzip", "compression.gzip.level": "6", "batch.size": "1048576", "linger.ms": "100",
         "acks": "1"}
BASE = "patched"        # the built-in codec, on the patched broker without a provider
KINDS = ("fresh", "warm")
BROKER_WITH = ("with the same two settings on the fresh brokers of a provider's runs (`--t7-broker-provider`) and "
               "without a provider otherwise (the built-in codec's runs, and the warm broker both sides share)")
WINDOW = re.compile(r"^(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                    r"([\d.]+) ms max latency\.$")
SUMMARY = re.compile(r"^(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                     r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th\.$")
METRIC = re.compile(r"^([\w.-]+):([\w.-]+):\{([^}]*)\}\s*:\s*(\S+)$")
WANTED = {("producer-metrics", "record-queue-time-avg"): "record_queue_ms",
          ("producer-metrics", "request-latency-avg"): "request_latency_ms",
          ("producer-compression-provider-metrics", "compression-batches-total"): "provider_batches",
          ("producer-compression-provider-metrics", "compression-fallbacks-total"): "provider_fallbacks",
          ("producer-compression-provider-metrics", "compression-bypassed-size-total"): "bypassed_size",
          ("producer-compression-provider-metrics", "compression-bypassed-memory-total"): "bypassed_memory"}
KEYS = ("p99_ms", "first_avg_ms", "first_max_ms", "avg_ms", "max_ms", "p50_ms", "p95_ms", "p999_ms", "records_s",
        "producer_ms_per_mb", "wall_s", "record_queue_ms", "request_latency_ms", "provider_batches",
        "provider_fallbacks", "bypassed_size", "bypassed_memory")
# (key, label): compared provider / built-in codec, pair by pair
FIGURES = [("p99_ms", "p99, whole run"), ("first_avg_ms", "first window avg latency"),
           ("avg_ms", "avg latency, whole run"), ("producer_ms_per_mb", "producer CPU/MB, whole run")]


def state(ctx):
    """This run's table 7: samples (kind -> impl -> [run or None]), rows, settings, warm_error."""
    return ctx.state.setdefault(__name__, {"samples": {}, "rows": [], "settings": {}})


def settings(cfg):
    seconds = cfg.t7_seconds
    return {"rate": RATE, "records": RATE * seconds, "seconds": seconds, "pairs": cfg.t7_pairs,
            "broker_provider": cfg.t7_broker_provider}


def perf_test(impl, broker, topic, st):
    """One whole kafka-producer-perf-test.sh run; returns its parsed figures."""
    log = os.path.join(broker.ctx.paths.logs, "perf-test-t7.log")
    args = ["--topic", topic, "--num-records", str(st["records"]), "--throughput", str(st["rate"]),
            "--payload-file", broker.ctx.paths.json, "--print-metrics", "--producer-props",
            f"bootstrap.servers={broker.bootstrap}"]
    args += [f"{k}={v}" for k, v in dict(PROPS, **impl.provider_props()).items()]
    cmd, env = impl.cmd("perf", args)
    r = {"windows": []}
    t = {}

    def on_start(p):
        t["pid"], t["start"] = p.pid, time.time()

    def on_line(line):
        line = line.strip()
        m = SUMMARY.match(line)
        if m:
            # the JVM is still running: its CPU so far is the whole run's, start-up included (the bin/ script
            # execs java, so the Popen pid is the JVM's)
            t["cpu"], t["end"] = proc_cpu_seconds(t["pid"]), time.time()
            n, rs, mbs = int(m.group(1)), float(m.group(2)), float(m.group(3))
            r.update(records=n, records_s=rs, mib_s=mbs, avg_ms=float(m.group(4)), max_ms=float(m.group(5)),
                     p50_ms=float(m.group(6)), p95_ms=float(m.group(7)), p99_ms=float(m.group(8)),
                     p999_ms=float(m.group(9)))
            return
        m = WINDOW.match(line)
        if m:
            r["windows"].append({"records": int(m.group(1)), "records_s": float(m.group(2)),
                                 "avg_ms": float(m.group(4)), "max_ms": float(m.group(5))})
            return
        m = METRIC.match(line)
        if m and (m.group(1), m.group(2)) in WANTED:
            try:
                r[WANTED[(m.group(1), m.group(2))]] = float(m.group(4))
            except ValueError:
                pass
    run_stream(cmd, env, log, on_line, timeout=st["seconds"] * 10 + 300,
               on_start=on_start)
    if "p99_ms" not in r:
        raise RuntimeError(f"no summary line from kafka-producer-perf-test.sh; see {log}")
    if r["windows"]:
        r["first_avg_ms"], r["first_max_ms"] = r["windows"][0]["avg_ms"], r["windows"][0]["max_ms"]
    # perf-test's MB/sec is MiB of payload per second over its own elapsed time (records / records/sec)
    mb = r["mib_s"] * 1048576 * (r["records"] / r["records_s"]) / 1e6 if r["records_s"] else 0
    r["wall_s"] = t["end"] - t["start"]
    r["producer_cpu_s"] = t.get("cpu")
    r["producer_ms_per_mb"] = 1000 * t["cpu"] / mb if t.get("cpu") is not None and mb else None
    r["sustained"] = r["records_s"] >= 0.95 * st["rate"]
    return r


def run(ctx, impls):
    """Starts its own brokers (the tables' brokers are stopped by then): one per fresh run, one warm one."""
    base = next((i for i in impls if i.name == BASE and i.status == "ok"), None)
    provs = [i for i in impls if i.provider and i.status == "ok"]
    if not base or not provs:
        ctx.skipped["T7"] = "needs the patched distribution and an available provider"
        ctx.progress(f"T7: skipped ({ctx.skipped['T7']})")
        return []
    cfg, t7 = ctx.cfg, state(ctx)
    st = t7["settings"] = settings(cfg)
    side = [base] + provs
    ctx.progress(f"T7: kafka-producer-perf-test.sh, {fmt_int(st['records'])} records at {fmt_int(st['rate'])} rec/s "
             f"(about {st['seconds']} s), gzip-6 1 MiB / 100 ms, {st['pairs']} pairs on fresh brokers"
             f"{' (a provider on the brokers of its runs too)' if st['broker_provider'] else ''} and on a warm one")
    samples = {k: {i.name: [] for i in side} for k in KINDS}

    def record(kind, impl, p, fn):
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - a missing sample in the report
            ctx.progress(f"  T7 {kind} {impl.name} pair {p + 1}: FAILED {first_line(e)}")
            r = None
        samples[kind][impl.name].append(r)
        if r:
            ctx.progress(f"T7 {kind} {impl.name} pair {p + 1}/{st['pairs']}: {r['records_s']:,.0f} rec/s, p99 "
                     f"{r['p99_ms']:.0f} ms, first window avg {r.get('first_avg_ms', float('nan')):.0f} ms, "
                     f"{r['wall_s']:.1f} s")

    def fresh(impl, p):
        # --t7-broker-provider: the broker of a provider's run loads it too (same settings as the producer's), so
        # the broker's validation of the batches and its start-up go through the provider as well
        b = Broker(ctx, base, "t7_fresh", extra=impl.provider_props() if st["broker_provider"] else None)
        try:
            b.start()
            b.create_topic(f"t7_fresh_{p}", {})
            b.prepare_run()
            return perf_test(impl, b, f"t7_fresh_{p}", st)
        finally:
            b.stop()

    for p in range(st["pairs"]):
        for impl in pair_order(side, p):
            record("fresh", impl, p, lambda impl=impl: fresh(impl, p))

    warm = Broker(ctx, base, "t7_warm")
    try:
        warm.start()
        ctx.progress(f"T7: warm-up of the warm broker ({cfg.broker_warmup_s} s of gzip records, not measured)")
        produce(warm, "t7_warmup", cfg.broker_warmup_s / 2, cfg.broker_warmup_s / 2, PROPS, ctx.paths.json)
        for p in range(st["pairs"]):
            for impl in pair_order(side, p):
                topic = f"t7_warm_{p}_{impl.name}".replace("+", "_")

                def one(impl=impl, topic=topic):
                    warm.create_topic(topic, {})
                    warm.prepare_run()
                    try:
                        return perf_test(impl, warm, topic, st)
                    finally:
                        warm.delete_topic(topic)
                record("warm", impl, p, one)
    except Exception as e:  # noqa: BLE001 - the fresh rows stand; the warm ones say why they are missing
        ctx.progress(f"T7 warm broker: FAILED {first_line(e)}")
        t7["warm_error"] = first_line(e)[:200]
    finally:
        warm.stop()
    t7["samples"] = samples
    return results(ctx, impls)


def results(ctx, impls):
    t7 = state(ctx)
    rows = []
    for kind, samples in t7["samples"].items():
        for impl in impls:
            if impl.name not in samples:
                if impl.provider:       # a provider not built or unavailable here: the row says why
                    rows.append({"broker": kind, "impl": impl.name, "status": impl.status})
                continue
            ok = [s for s in samples[impl.name] if s]
            if not ok:
                rows.append({"broker": kind, "impl": impl.name, "status": t7.get("warm_error", "failed")
                             if kind == "warm" else "failed"})
                continue
            row = {"broker": kind, "impl": impl.name, "status": "ok", "runs": len(ok),
                   "sustained": sum(1 for s in ok if s["sustained"])}
            for k in KEYS:
                row[k] = median([s.get(k) for s in ok])
            if impl.name != BASE:
                for key, _ in FIGURES:
                    row["cmp_" + key] = compare(ratios(samples.get(BASE, []), samples[impl.name], key))
            rows.append(row)
    t7["rows"] = rows
    write_csv(ctx.paths.out, "table7_perftest.csv", rows)
    return rows


def targets(ctx):
    """Target: p99 of whole perf-test runs <= 1.2x the built-in codec's, on a fresh broker and on a warm one."""
    out = []
    rows = state(ctx)["rows"]
    for r in rows:
        if r["impl"] == BASE:
            continue
        name = (f"{r['impl']}: p99 of whole kafka-producer-perf-test.sh runs <= 1.2x the built-in codec's, "
                f"{r['broker']} broker")
        if r.get("status") != "ok":
            out.append([name, "not evaluated", r["status"], ""])
            continue
        t = target(ctx, name, r.get("cmp_p99_ms"), lambda c: c["median"] <= 1.2)
        base = next((b for b in rows if b["impl"] == BASE and b["broker"] == r["broker"]
                     and b.get("status") == "ok"), None)
        if base:
            t[2] += f" (p99 {r['p99_ms']:.0f} vs {base['p99_ms']:.0f} ms)"
            if r["sustained"] < r["runs"] or base["sustained"] < base["runs"]:
                t[2] += f"; not every run sustained {fmt_int(RATE)} rec/s"
        out.append(t)
    if not rows and ctx.skipped.get("T7"):
        out.append(["whole kafka-producer-perf-test.sh runs", "not evaluated", ctx.skipped["T7"], ""])
    return out


def _n(v, fmt="{:.0f}"):
    return fmt.format(v) if isinstance(v, (int, float)) else ""


def markdown(ctx, rows):
    cfg, st = ctx.cfg, state(ctx)["settings"]
    L = ["## 7. Whole kafka-producer-perf-test.sh runs at a fixed rate, start-up included\n"]
    if not rows:
        L.append(f"_not run: {ctx.skipped.get('T7', 'table 7 was not selected')}_\n")
        return "\n".join(L)
    L.append(f"The distribution's `bin/kafka-producer-perf-test.sh --topic T --num-records {st['records']} "
             f"--throughput {st['rate']} --payload-file json-records.ndjson --print-metrics --producer-props "
             f"{' '.join(f'{k}={v}' for k, v in PROPS.items())}` (about {st['seconds']} s a run), with and without "
             f"`compression.gzip.provider=<class> compression.gzip.provider.required=true` in the producer props; the "
             f"broker is the patched distribution "
             f"{BROKER_WITH if st.get('broker_provider') else 'without a provider'}; perf-test draws each record's payload at random "
             f"from the file's lines. **fresh**: every run gets a broker started "
             f"(new log dir) just before it, its topic created, then perf-test; **warm**: one broker, warmed up "
             f"for {cfg.broker_warmup_s} s, a new topic per run. {st['pairs']} interleaved pairs of each "
             f"(built-in codec and provider adjacent, order reversed every other pair). Nothing is discarded: the "
             f"figures are perf-test's own, from the whole run, producer start-up included; *first window* is its "
             f"first 5-second progress line (average and max latency), where start-up costs show. Producer CPU: "
             f"utime+stime of the perf-test JVM (`/proc/<pid>/stat`) when it prints its summary, per 10^6 bytes of "
             f"payload. record-queue-time-avg and request-latency-avg: `--print-metrics` at the end (the last 60 s "
             f"of Kafka's sampled average, i.e. the whole run). Ratios: provider / built-in codec, median of "
             f"per-pair ratios [min-max]; there is no calibration row for this table (identical code on both sides "
             f"would cost another {2 * st['pairs']} runs per broker kind), so a band is judged against 1.00 only. "
             f"*sustained*: runs whose records/s reached 95% of the rate. CSV: `table7_perftest.csv`. "
             f"Command: `{ctx.command()}`.\n")
    trs = []
    for r in rows:
        if r.get("status") != "ok":
            trs.append([r["broker"], r["impl"], r["status"]] + [""] * 14)
            continue
        cmps = [fmt_cmp(r.get("cmp_" + k), False, words=("lower", "higher")) for k, _ in FIGURES]
        trs.append([r["broker"], r["impl"], f"{r['sustained']}/{r['runs']}", fmt_int(r["records_s"]),
                    _n(r["p99_ms"]), cmps[0], _n(r.get("first_avg_ms")), cmps[1], _n(r.get("first_max_ms")),
                    _n(r["avg_ms"], "{:.1f}"), cmps[2],
                    f"{_n(r['p50_ms'])} / {_n(r['p95_ms'])} / {_n(r['p999_ms'])} / {_n(r['max_ms'])}",
                    _n(r.get("producer_ms_per_mb"), "{:.1f}"), cmps[3], _n(r.get("record_queue_ms"), "{:.1f}"),
                    _n(r.get("request_latency_ms"), "{:.1f}"),
                    "" if r.get("provider_batches") is None else
                    f"{r['provider_batches']:,.0f} / {_n(r.get('provider_fallbacks'))} / "
                    f"{_n(r.get('bypassed_size'))} / {_n(r.get('bypassed_memory'))}"])
    L.append(md_table(["broker", "impl", "sustained", "records/s", "p99 ms", f"vs {BASE}", "first window avg ms",
                       f"vs {BASE}", "first window max ms", "avg ms", f"vs {BASE}", "p50 / p95 / p99.9 / max ms",
                       "producer CPU ms/MB", f"vs {BASE}", "record-queue-time-avg ms", "request-latency-avg ms",
                       "provider batches / fallbacks / bypassed size / memory"], trs) + "\n")
    if any(r.get("cmp_p99_ms") and r["cmp_p99_ms"]["n"] < MIN_PAIRS for r in rows):
        L.append(f"Fewer than {MIN_PAIRS} pairs completed in a row: its ratio is printed, not judged.\n")
    L.append("Target: p99 of whole runs at most 1.2x the built-in codec's, on a fresh broker and on a "
             "warm one; pass/miss in the targets table above.\n")
    return "\n".join(L)
