"""recompression.lag.ms on a running broker from the distribution (patch 0031): an lz4 topic with
cleanup.policy=delete is set, with kafka-configs.sh and no restart, to have its closed segments rewritten
in zstd 19 by the log cleaner. Bytes on disk before and after come from the segment files and
kafka-dump-log.sh; every batch keeps its offsets, and every record is read back with its offset, before and
after, by stock 4.3.1's console consumer and by librdkafka (confluent-kafka). The broker's
CleanerRecompressionBytesIn/OutPerSec meters (kafka-jmx.sh) count the bytes the segment files lost, and
the advisor (--jmx-url) reports their Counts."""
import json
import re
import time
from pathlib import Path

import pytest

from conftest import DATA, DIST, free_port, full_only, require_dist, run, tool
from test_topic_metrics import jmx_counts

CLEANER_METRICS = ("CleanerRecompressionBytesInPerSec", "CleanerRecompressionBytesOutPerSec",
                   "CleanerRecompressionTimeNsPerSec")

BATCH = re.compile(r"baseOffset: (\d+) lastOffset: (\d+) count: (\d+) .*isControl: (\w+) .*"
                   r"size: (\d+) magic: \d+ compresscodec: (\w+)")
RECORDS_PER_ROUND = 30000


def configs(b, *args, check=True):
    return tool("kafka-configs.sh", "--bootstrap-server", b.bootstrap, *args, check=check)


def produce(b, topic, n, batch_size=1048576):
    """json-records.ndjson with lz4, 1 MiB batches, as a throughput-minded producer sends it."""
    tool("kafka-producer-perf-test.sh", "--topic", topic, "--num-records", str(n), "--throughput", "-1",
         "--payload-file", str(DATA / "json-records.ndjson"), "--producer-props", "bootstrap.servers=" + b.bootstrap,
         "acks=all", "compression.type=lz4", "batch.size=%d" % batch_size, "linger.ms=100")


def closed_batches(b, topic):
    """(base, last, count, codec, size) of every batch of every segment but the active one."""
    batches = []
    for seg in b.segments(topic)[:-1]:
        for m in BATCH.finditer(tool("kafka-dump-log.sh", "--files", str(seg)).stdout):
            base, last, count, control, size, codec = m.groups()
            batches.append((int(base), int(last), int(count), codec, int(size)))
    return batches


def closed_bytes(b, topic):
    return sum(seg.stat().st_size for seg in b.segments(topic)[:-1])


def read_stock(b, topic, n):
    return tool("kafka-console-consumer.sh", "--bootstrap-server", b.bootstrap, "--topic", topic,
                "--from-beginning", "--max-messages", str(n), "--timeout-ms", "60000",
                "--formatter-property", "print.offset=true", stock=True).stdout.splitlines()


def read_librdkafka(b, topic, end):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    c = confluent_kafka.Consumer({"bootstrap.servers": b.bootstrap, "group.id": "cold-%d" % time.time(),
                                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
    records, deadline = [], time.time() + 120
    while time.time() < deadline and (not records or records[-1][0] < end - 1):
        m = c.poll(1.0)
        if m is None:
            continue
        assert m.error() is None, m.error()
        records.append((m.offset(), m.value()))
    c.close()
    return records


def test_delete_policy_segments_recompressed_in_place(broker_factory):
    require_dist()
    jmx_port = free_port()
    b = broker_factory(extra_props={"log.cleaner.backoff.ms": "300"}, env={"JMX_PORT": str(jmx_port), "KAFKA_JMX_OPTS": (
        "-Dcom.sun.management.jmxremote -Dcom.sun.management.jmxremote.authenticate=false "
        "-Dcom.sun.management.jmxremote.ssl=false -Dcom.sun.management.jmxremote.host=127.0.0.1 "
        "-Djava.rmi.server.hostname=127.0.0.1")})
    topic = "cold"
    tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", topic, "--partitions", "1",
         "--replication-factor", "1", "--config", "cleanup.policy=delete", "--config", "segment.ms=2000")
    for _ in range(2):
        produce(b, topic, RECORDS_PER_ROUND)
        time.sleep(2.5)
    produce(b, topic, 1)   # rolls the second round's segment: the data is in closed segments
    end = 2 * RECORDS_PER_ROUND + 1

    before = closed_batches(b, topic)
    assert len(b.segments(topic)) >= 3 and {x[3] for x in before} == {"lz4"}, before
    bytes_before = closed_bytes(b, topic)
    stock_before = read_stock(b, topic, end)
    rdkafka_before = read_librdkafka(b, topic, end)
    assert len(stock_before) == end and len(rdkafka_before) == end

    refused = configs(b, "--alter", "--entity-type", "topics", "--entity-name", topic,
                      "--add-config", "recompression.lag.ms=-1", check=False)
    assert refused.returncode != 0 and "recompression.lag.ms" in refused.stdout + refused.stderr, refused
    configs(b, "--alter", "--entity-type", "topics", "--entity-name", topic, "--add-config",
            "compaction.compression.type=zstd,compression.zstd.level=19,recompression.lag.ms=0")
    described = configs(b, "--describe", "--entity-type", "topics", "--entity-name", topic).stdout
    assert "recompression.lag.ms=0" in described, described

    deadline = time.time() + 120
    after = closed_batches(b, topic)
    while time.time() < deadline and any(x[3] != "zstd" and x[2] > 2 for x in after):
        time.sleep(1)
        after = closed_batches(b, topic)
    assert not any(x[3] != "zstd" and x[2] > 2 for x in after), after
    bytes_after = closed_bytes(b, topic)
    ratio = bytes_after / bytes_before
    print("closed segments of %s: %d bytes in lz4, %d bytes after recompression to zstd 19 (%.3fx)"
          % (topic, bytes_before, bytes_after, ratio))
    assert ratio <= 0.6, (bytes_before, bytes_after)
    # every record keeps its offset: the batches cover the same offsets with the same records (the cleaner may merge
    # small batches, recompression.batch.bytes, so their boundaries may differ)
    covered = lambda batches: [o for base, last, *_ in batches for o in range(base, last + 1)]  # noqa: E731
    assert covered(after) == covered(before) and sum(x[2] for x in after) == sum(x[2] for x in before), \
        "record offsets changed: %s -> %s" % ([x[:3] for x in before][:5], [x[:3] for x in after][:5])
    assert "Recompressed segment" in b.log_text("log-cleaner.log")
    counts = jmx_counts(jmx_port)
    read, written = (counts.get(("CleanerRecompressionBytes%sPerSec" % d, topic)) for d in ("In", "Out"))
    print("CleanerRecompressionBytesInPerSec %s, CleanerRecompressionBytesOutPerSec %s" % (read, written))
    assert read - written == bytes_before - bytes_after, (read, written, bytes_before, bytes_after)
    assert counts.get(("CleanerRecompressionTimeNsPerSec", topic), 0) > 0

    # the advisor reports the same Counts (--jmx-url), in its text and in its JSON
    cleaner = {n: counts[(n, topic)] for n in CLEANER_METRICS}
    advisor = [str(DIST / "bin" / "kafka-compression-advisor.sh"), "--bootstrap-server", b.bootstrap, "--topic", topic,
               "--jmx-url", "service:jmx:rmi:///jndi/rmi://127.0.0.1:%d/jmxrmi" % jmx_port, "--codecs", "zstd:3",
               "--providers", "none", "--max-records", "300", "--warmup-bytes", str(1 << 18), "--no-progress"]
    lines = run(advisor, timeout=300).stdout.splitlines()
    [live] = [l for l in lines if l.startswith("Live on the broker")]
    line = lines[lines.index(live) + 1]   # the cleaner's line follows the live ratio's
    print(live)
    print(line)
    m = re.match(r"The log cleaner rewrote ([\d,]+) bytes of the topic's batches into ([\d,]+) \(ratio ([\d.]+)\) "
                 r"in ([\d,]+) ms \(compaction recompression and recompression.lag.ms, all replicas", line)
    assert m, line
    shown_in, shown_out, shown_ms = (int(m.group(i).replace(",", "")) for i in (1, 2, 4))
    assert (shown_in, shown_out) == (read, written), (line, read, written)
    assert abs(float(m.group(3)) - written / read) <= 0.00005, line
    assert abs(shown_ms - cleaner["CleanerRecompressionTimeNsPerSec"] / 1e6) <= 0.5, (line, cleaner)
    advised = json.loads(run(advisor + ["--format", "json"], timeout=300).stdout)["broker_metrics"]
    print("advisor broker_metrics:", advised)
    assert {n: advised[n] for n in CLEANER_METRICS} == cleaner, (advised, cleaner)

    assert read_stock(b, topic, end) == stock_before
    assert read_librdkafka(b, topic, end) == rdkafka_before


def first_offset_librdkafka(b, topic, offset):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    c = confluent_kafka.Consumer({"bootstrap.servers": b.bootstrap, "group.id": "inside-%d" % time.time(),
                                  "enable.auto.commit": False})
    c.assign([confluent_kafka.TopicPartition(topic, 0, offset)])
    m, deadline = None, time.time() + 60
    while m is None and time.time() < deadline:
        m = c.poll(1.0)
    c.close()
    assert m is not None and m.error() is None, m
    return m.offset()


def first_offset_kafka_python(b, topic, offset):
    kafka = pytest.importorskip("kafka")
    c = kafka.KafkaConsumer(bootstrap_servers=b.bootstrap, enable_auto_commit=False)
    tp = kafka.TopicPartition(topic, 0)
    c.assign([tp])
    c.seek(tp, offset)
    records, deadline = [], time.time() + 60
    while not records and time.time() < deadline:
        records = c.poll(timeout_ms=1000).get(tp, [])
    c.close()
    assert records, "kafka-python read nothing from offset %d" % offset
    return records[0].offset


def first_offset_java(b, topic, offset, stock):
    out = tool("kafka-console-consumer.sh", "--bootstrap-server", b.bootstrap, "--topic", topic, "--partition", "0",
               "--offset", str(offset), "--max-messages", "1", "--timeout-ms", "60000",
               "--formatter-property", "print.offset=true", stock=stock).stdout
    return int(re.search(r"Offset:(\d+)", out).group(1))


def test_small_batches_merged_when_recompressed(broker_factory):
    """Records sent in small lz4 batches (linger.ms=0, batch.size=16384, 10,000 records/s), rewritten to zstd 19,
    are merged into batches of up to recompression.batch.bytes (1 MiB by default): at most 0.45x of their lz4 bytes,
    every record read back with its offset, and a consumer that starts at an offset inside a merged batch (stock
    4.3.1's Java consumer, ours, librdkafka, kafka-python) gets that offset first."""
    require_dist()
    b = broker_factory(extra_props={"log.cleaner.backoff.ms": "300"})
    topic = "small"
    tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", topic, "--partitions", "1",
         "--replication-factor", "1", "--config", "cleanup.policy=delete", "--config", "segment.bytes=1048576")
    n = 20000
    tool("kafka-producer-perf-test.sh", "--topic", topic, "--num-records", str(n), "--throughput", "10000",
         "--payload-file", str(DATA / "json-records.ndjson"), "--producer-props", "bootstrap.servers=" + b.bootstrap,
         "acks=all", "compression.type=lz4", "batch.size=16384", "linger.ms=0")
    before = closed_batches(b, topic)
    assert len(before) > 200 and {x[3] for x in before} == {"lz4"}, len(before)
    bytes_before = closed_bytes(b, topic)
    stock_before = read_stock(b, topic, n)
    assert len(stock_before) == n

    configs(b, "--alter", "--entity-type", "topics", "--entity-name", topic, "--add-config",
            "compaction.compression.type=zstd,compression.zstd.level=19,recompression.lag.ms=0")
    started = time.time()
    deadline = started + 180
    after = closed_batches(b, topic)
    while time.time() < deadline and any(x[3] != "zstd" for x in after):
        time.sleep(1)
        after = closed_batches(b, topic)
    elapsed = time.time() - started
    assert not any(x[3] != "zstd" for x in after), after
    bytes_after = closed_bytes(b, topic)
    print("%d closed lz4 batches, %d bytes -> %d zstd-19 batches, %d bytes (%.3fx) in about %.0f s"
          % (len(before), bytes_before, len(after), bytes_after, bytes_after / bytes_before, elapsed))
    assert bytes_after <= 0.45 * bytes_before, (bytes_before, bytes_after)
    assert len(after) * 20 < len(before), (len(before), len(after))
    # the merged batches cover the same offsets, in order, without a gap
    assert after[0][0] == before[0][0] and after[-1][1] == before[-1][1]
    assert all(x[0] == y[1] + 1 for y, x in zip(after, after[1:])), after
    assert read_stock(b, topic, n) == stock_before

    base, last, count = next(x[:3] for x in after if x[2] > 2)
    inside = base + count // 2
    assert first_offset_java(b, topic, inside, stock=True) == inside
    assert first_offset_java(b, topic, inside, stock=False) == inside
    assert first_offset_librdkafka(b, topic, inside) == inside
    assert first_offset_kafka_python(b, topic, inside) == inside


def time_indexes_mapped(b):
    """The distinct .timeindex files the broker's JVM has mapped (/proc/PID/maps), the count that counts against
    vm.max_map_count."""
    maps = Path("/proc/%d/maps" % b.proc.pid).read_text()
    return len({line.split()[-1] for line in maps.splitlines() if line.endswith(".timeindex")})


@full_only
def test_restart_reads_no_recompressed_segment(broker_factory):
    """A restarted broker maps no more time indexes with recompression.lag.ms on, all its segments done, than with
    it off: the cleaner's progress is in recompression-offset-checkpoint, and a done segment is not read again."""
    require_dist()
    partitions = 24
    b = broker_factory(extra_props={"log.cleaner.backoff.ms": "300"})
    topic = "many"
    tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", topic, "--partitions",
         str(partitions), "--replication-factor", "1", "--config", "cleanup.policy=delete", "--config",
         "segment.ms=1500")
    for _ in range(3):
        produce(b, topic, 4000, batch_size=16384)   # batches of a few dozen records, over every partition
        time.sleep(1.6)
    produce(b, topic, 4000, batch_size=16384)   # rolls the last round's segments
    closed = sum(len(b.segments(topic, p)) - 1 for p in range(partitions))
    assert closed >= 2 * partitions, closed
    configs(b, "--alter", "--entity-type", "topics", "--entity-name", topic, "--add-config",
            "compaction.compression.type=zstd,compression.zstd.level=3,recompression.lag.ms=0")

    checkpoint = b.data / "recompression-offset-checkpoint"

    def done():   # every partition's progress is at its active segment
        if not checkpoint.exists():
            return False
        offsets = dict(line.rsplit(" ", 1) for line in checkpoint.read_text().splitlines()[2:])
        return all(offsets.get("%s %d" % (topic, p)) == str(int(b.segments(topic, p)[-1].stem))
                   for p in range(partitions))
    deadline = time.time() + 180
    while time.time() < deadline and not done():
        time.sleep(1)
    assert done(), checkpoint.read_text() if checkpoint.exists() else "no " + str(checkpoint)

    b.restart()
    time.sleep(10)   # about 30 cleaner passes (log.cleaner.backoff.ms=300); retention's first check is at 30 s
    on = time_indexes_mapped(b)
    configs(b, "--alter", "--entity-type", "topics", "--entity-name", topic, "--delete-config", "recompression.lag.ms")
    b.restart()
    time.sleep(10)
    off = time_indexes_mapped(b)
    print("time indexes mapped 10 s after a restart, %d partitions with %d closed segments: recompression on %d, off %d"
          % (partitions, closed, on, off))
    assert on <= off, (on, off)
