"""Table 4, broker side: recompression (producer sends lz4, topic says gzip or zstd) in interleaved pairs with
broker CPU per MB, and the log cleaner compacting a gzip topic (seconds and broker CPU per MB)."""

import os
import re
import time

from benchlib.brokers import run as run_cmd
from benchlib.common import JSON, LOGS, data_info, first_line, fmt_int, fmt_x, md_table, median, progress, write_csv
from benchlib.runs import compare, produce, ratios, run_pairs, summarize
from tables import calibration


def run(cfg, brokers, impls):
    rows = []
    raw_avg = data_info(JSON)["avg_bytes"]
    for target in ("gzip", "zstd"):
        test = f"recompress lz4->{target}"
        ok = [i for i in impls if i.status == "ok" and i.name in brokers and (target == "gzip" or not i.provider)]
        for impl in impls:
            if (target == "gzip" or not impl.provider) and impl not in ok:
                rows.append({"test": test, "impl": impl.name, "status": impl.status if impl.status != "ok" else "failed"})

        def one(impl, broker, p):
            topic = f"t4_re_{target}_{p}"
            broker.create_topic(topic, {"compression.type": target})
            return produce(broker, topic, cfg.warmup_s, cfg.measure_s,
                           {"batch.size": "1048576", "linger.ms": "100", "acks": "1", "compression.type": "lz4"}, JSON)
        samples = run_pairs(f"T4 {test}", ok, brokers, cfg.pairs, one)
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
                                            JSON])
                run_cmd(cmd, env, os.path.join(LOGS, f"tools-{b.tag}.log"))
                time.sleep(1)
                # the cleaner thread's summary goes to server.log, its other lines to log-cleaner.log
                logs = [os.path.join(b.logdir, x) for x in ("server.log", "log-cleaner.log")]
                before = {fn: os.path.getsize(fn) if os.path.exists(fn) else 0 for fn in logs}

                def new_text():
                    t = ""
                    for fn in logs:
                        if os.path.exists(fn):
                            with open(fn, "rb") as fh:
                                fh.seek(before[fn])
                                t += fh.read().decode("utf-8", "replace")
                    return t
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
                progress(f"T4 log cleaner {impl.name} rep {rep + 1}: {msgs:,.0f} records in {secs:.1f} s, "
                         f"broker {s['cpu_ms_per_mb']:.1f} CPU ms/MB")
            except Exception as e:  # noqa: BLE001
                progress(f"T4 cleaner {impl.name} failed: {first_line(e)}")
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
    write_csv("table4_broker.csv", [{k: v for k, v in r.items() if not k.startswith("cmp_")} for r in rows])
    return rows


def markdown(cfg, t4):
    L = ["## 4. Broker side: recompression and log cleaner\n",
         f"Recompression: producer sends lz4 (`batch.size=1048576`, `linger.ms=100`, json-records, {cfg.warmup_s} s "
         f"warm-up then {cfg.measure_s} s measured), the topic says `compression.type=gzip` (level default) or "
         f"`zstd`, so the broker decompresses and recompresses every batch; {cfg.pairs} interleaved pairs, broker CPU "
         f"per MB of records in the steady-state window (as table 1), vs stock = median of per-pair ratios "
         f"[min-max]. Log cleaner: {cfg.clean_records:,} keyed gzip records ({cfg.clean_records // 4:,} distinct "
         f"keys, 1 MiB segments, so all but the last are cleanable) into a delete-policy topic, then switched to "
         f"`cleanup.policy=compact` (`min.cleanable.dirty.ratio=0.01`); records/s and seconds from the cleaner "
         f"thread's own summary line, broker CPU (utime+stime from `/proc/<pid>/stat` before/after) per MB of "
         f"uncompressed records; {cfg.repeats} repeat(s), median, ratio of medians (not paired). CSV: "
         f"`table4_broker.csv`.\n"]
    trs = []
    for r in t4:
        if r.get("status") != "ok":
            trs.append([r["test"], r["impl"], r.get("status"), "", "", ""])
            continue
        if "cmp_broker" in r:
            vs_rec = calibration.judge(r["cmp_records_s"], "records_s", True, ("faster", "slower"))
            vs_cpu = calibration.judge(r["cmp_broker"], "broker_ms_per_mb", False, ("less CPU", "more CPU"))
        else:
            # the cleaner's repeats are not pairs: a ratio of medians, printed without a verdict
            vs_rec = fmt_x(r.get("vs_stock_records_s")) + (" (unpaired, no verdict)" if r.get("vs_stock_records_s") else "")
            vs_cpu = fmt_x(r.get("vs_stock_cpu")) + (" (unpaired, no verdict)" if r.get("vs_stock_cpu") else "")
        trs.append([r["test"], r["impl"], fmt_int(r["records_s"]), vs_rec, r["broker_cpu_ms_per_mb"], vs_cpu])
    L.append(md_table(["test", "impl", "records/s", "vs stock", "broker CPU ms/MB", "CPU vs stock"], trs) + "\n")
    return "\n".join(L)
