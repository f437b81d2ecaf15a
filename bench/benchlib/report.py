"""The report (build/bench/report.md), the README section and the producer targets (the latency and
shared-producer ones come from tables 6 and 7, the broker and consumer ones from tables 4 and 8), from the tables' rows."""

import datetime
import os
import time

from benchlib.common import BROKER_HEAP, JVM_PERF, TOOL_HEAP, fmt_int, level_label, md_table
from benchlib.jfr import profile_markdown
from benchlib.runs import fmt_band, verdict
from benchlib.targets import at_most, describe, target
from tables import (calibration, t1_codecs, t2_gzip_stream, t3_sla, t4_broker, t5_codec, t6_threads, t7_perftest,
                    t8_consumer)


def t1_row(t1, impl, codec, level, batch="1m", ds="json-records"):
    return next((r for r in t1 if r["dataset"] == ds and r["impl"] == impl and r["codec"] == codec
                 and r["level"] == level and r["batch"] == batch and r.get("status") == "ok"), None)


def evaluate_targets(ctx, t1, t3, extra, limits):
    """The producer targets, on this run's medians of interleaved pairs."""
    out = []
    cal = calibration.result(ctx)
    for key, label, _ in calibration.METRICS:
        c = cal[key]["cmp"]
        out.append([f"calibration: `{calibration.GATE}` patched/stock {label} shows 1.00 within its band",
                    "pass" if cal[key]["ok"] else ("not evaluated" if not c else "miss"), describe(ctx, c), ""])
    providers = sorted({r["impl"] for r in t1 if r["impl"].startswith("patched+")})
    for impl in providers:
        if not any(r["impl"] == impl and r.get("status") == "ok" for r in t1):
            st = next(r["status"] for r in t1 if r["impl"] == impl)
            out.append([f"{impl}: every provider target", "not evaluated", st, ""])
            continue
        lim = {l["level"]: l for l in limits if l["impl"] == impl}
        for batch in ("256k", "1m"):
            label = t1_codecs.BATCH_LABEL[batch]
            r = t1_row(t1, impl, "gzip", 6, batch)
            b6 = lim.get(6)
            out.append(target(ctx, f"{impl}: gzip-6 records/s >= 1.8x stock ({label})",
                              r and r.get("cmp_records_s"), lambda c: c["median"] >= 1.8, "records_s",
                              f"<= {1 / b6['bound']:.2f}x if producer-bound" if b6 else ""))
            ok, how = at_most(0.6, b6)
            out.append(target(ctx, f"{impl}: gzip-6 producer CPU/MB <= 0.6x stock ({label})",
                              r and r.get("cmp_producer_ms_per_mb"), ok,
                              "producer_ms_per_mb", f">= {b6['bound']:.2f}x" if b6 else "", how=how))
            out.append(target(ctx, f"{impl}: gzip-6 broker CPU/MB no higher than stock ({label})",
                              r and r.get("cmp_broker_ms_per_mb"),
                              lambda c: c["median"] <= 1.0 or c["min"] <= 1.0 <= c["max"], "broker_ms_per_mb"))
            # unthrottled, as table 1 runs, the provider's p99 no worse than the built-in codec's
            out.append(target(ctx, f"{impl}: gzip-6 unthrottled p99 no higher than stock's ({label})",
                              r and r.get("cmp_p99_ms"),
                              lambda c: c["median"] <= 1.0 or c["min"] <= 1.0 <= c["max"], "p99_ms"))
            out.append(target(ctx, f"{impl}: gzip-6 bytes on disk no larger than stock ({label})",
                              r and r.get("cmp_size_ratio"),
                              lambda c: c["median"] <= 1.0 or c["min"] <= 1.0 <= c["max"]))
        b1 = lim.get(1)
        out.append(target(ctx, f"{impl}: gzip-1 records/s >= stock lz4's in the same run",
                          extra.get(impl, {}).get("records_s"), lambda c: c["median"] >= 1.0, "records_s",
                          f"gzip-1 vs stock gzip-1 <= {1 / b1['bound']:.2f}x if producer-bound" if b1 else ""))
        r3 = next((r for r in t3 if r["impl"] == impl and r["codec"] == "gzip" and r.get("status") == "ok"), None)
        t3_ok = t3_sla.self_calibration(t3)[0]
        fp = t3_sla.pairs_row(ctx, impl)
        cal = t3_sla.pairs_row(ctx, "patched")
        # identical code (patched gzip vs stock gzip) must show 1.00 inside its band, else p99 is too noisy here
        fp_ok = bool(cal and cal.get("cmp_p99_vs_stock")
                     and cal["cmp_p99_vs_stock"]["min"] <= 1.0 <= cal["cmp_p99_vs_stock"]["max"])
        t = target(ctx, f"{impl}: p99 at a fixed rate <= 1.2x the built-in codec's (gzip-6, 1 MiB / 100 ms)",
                   fp and fp.get("cmp_p99_vs_patched"), lambda c: c["median"] <= 1.2, trusted=fp_ok)
        if fp and cal:
            t[2] += f" at {fmt_int(t3_sla.fixed_rate(ctx))} rec/s (p99 {fp['p99_ms']:.0f} vs {cal['p99_ms']:.0f} ms)"
        out.append(t)
        if r3 and not r3.get("met_in_runs"):
            out.append([f"{impl}: throughput at the SLA >= 2x stock gzip (median of 3 runs)", "miss",
                        f"never met the SLA: p99 {r3['p99_at_lowest_ms']:.0f} ms at {fmt_int(r3['lowest_rate'])} "
                        f"rec/s", ""])
        else:
            t = target(ctx, f"{impl}: throughput at the SLA >= 2x stock gzip (median of 3 runs)",
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
        diff = [r for r in judged if verdict(r["cmp_" + key], False, calibration.trusted(ctx, key),
                                            floor=calibration.floor(ctx, key)) in ("gain", "loss")]
        if judged:
            out.append([f"no provider: no table 1 row differs from stock in {label}", "pass" if not diff else "miss",
                        "every row: no difference measured or not judged" if not diff else "differ: " + ", ".join(
                            f"{level_label(r['codec'], r['level'])} {r['batch']} {fmt_band(r['cmp_' + key])}"
                            for r in diff), ""])
    return out


def machine_markdown(ctx, info, datasets, impls):
    cfg, paths = ctx.cfg, ctx.paths
    L = ["## Machine and settings\n",
         md_table(["", ""], [
             ["CPU", info["cpu"]], ["cores", info["cores"]], ["memory", f"{info['mem_mb']:,} MB"],
             ["OS / kernel", f"{info['os']}"], ["JDK", info["jdk"]],
             ["load average at start", info["load_at_start"]],
             ["while measuring", ctx.noise.describe(info["cores"])],
             ["memory", ctx.memory.describe()],
             ["stock", f"Apache Kafka {paths.version} release jars (`build/upstream/libs/`), `kafka.Kafka`; producer "
                       f"`bench/java/KcBench.java` on the stock client jars"],
             ["this distribution", f"`build/dist/{os.path.basename(paths.dist)}` bin/ scripts; the same harness on its "
                                   f"client jars (`kafka-run-class.sh`)"],
             ["JVM flags (both)", f"broker `{BROKER_HEAP}`, tools `{TOOL_HEAP}`, `{JVM_PERF}`"],
             ["broker", "single-node KRaft (broker+controller), one partition per topic, log4j2.yaml of the "
                        "distribution, every broker up for the whole run, same host as the producer; log dirs "
                        + (f"on tmpfs (`{paths.data_root}`: no disk writeback in the figures)"
                           if paths.data_root != paths.work
                           else f"on disk (`{paths.data_root}`; /dev/shm had too little room)")
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


def conclusion(ctx, t1, targets):
    """What a reader should conclude, in one paragraph, from this run alone."""
    cal = calibration.result(ctx)
    noisy = [label for key, label, _ in calibration.METRICS if not cal[key]["ok"]]
    parts = []
    if noisy:
        parts.append(f"This run was too noisy to judge {', '.join(noisy)} (identical code did not show 1.00 within "
                     f"+-{calibration.MAX_SPREAD * 100:.0f}%; {ctx.noise.describe(os.cpu_count())}): nothing below "
                     f"is a verdict on those figures.")
    for impl in sorted({r["impl"] for r in t1 if r["impl"].startswith("patched+")}):
        r = t1_row(t1, impl, "gzip", 6)
        if r and r.get("cmp_producer_ms_per_mb"):
            parts.append(f"{impl} at gzip-6 (1 MiB batches): producer CPU/MB "
                         f"{calibration.judge(ctx, r['cmp_producer_ms_per_mb'], 'producer_ms_per_mb', False, ('less CPU', 'more CPU'))}, "
                         f"records/s {calibration.judge(ctx, r['cmp_records_s'], 'records_s', True, ('faster', 'slower'))} vs stock.")
    met = sum(1 for t in targets if t[1] == "pass")
    missed = [t[0] for t in targets if t[1] == "miss"]
    unjudged = sum(1 for t in targets if "not judged" in t[1])
    parts.append(f"Targets: of {len(targets)}, {met} pass and {len(missed)} miss where the run could judge them"
                 + (f" (missed: {'; '.join(missed)})" if missed else "")
                 + (f"; {unjudged} more are not judged (too few pairs or too noisy)." if unjudged else "."))
    return " ".join(parts)


def write(ctx, info, datasets, impls, t1, t2, t3, t4, codec_text, chart_files, targets, limits, profiles, started,
          t6=None, t7=None, t8=None):
    """t6, t7, t8: None when the table was not selected (no section), else its rows (empty: the section says why)."""
    cfg, paths = ctx.cfg, ctx.paths
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    dur = (time.time() - ctx.t0) / 60
    L = [f"# Compression benchmarks: Apache Kafka {paths.version} (stock) vs {paths.dist_version}\n",
         f"Produced by `{ctx.command()}` on {now} (started {started}, {dur:.0f} min).\n"]
    if cfg.quick:
        L.append("**Quick run**: fewer rows and pairs than the full run; use the full run's figures for decisions.\n")
    L.append("**Conclusion of this run**: " + conclusion(ctx, t1, targets) + "\n")
    L.append(machine_markdown(ctx, info, datasets, impls))
    L.append(calibration.markdown(ctx, info))
    L.append("## Targets (producer; tables 6 and 7: latency and shared producer; tables 4 and 8: broker and consumer)\n")
    L.append("Each target on the median of interleaved pairs in this run, with its [min-max] band; *engine bound* is "
             "what the codec micro-benchmark and the profile allow at best (below).\n")
    L.append(md_table(["target", "result", "measured", "engine bound"], targets) + "\n")
    L.append(t5_codec.limits_markdown(limits))
    for p in profiles or []:
        L.append(profile_markdown(p))
    if t1:
        L.append(t1_codecs.markdown(ctx, t1))
        for ch, alt in (("cpu_vs_ratio.png", "producer CPU per MB vs compression ratio"),
                        ("throughput_vs_ratio.png", "throughput vs compression ratio")):
            if ch in chart_files:
                L.append(f"![{alt}]({ch})\n")
    L.append(t2_gzip_stream.markdown(ctx, t2, chart_files) if t2 else "## 2. KAFKA-6430\n\n_not run_\n")
    L.append(t3_sla.markdown(ctx, t3, chart_files) if t3 else "## 3. KIP-1121\n\n_not run_\n")
    L.append(t4_broker.markdown(ctx, t4) if t4 else "## 4. Broker side\n\n_not run_\n")
    L.append(t5_codec.markdown(codec_text))
    if t6 is not None:
        L.append(t6_threads.markdown(ctx, t6))
    if t7 is not None:
        L.append(t7_perftest.markdown(ctx, t7))
    if t8 is not None:
        L.append(t8_consumer.markdown(ctx, t8))
    with open(os.path.join(paths.out, "report.md"), "w") as f:
        f.write("\n".join(L))
    readme_section(ctx, info, t1, targets, chart_files, now)


def readme_section(ctx, info, t1, targets, chart_files, now):
    """A summary of one run (build/bench/README-section.md) for the README's results table and docs/benchmarks.md."""
    cfg = ctx.cfg
    S = [f"<!-- generated by bench/bench.py on {now} (build/bench/README-section.md); charts from build/bench/ "
         f"go to docs/bench/ -->",
         f"Measured with `{ctx.command()}` on {now}: {info['cores']} cores ({info['cpu']}), "
         f"{info['jdk'].split(' / ')[0]}; broker and producer on the same host; json-records.ndjson, "
         f"runs of {cfg.warmup_s} s warm-up (discarded) + {cfg.measure_s} s measured, {cfg.pairs} interleaved pairs "
         f"per row; "
         f"ratios are medians of per-pair ratios [min-max]; machine while measuring: "
         f"{ctx.noise.describe(info['cores'])}.\n",
         "**What to conclude**: " + conclusion(ctx, t1, targets) + "\n"]
    trs = []
    for r in [x for x in t1 if x["dataset"] == "json-records"]:
        if r.get("status") != "ok":
            continue
        trs.append([level_label(r["codec"], r["level"]), t1_codecs.BATCH_LABEL[r["batch"]], r["impl"],
                    f"{r['producer_ms_per_mb']:.1f}",
                    calibration.judge(ctx, r.get("cmp_producer_ms_per_mb"), "producer_ms_per_mb", False, ("less CPU", "more CPU")),
                    f"{r['broker_ms_per_mb']:.1f}",
                    calibration.judge(ctx, r.get("cmp_broker_ms_per_mb"), "broker_ms_per_mb", False, ("less CPU", "more CPU")),
                    fmt_int(r["records_s"]),
                    calibration.judge(ctx, r.get("cmp_records_s"), "records_s", True, ("faster", "slower")),
                    f"{r['size_ratio']:.4f}" if r.get("size_ratio") else ""])
    S.append(md_table(["codec", "batch / linger", "impl", "producer CPU ms/MB", "vs stock", "broker CPU ms/MB",
                       "vs stock", "records/s", "vs stock", "size ratio"], trs) + "\n")
    S.append(md_table(["target", "result", "measured", "engine bound"], targets) + "\n")
    S.append("Full report: `build/bench/report.md`.\n")
    with open(os.path.join(ctx.paths.out, "README-section.md"), "w") as f:
        f.write("\n".join(S + [f"![{ch}](docs/bench/{ch})\n" for ch in chart_files[:2]]))
