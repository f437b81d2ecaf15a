"""The broker's per-topic compression metrics (BrokerTopicMetrics UncompressedBytesInPerSec and
RecompressionBytesInPerSec/RecompressionBytesOutPerSec/RecompressionTimeNsPerSec, the series' last patch) on a
running broker, read over JMX with kafka-jmx.sh: lz4 batches kept as received, rewritten uncompressed and
rewritten in zstd; each figure is checked against the log itself (kafka-dump-log.sh, segment sizes), the
advisor shows them (--jmx-url), and the topics' metrics go away with the topics."""
import json
import re
import time

from conftest import DATA, DIST, dump_deep, free_port, require_dist, run, tool

RECORDS = 1500
METRICS = ("BytesInPerSec", "UncompressedBytesInPerSec", "RecompressionBytesInPerSec",
           "RecompressionBytesOutPerSec", "RecompressionTimeNsPerSec")


def jmx_counts(jmx_port, show=()):
    """{(metric name, topic or None): Count} of every kafka.server:type=BrokerTopicMetrics meter; prints
    kafka-jmx.sh's lines of the topics in show (docs/metrics.md quotes them)."""
    out = run([str(DIST / "bin" / "kafka-jmx.sh"), "--jmx-url",
               "service:jmx:rmi:///jndi/rmi://127.0.0.1:%d/jmxrmi" % jmx_port,
               "--object-name", "kafka.server:type=BrokerTopicMetrics,*", "--attributes", "Count",
               "--one-time", "true", "--report-format", "properties"], timeout=120).stdout
    counts = {}
    for line in out.splitlines():
        m = re.match(r"kafka\.server:type=BrokerTopicMetrics,name=(\w+)(?:,topic=([^:]+))?:Count=(\d+)", line)
        if m:
            counts[(m.group(1), m.group(2))] = int(m.group(3))
            if m.group(2) in show and m.group(1) in METRICS:
                print(line)
    assert counts, "no BrokerTopicMetrics over JMX:\n" + out[-3000:]
    return counts


def log_bytes(b, topic):
    return sum(s.stat().st_size for s in b.segments(topic))


def test_compression_metrics_per_topic(broker_factory):
    require_dist()
    jmx_port = free_port()
    b = broker_factory(env={"JMX_PORT": str(jmx_port), "KAFKA_JMX_OPTS": (
        "-Dcom.sun.management.jmxremote -Dcom.sun.management.jmxremote.authenticate=false "
        "-Dcom.sun.management.jmxremote.ssl=false -Dcom.sun.management.jmxremote.host=127.0.0.1 "
        "-Djava.rmi.server.hostname=127.0.0.1")})
    topics = {"kept": "producer", "plain": "uncompressed", "dense": "zstd"}
    values = [l.strip() for l in open(DATA / "json-records.ndjson")][:RECORDS]
    for topic, codec in topics.items():
        tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", topic,
             "--partitions", "1", "--replication-factor", "1", "--config", "compression.type=" + codec)
        tool("kafka-console-producer.sh", "--bootstrap-server", b.bootstrap, "--topic", topic,
             "--compression-codec", "lz4", "--producer-property", "acks=all", "--producer-property",
             "linger.ms=50", "--producer-property", "batch.size=65536", input="".join(v + "\n" for v in values))

    counts = jmx_counts(jmx_port, show=("kept", "dense"))
    kept = {n: counts.get((n, "kept")) for n in METRICS}
    plain = {n: counts.get((n, "plain")) for n in METRICS}
    dense = {n: counts.get((n, "dense")) for n in METRICS}
    print("JMX counts: kept %s, plain %s, dense %s" % (kept, plain, dense))

    # lz4 kept as received: what came in is on disk; its uncompressed size is what the records take in a v2 batch
    [segment] = b.segments("kept")
    assert kept["BytesInPerSec"] == segment.stat().st_size
    assert kept["UncompressedBytesInPerSec"] == sum(uncompressed for _, uncompressed, _, _ in dump_deep(segment))
    ratio = kept["BytesInPerSec"] / kept["UncompressedBytesInPerSec"]
    print("kept: lz4 ratio %.3f (%d of %d bytes)" % (ratio, kept["BytesInPerSec"], kept["UncompressedBytesInPerSec"]))
    assert 0.1 < ratio < 0.5
    assert kept["RecompressionBytesInPerSec"] is None and kept["RecompressionTimeNsPerSec"] is None

    # rewritten uncompressed: on disk is exactly the uncompressed size the validator counted
    assert plain["UncompressedBytesInPerSec"] == log_bytes(b, "plain")
    assert plain["RecompressionBytesInPerSec"] == plain["BytesInPerSec"]
    assert plain["RecompressionBytesOutPerSec"] == log_bytes(b, "plain")
    assert plain["RecompressionTimeNsPerSec"] > 0

    # rewritten in zstd: every batch counted before and after, the rewrite smaller than the lz4 it replaced
    assert dense["RecompressionBytesInPerSec"] == dense["BytesInPerSec"]
    assert dense["RecompressionBytesOutPerSec"] == log_bytes(b, "dense")
    assert dense["RecompressionBytesOutPerSec"] < dense["RecompressionBytesInPerSec"]
    assert dense["RecompressionTimeNsPerSec"] > 0

    # the advisor shows the topic's live ratio from the same meters (--jmx-url)
    advisor = [str(DIST / "bin" / "kafka-compression-advisor.sh"), "--bootstrap-server", b.bootstrap, "--topic", "dense",
               "--jmx-url", "service:jmx:rmi:///jndi/rmi://127.0.0.1:%d/jmxrmi" % jmx_port, "--codecs", "zstd",
               "--providers", "none", "--max-records", "300", "--warmup-bytes", str(1 << 18), "--no-progress"]
    lines = run(advisor, timeout=300).stdout.splitlines()
    [line] = [l for l in lines if l.startswith("Live on the broker")]
    print(line)
    assert not [l for l in lines if l.startswith("The log cleaner")], lines   # no cleaner rewrite of dense
    assert "%s bytes in for %s uncompressed" % ("{:,}".format(dense["BytesInPerSec"]),
                                                "{:,}".format(dense["UncompressedBytesInPerSec"])) in line, line
    advised = json.loads(run(advisor + ["--format", "json"], timeout=300).stdout)["broker_metrics"]
    print("advisor broker_metrics:", advised)
    # a JMX URL nobody answers: the advisor says so and reports without the line
    unreachable = [a if not a.startswith("service:jmx:") else
                   "service:jmx:rmi:///jndi/rmi://127.0.0.1:%d/jmxrmi" % free_port() for a in advisor]
    p = run(unreachable, timeout=300)
    assert "WARN: cannot read the topic's metrics over JMX" in p.stderr and "Live on the broker" not in p.stdout
    assert advised["UncompressedBytesInPerSec"] == dense["UncompressedBytesInPerSec"]
    assert advised["RecompressionBytesOutPerSec"] == dense["RecompressionBytesOutPerSec"]
    assert advised["size_ratio"] == dense["BytesInPerSec"] / dense["UncompressedBytesInPerSec"]
    assert advised["CleanerRecompressionBytesInPerSec"] == 0 and advised["CleanerRecompressionTimeNsPerSec"] == 0

    # the all-topics meters hold at least the three topics' sums
    for name in METRICS[1:]:
        assert counts[(name, None)] >= sum(t[name] or 0 for t in (kept, plain, dense)), name

    # deleting a topic removes its metrics, as it removes BytesInPerSec's; the all-topics ones stay
    tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--delete", "--topic", "dense")
    deadline = time.time() + 60
    while True:
        counts = jmx_counts(jmx_port)
        left = [k for k in counts if k[1] == "dense"]
        if not left or time.time() > deadline:
            break
        time.sleep(1)
    assert left == [], left
    assert counts[("UncompressedBytesInPerSec", "kept")] == kept["UncompressedBytesInPerSec"]
    assert all((name, None) in counts for name in METRICS)
