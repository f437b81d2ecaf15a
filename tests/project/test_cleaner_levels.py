"""The log cleaner on a real broker from the distribution: it keeps the topic's
compression.<codec>.level when it rebuilds batches (KIP-390, the series' first patch), and it
recompresses cleaned segments with compaction.compression.type or the broker's
log.cleaner.compaction.compression.type (KIP-390, second patch), set with kafka-configs.sh without
a restart; bad codecs and levels are refused. Cleaned segments are read back
with kafka-dump-log.sh."""
import re
import time
import uuid

from conftest import DATA, require_dist, run, tool

BATCH = re.compile(r"baseOffset: (\d+) lastOffset: (\d+) count: (\d+) .*isControl: (\w+) .*"
                   r"size: (\d+) magic: \d+ compresscodec: (\w+)")

BROKER_PROPS = {
    "log.cleaner.backoff.ms": "300",
    "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
}

TOPIC_CONFIG = {
    "cleanup.policy": "compact",
    "segment.ms": "2000",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "0",
}

KEYS = 1200


def values():
    lines = [l.strip() for l in open(DATA / "json-records.ndjson")]
    return lines[:KEYS], lines[KEYS:2 * KEYS]


def configs(b, *args, check=True):
    return tool("kafka-configs.sh", "--bootstrap-server", b.bootstrap, *args, check=check)


def create(b, topic, **config):
    args = ["kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", topic,
            "--partitions", "1", "--replication-factor", "1"]
    for k, v in {**TOPIC_CONFIG, **config}.items():
        args += ["--config", "%s=%s" % (k, v)]
    return tool(*args)


def alter_topic(b, topic, config, check=True):
    return configs(b, "--alter", "--entity-type", "topics", "--entity-name", topic, "--add-config", config,
                   check=check)


def produce(b, topic, pairs, codec):
    text = "".join("%s\t%s\n" % kv for kv in pairs)
    tool("kafka-console-producer.sh", "--bootstrap-server", b.bootstrap, "--topic", topic,
         "--compression-codec", codec, "--property", "parse.key=true", "--property", "key.separator=\t",
         "--producer-property", "acks=all", "--producer-property", "linger.ms=20",
         "--producer-property", "batch.size=65536", input=text)


def write_and_roll(b, topic, codec, round2_keys):
    """Round 1 writes every key, round 2 overwrites some of them, so that the cleaner drops records from
    round 1's batches and rebuilds them; a last record after segment.ms rolls the segment so that both
    rounds can be cleaned. Returns the latest value of every key."""
    first, second = values()
    latest = {}
    pairs = [("k%d" % i, first[i]) for i in range(KEYS)]
    produce(b, topic, pairs, codec)
    latest.update(pairs)
    pairs = [("k%d" % i, second[i]) for i in round2_keys]
    produce(b, topic, pairs, codec)
    latest.update(pairs)
    time.sleep(2.5)
    produce(b, topic, [("tick", "{}")], codec)
    latest["tick"] = "{}"
    return latest


def cleaner_checkpoint(b, topic):
    f = b.data / "cleaner-offset-checkpoint"
    if not f.exists():
        return -1
    for line in f.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == topic:
            return int(parts[2])
    return -1


def end_offset(b, topic):
    out = tool("kafka-get-offsets.sh", "--bootstrap-server", b.bootstrap, "--topic", topic).stdout
    return int(out.strip().split(":")[-1])


def wait_cleaned(b, topic, timeout=90):
    """Waits until the cleaner checkpoint reaches the topic's last record, a tick written after segment.ms that rolled
    a segment of its own: every record before it is then cleaned. A wait for any checkpoint move would return after a
    cleaning that began before the last of several time-rolled segments closed, overwritten values still in the
    log."""
    tick = end_offset(b, topic) - 1
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cleaner_checkpoint(b, topic) >= tick:
            time.sleep(1)  # the segment swap has completed when the checkpoint is written; settle anyway
            return
        time.sleep(0.5)
    raise AssertionError("%s was not cleaned up to offset %d in %ds; cleaner log:\n%s"
                         % (topic, tick, timeout, (b.dir / "logs" / "log-cleaner.log").read_text()[-4000:]
                            if (b.dir / "logs" / "log-cleaner.log").exists() else b.output()[-4000:]))


def cleaned_batches(b, topic):
    """Batches of every segment but the active one, as dicts, from kafka-dump-log.sh."""
    segments = b.segments(topic)
    assert len(segments) >= 2, segments
    batches = []
    for seg in segments[:-1]:
        out = tool("kafka-dump-log.sh", "--files", str(seg)).stdout
        for line in out.splitlines():
            m = BATCH.search(line)
            if m:
                base, last, count, control, size, codec = m.groups()
                batches.append({"base": int(base), "last": int(last), "count": int(count),
                                "control": control == "true", "size": int(size), "codec": codec})
    assert batches, "no batches in the cleaned segments of %s" % topic
    return batches


def consume_latest(b, topic, n):
    out = tool("kafka-console-consumer.sh", "--bootstrap-server", b.bootstrap, "--topic", topic,
               "--from-beginning", "--max-messages", str(n), "--timeout-ms", "30000",
               "--formatter-property", "print.key=true", "--formatter-property", "key.separator=\t").stdout
    latest = {}
    for line in out.splitlines():
        k, _, v = line.partition("\t")
        latest[k] = v
    return latest


def bytes_per_record_of_rebuilt(batches):
    rebuilt = [x for x in batches if not x["control"] and x["count"] != x["last"] - x["base"] + 1]
    assert len(rebuilt) >= 3, "expected rebuilt batches, got %s" % batches
    return sum(x["size"] for x in rebuilt) / sum(x["count"] for x in rebuilt)


def test_cleaner_keeps_topic_level_and_recompresses(broker_factory):
    require_dist()
    b = broker_factory(extra_props=BROKER_PROPS)

    # 1. the fix: zstd topics at level 1 and 19, levels set with kafka-configs.sh
    for topic, level in (("zstd1", 1), ("zstd19", 19)):
        create(b, topic, **{"compression.type": "zstd"})
        alter_topic(b, topic, "compression.zstd.level=%d" % level)
        assert "compression.zstd.level=%d" % level in configs(
            b, "--describe", "--entity-type", "topics", "--entity-name", topic).stdout
    # 2. compaction recompression: an lz4 topic whose cleaned segments are written in zstd 19
    create(b, "recompress", **{"compression.type": "lz4"})
    alter_topic(b, "recompress", "compaction.compression.type=zstd,compression.zstd.level=19")
    described = configs(b, "--describe", "--entity-type", "topics", "--entity-name", "recompress").stdout
    assert "compaction.compression.type=zstd" in described, described

    even = range(0, KEYS, 2)
    for topic in ("zstd1", "zstd19"):
        write_and_roll(b, topic, "none", even)
    latest = write_and_roll(b, "recompress", "lz4", even)
    for topic in ("zstd1", "zstd19", "recompress"):
        wait_cleaned(b, topic)

    per_record = {t: bytes_per_record_of_rebuilt(cleaned_batches(b, t)) for t in ("zstd1", "zstd19")}
    for t in ("zstd1", "zstd19"):
        assert {x["codec"] for x in cleaned_batches(b, t) if not x["control"]} == {"zstd"}
    # stock 4.3.1 rebuilds both at zstd's default level 3: the ratio is about 1.0
    ratio = per_record["zstd19"] / per_record["zstd1"]
    print("rebuilt batches, bytes per record: zstd 1 %.1f, zstd 19 %.1f, ratio %.3f"
          % (per_record["zstd1"], per_record["zstd19"], ratio))
    assert ratio < 0.95, per_record

    batches = cleaned_batches(b, "recompress")
    assert {x["codec"] for x in batches if not x["control"]} == {"zstd"}, batches
    active = tool("kafka-dump-log.sh", "--files", str(b.segments("recompress")[-1])).stdout
    assert "compresscodec: lz4" in active, active  # the active segment is not cleaned
    assert consume_latest(b, "recompress", len(latest)) == latest

    # 3. the broker default, changed dynamically, for a topic that leaves the setting empty
    configs(b, "--alter", "--entity-type", "brokers", "--entity-default",
            "--add-config", "log.cleaner.compaction.compression.type=gzip")
    described = configs(b, "--describe", "--entity-type", "brokers", "--entity-default").stdout
    assert "log.cleaner.compaction.compression.type=gzip" in described, described
    create(b, "brokerdefault", **{"compression.type": "lz4"})
    time.sleep(1)
    latest = write_and_roll(b, "brokerdefault", "lz4", even)
    wait_cleaned(b, "brokerdefault")
    batches = cleaned_batches(b, "brokerdefault")
    assert {x["codec"] for x in batches if not x["control"]} == {"gzip"}, batches
    assert consume_latest(b, "brokerdefault", len(latest)) == latest

    # 4. a topic change applies at the next cleaning: recompress now goes to uncompressed
    alter_topic(b, "recompress", "compaction.compression.type=uncompressed")
    latest.clear()
    latest.update(write_and_roll(b, "recompress", "lz4", range(1, KEYS, 2)))
    wait_cleaned(b, "recompress")
    batches = cleaned_batches(b, "recompress")
    assert {x["codec"] for x in batches if not x["control"]} == {"none"}, batches


BAD_TOPIC_VALUES = [
    ("compression.zstd.level", "23"),
    ("compression.zstd.level", "-131073"),
    ("compression.lz4.level", "18"),
    ("compression.gzip.level", "10"),
    ("compaction.compression.type", "brotli"),
]


def test_bad_values_are_refused(broker_factory):
    require_dist()
    b = broker_factory()
    create(b, "t", **{"compression.type": "zstd"})
    for config, value in BAD_TOPIC_VALUES:
        expected = "Invalid value %s for configuration %s" % (value, config)
        p = alter_topic(b, "t", "%s=%s" % (config, value), check=False)
        assert p.returncode != 0 and expected in p.stdout + p.stderr, p.stdout + p.stderr
        p = tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", "t2",
                 "--config", "%s=%s" % (config, value), check=False)
        assert p.returncode != 0 and expected in p.stdout + p.stderr, p.stdout + p.stderr
    p = configs(b, "--alter", "--entity-type", "brokers", "--entity-default",
                "--add-config", "log.cleaner.compaction.compression.type=brotli", check=False)
    assert p.returncode != 0
    assert "log.cleaner.compaction.compression.type" in p.stdout + p.stderr, p.stdout + p.stderr
    b.stop()
    for key, value in (("log.cleaner.compaction.compression.type", "brotli"), ("compression.zstd.level", "23")):
        # format with a valid configuration, then start with the bad value: the broker refuses to start
        bad = broker_factory(name="bad-" + key, start=False)
        argv, env = bad.command("kafka.tools.StorageTool", "format", "-t", uuid.uuid4().hex[:22], "-c", str(bad.props))
        run(argv, env=env)
        bad.props.write_text(bad.props.read_text() + "%s=%s\n" % (key, value))
        assert bad.start(expect_failure=True) != 0
        assert "Invalid value %s for configuration %s" % (value, key) in bad.output(), bad.output()[-3000:]
