"""Table 2, KAFKA-6430 gzip stream: in process (KcBench gzipstream), compression throughput of record batches by
record size, direct vs buffered writes, built-in codec on stock and patched jars and each provider."""

import os

from benchlib.brokers import run as run_cmd
from benchlib.common import fmt_x, md_table, write_csv


def run(ctx, impls):
    cfg = ctx.cfg
    rows = []
    providers = ["builtin"] + [i.provider for i in impls if i.provider and i.status == "ok"]
    sizes = "200,1024,4096,16384,65536,168960" if not cfg.quick else "200,4096,168960"
    for impl in [i for i in impls if not i.provider]:
        for level in cfg.t2_levels:
            ctx.progress(f"T2 gzip stream, {impl.name} jars, level {level}, record sizes {sizes}")
            provs = providers if impl.patched else ["builtin"]
            cmd, env = impl.cmd("run", ["KcBench", "gzipstream", str(level), str(cfg.t2_seconds), str(cfg.repeats),
                                        sizes, ",".join(provs), ctx.paths.json,
                                        ctx.paths.json_large])
            try:
                out = run_cmd(cmd, env, os.path.join(ctx.paths.logs, "table2.log"), timeout=1800)
            except Exception as e:  # noqa: BLE001
                ctx.progress(f"  T2 failed: {str(e).splitlines()[0]}")
                continue
            for line in out.splitlines():
                if line.startswith("# "):
                    ctx.progress("  " + line[2:])
                parts = line.split(",")
                if len(parts) == 7 and parts[0] != "impl" and not line.startswith("#"):
                    prov = parts[0]
                    name = impl.name if prov == "builtin" else next(
                        (i.name for i in impls if i.provider == prov), prov)
                    rows.append({"jars": impl.name, "codec": name, "mode": parts[1], "record_bytes": int(parts[2]),
                                 "level": int(parts[3]), "mb_s": float(parts[4]), "size_ratio": float(parts[5]),
                                 "repeats": int(parts[6])})
    for r in rows:
        stock = next((x for x in rows if x["jars"] == "stock" and x["codec"] == "stock" and x["mode"] == r["mode"]
                      and x["record_bytes"] == r["record_bytes"] and x["level"] == r["level"]), None)
        direct = next((x for x in rows if x["jars"] == r["jars"] and x["codec"] == r["codec"] and x["mode"] == "direct"
                       and x["record_bytes"] == r["record_bytes"] and x["level"] == r["level"]), None)
        r["vs_stock"] = round(r["mb_s"] / stock["mb_s"], 3) if stock and stock["mb_s"] else ""
        r["buffered_vs_direct"] = round(r["mb_s"] / direct["mb_s"], 3) if direct and r["mode"] == "buffered" else ""
    write_csv(ctx.paths.out, "table2_kafka6430.csv", rows)
    return rows


def markdown(ctx, t2, chart_files):
    cfg = ctx.cfg
    L = []
    L.append("## 2. KAFKA-6430: gzip stream throughput by record size\n")
    L.append("In process (`bench/java/KcBench.java`): about 1 MiB of records of each size, cut from the JSON data, "
             "framed by Kafka's `DefaultRecord.writeTo` (per-byte writes for the varint header fields), "
             "compressed as one batch. **direct** = every write goes straight into the gzip stream "
             "(`GZIPOutputStream` with a 512 B buffer, Kafka before KAFKA-6430; for a provider, the KIP-1121 "
             "framework's stream, which holds the batch for the provider's one call); "
             "**buffered** = Kafka 4.3.1's `GzipCompression.wrapForOutput` (16 KiB `BufferedOutputStream` over "
             f"an 8 KiB `GZIPOutputStream`; for a provider, the framework's stream under the same 16 KiB buffer). MB/s of uncompressed "
             f"records, median of {cfg.repeats} x {cfg.t2_seconds} s after a 1 s warm-up. CSV: `table2_kafka6430.csv`.\n")
    if t2:
        trs = []
        for r in sorted(t2, key=lambda r: (r["level"], r["jars"] != "stock", r["codec"], r["mode"], r["record_bytes"])):
            trs.append([r["jars"], r["codec"], r["level"], r["mode"], f"{r['record_bytes']:,}", r["mb_s"],
                        r["size_ratio"], fmt_x(r.get("buffered_vs_direct")), fmt_x(r.get("vs_stock"))])
        L.append(md_table(["jars", "codec", "level", "mode", "record B", "MB/s", "size ratio", "buffered vs direct",
                           "vs stock same mode"], trs) + "\n")
        L.append("Seed (KAFKA-6430): up to 2x for small records from buffering.\n")
        if "gzip_stream_by_record_size.png" in chart_files:
            L.append("![gzip stream by record size](gzip_stream_by_record_size.png)\n")
    else:
        L.append("_not run in this invocation_\n")
    return "\n".join(L)
