"""Cold recompression of small batches: records of tests/data/json-records.ndjson sent with
kafka-producer-perf-test.sh in lz4 at a fixed rate with linger.ms=0 and batch.size=16384 (the batches of a
latency-minded producer) to a delete-policy topic of 1 MiB segments, then rewritten by the log cleaner with
recompression.lag.ms=0 into zstd at the given level: with batches merged (recompression.batch.bytes, its default
1 MiB) and kept as the producer made them (0), one fresh broker per run, in interleaved pairs. Per run: the closed
segments' bytes before and after, and one cleaner thread's time from the broker's "Recompressed segment" lines.
Beside them, the zstd CLI on the same records (zstd -b<level> -B1M, and -B16K). Standalone: bench/cold/run.sh --help."""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

from benchlib.brokers import Broker, Impl, log_text
from benchlib.common import md_table
from benchlib.context import standalone

TOPIC = "cold"
LINE = re.compile(r"Recompressed segment (\d+) of log " + TOPIC + r"-0 with zstd: (\d+) bytes into (\d+) bytes "
                  r"\((\d+) records\) in (\d+) ms")
ZSTD_SPEED = re.compile(r"\(x?\s*([\d.]+)\),\s*([\d.]+) MB/s")


def arguments(argv):
    p = argparse.ArgumentParser(prog="bench/cold/run.sh", description=__doc__)
    p.add_argument("--records", type=int, default=30000, help="records sent per run (default 30000)")
    p.add_argument("--rate", type=int, default=10000, help="records/s of the producer (default 10000)")
    p.add_argument("--level", type=int, default=19, help="the zstd level segments are rewritten at (default 19)")
    p.add_argument("--pairs", type=int, default=2, help="merged/unmerged pairs (default 2)")
    return p.parse_args(argv)


def closed_logs(broker):
    d = os.path.join(broker.datadir, TOPIC + "-0")
    logs = sorted(n for n in os.listdir(d) if n.endswith(".log"))
    return [os.path.join(d, n) for n in logs[:-1]]


def measure(ctx, paths, args, batch_bytes):
    tag = "cold-%d" % batch_bytes
    broker = Broker(ctx, Impl(paths, "patched", True), tag, {"log.cleaner.backoff.ms": "300"}).start()
    try:
        broker.create_topic(TOPIC, {"cleanup.policy": "delete", "segment.bytes": "1048576",
                                    "recompression.batch.bytes": str(batch_bytes)})
        broker.tool("perf", ["--topic", TOPIC, "--num-records", str(args.records), "--payload-file", paths.json,
                             "--throughput", str(args.rate), "--producer-props", "bootstrap.servers=" + broker.bootstrap,
                             "acks=all", "compression.type=lz4", "linger.ms=0", "batch.size=16384"], timeout=900)
        segments = closed_logs(broker)
        lz4 = sum(os.path.getsize(f) for f in segments)
        broker.alter_topic(TOPIC, {"compaction.compression.type": "zstd", "compression.zstd.level": str(args.level),
                                   "recompression.lag.ms": "0"})
        cleaner_log = os.path.join(broker.logdir, "log-cleaner.log")
        deadline = time.time() + 1800
        lines = []
        while time.time() < deadline and len(lines) < len(segments):
            time.sleep(1)
            lines = LINE.findall(log_text(cleaner_log))
        if len(lines) < len(segments):
            raise RuntimeError("%s: %d of %d segments rewritten after 1800 s" % (tag, len(lines), len(segments)))
        r = {"segments": len(segments), "lz4": lz4, "in": sum(int(x[1]) for x in lines),
             "out": sum(int(x[2]) for x in lines), "records": sum(int(x[3]) for x in lines),
             "ms": sum(int(x[4]) for x in lines), "zstd": sum(os.path.getsize(f) for f in closed_logs(broker)[:len(segments)])}
    finally:
        broker.stop()
    ctx.progress("recompression.batch.bytes=%d: %s" % (batch_bytes, r))
    return r


def zstd_cli(paths, level, block):
    out = subprocess.run(["zstd", "-b%d" % level, "-B" + block, "-i3", paths.json], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, check=True).stdout
    ratio, mbs = ZSTD_SPEED.findall(out.replace("\r", "\n"))[-1]
    return float(ratio), float(mbs)


def report(args, paths, merged, unmerged, cli):
    with open(paths.json, "rb") as f:
        data = f.read()
    record_bytes = len(data) / data.count(b"\n")

    def row(name, runs):
        ratio = [r["out"] / r["in"] for r in runs]
        mbs = [r["in"] / r["ms"] / 1000 for r in runs]
        rps = [r["records"] / r["ms"] * 1000 for r in runs]
        return [name, "%d" % statistics.median(r["segments"] for r in runs),
                "%d" % statistics.median(r["in"] for r in runs), "%d" % statistics.median(r["out"] for r in runs),
                "%.3f [%.3f-%.3f]" % (statistics.median(ratio), min(ratio), max(ratio)),
                "%.2f [%.2f-%.2f]" % (statistics.median(mbs), min(mbs), max(mbs)),
                "%.0f" % statistics.median(rps), "%.2f" % (statistics.median(rps) * record_bytes / 1e6)]
    rows = [row("merged (`recompression.batch.bytes` default, 1 MiB)", merged),
            row("as the producer made them (`recompression.batch.bytes=0`)", unmerged)]
    for block, (ratio, mbs) in cli.items():
        rows.append(["`zstd -b%d -B%s` on the same records (CLI, one core; %.3f of the records' bytes)"
                     % (args.level, block, 1 / ratio), "-", "-", "-", "-", "-", "%.0f" % (mbs * 1e6 / record_bytes),
                     "%.2f" % mbs])
    return ("Records of `tests/data/json-records.ndjson` (%.0f B each on average), %d per run sent in lz4 at %d "
            "records/s with `linger.ms=0` and `batch.size=16384` to a topic of 1 MiB segments, then rewritten into "
            "zstd-%d by one cleaner thread (`recompression.lag.ms=0`); %d pair(s), a fresh broker per run: medians "
            "[lowest-highest]. lz4 MB/s is the closed segments' lz4 bytes per second of cleaner time (its "
            "`Recompressed segment` lines); record MB/s is records per second times the records' mean size, the unit "
            "the zstd CLI reports.\n\n" % (record_bytes, args.records, args.rate, args.level, args.pairs)
            + md_table(["rewrite", "segments", "lz4 bytes", "zstd bytes", "zstd / lz4", "lz4 MB/s per thread",
                        "records/s", "record MB/s"], rows))


def main(argv):
    args = arguments(argv)
    paths, ctx = standalone(os.environ)
    merged, unmerged = [], []
    for _ in range(args.pairs):
        merged.append(measure(ctx, paths, args, 1048576))
        unmerged.append(measure(ctx, paths, args, 0))
    cli = {block: zstd_cli(paths, args.level, block) for block in ("1M", "16K")}
    text = report(args, paths, merged, unmerged, cli)
    out = os.path.join(paths.out, "cold")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    print("\n(%s)" % os.path.join(out, "report.md"))


if __name__ == "__main__":
    main(sys.argv[1:])
