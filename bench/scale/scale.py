"""Cold recompression at broker scale: one broker with many partitions of closed lz4 segments, recompression.lag.ms
off and then on (into zstd at its default level), side by side in pairs: a probe producer's p99 on another topic and
kafka-topics.sh --create and --delete times, while the cleaner works through the backlog and once it has caught up;
the restart time and the time indexes the restarted broker maps, and how long the cleaner took to catch up. Standalone: bench/scale/run.sh --help."""

import argparse
import glob
import os
import re
import resource
import statistics
import subprocess
import sys
import time

from benchlib.brokers import Broker, Impl, log_text
from benchlib.common import java_tool, md_table
from benchlib.context import standalone

TOPIC = "cold"
PROBE = "probe"
SEGMENT_MS = 1500
RECOMPRESSED = re.compile(r"Recompressed segment \d+ of log " + TOPIC + r"-\d+ ")
LOCK_WAITS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lock-waits.jfc")
PARK = re.compile(r"jdk\.ThreadPark \{(.*?)\n\}", re.S)
DURATION = re.compile(r"duration = ([\d.]+) (ms|s)\b")
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
    p.add_argument("--cleaner-io-bytes", type=float, default=None,
                   help="log.cleaner.io.max.bytes.per.second of the broker, both sides (default: upstream's, unlimited)")
    p.add_argument("--pairs", type=int, default=2, help="off/on pairs, run one after the other (default 2)")
    p.add_argument("--catch-up-seconds", type=int, default=1800,
                   help="the longest wait for the cleaner to catch up (default 1800 s)")
    return p.parse_args(argv)


def elapsed(fn):
    t0 = time.time()
    fn()
    return time.time() - t0


def fill(ctx, broker, args):
    """args.segments + 1 rounds of records to every partition, SEGMENT_MS apart: each round rolls the last one's
    segment, so every partition ends with at least args.segments closed segments and an active one (more when a
    round's records to a partition span SEGMENT_MS: closed_segments() counts them)."""
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


def closed_segments(broker, args):
    """The closed segments of the cold topic: a round's records may roll a partition's segment more than once."""
    return sum(sum(1 for n in os.listdir(os.path.join(broker.datadir, "%s-%d" % (TOPIC, p))) if n.endswith(".log")) - 1
               for p in range(args.partitions))


def recompressed(broker):
    """The "Recompressed segment" lines of the cold topic in log-cleaner.log and the files log4j2 rolled it into."""
    return len(RECOMPRESSED.findall(log_text(os.path.join(broker.logdir, "log-cleaner.log"))))


def longest_lock_wait(broker):
    """The longest time a thread of the broker waited to take the log cleaner manager's lock, in ms, from the JFR
    recordings (lock-waits.jfc: waits of 1 ms or more) of every start of the broker; 0 if none waited that long."""
    longest = 0.0
    for jfr in glob.glob(os.path.join(broker.dir, "lock-waits-*.jfr")):
        out = subprocess.run([java_tool("jfr"), "print", "--events", "jdk.ThreadPark", "--stack-depth", "64", jfr],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True).stdout
        for event in PARK.findall(out):
            m = DURATION.search(event)
            if m and "ReentrantLock$NonfairSync" in event and ".LogCleanerManager." in event:
                longest = max(longest, float(m.group(1)) * (1000 if m.group(2) == "s" else 1))
    return longest


def mapped_time_indexes(pid):
    with open("/proc/%d/maps" % pid) as f:
        return len({line.split()[-1] for line in f if line.rstrip().endswith(".timeindex")})


def operations(ctx, broker, args, phase):
    """The probe's latency, then the medians of kafka-topics.sh --create and --delete."""
    r = {"probe": probe(broker, args)}
    creates, deletes = [], []
    for i in range(args.topic_ops):
        t = "scale-op-%d" % i
        creates.append(elapsed(lambda: broker.tool("topics", ["--bootstrap-server", broker.bootstrap, "--create",
                                                              "--topic", t, "--partitions", "20",
                                                              "--replication-factor", "1"])))
        deletes.append(elapsed(lambda: broker.tool("topics", ["--bootstrap-server", broker.bootstrap, "--delete",
                                                              "--topic", t])))
    r["create"], r["delete"] = statistics.median(creates), statistics.median(deletes)
    ctx.progress("%s: %s" % (phase, r))
    return r


def measure(ctx, paths, args, mode):
    extra = {"num.io.threads": "8", "log.cleaner.backoff.ms": "1000", "log.roll.jitter.ms": "0",
             "log.retention.check.interval.ms": "300000", "auto.create.topics.enable": "false"}
    if args.cleaner_io_bytes is not None:
        extra["log.cleaner.io.max.bytes.per.second"] = "%.0f" % args.cleaner_io_bytes
    def jfr(start):
        return "-XX:StartFlightRecording=settings=%s,filename=%s,dumponexit=true" % (
            LOCK_WAITS, os.path.join(paths.work, "scale-" + mode, "lock-waits-%d.jfr" % start))
    broker = Broker(ctx, Impl(paths, "patched", True), "scale-" + mode, extra, jvm=jfr(1)).start()
    try:
        broker.tool("topics", ["--bootstrap-server", broker.bootstrap, "--create", "--topic", TOPIC, "--partitions",
                               str(args.partitions), "--replication-factor", "1", "--config", "cleanup.policy=delete",
                               "--config", "segment.ms=%d" % SEGMENT_MS, "--config", "compaction.compression.type=zstd"])
        broker.create_topic(PROBE, {})
        fill(ctx, broker, args)
        t_on = time.time()
        r = {"mode": mode, "closed": closed_segments(broker, args)}
        if mode == "on":
            broker.alter_topic(TOPIC, {"recompression.lag.ms": "0"})
        r["busy"] = operations(ctx, broker, args, mode + ", cleaner at work")
        if mode == "on":
            deadline = time.time() + args.catch_up_seconds
            while not_done(broker, args) and time.time() < deadline:
                time.sleep(2)
            r["left"] = not_done(broker, args)
            r["caught_up"] = time.time() - t_on
            r["recompressed"] = recompressed(broker)
        r["idle"] = operations(ctx, broker, args, mode + ", caught up")
        broker.jvm = jfr(2)
        r["restart"] = broker.restart()
        time.sleep(10)
        r["time_indexes"] = mapped_time_indexes(broker.proc.pid)
    finally:
        broker.stop()
    r["lock_wait"] = longest_lock_wait(broker)
    ctx.progress("%s: %s" % (mode, r))
    return r


def report(args, offs, ons):
    """One row per figure: the off and on runs' medians, and on/off per pair (min-max) beside the medians' ratio."""
    def row(name, get, fmt):
        off = [get(r) for r in offs]
        on = [get(r) for r in ons]
        pairs = ["%.2f" % (b / a) for a, b in zip(off, on) if a]
        ratio = "%.2f" % (statistics.median(on) / statistics.median(off)) if statistics.median(off) else "-"
        if len(pairs) > 1:
            ratio += " [%s-%s]" % (min(pairs), max(pairs))
        return [name, fmt % statistics.median(off), fmt % statistics.median(on), ratio]
    rows = []
    for phase, what in (("busy", "while the cleaner catches up"), ("idle", "caught up")):
        rows += [
            row("probe p99 (ms), 1,000 records/s on another topic, " + what, lambda r: r[phase]["probe"]["p99"],
                "%.0f"),
            row("probe max (ms), " + what, lambda r: r[phase]["probe"]["max"], "%.0f"),
            row("kafka-topics.sh --create, 20 partitions (s, median), " + what, lambda r: r[phase]["create"], "%.2f"),
            row("kafka-topics.sh --delete (s, median), " + what, lambda r: r[phase]["delete"], "%.2f"),
        ]
    rows += [
        row("restart, launch to started (s)", lambda r: r["restart"], "%.1f"),
        row("time indexes mapped 10 s after the restart", lambda r: r["time_indexes"], "%d"),
        row("longest wait of a thread for the cleaner manager's lock (ms; JFR, waits of 1 ms or more)",
            lambda r: r["lock_wait"], "%.1f"),
        ["segments rewritten (the cleaner's lines) of those due", "-",
         " / ".join("%d of %d" % (r["recompressed"], r["closed"]) for r in ons), "-"],
        ["from recompression.lag.ms=0 to caught up (s)", "-",
         " / ".join("%.0f" % r["caught_up"] if not r["left"] else
                    "not after %.0f (%d partitions left)" % (r["caught_up"], r["left"]) for r in ons), "-"],
    ]
    return ("One broker, topic `%s`: %d partitions x %d closed lz4 segments of %d records; `recompression.lag.ms` "
            "off, then on (`compaction.compression.type=zstd`, default level)%s, %d pair(s) run off, on, off, on...: "
            "medians, and on/off as the medians' ratio [lowest-highest pair]\n\n" %
            (TOPIC, args.partitions, args.segments, args.records,
             "" if args.cleaner_io_bytes is None else ", `log.cleaner.io.max.bytes.per.second=%.0f`" % args.cleaner_io_bytes,
             args.pairs)
            + md_table(["", "off", "on", "on/off"], rows))


def main(argv):
    args = arguments(argv)
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    # measured: 2,000 x 5 segments ran under a 20,000 limit, 2,000 x 9 did not ("Too many open files" at round 8)
    need = int(args.partitions * (args.segments + 1) * 1.3) + 1500
    if need > soft:
        sys.exit("bench/scale: %d partitions x %d segments keep about %d files open, over this shell's limit of %d "
                 "(ulimit -n): fewer --segments or --partitions" % (args.partitions, args.segments + 1, need, soft))
    paths, ctx = standalone(os.environ)
    offs, ons = [], []
    for _ in range(args.pairs):
        offs.append(measure(ctx, paths, args, "off"))
        ons.append(measure(ctx, paths, args, "on"))
    text = report(args, offs, ons)
    out = os.path.join(paths.out, "scale")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(text + "\n")
    print(text)
    print("\n(%s)" % os.path.join(out, "report.md"))


if __name__ == "__main__":
    main(sys.argv[1:])
