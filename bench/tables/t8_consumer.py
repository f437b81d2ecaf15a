"""Table 8: the consumer. Whole `kafka-consumer-perf-test.sh` runs, a fresh consumer JVM each (start-up
included, as users run it), reading a topic filled once per gzip level, so every run reads the same bytes: stock
Apache Kafka's consumer, this distribution's without a provider, and with each provider
(`compression.gzip.provider`), in interleaved pairs. Consumer CPU per MB from /proc, records/s from perf-test's
own summary line, the provider's counters from `--print-metrics`; the engine bound from table 5's decompression
speeds."""

import os
import time

from benchlib.brokers import proc_cpu_seconds, run_stream
from benchlib.brokers import run as run_cmd
from benchlib.common import first_line, fmt_int, md_table, write_csv
from benchlib.runs import MIN_PAIRS, compare, pair_order, ratios, summarize
from benchlib.targets import at_most, target
from tables import calibration, t5_codec

LEVELS = (1, 6)
BASE = "stock"
FILL = {"compression.type": "gzip", "batch.size": "1048576", "linger.ms": "100", "acks": "1"}
HEADER = "start.time, end.time, data.consumed.in.MB"
METRICS = {("consumer-compression-provider-metrics", "decompression-batches-total"): "provider_batches",
           ("consumer-compression-provider-metrics", "decompression-fallbacks-total"): "provider_fallbacks"}
KEYS = ("consumer_ms_per_mb", "records_s", "fetch_records_s", "mb", "records", "wall_s", "consumer_cpu_s",
        "provider_batches", "provider_fallbacks")
# (key, label, higher is better, words, the calibration gate's figure it is judged by: the gate has no consumer row,
# so the client-side figures of the producer's gate stand in for it)
FIGURES = [("consumer_ms_per_mb", "consumer CPU/MB", False, ("less CPU", "more CPU"), "producer_ms_per_mb"),
           ("records_s", "records/s", True, ("faster", "slower"), "records_s")]
TARGET = 0.7            # target: consumer CPU per MB with native-gzip at most 0.7x stock's at gzip-6


def state(ctx):
    """This run's table 8: samples (level -> impl -> [run or None]), rows, settings, bounds, broker, disk_bytes."""
    return ctx.state.setdefault(__name__, {"samples": {}, "rows": [], "settings": {}, "bounds": {}})


def settings(cfg):
    return {"records": cfg.t8_records, "pairs": cfg.pairs, "levels": LEVELS}


def fill(broker, fill_impl, topic, level, records):
    """Fills `topic` once with `records` records of json-records (perf-test draws each from the file's lines) in
    gzip-`level` 1 MiB batches from the stock producer (the built-in codec: the bytes stock's consumer reads)."""
    broker.create_topic(topic, {})
    args = ["--topic", topic, "--num-records", str(records), "--throughput", "-1",
            "--payload-file", broker.ctx.paths.json, "--producer-props", f"bootstrap.servers={broker.bootstrap}",
            f"compression.gzip.level={level}"]
    args += [f"{k}={v}" for k, v in FILL.items()]
    cmd, env = fill_impl.cmd("perf", args)
    run_cmd(cmd, env, os.path.join(broker.ctx.paths.logs, "consumer-fill-t8.log"), timeout=1800)
    return broker.topic_bytes(topic)


def consume(impl, broker, topic, records, group):
    """One whole kafka-consumer-perf-test.sh run in a fresh JVM; CPU of that JVM (utime+stime, /proc) when it prints
    its summary line, per 10^6 bytes of records it consumed."""
    ctx = broker.ctx
    log = os.path.join(ctx.paths.logs, "consumer-perf-t8.log")
    conf = os.path.join(ctx.paths.work, f"t8-consumer-{impl.name.replace('+', '_')}.properties")
    with open(conf, "w") as f:
        for k, v in impl.provider_props().items():
            f.write(f"{k}={v}\n")
    args = ["--bootstrap-server", broker.bootstrap, "--topic", topic, "--num-records", str(records), "--group", group,
            "--timeout", "30000", "--print-metrics", "--command-config", conf]
    cmd, env = impl.cmd("consumer-perf", args)
    r, t = {}, {}
    broker.prepare_run()

    def on_start(p):
        t["pid"], t["start"], t["broker0"], t["noise"] = p.pid, time.time(), broker.cpu_seconds(), ctx.noise.start()

    def on_line(line):
        line = line.strip()
        if line.startswith(HEADER):
            t["header"] = True
            return
        if t.get("header") and "summary" not in t:
            f = [x.strip() for x in line.split(",")]
            if len(f) >= 10:
                t["cpu"], t["end"], t["broker1"] = proc_cpu_seconds(t["pid"]), time.time(), broker.cpu_seconds()
                t["summary"] = f
            return
        if ":" in line and line.count(":") >= 3:
            group_name, rest = line.split(":", 1)
            name = rest.split(":", 1)[0]
            key = METRICS.get((group_name, name))
            if key:
                try:
                    r[key] = r.get(key, 0.0) + float(line.rsplit(":", 1)[1].strip())
                except ValueError:
                    pass
    run_stream(cmd, env, log, on_line, timeout=900, on_start=on_start)
    if "summary" not in t or t.get("cpu") is None:
        raise RuntimeError(f"no summary line from kafka-consumer-perf-test.sh; see {log}")
    f = t["summary"]
    mib, n = float(f[2]), int(f[4])
    if n < records:
        raise RuntimeError(f"consumed {n} of {records} records; see {log}")
    mb = mib * 1048576 / 1e6
    wall = t["end"] - t["start"]
    ctx.noise.stop(t["noise"], t["cpu"] + (t["broker1"] - t["broker0"]), wall)
    r.update(records=n, mb=mb, records_s=float(f[5]), fetch_records_s=float(f[9]), rebalance_ms=float(f[6]),
             wall_s=wall, consumer_cpu_s=t["cpu"], consumer_ms_per_mb=1000 * t["cpu"] / mb if mb else None)
    return r


def run(ctx, brokers, impls):
    """Fills one topic per level on the patched broker (no provider), then the consumer pairs; returns the rows."""
    t8 = state(ctx)
    side = [i for i in impls if i.status == "ok"]
    broker = brokers.get("patched") or brokers.get("stock")
    stock = next((i for i in side if i.name == BASE), None)
    if not broker or not stock or len(side) < 2:
        ctx.skipped["T8"] = "needs the stock jars, the patched distribution and a running broker"
        ctx.progress(f"T8: skipped ({ctx.skipped['T8']})")
        return []
    st = t8["settings"] = settings(ctx.cfg)
    t8["broker"] = broker.impl.name
    ctx.progress(f"T8: kafka-consumer-perf-test.sh, {fmt_int(st['records'])} records per run from a topic filled once "
             f"per level (gzip-{', gzip-'.join(map(str, LEVELS))}, 1 MiB batches), {st['pairs']} interleaved "
             f"pairs of fresh consumer JVMs: {', '.join(i.name for i in side)}")
    samples = {}
    for level in LEVELS:
        topic = f"t8_consumer_gzip{level}"
        t0 = time.time()
        disk = fill(broker, stock, topic, level, st["records"])
        ctx.progress(f"T8 gzip-{level}: filled {topic} with {fmt_int(st['records'])} records ({disk / 1e6:.0f} MB on "
                 f"disk) in {time.time() - t0:.0f} s")
        samples[level] = {i.name: [] for i in side}
        for p in range(st["pairs"]):
            for impl in pair_order(side, p):
                group = f"t8_{level}_{p}_{impl.name}".replace("+", "_")
                try:
                    r = consume(impl, broker, topic, st["records"], group)
                except Exception as e:  # noqa: BLE001 - a missing sample in the report
                    ctx.progress(f"  T8 gzip-{level} {impl.name} pair {p + 1}: FAILED {first_line(e)}")
                    r = None
                samples[level][impl.name].append(r)
                if r:
                    ctx.progress(f"T8 gzip-{level} {impl.name} pair {p + 1}/{st['pairs']}: "
                                 f"{r['records_s']:,.0f} rec/s, consumer {r['consumer_ms_per_mb']:.1f} CPU ms/MB "
                                 f"({r['consumer_cpu_s']:.1f} s CPU, {r['wall_s']:.1f} s)"
                                 + (f", provider {r['provider_batches']:,.0f} batches / "
                                    f"{r.get('provider_fallbacks', 0):,.0f} fallbacks"
                                    if "provider_batches" in r else ""))
        t8.setdefault("disk_bytes", {})[level] = disk
        broker.delete_topic(topic)
    t8["samples"] = samples
    return results(ctx, impls)


def results(ctx, impls):
    t8 = state(ctx)
    rows = []
    t8["bounds"] = {}
    for level, samples in t8["samples"].items():
        stock = summarize(samples.get(BASE, []), KEYS)
        for impl in impls:
            if impl.name not in samples:
                rows.append({"level": level, "impl": impl.name, "status": impl.status})
                continue
            s = summarize(samples[impl.name], KEYS)
            if not s:
                rows.append({"level": level, "impl": impl.name, "status": "failed"})
                continue
            row = dict(s, level=level, impl=impl.name, status="ok")
            if impl.name != BASE:
                for key, *_ in FIGURES:
                    row["cmp_" + key] = compare(ratios(samples[BASE], samples[impl.name], key))
            if impl.provider and stock:
                b = t5_codec.decompress_bound(ctx, impl.name, level, stock["consumer_ms_per_mb"])
                t8["bounds"][(impl.name, level)] = b
                row["bound"] = round(b["bound"], 3) if b else None
            rows.append(row)
    t8["rows"] = rows
    write_csv(ctx.paths.out, "table8_consumer.csv", rows)
    return rows


def targets(ctx):
    """Target: consumer CPU per MB with a provider at most 0.7x stock's at gzip-6; [target, result, measured, bound]."""
    t8 = state(ctx)
    out = []
    for r in t8["rows"]:
        if not r["impl"].startswith("patched+") or r["level"] != 6:
            continue
        name = f"{r['impl']}: consumer CPU/MB <= {TARGET}x stock's at gzip-6, whole consumer runs"
        if r.get("status") != "ok":
            out.append([name, "not evaluated", r["status"], ""])
            continue
        bound = t8["bounds"].get((r["impl"], 6))
        ok, how = at_most(TARGET, bound)
        out.append(target(ctx, name, r.get("cmp_consumer_ms_per_mb"), ok, "producer_ms_per_mb",
                          t5_codec.fmt_engine_bound(bound), how=how))
    if not t8["rows"] and ctx.skipped.get("T8"):
        out.append(["consumer CPU/MB at gzip-6", "not evaluated", ctx.skipped["T8"], ""])
    return out


def _n(v, fmt="{:,.0f}"):
    return fmt.format(v) if isinstance(v, (int, float)) else ""


def markdown(ctx, rows):
    t8 = state(ctx)
    st = t8["settings"]
    L = ["## 8. Consumer: whole kafka-consumer-perf-test.sh runs\n"]
    if not rows:
        L.append(f"_not run: {ctx.skipped.get('T8', 'table 8 was not selected')}_\n")
        return "\n".join(L)
    disk = t8.get("disk_bytes", {})
    L.append(f"One topic per level, filled once by stock's `kafka-producer-perf-test.sh --num-records "
             f"{st['records']} --throughput -1 --payload-file json-records.ndjson` with "
             f"`compression.gzip.level=L {' '.join(f'{k}={v}' for k, v in FILL.items())}` (the built-in codec; "
             + ", ".join(f"gzip-{lv}: {b / 1e6:.0f} MB on disk" for lv, b in disk.items())
             + f") on the `{t8.get('broker')}` broker; then every run is a fresh consumer JVM, "
             f"`kafka-consumer-perf-test.sh --topic T --num-records {st['records']} --group <new> --print-metrics "
             f"--command-config F` (stock: the release's jars; this distribution: its `bin/` script; F holds "
             f"`compression.gzip.provider=<class> compression.gzip.provider.required=true` for a provider, nothing "
             f"else), reading the same bytes from offset 0. {st['pairs']} interleaved pairs per level (order "
             f"reversed every other pair). Nothing is discarded: **consumer CPU** is the consumer JVM's utime+stime "
             f"(`/proc/<pid>/stat`) when perf-test prints its summary line, start-up, group join and fetching "
             f"included, per 10^6 bytes of records consumed (perf-test's `data.consumed.in.MB`, key + value "
             f"bytes); **records/s** is perf-test's `nMsg.sec` (group join included), *fetch records/s* its "
             f"`fetch.nMsg.sec` (join excluded). Ratios: vs stock, median of per-pair ratios [min-max], judged "
             f"against the calibration gate's client figures (producer CPU/MB for consumer CPU/MB, records/s for "
             f"records/s: the gate has no consumer row); `patched` (no provider, the same code as stock) is this "
             f"table's own check and must show no difference. *engine bound*: the lowest consumer CPU/MB vs stock "
             f"a provider can reach, (1 - share) + share / speed, where speed is its decompression MB/s over the "
             f"built-in codec's (table 5, 1 MiB batches) and share = (1000 / built-in MB/s) / stock's measured "
             f"consumer CPU/MB, the part of stock's CPU that decompresses. Provider counters "
             f"(`consumer-compression-provider-metrics`, whole run): batches the provider decompressed, batches it "
             f"failed on. CSV: `table8_consumer.csv`. Command: `{ctx.command()}`.\n")
    trs = []
    for r in rows:
        if r.get("status") != "ok":
            trs.append([f"gzip-{r['level']}", r["impl"], r["status"]] + [""] * 8)
            continue
        cells = [calibration.judge(ctx, r.get("cmp_" + key), gate, hib, words) if r.get("cmp_" + key) else ""
                 for key, _, hib, words, gate in FIGURES]
        trs.append([f"gzip-{r['level']}", r["impl"], f"{r['consumer_ms_per_mb']:.1f}", cells[0],
                    _n(r["records_s"]), cells[1], _n(r.get("fetch_records_s")), f"{r['wall_s']:.1f}",
                    f"{r['consumer_cpu_s']:.2f}",
                    "" if r.get("provider_batches") is None else
                    f"{r['provider_batches']:,.0f} / {_n(r.get('provider_fallbacks'))}",
                    "" if r.get("bound") is None else f">= {r['bound']:.2f}x"])
    L.append(md_table(["level", "impl", "consumer CPU ms/MB", "vs stock", "records/s", "vs stock",
                       "fetch records/s", "wall s", "CPU s", "provider batches / fallbacks",
                       "engine bound (CPU/MB vs stock)"], trs) + "\n")
    if any(r.get("cmp_consumer_ms_per_mb") and r["cmp_consumer_ms_per_mb"]["n"] < MIN_PAIRS for r in rows):
        L.append(f"Fewer than {MIN_PAIRS} pairs completed in a row: its ratio is printed, not judged.\n")
    L.append(f"Target: consumer CPU/MB with a provider at most {TARGET}x stock's at gzip-6; pass/miss in "
             f"the targets table above. Where the engine bound is above {TARGET}x, no provider with this decompression "
             f"speed can meet it here; the figure is then read against the bound.\n")
    return "\n".join(L)
