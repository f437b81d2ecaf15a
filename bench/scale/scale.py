"""Cold recompression at broker scale: one broker with many partitions of closed lz4 segments, recompression.lag.ms
off and then on (into zstd at its default level), side by side: a probe producer's p99 on another topic while the
cleaner works through the backlog, kafka-topics.sh --create and --delete times, the restart time and the time indexes
the restarted broker maps, and how long the cleaner took to catch up. Standalone: bench/scale/run.sh --help."""

import argparse
import os
import re
import resource
import statistics
import sys
import time
from types import SimpleNamespace

from benchlib.brokers import Broker, Impl
from benchlib.common import md_table
from benchlib.context import Context, Paths

TOPIC = "cold"
PROBE = "probe"
SEGMENT_MS = 1500
RECOMPRESSED = re.compile(r"Recompressed segment \d+ of log " + TOPIC + r"-\d+ ")
SUMMARY = re.compile(r"records sent, .*?([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, "
                     r"(\d+) ms 99th")


def arguments(argv):
    p = argparse.ArgumentParser(prog="bench/scale/run.sh", description=__doc__)
    p.add_argument("--partitions", type=int, default=2000, help="partitions of the cold topic (default 2000)")
    p.add_argument("--segments", type=int, default=4,
                   help="closed segments per partition (default 4; Kafka keeps every segment's file open: 2,000 x 9 "
                        "segments ran a broker out of a 20,000 open-file limit)")
    p.add_argument("--records", type=int, default=5, help="records per partition and segment (default 5)")
    p.add_argument("--probe-seconds", type=int, default=30, help="the probe producer's run (default 30 s)")
    p.add_argument("--topic-ops", type=int, default=5, help="kafka-topics.sh --create/--delete pairs (default 5)")
    p.add_argument("--catch-up-seconds", type=int, default=1800,
                   help="the longest wait for the cleaner to catch up (default 1800 s)")
    return p.parse_args(argv)


def elapsed(fn):
    t0 = time.time()
    fn()
    return time.time() - t0


def fill(ctx, broker, args):
    """args.segments + 1 rounds of records to every partition, SEGMENT_MS apart: each round rolls the last one's
    segment, so every partition ends with args.segments closed segments and an active one."""
    n = args.partitions * args.records
    for i in range(args.segments + 1):
        if i:
            time.sleep(SEGMENT_MS / 1000.0)
        broker.tool("perf", ["--topic", TOPIC, "--num-records", str(n), "--payload-file", broker.ctx.paths.json,
                             "--throughput", "-1", "--producer-props", "bootstrap.servers=" + broker.bootstrap,
                             "compression.type=lz4", "linger.ms=1000", "batch.size=8192", "buffer.memory=67108864",
                             "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner"], timeout=600)
        ctx.progress("round %d/%d: %d records" % (i + 1, args.segments + 1, n))


def probe(broker, args):
    """p99 and max of a producer at 1,000 records/s on another topic, from kafka-producer-perf-test.sh's summary."""
    out = broker.tool("perf", ["--topic", PROBE, "--num-records", str(1000 * args.probe_seconds), "--record-size",
                               "500", "--throughput", "1000", "--producer-props",
                               "bootstrap.servers=" + broker.bootstrap, "linger.ms=0"], timeout=600)
    m = list(SUMMARY.finditer(out))[-1]
    return {"p99": int(m.group(5)), "max": float(m.group(2)), "avg": float(m.group(1))}


def not_done(broker, args):
    """Partitions of the cold topic whose recompression-offset-checkpoint entry is below their active segment."""
    left = 0
    done = {}
    path = os.path.join(broker.datadir, "recompression-offset-checkpoint")
    if os.path.exists(path):
        with open(path) as f:
            for line in f.read().splitlines()[2:]:
                topic, partition, offset = line.split()
                if topic == TOPIC:
                    done[int(partition)] = int(offset)
    for p in range(args.partitions):
        bases = [int(n.split(".")[0]) for n in os.listdir(os.path.join(broker.datadir, "%s-%d" % (TOPIC, p)))
                 if n.endswith(".log")]
        if done.get(p, -1) < max(bases):
            left += 1
    return left


def recompressed(broker):
    path = os.path.join(broker.logdir, "log-cleaner.log")
    if not os.path.exists(path):
        return 0
    with open(path, errors="replace") as f:
        return sum(1 for line in f if RECOMPRESSED.search(line))


def mapped_time_indexes(pid):
    with open("/proc/%d/maps" % pid) as f:
        return len({line.split()[-1] for line in f if line.rstrip().endswith(".timeindex")})


def measure(ctx, paths, args, mode):
    extra = {"num.io.threads": "8", "log.cleaner.backoff.ms": "1000", "log.roll.jitter.ms": "0",
             "log.retention.check.interval.ms": "300000", "auto.create.topics.enable": "false"}
    broker = Broker(ctx, Impl(paths, "patched", True), "scale-" + mode, extra).start()
    try:
        broker.tool("topics", ["--bootstrap-server", broker.bootstrap, "--create", "--topic", TOPIC, "--partitions",
                               str(args.partitions), "--replication-factor", "1", "--config", "cleanup.policy=delete",
                               "--config", "segment.ms=%d" % SEGMENT_MS, "--config", "compaction.compression.type=zstd"])
        broker.create_topic(PROBE, {})
        fill(ctx, broker, args)
        t_on = time.time()
        if mode == "on":
            broker.alter_topic(TOPIC, {"recompression.lag.ms": "0"})
        r = {"mode": mode, "probe": probe(broker, args)}
        ctx.progress("%s: probe %s" % (mode, r["probe"]))
        creates, deletes = [], []
        for i in range(args.topic_ops):
            t = "scale-op-%d" % i
            creates.append(elapsed(lambda: broker.tool("topics", ["--bootstrap-server", broker.bootstrap, "--create",
                                                                  "--topic", t, "--partitions", "20",
                                                                  "--replication-factor", "1"])))
            deletes.append(elapsed(lambda: broker.tool("topics", ["--bootstrap-server", broker.bootstrap, "--delete",
                                                                  "--topic", t])))
        r["create"], r["delete"] = statistics.median(creates), statistics.median(deletes)
        if mode == "on":
            deadline = time.time() + args.catch_up_seconds
            while not_done(broker, args) and time.time() < deadline:
                time.sleep(2)
            r["left"] = not_done(broker, args)
            r["caught_up"] = time.time() - t_on
            r["recompressed"] = recompressed(broker)
        r["restart"] = broker.restart()
        time.sleep(10)
        r["time_indexes"] = mapped_time_indexes(broker.proc.pid)
        ctx.progress("%s: %s" % (mode, r))
        return r
    finally:
        broker.stop()


def report(args, off, on):
    def ratio(a, b):
        return "%.2f" % (b / a) if a else "-"
    rows = [
        ["probe p99 (ms), 1,000 records/s on another topic", off["probe"]["p99"], on["probe"]["p99"],
         ratio(off["probe"]["p99"], on["probe"]["p99"])],
        ["probe max (ms)", "%.0f" % off["probe"]["max"], "%.0f" % on["probe"]["max"],
         ratio(off["probe"]["max"], on["probe"]["max"])],
        ["kafka-topics.sh --create, 20 partitions (s, median)", "%.2f" % off["create"], "%.2f" % on["create"],
         ratio(off["create"], on["create"])],
        ["kafka-topics.sh --delete (s, median)", "%.2f" % off["delete"], "%.2f" % on["delete"],
         ratio(off["delete"], on["delete"])],
        ["restart, launch to started (s)", "%.1f" % off["restart"], "%.1f" % on["restart"],
         ratio(off["restart"], on["restart"])],
        ["time indexes mapped 10 s after the restart", off["time_indexes"], on["time_indexes"], "-"],
        ["segments rewritten (the cleaner's lines) of those due", "-",
         "%d / %d" % (on["recompressed"], args.partitions * args.segments), "-"],
        ["from recompression.lag.ms=0 to caught up (s)", "-", "%.0f" % on["caught_up"] if not on["left"] else
         "not after %.0f (%d partitions left)" % (on["caught_up"], on["left"]), "-"],
    ]
    return ("One broker, topic `%s`: %d partitions x %d closed lz4 segments of %d records; `recompression.lag.ms` "
            "off, then on (`compaction.compression.type=zstd`, default level)\n\n" %
            (TOPIC, args.partitions, args.segments, args.records)
            + md_table(["", "off", "on", "on/off"], rows))


def main(argv):
    args = arguments(argv)
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    # measured: 2,000 x 5 segments ran under a 20,000 limit, 2,000 x 9 did not ("Too many open files" at round 8)
    need = int(args.partitions * (args.segments + 1) * 1.3) + 1500
    if need > soft:
        sys.exit("bench/scale: %d partitions x %d segments keep about %d files open, over this shell's limit of %d "
                 "(ulimit -n): fewer --segments or --partitions" % (args.partitions, args.segments + 1, need, soft))
    paths = Paths(os.environ)
    for d in (paths.work, paths.logs):
        os.makedirs(d, exist_ok=True)
    ctx = Context(SimpleNamespace(quick=False, only="", sla_arg=None), paths)
    off = measure(ctx, paths, args, "off")
    on = measure(ctx, paths, args, "on")
    text = report(args, off, on)
    out = os.path.join(paths.out, "scale")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    print("\n(%s)" % os.path.join(out, "report.md"))


if __name__ == "__main__":
    main(sys.argv[1:])
