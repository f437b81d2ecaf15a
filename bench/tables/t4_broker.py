"""Table 4, broker side: recompression (producer sends lz4, topic says gzip-6 or zstd) and validation (the stock
producer sends gzip-6 to a gzip-6 topic, 1 MiB and 256 KiB batches) in interleaved pairs with broker CPU per MB, and
the log cleaner compacting a gzip topic (seconds and broker CPU per MB); the broker targets on the provider's rows."""

import os
import re
import time

from benchlib.brokers import log_mark, log_text, run as run_cmd
from benchlib.common import data_info, first_line, fmt_int, fmt_x, md_table, median, write_csv
from benchlib.runs import compare, produce, ratios, run_pairs, summarize
from benchlib.targets import at_most, target
from tables import calibration, t5_codec


GZIP6_TOPIC = {"compression.type": "gzip", "compression.gzip.level": "6"}
LZ4 = {"batch.size": "1048576", "linger.ms": "100", "acks": "1", "compression.type": "lz4"}
GZIP6 = {"acks": "1", "compression.type": "gzip", "compression.gzip.level": "6"}
# (test, topic configs, producer props, whether gzip providers take part, producer: "broker" = each broker's own
# implementation, "stock" = the stock client for every broker, so that each validates the very same gzip bytes)
CASES = [("recompress lz4->gzip-6", GZIP6_TOPIC, LZ4, True, "broker"),
         ("recompress lz4->zstd", {"compression.type": "zstd"}, LZ4, False, "broker"),
         ("validate gzip-6 (1 MiB)", GZIP6_TOPIC, dict(GZIP6, **{"batch.size": "1048576", "linger.ms": "100"}), True,
          "stock"),
         ("validate gzip-6 (256 KiB)", GZIP6_TOPIC, dict(GZIP6, **{"batch.size": "262144", "linger.ms": "20"}), True,
          "stock")]
# targets: broker CPU per MB with a provider vs stock's, at most (test -> ratio)
TARGETS = {"validate gzip-6 (1 MiB)": 0.8, "validate gzip-6 (256 KiB)": 0.8, "recompress lz4->gzip-6": 0.5}


def state(ctx):
    """This run's table 4: rows, and the engine bounds of the provider rows ((test, impl) -> bound)."""
    return ctx.state.setdefault(__name__, {"bounds": {}, "rows": []})


def run(ctx, brokers, impls):
    cfg, st4, json_path = ctx.cfg, state(ctx), ctx.paths.json
    rows = []
    raw_avg = data_info(json_path)["avg_bytes"]
    stock = next((i for i in impls if i.name == "stock" and i.status == "ok"), None)
    for test, topic_cfg, props, with_providers, producer in CASES:
        ok = [i for i in impls if i.status == "ok" and i.name in brokers and (with_providers or not i.provider)]
        for impl in impls:
            if (with_providers or not impl.provider) and impl not in ok:
                rows.append({"test": test, "impl": impl.name, "status": impl.status if impl.status != "ok" else "failed"})
        if producer == "stock" and not stock:
            continue

        def one(impl, broker, p, test=test, topic_cfg=topic_cfg, props=props, producer=producer):
            topic = "t4_" + "".join(c if c.isalnum() else "_" for c in test) + f"_{p}"
            broker.create_topic(topic, topic_cfg)
            return produce(broker, topic, cfg.warmup_s, cfg.measure_s, props, json_path,
                           impl=stock if producer == "stock" else None)
        samples = run_pairs(ctx, f"T4 {test}", ok, brokers, cfg.pairs, one)
        for impl in ok:
            s = summarize(samples[impl.name])
            if not s:
                rows.append({"test": test, "impl": impl.name, "status": "failed"})
                continue
            row = {"test": test, "impl": impl.name, "status": "ok", "pairs": s["runs"], "records": s["records"],
                   "records_s": round(s["records_s"]), "broker_cpu_ms_per_mb": round(s["broker_ms_per_mb"], 2),
                   "producer_cpu_ms_per_mb": round(s["producer_ms_per_mb"], 2), "disk_bytes": int(s["disk_bytes"])}
            if impl.name != "stock":
                row["cmp_broker"] = compare(ratios(samples["stock"], samples[impl.name], "broker_ms_per_mb"))
                row["cmp_records_s"] = compare(ratios(samples["stock"], samples[impl.name], "records_s"))
                st = summarize(samples["stock"])
                if impl.provider and test.startswith("validate") and st:
                    # validating decompresses every batch: the same bound as the consumer's (table 5's speeds)
                    b = t5_codec.decompress_bound(ctx, impl.name, 6, st["broker_ms_per_mb"],
                                                  262144 if "256 KiB" in test else 1048576)
                    st4["bounds"][(test, impl.name)] = b
                    row["bound"] = round(b["bound"], 3) if b else None
                elif impl.provider and test == "recompress lz4->gzip-6" and st:
                    # recompressing deflates every batch: Amdahl on table 5's compression speed at level 6
                    b = t5_codec.compress_bound(ctx, impl.name, 6, st["broker_ms_per_mb"])
                    st4["bounds"][(test, impl.name)] = b
                    row["bound"] = round(b["bound"], 3) if b else None
            rows.append(row)
    # log cleaner: keyed gzip records into a delete-policy topic, then switch it to compact and time the clean
    for impl in impls:
        if impl.status != "ok":
            rows.append({"test": "log cleaner gzip", "impl": impl.name, "status": impl.status})
            continue
        b = brokers[impl.name]
        samples = []
        for rep in range(cfg.repeats):
            topic = f"t4_clean_{rep}"
            try:
                b.create_topic(topic, {"compression.type": "gzip", "segment.bytes": str(1024 * 1024)})
                props = {"batch.size": "1048576", "linger.ms": "100", "acks": "1", "compression.type": "gzip"}
                props.update(impl.provider_props())
                cmd, env = impl.cmd("run", ["KcBench", "keyed", b.bootstrap, topic, str(cfg.clean_records),
                                            str(cfg.clean_records // 4), ",".join(f"{k}={v}" for k, v in props.items()),
                                            json_path])
                run_cmd(cmd, env, os.path.join(ctx.paths.logs, f"tools-{b.tag}.log"))
                time.sleep(1)
                # the cleaner thread's summary goes to server.log, its other lines to log-cleaner.log
                logs = [os.path.join(b.logdir, x) for x in ("server.log", "log-cleaner.log")]
                marks = [log_mark(fn) for fn in logs]

                def new_text():
                    return "".join(log_text(fn, mark) for fn, mark in zip(logs, marks))
                cpu0 = b.cpu_seconds()
                t0 = time.time()
                b.alter_topic(topic, {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01",
                                      "min.compaction.lag.ms": "0"})
                stats = None
                while time.time() - t0 < 300:
                    text = new_text()
                    m = re.search(r"cleaned log " + re.escape(topic) + r"-0 .*?\n\s*([\d,.]+) MB of log processed in "
                                  r"([\d,.]+) seconds \(([\d,.]+) MB/sec\).*?Start size: [\d,.]+ MB \(([\d,]+) messages\)",
                                  text, re.S)
                    if m:
                        stats = m
                        break
                    time.sleep(0.5)
                cpu1 = b.cpu_seconds()
                if not stats:
                    raise RuntimeError("cleaner did not report within 300 s")
                f = lambda s: float(s.replace(",", ""))  # noqa: E731
                mb, secs, msgs = f(stats.group(1)), f(stats.group(2)), f(stats.group(4))
                raw_mb = msgs * raw_avg / 1e6
                s = {"mb_on_disk": mb, "seconds": secs, "messages": msgs,
                     "records_s": msgs / secs if secs > 0 else None,
                     "cpu_ms_per_mb": 1000 * (cpu1 - cpu0) / raw_mb if raw_mb else None}
                samples.append(s)
                ctx.progress(f"T4 log cleaner {impl.name} rep {rep + 1}: {msgs:,.0f} records in {secs:.1f} s, "
                         f"broker {s['cpu_ms_per_mb']:.1f} CPU ms/MB")
            except Exception as e:  # noqa: BLE001
                ctx.progress(f"T4 cleaner {impl.name} failed: {first_line(e)}")
        if samples:
            rows.append({"test": "log cleaner gzip", "impl": impl.name, "status": "ok", "repeats": len(samples),
                         "records": cfg.clean_records,
                         "records_s": round(median([s["records_s"] for s in samples]) or 0),
                         "broker_cpu_ms_per_mb": round(median([s["cpu_ms_per_mb"] for s in samples]), 2),
                         "cleaner_seconds": round(median([s["seconds"] for s in samples]), 2)})
        else:
            rows.append({"test": "log cleaner gzip", "impl": impl.name, "status": "failed"})
    for r in rows:
        st = next((x for x in rows if x["test"] == r["test"] and x["impl"] == "stock" and x.get("status") == "ok"), None)
        if r.get("status") == "ok" and st and "cmp_broker" not in r and r["impl"] != "stock":
            r["vs_stock_records_s"] = round(r["records_s"] / st["records_s"], 3) if st["records_s"] else ""
            r["vs_stock_cpu"] = round(r["broker_cpu_ms_per_mb"] / st["broker_cpu_ms_per_mb"], 3) \
                if st["broker_cpu_ms_per_mb"] else ""
    write_csv(ctx.paths.out, "table4_broker.csv", rows)
    st4["rows"] = rows
    return rows


def targets(ctx):
    """Targets: broker CPU per MB with a provider at most 0.8x stock's validating gzip-6 batches (1 MiB and 256 KiB),
    at most 0.5x recompressing lz4 into a gzip-6 topic; [target, result, measured, bound] like report's."""
    out = []
    for r in state(ctx)["rows"]:
        limit = TARGETS.get(r["test"])
        if limit is None or not r["impl"].startswith("patched+"):
            continue
        name = f"{r['impl']}: broker CPU/MB <= {limit}x stock's, {r['test']}"
        if r.get("status") != "ok":
            out.append([name, "not evaluated", r["status"], ""])
            continue
        bound, text = None, ""
        if r["test"].startswith("validate") or r["test"] == "recompress lz4->gzip-6":
            bound = state(ctx)["bounds"].get((r["test"], r["impl"]))
            text = t5_codec.fmt_engine_bound(bound)
        ok, how = at_most(limit, bound)
        out.append(target(ctx, name, r.get("cmp_broker"), ok, "broker_ms_per_mb", text, how=how))
    return out


def markdown(ctx, t4):
    cfg = ctx.cfg
    L = ["## 4. Broker side: recompression, validation and log cleaner\n",
         f"Recompression: producer sends lz4 (`batch.size=1048576`, `linger.ms=100`, json-records, {cfg.warmup_s} s "
         f"warm-up then {cfg.measure_s} s measured; each broker's own client), the topic says `compression.type=gzip "
         f"compression.gzip.level=6` or `compression.type=zstd`, so the broker decompresses and recompresses every "
         f"batch. Validation: the stock producer (the built-in codec, so every broker receives the same bytes) sends "
         f"gzip-6 (`batch.size=1048576 linger.ms=100` or `batch.size=262144 linger.ms=20`) to a gzip-6 topic: the "
         f"codec matches, so the broker keeps the batches and only validates them, which decompresses every batch "
         f"(`LogValidator`, in place). {cfg.pairs} interleaved pairs per row, broker CPU per MB of records in the "
         f"steady-state window (as table 1), vs stock = median of per-pair ratios [min-max], judged against the "
         f"calibration gate's broker CPU/MB. *engine bound* (validation rows and the gzip recompression row): the "
         f"lowest broker CPU/MB vs stock a provider can reach, (1 - share) + share / speed, with speed its "
         f"decompression (validation) or level-6 compression (recompression) MB/s over the built-in codec's (table 5, "
         f"nearest batch size) and share = (1000 / built-in MB/s) / stock's broker CPU/MB in that row. Targets, pass/miss in the targets table: a provider broker at most 0.8x stock's CPU/MB "
         f"validating, at most 0.5x recompressing lz4 into gzip-6. Log cleaner: {cfg.clean_records:,} keyed gzip records ({cfg.clean_records // 4:,} distinct "
         f"keys, 1 MiB segments, so all but the last are cleanable) into a delete-policy topic, then switched to "
         f"`cleanup.policy=compact` (`min.cleanable.dirty.ratio=0.01`); records/s and seconds from the cleaner "
         f"thread's own summary line, broker CPU (utime+stime from `/proc/<pid>/stat` before/after) per MB of "
         f"uncompressed records; {cfg.repeats} repeat(s), median, ratio of medians (not paired). CSV: "
         f"`table4_broker.csv`.\n"]
    trs = []
    for r in t4:
        if r.get("status") != "ok":
            trs.append([r["test"], r["impl"], r.get("status"), "", "", "", ""])
            continue
        if "cmp_broker" in r:
            vs_rec = calibration.judge(ctx, r["cmp_records_s"], "records_s", True, ("faster", "slower"))
            vs_cpu = calibration.judge(ctx, r["cmp_broker"], "broker_ms_per_mb", False, ("less CPU", "more CPU"))
        else:
            # the cleaner's repeats are not pairs: a ratio of medians, printed without a verdict
            vs_rec = fmt_x(r.get("vs_stock_records_s")) + (" (unpaired, no verdict)" if r.get("vs_stock_records_s") else "")
            vs_cpu = fmt_x(r.get("vs_stock_cpu")) + (" (unpaired, no verdict)" if r.get("vs_stock_cpu") else "")
        trs.append([r["test"], r["impl"], fmt_int(r["records_s"]), vs_rec, r["broker_cpu_ms_per_mb"], vs_cpu,
                    f">= {r['bound']:.2f}x" if r.get("bound") is not None else ""])
    L.append(md_table(["test", "impl", "records/s", "vs stock", "broker CPU ms/MB", "CPU vs stock",
                       "engine bound (CPU/MB vs stock)"], trs) + "\n")
    return "\n".join(L)
