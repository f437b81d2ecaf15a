"""The producer of two commits of this repository, side by side in one run: each commit's distribution built by its
own ./build.sh, and whole kafka-producer-perf-test.sh runs (start-up included) of each with the gzip provider,
interleaved with stock Apache Kafka 4.3.1's producer and its built-in gzip, which calibrates the run: stock runs
twice per round, and the spread of the second over the first is what two runs of the same producer differ by here.
Per setting (gzip level x batch.size x records): producer CPU per MB of records (utime+stime of the perf-test JVM
from /proc when it prints its summary), records/s and p99, medians of the rounds [lowest-highest]. All producers
send to one stock 4.3.1 broker. Standalone: bench/compare/run.sh --help."""

import argparse
import copy
import os
import statistics
import subprocess
import sys
import time

from benchlib.brokers import Broker, Impl, proc_cpu_seconds, run, run_stream
from benchlib.common import PROVIDERS, md_table
from benchlib.context import standalone
from tables.t7_perftest import SUMMARY

BATCHES = {1048576: "100", 262144: "20"}    # batch.size -> linger.ms, as table 1 runs them
SMALL = (100, 350)                          # the small records: the project's records of 100 to 350 bytes


def arguments(argv):
    p = argparse.ArgumentParser(prog="bench/compare/run.sh", description=__doc__)
    p.add_argument("rev_a", metavar="REV_A", help="a commit of this repository (git rev-parse), or . for the checkout's "
                   "own build (build/dist, as ./build.sh build left it)")
    p.add_argument("rev_b", metavar="REV_B", help="the same, for the other side")
    p.add_argument("--provider", default="native-gzip", choices=sorted(PROVIDERS),
                   help="the gzip provider both sides' producers load (default native-gzip)")
    p.add_argument("--levels", default="6,1", help="gzip levels (default 6,1)")
    p.add_argument("--batches", default="1048576,262144", help="batch.size values (default 1048576,262144; "
                   "linger.ms 100 and 20 as table 1)")
    p.add_argument("--records", default="project,small", help="project (tests/data/json-records.ndjson), small "
                   "(its records of 100-350 B) or both (default)")
    p.add_argument("--num-records", type=int, default=400000, help="records per perf-test run (default 400000)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds per setting (default 3)")
    return p.parse_args(argv)


def dist_of(paths, rev, log):
    """The distribution directory of REV: the checkout's own build for ".", else a worktree of the commit under
    build/compare/, built with that commit's ./build.sh the first time."""
    if rev == ".":
        return paths.dist, "the checkout (build/dist)"
    sha = subprocess.run(["git", "-C", paths.root, "rev-parse", "--verify", rev + "^{commit}"], stdout=subprocess.PIPE,
                         text=True, check=True).stdout.strip()
    tree = os.path.join(paths.build, "compare", sha[:12])
    if not os.path.isdir(tree):
        subprocess.run(["git", "-C", paths.root, "worktree", "add", "--detach", tree, sha], check=True,
                       stdout=subprocess.DEVNULL)
    dists = [d for d in sorted(os.listdir(os.path.join(tree, "build", "dist"))) if d.startswith("kafka_")
             and os.path.isdir(os.path.join(tree, "build", "dist", d))] if os.path.isdir(os.path.join(tree, "build", "dist")) else []
    if not dists:
        print("[compare] building %s with its own ./build.sh (log: %s)" % (sha[:12], log), flush=True)
        run([os.path.join(tree, "build.sh"), "build"], dict(os.environ), log, timeout=7200)
        dists = [d for d in sorted(os.listdir(os.path.join(tree, "build", "dist"))) if d.startswith("kafka_")
                 and os.path.isdir(os.path.join(tree, "build", "dist", d))]
    subject = subprocess.run(["git", "-C", paths.root, "log", "-1", "--format=%h %s", sha], stdout=subprocess.PIPE,
                             text=True, check=True).stdout.strip()
    return os.path.join(tree, "build", "dist", dists[0]), subject


def payloads(paths):
    """The payload files: the project's records, and those of them 100-350 B long (the small records)."""
    small = os.path.join(paths.work, "compare-small-records.ndjson")
    with open(paths.json, "rb") as f:
        lines = [r for r in f.read().split(b"\n") if SMALL[0] <= len(r) <= SMALL[1]]
    with open(small, "wb") as f:
        f.write(b"\n".join(lines) + b"\n")
    return {"project": paths.json, "small": small}


def mean_record_bytes(path):
    with open(path, "rb") as f:
        records = [r for r in f.read().split(b"\n") if r]
    return sum(map(len, records)) / len(records)


def perf_test(impl, broker, topic, payload, props, num_records, log):
    """One whole kafka-producer-perf-test.sh run, unthrottled; its CPU from /proc when it prints its summary."""
    args = ["--topic", topic, "--num-records", str(num_records), "--throughput", "-1", "--payload-file", payload,
            "--producer-props", "bootstrap.servers=" + broker.bootstrap]
    args += ["%s=%s" % kv for kv in dict(props, **impl.provider_props()).items()]
    cmd, env = impl.cmd("perf", args)
    r = {}

    def on_start(p):
        r["pid"] = p.pid

    def on_line(line):
        m = SUMMARY.match(line.strip())
        if m:
            r.update(cpu=proc_cpu_seconds(r["pid"]), records=int(m.group(1)), records_s=float(m.group(2)),
                     p99_ms=float(m.group(8)))
    run_stream(cmd, env, log, on_line, timeout=1800, on_start=on_start)
    if "cpu" not in r:
        raise RuntimeError("no summary line from kafka-producer-perf-test.sh; see " + log)
    return r


def spread(xs, fmt="%.2f"):
    return (fmt + " [" + fmt + "-" + fmt + "]") % (statistics.median(xs), min(xs), max(xs))


def main(argv):
    args = arguments(argv)
    paths, ctx = standalone(os.environ)
    out = os.path.join(paths.build, "compare")
    os.makedirs(out, exist_ok=True)
    log = os.path.join(paths.logs, "compare.log")
    sides = {}
    for name, rev in (("A", args.rev_a), ("B", args.rev_b)):
        dist, subject = dist_of(paths, rev, os.path.join(out, "build-%s.log" % name))
        side_paths = copy.copy(paths)
        side_paths.dist = dist
        sides[name] = (Impl(side_paths, name, True, PROVIDERS[args.provider]), subject)
    stock = Impl(paths, "stock", False)
    files = payloads(paths)
    kinds = [k.strip() for k in args.records.split(",")]
    broker = Broker(ctx, stock, "compare").start()
    results = []
    try:
        n = 0
        for kind in kinds:
            for batch in [int(b) for b in args.batches.split(",")]:
                for level in [int(v) for v in args.levels.split(",")]:
                    props = {"acks": "1", "compression.type": "gzip", "compression.gzip.level": str(level),
                             "batch.size": str(batch), "linger.ms": BATCHES.get(batch, "100"),
                             "max.request.size": str(max(batch, 1048576))}
                    runs = {"stock": [], "stock again": [], "A": [], "B": []}
                    order = [("stock", stock), ("A", sides["A"][0]), ("stock again", stock), ("B", sides["B"][0])]
                    for rnd in range(args.rounds):
                        # rotate the order each round, so neither side always runs after the other
                        for name, impl in order[rnd % 4:] + order[:rnd % 4]:
                            n += 1
                            topic = "compare-%d" % n
                            broker.create_topic(topic, {})
                            r = perf_test(impl, broker, topic, files[kind], props, args.num_records, log)
                            broker.delete_topic(topic)
                            runs[name].append(r)
                            ctx.progress("%s gzip-%d batch %d %s: %.1f CPU-s, %.0f records/s, p99 %.0f ms"
                                         % (kind, level, batch, name, r["cpu"], r["records_s"], r["p99_ms"]))
                    results.append((kind, batch, level, runs))
    finally:
        broker.stop()
    report = markdown(args, paths, files, sides, results)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(report)
    print(report)
    print("\nreport: %s" % os.path.join(out, "report.md"))


def markdown(args, paths, files, sides, results):
    rows = []
    for kind, batch, level, runs in results:
        mb = {name: [r["records"] * mean_record_bytes(files[kind]) / 1e6 for r in rs] for name, rs in runs.items()}
        cpu = {name: [1000 * r["cpu"] / m for r, m in zip(rs, mb[name])] for name, rs in runs.items()}

        def ratio(a, b, key=None):
            if key is None:
                return [x / y for x, y in zip(cpu[a], cpu[b])]
            return [x[key] / y[key] for x, y in zip(runs[a], runs[b])]
        calib = ratio("stock again", "stock")
        b_over_a = statistics.median(ratio("B", "A"))
        band = max(abs(c - 1) for c in calib)
        verdict = ("same within +-%.0f%%" % (100 * band) if abs(b_over_a - 1) <= band
                   else "B %s by %.0f%%, past +-%.0f%%" % ("costs more" if b_over_a > 1 else "costs less",
                                                         100 * abs(b_over_a - 1), 100 * band))
        rows.append(["%s (%.0f B)" % (kind, mean_record_bytes(files[kind])), "%d KiB" % (batch // 1024), level,
                     spread(cpu["stock"], "%.0f"), spread(ratio("A", "stock")), spread(ratio("B", "stock")),
                     spread(ratio("B", "A")), spread(calib), verdict,
                     spread(ratio("A", "stock", "records_s")), spread(ratio("B", "stock", "records_s")),
                     spread(ratio("A", "stock", "p99_ms")), spread(ratio("B", "stock", "p99_ms"))])
    head = ("Command: `bench/compare/run.sh %s %s --provider %s --levels %s --batches %s --records %s --num-records %d "
            "--rounds %d` (%s UTC).\n\nA = %s; B = %s. Each producer is a whole `kafka-producer-perf-test.sh` run, "
            "unthrottled, %d records, `acks=1`, start-up included, to one stock 4.3.1 broker on the same host; A and B "
            "load `%s` (`compression.gzip.provider`), stock uses its built-in gzip. Rounds of stock, A, stock again, B, "
            "the order rotated each round; medians of %d rounds [lowest-highest]. CPU/MB: utime+stime of the producer "
            "JVM (`/proc/<pid>/stat`) when it prints its summary, per 10^6 bytes of records. The calibration is stock "
            "again over stock: what two runs of one producer differ by in this run; the verdict "
            "compares B over A's median with the widest of those rounds.\n\n"
            % (args.rev_a, args.rev_b, args.provider, args.levels, args.batches, args.records, args.num_records,
               args.rounds, time.strftime("%Y-%m-%d %H:%M", time.gmtime()), sides["A"][1], sides["B"][1],
               args.num_records, PROVIDERS[args.provider], args.rounds))
    return head + md_table(["records", "batch", "gzip", "stock CPU ms/MB", "A CPU/MB vs stock", "B CPU/MB vs stock",
                            "B / A CPU/MB", "calibration (stock/stock)", "verdict", "A records/s vs stock",
                            "B records/s vs stock", "A p99 vs stock", "B p99 vs stock"], rows) + "\n"


if __name__ == "__main__":
    main(sys.argv[1:])
