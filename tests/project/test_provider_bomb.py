"""Decompression bombs against a broker with a KIP-1121 provider (issue 16).

A -Xmx1g broker from the distribution with native-gzip as compression.gzip.provider, and a stock Apache Kafka 4.3.1
broker with the same heap beside it, each get the same produce requests (one batch each, built with Kafka's own
codec by tests/project/bomb/BombClient.java and sent over a plain socket):

- 100 records of 8 MB of one repeated character, gzip (about 780 KB on the wire): the issue's bomb;
- 4 records of 64 MB (fewer, larger), and 100,000 records of 8 KB (many small), gzip;
- lz4 and zstd bombs (40 records of 8 MB) into a topic with compression.type=gzip, which the broker recompresses.

Both brokers run with -XX:+ExitOnOutOfMemoryError, as many production images do. Each request must get the same
answer from both, the stored batches must be the same (byte for byte where the broker keeps the producer's batch),
and a consumer with the provider and -Xmx512m reads the gzip bombs back from our broker through the provider.
The peak heap of our broker (from its GC log) is printed.

test_bombs_from_many_producers_keep_the_heap_bounded_per_broker (issue 29, about 130 s with 60 s of traffic in
./build.sh test --full, 20 s of it in CI) floods two
-Xmx512m brokers with 32 request handler threads, with and without the provider, from 8 producers at once: the
provider's memory is bounded per broker, not per thread.

Needs: ./build.sh (the distribution), a JDK, the stock jars under build/upstream/libs.
"""
import glob
import re
import subprocess
import time

import pytest

from conftest import DATA, DIST, FULL, ROOT, require_dist, run, tool

PROVIDER = "io.kafkacompress.nativegzip.NativeGzipCompressionService"
MB = 1000 * 1000
# the largest batch, uncompressed, the framework hands a provider whole (CompressionService.maxWholeBatchBytes())
WHOLE_BATCH_BYTES = 8 * 1024 * 1024
# name: (codec, records, record bytes, topic compression.type)
VARIANTS = {
    "gzip-100x8MB": ("gzip", 100, 8 * MB, "producer"),
    "gzip-4x64MB": ("gzip", 4, 64 * MB, "producer"),
    "gzip-100000x8KB": ("gzip", 100_000, 8 * 1000, "producer"),
    "lz4-40x8MB-to-gzip": ("lz4", 40, 8 * MB, "gzip"),
    "zstd-40x8MB-to-gzip": ("zstd", 40, 8 * MB, "gzip"),
}
CONSUMED = ("gzip-100x8MB", "gzip-4x64MB", "lz4-40x8MB-to-gzip")


def say(msg):
    print(f"[test_provider_bomb] {msg}", flush=True)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    require_dist()
    out = tmp_path_factory.mktemp("bomb-client")
    run(["javac", "--release", "17", "-proc:none", "-d", str(out), "-cp", str(DIST / "libs" / "*"),
         str(ROOT / "tests" / "project" / "bomb" / "BombClient.java")])
    return "%s:%s" % (out, DIST / "libs" / "*")


def bomb_client(cp, *args, heap="-Xmx2g", timeout=600):
    p = subprocess.run(["java", heap, "-cp", cp, "BombClient"] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, "BombClient %s failed (%d):\n%s\n%s" % (args[0], p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    return p.stdout


def peak_heap_mb(gc_logs):
    """The most heap in use before any collection, and the most still in use after one, in MB. G1's Remark and
    Cleanup pauses of a concurrent cycle report the heap without collecting anything (with the garbage of a whole
    marking cycle in it): they count for "before" only."""
    before, after = 0, 0
    for f in gc_logs:
        for line in open(f, errors="replace"):
            m = re.search(r"(\d+)M->(\d+)M\(\d+M\)", line)
            if m:
                before = max(before, int(m.group(1)))
                if not re.search(r"Pause (Remark|Cleanup)", line):
                    after = max(after, int(m.group(2)))
    return before, after


def gc_log_opt(tmp_path, name):
    """The JVM option that writes the GC log of broker_factory's broker `name` into its directory."""
    return "-Xlog:gc:file=%s" % (tmp_path / name / "gc-%p.log")


def broker_heap_mb(broker):
    """peak_heap_mb of a broker started with gc_log_opt."""
    return peak_heap_mb(glob.glob(str(broker.dir / "gc-*.log")))


# G1 runs a full collection once a broker has been idle (no collection) for 2 s, so that its GC log tells the heap the
# broker still holds: the peak "after a collection" of young pauses also counts dead batches in old regions that no
# marking cycle has reclaimed yet, which moves by 100 MB and more from run to run with the collector's timing.
LIVE_HEAP_OPTS = ["-XX:G1PeriodicGCInterval=2000", "-XX:-G1PeriodicGCInvokesConcurrent"]
PERIODIC_FULL = re.compile(r"Pause Full \(G1 Periodic Collection\) (\d+)M->(\d+)M")


def live_heap_mb(broker, timeout=60):
    """The heap in MB a broker started with gc_log_opt and LIVE_HEAP_OPTS holds after its next idle full
    collection (the caller sends it nothing meanwhile)."""
    def fulls():
        found = []
        for f in sorted(glob.glob(str(broker.dir / "gc-*.log"))):
            found += [int(m.group(2)) for m in PERIODIC_FULL.finditer(open(f, errors="replace").read())]
        return found
    seen = len(fulls())
    deadline = time.time() + timeout
    while time.time() < deadline:
        now = fulls()
        if len(now) > seen:
            return now[-1]
        time.sleep(0.5)
    raise AssertionError("no idle full collection in %ds in %s's GC log" % (timeout, broker.dir))


def test_bombs_are_stored_as_by_a_stock_broker(broker_factory, client, tmp_path):
    opts = ["-XX:+ExitOnOutOfMemoryError"] + LIVE_HEAP_OPTS
    ours = broker_factory("ours", heap="-Xmx1g", jvm_opts=opts + [gc_log_opt(tmp_path, "ours")],
                          extra_props={"compression.gzip.provider": PROVIDER, "compression.gzip.provider.required": "true"})
    stock = broker_factory("stock", stock=True, heap="-Xmx1g", jvm_opts=opts + [gc_log_opt(tmp_path, "stock")])
    assert re.search(r"Compression provider for gzip: native gzip", ours.output()), ours.output()[-3000:]
    check_bombs_against_stock(ours, stock, client, PROVIDER)


def check_bombs_against_stock(ours, stock, client, provider, names=tuple(VARIANTS)):
    """Sends each of the VARIANTS `names` to `ours` (with `provider`) and to `stock` (both started with gc_log_opt):
    the same answers, the same stored batches, `ours` alive without OutOfMemoryError and holding at most 64 MB more
    heap after a collection; then a consumer with native-gzip and -Xmx512m reads those of them in CONSUMED back from
    `ours`, each one batch past the provider's whole-batch limit, so read by the built-in codec with no failure
    counted (native-gzip has no stream)."""
    timestamp = int(time.time() * 1000)
    for name in names:
        codec, records, size, topic_codec = VARIANTS[name]
        answers = {}
        for label, broker in (("ours", ours), ("stock", stock)):
            run([str(DIST / "bin" / "kafka-topics.sh"), "--bootstrap-server", broker.bootstrap, "--create", "--topic", name,
                 "--partitions", "1", "--replication-factor", "1", "--config", "compression.type=" + topic_codec,
                 "--config", "max.message.bytes=104857600"])
            out = bomb_client(client, "produce", broker.bootstrap, name, codec, records, size, timestamp)
            answers[label] = re.search(r"wire=(\d+) error=(-?\d+) (.*)", out).groups()
            assert broker.proc.poll() is None, "%s broker died on %s:\n%s" % (label, name, broker.output()[-4000:])
        say("%s: %s bytes on the wire; ours: error %s, stock: error %s" % (name, answers["ours"][0], answers["ours"][1], answers["stock"][1]))
        assert answers["ours"][1:] == answers["stock"][1:], (name, answers)
        assert answers["ours"][1] == "0", "the stock broker refused %s too; the variant proves nothing: %s" % (name, answers)
        mine, theirs = ours.segments(name), stock.segments(name)
        if topic_codec == "producer":
            assert [p.read_bytes() for p in mine] == [p.read_bytes() for p in theirs], name
        else:
            dumps = []
            for segs in (mine, theirs):
                dump = run([str(DIST / "bin" / "kafka-dump-log.sh"), "--files", ",".join(str(s) for s in segs)]).stdout
                dumps.append(re.findall(r"baseOffset: (\d+) lastOffset: (\d+) count: (\d+).*?compresscodec: (\w+)", dump))
            assert dumps[0] == dumps[1] and dumps[0], (name, dumps)
    ours_heap, stock_heap = broker_heap_mb(ours), broker_heap_mb(stock)
    ours_live, stock_live = live_heap_mb(ours), live_heap_mb(stock)
    say("peak heap in use (MB, before / after a collection), %s: ours with %s %d / %d, stock %d / %d; "
        "after an idle full collection: ours %d, stock %d"
        % (ours.heap, provider, ours_heap[0], ours_heap[1], stock_heap[0], stock_heap[1], ours_live, stock_live))
    assert ours.proc.poll() is None, ours.output()[-4000:]
    assert "OutOfMemoryError" not in ours.output()
    # what a full collection leaves is what the broker holds; the provider may add its bounded buffers (48 MiB an owner)
    assert ours_live <= stock_live + 64, (ours_live, stock_live)

    for name in (n for n in CONSUMED if n in names):
        codec, records, size, topic_codec = VARIANTS[name]
        out = bomb_client(client, "consume", ours.bootstrap, name, records, size, PROVIDER, heap="-Xmx512m")
        say("%s read back with the provider at -Xmx512m: %s" % (name, " ".join(out.split())))
        assert "records=%d" % records in out, out
        batches = float(re.search(r"decompression-batches-total=([\d.]+)", out).group(1))
        if records * size <= WHOLE_BATCH_BYTES:
            assert batches >= 1, "the consumer did not decompress through its provider: " + out
        else:
            # the variant is one batch (its records together) past the whole-batch limit: the consumer's framework
            # reads it with the built-in codec, as native-gzip has no stream of its own, and counts no failure
            assert batches == 0, "a batch past the provider's whole-batch limit went to the provider: " + out
        assert float(re.search(r"decompression-fallbacks-total=([\d.]+)", out).group(1)) == 0, out


def test_many_batches_of_varied_sizes_keep_the_heap_bounded(broker_factory, tmp_path):
    """Ordinary traffic, not a bomb: some 1,500 gzip batches of json-records, each of a different uncompressed size
    (under native-gzip's 1 MiB whole-member limit, so it inflates each in one call into a buffer it borrows through
    the framework), against a -Xmx256m broker. A request handler's BufferSupplier keeps a buffer of every capacity
    it is given back, so lending each batch's exact size made a -Xmx1g broker run out of heap in the benchmark; the
    framework lends power-of-two capacities instead."""
    b = broker_factory("varied", heap="-Xmx256m", jvm_opts=["-XX:+ExitOnOutOfMemoryError", gc_log_opt(tmp_path, "varied")],
                       extra_props={"compression.gzip.provider": PROVIDER, "compression.gzip.provider.required": "true"})
    tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", "varied")
    records = 1_000_000
    p = tool("kafka-producer-perf-test.sh", "--topic", "varied", "--num-records", str(records), "--throughput", "-1",
             "--payload-file", str(DATA / "json-records.ndjson"),
             "--producer-props", "bootstrap.servers=" + b.bootstrap, "compression.type=gzip", "acks=1",
             "batch.size=65536", "linger.ms=5", "request.timeout.ms=10000", "delivery.timeout.ms=30000",
             check=False, timeout=600)
    # before the fix the broker ran out of heap (ExitOnOutOfMemoryError) after a few hundred batches
    assert b.proc.poll() is None, "the broker died:\n" + b.output()[-4000:]
    assert "%d records sent" % records in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    assert "OutOfMemoryError" not in b.output()
    dump = run([str(DIST / "bin" / "kafka-dump-log.sh"), "--files", ",".join(str(s) for s in b.segments("varied"))]).stdout
    sizes = re.findall(r"count: (\d+)", dump)
    heap = broker_heap_mb(b)
    say("%d batches (%d distinct record counts) through %s at -Xmx256m; peak heap in use %d MB, after a collection %d MB"
        % (len(sizes), len(set(sizes)), PROVIDER, heap[0], heap[1]))
    assert len(set(sizes)) >= 100, "too few distinct batch sizes to prove anything: %d" % len(set(sizes))


def test_bombs_from_many_producers_keep_the_heap_bounded_per_broker(broker_factory, client, tmp_path):
    """Issue 29: -Xmx512m brokers with num.io.threads=32, one with native-gzip and one without a provider, each take
    FLOOD_SECONDS of bombs (one record of 4 to 8 MB of one repeated byte a batch: gzip, validated through the provider, and
    lz4 into a gzip topic, recompressed through it) from 8 concurrent producers, beside a normal producer. Each
    request handler thread gets its own buffer supplier: when each kept its own provider buffers the provider broker
    ran out of heap. Both must answer every request without error and the provider broker's heap that survives a
    collection must stay within the other's + 64 MB. Takes about 100 s."""
    brokers = {}
    for label, props in (("provider", {"compression.gzip.provider": PROVIDER, "compression.gzip.provider.required": "true"}),
                         ("none", {})):
        props.update({"num.io.threads": str(FLOOD_IO_THREADS)})
        brokers[label] = broker_factory("flood-" + label, heap="-Xmx512m", extra_props=props,
                                        jvm_opts=[gc_log_opt(tmp_path, "flood-" + label)])
    flood_and_check(brokers, client)


# 60 s of bombs with ./build.sh test --full, 20 s in CI: 20 s still sends each broker several times as many bomb
# requests as it has request handler threads (2026-11-29: 137 to 312 a broker, QAT and native-gzip)
FLOOD_SECONDS, FLOOD_PRODUCERS, FLOOD_IO_THREADS = 60 if FULL else 20, 8, 32


def flood_and_check(brokers, client):
    """FLOOD_SECONDS of bombs from FLOOD_PRODUCERS producers at once to each of brokers {"provider": ..., "none": ...}
    (started with num.io.threads=FLOOD_IO_THREADS and gc_log_opt), beside a normal producer each: every request
    answered without error, the brokers alive without OutOfMemoryError, the provider broker's heap after a collection
    within the other's + 64 MB."""
    seconds, producers = FLOOD_SECONDS, FLOOD_PRODUCERS
    for b in brokers.values():
        tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", "bombs",
             "--config", "compression.type=gzip", "--config", "max.message.bytes=104857600")
        tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", "normal")
    normal = {}
    for label, b in brokers.items():
        normal[label] = subprocess.Popen(
            [str(DIST / "bin" / "kafka-producer-perf-test.sh"), "--topic", "normal", "--num-records", str(seconds * 500),
             "--throughput", "500", "--payload-file", str(DATA / "json-records.ndjson"),
             "--producer-props", "bootstrap.servers=" + b.bootstrap, "compression.type=gzip", "acks=all",
             "batch.size=65536", "linger.ms=5", "delivery.timeout.ms=120000"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = bomb_client(client, "flood", ",".join(b.bootstrap for b in brokers.values()), "bombs", seconds, producers,
                      heap="-Xmx1g", timeout=seconds + 400)
    load = open("/proc/loadavg").read().split()[:3]
    answers = {b: (int(n), e) for b, n, e in re.findall(r"bootstrap=(\S+) requests=(\d+) errors=(\S*)", out)}
    normal_out = {label: p.communicate(timeout=600)[0] for label, p in normal.items()}
    heap = {label: broker_heap_mb(b) for label, b in brokers.items()}
    for label, b in brokers.items():
        requests, errors = answers[b.bootstrap]
        say("flood, %s broker (%s, num.io.threads=%d): %d bomb requests from %d producers in %d s, error codes %s; "
            "heap in use before / after a collection at most %d / %d MB; OutOfMemoryErrors in its log: %d; load %s"
            % (label, b.heap, FLOOD_IO_THREADS, requests, producers, seconds, errors, heap[label][0], heap[label][1],
               b.output().count("OutOfMemoryError"), " ".join(load)))
    for label, b in brokers.items():
        requests, errors = answers[b.bootstrap]
        assert b.proc.poll() is None, "the %s broker died:\n%s" % (label, b.output()[-4000:])
        assert requests >= producers and errors == "0:%d" % requests, (label, answers[b.bootstrap])
        assert "OutOfMemoryError" not in b.output(), (label, b.output()[-4000:])
        assert "%d records sent" % (seconds * 500) in normal_out[label], (label, normal_out[label][-3000:])
        assert "Exception" not in normal_out[label], (label, normal_out[label][-3000:])
    assert heap["provider"][1] <= heap["none"][1] + 64, heap
