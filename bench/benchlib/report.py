"""The report (build/bench/report.md), the README section and the producer targets (the latency and
shared-producer ones come from tables 6 and 7, the broker and consumer ones from tables 4 and 8), from the tables' rows."""

import datetime
import os
import time

from benchlib.common import (BROKER_HEAP, DATA_ROOT, DIST, DIST_VERSION, JVM_PERF, OUT, T0, TOOL_HEAP, VERSION, WORK,
                             fmt_int, level_label, md_table)
from benchlib.jfr import profile_markdown
from benchlib.memory import MEMORY
from benchlib.noise import NOISE
from benchlib.runs import MIN_PAIRS, fmt_band, verdict
from tables import (calibration, t1_codecs, t2_gzip_stream, t3_sla, t4_broker, t5_codec, t6_threads, t7_perftest,
                    t8_consumer)


def bench_command(cfg):
    """The command line that produced a report."""
    return ("./build.sh bench" + (" --quick" if cfg.quick else "")
            + (f" --only {cfg.only}" if set(cfg.only.split(",")) != set("12345678") else "")
            + (f" --sla-ms {cfg.sla_arg}" if cfg.sla_arg is not None else ""))


def t1_row(t1, impl, codec, level, batch="1m", ds="json-records"):
    return next((r for r in t1 if r["dataset"] == ds and r["impl"] == impl and r["codec"] == codec
                 and r["level"] == level and r["batch"] == batch and r.get("status") == "ok"), None)


def describe(c, key=None):
    if not c:
        return "not measured"
    txt = f"{fmt_band(c)}, {c['n']} pair{'s' if c['n'] != 1 else ''}"
    if c["n"] < MIN_PAIRS:
        txt += ", too few to judge"
    elif not c["stable"]:
        txt += ", not yet stable"
    if key and not calibration.trusted(key):
        txt += ", run too noisy for this figure (calibration)"
    return txt


# The targets' rule: "Where a target is past the engine's bound as the benchmark computes it, the report prints the
# bound, and the figure must come within 10% of it."
BOUND_SLACK = 1.10


def at_most(limit, bound=None):
    """(ok_fn, how) for a lower-is-better ratio target (CPU per MB vs stock): the median at most limit, or, when the
    engine bound (the lowest ratio a provider of its measured engine speed can reach, `t5_codec`'s Amdahl) is above
    the limit, at most the bound plus 10%."""
    if not bound or bound["bound"] <= limit:
        return (lambda c: c["median"] <= limit), ""
    reach = bound["bound"] * BOUND_SLACK
    return (lambda c: c["median"] <= reach), f"target past the engine bound {bound['bound']:.2f}x: at most {reach:.2f}x"


def target(name, c, ok_fn, key=None, bound="", trusted=True, how=""):
    """[target, result, measured, engine bound]; pass/miss on the median of the pairs, as the targets define them
    (how: the criterion when it is not the target's own, see at_most), marked "(not judged)" when the pairs are too
    few or the calibration says the run was too noisy for the figure."""
    if not c:
        return [name, "not evaluated", "not measured", bound]
    result = ("pass" if ok_fn(c) else "miss") + (f" ({how})" if how else "")
    if c["n"] < MIN_PAIRS or not trusted or (key and not calibration.trusted(key)):
        result += " (not judged: " + ("too few pairs" if c["n"] < MIN_PAIRS else "run too noisy") + ")"
    return [name, result, describe(c, key), bound]


def evaluate_targets(t1, t3, extra, limits):
    """The producer targets, on this run's medians of interleaved pairs."""
    out = []
    cal = calibration.STATE["result"] or calibration.evaluate()
    for key, label, _ in calibration.METRICS:
        c = cal[key]["cmp"]
        out.append([f"calibration: `{calibration.GATE}` patched/stock {label} shows 1.00 within its band",
                    "pass" if cal[key]["ok"] else ("not evaluated" if not c else "miss"), describe(c), ""])
    providers = sorted({r["impl"] for r in t1 if r["impl"].startswith("patched+")})
    for impl in providers:
        if not any(r["impl"] == impl and r.get("status") == "ok" for r in t1):
            st = next(r["status"] for r in t1 if r["impl"] == impl)
            out.append([f"{impl}: every provider target", "not evaluated", st, ""])
            continue
        lim = {l["level"]: l for l in limits if l["impl"] == impl}
        for batch in ("256k", "1m"):
            r = t1_row(t1, impl, "gzip", 6, batch)
            b6 = lim.get(6)
            out.append(target(f"{impl}: gzip-6 records/s >= 1.8x stock ({t1_codecs.BATCH_LABEL[batch]})",
                              r and r.get("cmp_records_s"), lambda c: c["median"] >= 1.8, "records_s",
                              f"<= {1 / b6['bound']:.2f}x if producer-bound" if b6 else ""))
            ok, how = at_most(0.6, b6)
            out.append(target(f"{impl}: gzip-6 producer CPU/MB <= 0.6x stock ({t1_codecs.BATCH_LABEL[batch]})",
                              r and r.get("cmp_producer_ms_per_mb"), ok,
                              "producer_ms_per_mb", f">= {b6['bound']:.2f}x" if b6 else "", how=how))
            out.append(target(f"{impl}: gzip-6 broker CPU/MB no higher than stock ({t1_codecs.BATCH_LABEL[batch]})",
                              r and r.get("cmp_broker_ms_per_mb"),
                              lambda c: c["median"] <= 1.0 or c["min"] <= 1.0 <= c["max"], "broker_ms_per_mb"))
            # unthrottled, as table 1 runs, the provider's p99 no worse than the built-in codec's
            out.append(target(f"{impl}: gzip-6 unthrottled p99 no higher than stock's ({t1_codecs.BATCH_LABEL[batch]})",
                              r and r.get("cmp_p99_ms"),
                              lambda c: c["median"] <= 1.0 or c["min"] <= 1.0 <= c["max"], "p99_ms"))
            out.append(target(f"{impl}: gzip-6 bytes on disk no larger than stock ({t1_codecs.BATCH_LABEL[batch]})",
                              r and r.get("cmp_size_ratio"),
                              lambda c: c["median"] <= 1.0 or c["min"] <= 1.0 <= c["max"]))
        b1 = lim.get(1)
        out.append(target(f"{impl}: gzip-1 records/s >= stock lz4's in the same run",
                          extra.get(impl, {}).get("records_s"), lambda c: c["median"] >= 1.0, "records_s",
                          f"gzip-1 vs stock gzip-1 <= {1 / b1['bound']:.2f}x if producer-bound" if b1 else ""))
        r3 = next((r for r in t3 if r["impl"] == impl and r["codec"] == "gzip" and r.get("status") == "ok"), None)
        t3_ok = t3_sla.self_calibration(t3)[0]
        fp = t3_sla.pairs_row(impl)
        cal = t3_sla.pairs_row("patched")
        # identical code (patched gzip vs stock gzip) must show 1.00 inside its band, else p99 is too noisy here
        fp_ok = bool(cal and cal.get("cmp_p99_vs_stock")
                     and cal["cmp_p99_vs_stock"]["min"] <= 1.0 <= cal["cmp_p99_vs_stock"]["max"])
        t = target(f"{impl}: p99 at a fixed rate <= 1.2x the built-in codec's (gzip-6, 1 MiB / 100 ms)",
                   fp and fp.get("cmp_p99_vs_patched"), lambda c: c["median"] <= 1.2, trusted=fp_ok)
        if fp and cal:
            t[2] += f" at {fmt_int(t3_sla.PAIRS['rate'])} rec/s (p99 {fp['p99_ms']:.0f} vs {cal['p99_ms']:.0f} ms)"
        out.append(t)
        if r3 and not r3.get("met_in_runs"):
            out.append([f"{impl}: throughput at the SLA >= 2x stock gzip (median of 3 runs)", "miss",
                        f"never met the SLA: p99 {r3['p99_at_lowest_ms']:.0f} ms at {fmt_int(r3['lowest_rate'])} "
                        f"rec/s", ""])
        else:
            t = target(f"{impl}: throughput at the SLA >= 2x stock gzip (median of 3 runs)",
                       r3 and r3.get("cmp_vs_stock_gzip"), lambda c: c["median"] >= 2.0, trusted=t3_ok)
            if r3 and r3.get("cmp_vs_stock_gzip") and r3["cmp_vs_stock_gzip"]["n"] < 3:
                t[2] += f" ({r3['cmp_vs_stock_gzip']['n']} run(s), 3 needed)"
            if r3 and not t3_sla.self_calibration(t3)[0]:
                t[2] += ", table 3 too noisy to judge (its calibration, patched vs stock gzip, is off 1.00)"
            out.append(t)
    if not providers:
        why = "table 1 not run (--only)" if not t1 else "no provider built into the distribution"
        out.append(["gzip provider targets of tables 1-4", "not evaluated", why, ""])
    # no provider configured: no table 1 row may differ from stock in CPU per MB
    pat = [r for r in t1 if r["impl"] == "patched" and r.get("status") == "ok"]
    for key, label in (("producer_ms_per_mb", "producer CPU/MB"), ("broker_ms_per_mb", "broker CPU/MB")):
        judged = [r for r in pat if r.get("cmp_" + key)]
        diff = [r for r in judged if verdict(r["cmp_" + key], False, calibration.trusted(key),
                                            floor=calibration.floor(key)) in ("gain", "loss")]
        if judged:
            out.append([f"no provider: no table 1 row differs from stock in {label}", "pass" if not diff else "miss",
                        "every row: no difference measured or not judged" if not diff else "differ: " + ", ".join(
                            f"{level_label(r['codec'], r['level'])} {r['batch']} {fmt_band(r['cmp_' + key])}"
                            for r in diff), ""])
    return out


def machine_markdown(cfg, info, datasets, impls):
    L = ["## Machine and settings\n",
         md_table(["", ""], [
             ["CPU", info["cpu"]], ["cores", info["cores"]], ["memory", f"{info['mem_mb']:,} MB"],
             ["OS / kernel", f"{info['os']}"], ["JDK", info["jdk"]],
             ["load average at start", info["load_at_start"]],
             ["while measuring", NOISE.describe(info["cores"])],
             ["memory", MEMORY.describe()],
             ["stock", f"Apache Kafka {VERSION} release jars (`build/upstream/libs/`), `kafka.Kafka`; producer "
                       f"`bench/java/KcBench.java` on the stock client jars"],
             ["this distribution", f"`build/dist/{os.path.basename(DIST)}` bin/ scripts; the same harness on its "
                                   f"client jars (`kafka-run-class.sh`)"],
             ["JVM flags (both)", f"broker `{BROKER_HEAP}`, tools `{TOOL_HEAP}`, `{JVM_PERF}`"],
             ["broker", "single-node KRaft (broker+controller), one partition per topic, log4j2.yaml of the "
                        "distribution, every broker up for the whole run, same host as the producer; log dirs "
                        + (f"on tmpfs (`{DATA_ROOT}`: no disk writeback in the figures)" if DATA_ROOT != WORK
                           else f"on disk (`{DATA_ROOT}`; /dev/shm had too little room)")
                        + ", each measured topic deleted once its size is read"],
             ["run length", f"tables 1, 4 and calibration: each run {cfg.warmup_s} s warm-up (discarded) then "
                            f"{cfg.measure_s} s measured, in a fresh producer JVM; each broker had a "
                            f"{cfg.broker_warmup_s} s warm-up before the first figure; {cfg.pairs} pairs per row, "
                            f"{cfg.cal_pairs} calibration pairs; measured seconds per row in its `window s` column"],
         ]), ""]
    L.append("Datasets: " + "; ".join(f"`{d['file']}` ({d['records']:,} records, average {d['avg_bytes']:,.0f} B)"
                                      for d in datasets) + ". Records are sent in file order, cycling.\n")
    L.append("Implementations: " + "; ".join(
        f"**{i.name}**" + (f" (`compression.gzip.provider={i.provider}` on producer and broker, "
                           f"`compression.gzip.provider.required=true`)" if i.provider else "")
        + ("" if i.status == "ok" else f": {i.status}")
        + (f"; the broker logged `Compression provider for gzip: {i.evidence}`" if i.evidence else "")
        for i in impls) + ".\n")
    return "\n".join(L)


def conclusion(t1, targets):
    """What a reader should conclude, in one paragraph, from this run alone."""
    cal = calibration.STATE["result"] or calibration.evaluate()
    noisy = [label for key, label, _ in calibration.METRICS if not cal[key]["ok"]]
    parts = []
    if noisy:
        parts.append(f"This run was too noisy to judge {', '.join(noisy)} (identical code did not show 1.00 within "
                     f"+-{calibration.MAX_SPREAD * 100:.0f}%; {NOISE.describe(os.cpu_count())}): nothing below is a "
                     f"verdict on those figures.")
    for impl in sorted({r["impl"] for r in t1 if r["impl"].startswith("patched+")}):
        r = t1_row(t1, impl, "gzip", 6)
        if r and r.get("cmp_producer_ms_per_mb"):
            parts.append(f"{impl} at gzip-6 (1 MiB batches): producer CPU/MB "
                         f"{calibration.judge(r['cmp_producer_ms_per_mb'], 'producer_ms_per_mb', False, ('less CPU', 'more CPU'))}, "
                         f"records/s {calibration.judge(r['cmp_records_s'], 'records_s', True, ('faster', 'slower'))} vs stock.")
    met = sum(1 for t in targets if t[1] == "pass")
    missed = [t[0] for t in targets if t[1] == "miss"]
    unjudged = sum(1 for t in targets if "not judged" in t[1])
    parts.append(f"Targets: of {len(targets)}, {met} pass and {len(missed)} miss where the run could judge them"
                 + (f" (missed: {'; '.join(missed)})" if missed else "")
                 + (f"; {unjudged} more are not judged (too few pairs or too noisy)." if unjudged else "."))
    return " ".join(parts)


def write(cfg, info, datasets, impls, t1, t2, t3, t4, codec_text, chart_files, targets, limits, profiles, started,
          t6=None, t7=None, t8=None):
    """t6, t7, t8: None when the table was not selected (no section), else its rows (empty: the section says why)."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    dur = (time.time() - T0) / 60
    L = [f"# Compression benchmarks: Apache Kafka {VERSION} (stock) vs {DIST_VERSION}\n",
         f"Produced by `{bench_command(cfg)}` on {now} (started {started}, {dur:.0f} min).\n"]
    if cfg.quick:
        L.append("**Quick run**: fewer rows and pairs than the full run; use the full run's figures for decisions.\n")
    L.append("**Conclusion of this run**: " + conclusion(t1, targets) + "\n")
    L.append(machine_markdown(cfg, info, datasets, impls))
    L.append(calibration.markdown(info))
    L.append("## Targets (producer; tables 6 and 7: latency and shared producer; tables 4 and 8: broker and consumer)\n")
    L.append("Each target on the median of interleaved pairs in this run, with its [min-max] band; *engine bound* is "
             "what the codec micro-benchmark and the profile allow at best (below).\n")
    L.append(md_table(["target", "result", "measured", "engine bound"], targets) + "\n")
    L.append(t5_codec.limits_markdown(limits))
    for p in profiles or []:
        L.append(profile_markdown(p))
    if t1:
        L.append(t1_codecs.markdown(cfg, t1))
        for ch, alt in (("cpu_vs_ratio.png", "producer CPU per MB vs compression ratio"),
                        ("throughput_vs_ratio.png", "throughput vs compression ratio")):
            if ch in chart_files:
                L.append(f"![{alt}]({ch})\n")
    L.append(t2_gzip_stream.markdown(cfg, t2, chart_files) if t2 else "## 2. KAFKA-6430\n\n_not run_\n")
    L.append(t3_sla.markdown(cfg, t3, chart_files) if t3 else "## 3. KIP-1121\n\n_not run_\n")
    L.append(t4_broker.markdown(cfg, t4) if t4 else "## 4. Broker side\n\n_not run_\n")
    L.append(t5_codec.markdown(codec_text))
    if t6 is not None:
        L.append(t6_threads.markdown(cfg, t6))
    if t7 is not None:
        L.append(t7_perftest.markdown(cfg, t7))
    if t8 is not None:
        L.append(t8_consumer.markdown(cfg, t8))
    with open(os.path.join(OUT, "report.md"), "w") as f:
        f.write("\n".join(L))
    readme_section(cfg, info, t1, targets, chart_files, now)


def readme_section(cfg, info, t1, targets, chart_files, now):
    """A summary of one run (build/bench/README-section.md) for the README's results table and docs/benchmarks.md."""
    S = [f"<!-- generated by bench/bench.py on {now} (build/bench/README-section.md); charts from build/bench/ "
         f"go to docs/bench/ -->",
         f"Measured with `{bench_command(cfg)}` on {now}: {info['cores']} cores ({info['cpu']}), "
         f"{info['jdk'].split(' / ')[0]}; broker and producer on the same host; json-records.ndjson, "
         f"runs of {cfg.warmup_s} s warm-up (discarded) + {cfg.measure_s} s measured, {cfg.pairs} interleaved pairs "
         f"per row; "
         f"ratios are medians of per-pair ratios [min-max]; machine while measuring: "
         f"{NOISE.describe(info['cores'])}.\n",
         "**What to conclude**: " + conclusion(t1, targets) + "\n"]
    trs = []
    for r in [x for x in t1 if x["dataset"] == "json-records"]:
        if r.get("status") != "ok":
            continue
        trs.append([level_label(r["codec"], r["level"]), t1_codecs.BATCH_LABEL[r["batch"]], r["impl"],
                    f"{r['producer_ms_per_mb']:.1f}",
                    calibration.judge(r.get("cmp_producer_ms_per_mb"), "producer_ms_per_mb", False, ("less CPU", "more CPU")),
                    f"{r['broker_ms_per_mb']:.1f}",
                    calibration.judge(r.get("cmp_broker_ms_per_mb"), "broker_ms_per_mb", False, ("less CPU", "more CPU")),
                    fmt_int(r["records_s"]),
                    calibration.judge(r.get("cmp_records_s"), "records_s", True, ("faster", "slower")),
                    f"{r['size_ratio']:.4f}" if r.get("size_ratio") else ""])
    S.append(md_table(["codec", "batch / linger", "impl", "producer CPU ms/MB", "vs stock", "broker CPU ms/MB",
                       "vs stock", "records/s", "vs stock", "size ratio"], trs) + "\n")
    S.append(md_table(["target", "result", "measured", "engine bound"], targets) + "\n")
    S.append("Full report: `build/bench/report.md`.\n")
    with open(os.path.join(OUT, "README-section.md"), "w") as f:
        f.write("\n".join(S + [f"![{ch}](docs/bench/{ch})\n" for ch in chart_files[:2]]))
