"""Compaction recompression on a real broker keeps the log's limits (issue 19, KIP-390 patches 0008 and
0009): a zstd-19 topic with segment.bytes=1048576 and compaction.compression.type=uncompressed, fed 30,000 JSON
records with distinct keys, grows about sevenfold when cleaned. Every cleaned segment must stay within
segment.bytes (or hold a single batch), the partition must keep being cleaned, and every key's latest
value must be read back. Prints the segment sizes before and after and the cleaner's log lines with
their times, the figures docs/compaction.md quotes. A zstd topic with max.message.bytes=131072 whose
batches grow past it when cleaned into uncompressed batches gets them split: no cleaned batch is larger
than the larger of its input batch and max.message.bytes."""
import re
import time

from conftest import DATA, require_dist, tool
from test_cleaner_levels import BATCH, BROKER_PROPS, cleaned_batches, consume_latest, create, wait_cleaned

SEGMENT_BYTES = 1048576
RECORDS = 30000
SWAP = re.compile(r"Swapping in cleaned segment\(s\) \[(.*?)\] for segment\(s\) \[(.*?)\] in log (\S+)")
SIZE = re.compile(r"size=(\d+)")


def produce(b, topic, pairs, codec="none", idempotent=True):
    """Uncompressed from the producer (by default), in batches of up to 512 KiB: the broker writes the topic's zstd
    at level 19."""
    text = "".join("%s\t%s\n" % kv for kv in pairs)
    tool("kafka-console-producer.sh", "--bootstrap-server", b.bootstrap, "--topic", topic,
         "--producer-property", "enable.idempotence=%s" % str(idempotent).lower(),
         "--compression-codec", codec, "--property", "parse.key=true", "--property", "key.separator=\t",
         "--producer-property", "acks=all", "--producer-property", "linger.ms=100",
         "--producer-property", "batch.size=524288", input=text, timeout=600)


def cleaner_log(b):
    return b.log_text("log-cleaner.log")


def swaps(b, topic):
    """(cleaned sizes, replaced sizes) of every swap the cleaner logged for the topic."""
    out = []
    for cleaned, replaced, log in SWAP.findall(cleaner_log(b)):
        if "topic=%s," % topic in log or "/%s-0" % topic in log:
            out.append(([int(x) for x in SIZE.findall(cleaned)], [int(x) for x in SIZE.findall(replaced)]))
    return out


def batches_in(b, segment):
    out = tool("kafka-dump-log.sh", "--files", str(segment)).stdout
    return len(re.findall(r"^baseOffset: ", out, re.M))


def assert_segments_within_limit(b, topic):
    segments = b.segments(topic)
    for seg in segments[:-1]:
        size = seg.stat().st_size
        if size > SEGMENT_BYTES:
            assert batches_in(b, seg) == 1, "%s is %d bytes, over segment.bytes, with several batches" % (seg, size)
    return [seg.stat().st_size for seg in segments]


def test_recompression_to_uncompressed_keeps_segments_within_segment_bytes(broker_factory):
    require_dist()
    b = broker_factory(extra_props=BROKER_PROPS)
    topic = "zstd19"
    create(b, topic, **{"compression.type": "zstd", "compression.zstd.level": "19",
                        "segment.bytes": str(SEGMENT_BYTES), "compaction.compression.type": "uncompressed"})
    lines = [l.strip() for l in open(DATA / "json-records.ndjson") if l.strip()]
    latest = {}
    pairs = [("k%05d" % i, lines[i % len(lines)]) for i in range(RECORDS)]
    produce(b, topic, pairs)
    latest.update(pairs)
    time.sleep(2.5)
    produce(b, topic, [("tick", "{}")])
    latest["tick"] = "{}"
    wait_cleaned(b, topic, timeout=600)

    first = swaps(b, topic)
    assert first, cleaner_log(b)[-3000:]
    for c, r in first:
        print("swapped in %d cleaned segment(s) of %s bytes for %d segment(s) of %s bytes" % (len(c), c, len(r), r))
    # the first swap replaces zstd-19 segments only
    cleaned, replaced = first[0]
    assert sum(cleaned) > 3 * sum(replaced), "the data did not grow: %s -> %s" % (replaced, cleaned)
    assert len(cleaned) > len(replaced), first[0]
    sizes = assert_segments_within_limit(b, topic)
    print("segments after cleaning:", sizes)
    for c, _ in first:
        assert all(s <= SEGMENT_BYTES for s in c), first

    # the partition keeps being cleaned: overwrite 5,000 keys, roll, clean again
    pairs = [("k%05d" % i, lines[(i + 7) % len(lines)]) for i in range(0, RECORDS, 6)]
    produce(b, topic, pairs)
    latest.update(pairs)
    time.sleep(2.5)
    produce(b, topic, [("tick", "{\"again\":1}")])
    latest["tick"] = "{\"again\":1}"
    # the broker's zstd-19 spreads the 5,000 records over several segments rolled by segment.ms: two cleanings
    # begin during this round
    wait_cleaned(b, topic, timeout=600)
    assert len(swaps(b, topic)) > len(first)
    print("segments after the second cleaning:", assert_segments_within_limit(b, topic))
    log = cleaner_log(b)
    assert "uncleanable" not in log.lower() and "Unexpected exception" not in log, log[-3000:]
    for line in log.splitlines():
        if "Beginning cleaning of log %s-0" % topic in line or "Swapping in" in line:
            print(line[:200])

    # every key once in the cleaned segments, plus the first tick, which the second tick in the
    # active segment (never cleaned) overwrites
    assert consume_latest(b, topic, len(latest) + 1) == latest


DUMPED = re.compile(r"baseOffset: (\d+) lastOffset: (\d+) .*producerId: (-?\d+) .*isControl: (\w+) .*"
                    r"size: (\d+) magic: \d+ compresscodec: (\w+)")


def dumped_batches(segments):
    """Data batches of the segments as (base, last, producer id, size, codec), from kafka-dump-log.sh."""
    out = []
    for seg in segments:
        for m in DUMPED.finditer(tool("kafka-dump-log.sh", "--files", str(seg)).stdout):
            if m.group(4) == "false":
                out.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(5)), m.group(6)))
    return out


def test_recompression_splits_batches_over_max_message_bytes(broker_factory):
    """zstd batches of JSON, each within max.message.bytes=131072 compressed, grow several times over when cleaned
    into uncompressed batches: the cleaner splits those of a producer without idempotence into batches within
    131072 bytes, and keeps those with a producer id (an idempotent producer's, Kafka's default) in zstd, as they
    were. No cleaned batch is larger than the larger of its input batch and max.message.bytes."""
    require_dist()
    b = broker_factory(extra_props=BROKER_PROPS)
    topic = "split"
    max_message_bytes = 131072
    # no time-based roll until the input batches are recorded: the cleaner must not clean them before
    create(b, topic, **{"compression.type": "zstd", "max.message.bytes": str(max_message_bytes),
                        "segment.bytes": str(SEGMENT_BYTES), "compaction.compression.type": "uncompressed",
                        "segment.ms": "3600000"})
    lines = [l.strip() for l in open(DATA / "json-records.ndjson") if l.strip()]
    pairs = [("k%05d" % i, lines[i % len(lines)]) for i in range(6000)]
    produce(b, topic, pairs[:3000], codec="zstd", idempotent=False)
    produce(b, topic, pairs[3000:], codec="zstd")
    latest = dict(pairs)
    # the records are still in the active segment: their batches as the producers wrote them
    inputs = dumped_batches(b.segments(topic))
    print("input batches (base, last, producer id, bytes, codec):", inputs)
    assert max(x[3] for x in inputs) <= max_message_bytes, inputs
    assert {x[2] == -1 for x in inputs} == {True, False}, inputs
    tool("kafka-configs.sh", "--bootstrap-server", b.bootstrap, "--alter", "--entity-type", "topics",
         "--entity-name", topic, "--add-config", "segment.ms=2000")
    time.sleep(2.5)
    produce(b, topic, [("tick", "{}")])
    latest["tick"] = "{}"
    wait_cleaned(b, topic, timeout=600)

    cleaned = dumped_batches(b.segments(topic)[:-1])
    print("cleaned batches (base, last, producer id, bytes, codec):", cleaned)
    split = kept = 0
    for base, last, pid, size, codec in cleaned:
        source = next(x for x in inputs if x[0] <= base <= x[1])
        assert size <= max(source[3], max_message_bytes), (base, last, size, source)
        if pid == -1:
            assert codec == "none", (base, last, codec)
            split += (base, last) != (source[0], source[1])
        else:
            # recompressed if it fits, else kept as it was
            assert (base, last) == (source[0], source[1]), "a batch with a producer id was split"
            assert codec == "none" or size == source[3], (base, last, size, codec, source)
            kept += codec == "zstd"
    assert split and kept, "split %d batches without producer id, kept %d with one" % (split, kept)
    # a consumer with default fetch settings reads every key's latest value
    assert consume_latest(b, topic, len(latest)) == latest
