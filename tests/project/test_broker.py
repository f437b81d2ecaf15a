"""A broker from the distribution serves every codec, the perf tool with the
JSON test records (tests/data), and stock 4.3.1 clients; our clients serve a stock broker."""
import pytest

from conftest import DATA, DIST_VERSION, KAFKA_VERSION, require_dist, tool

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def produce_consume(bootstrap, topic, codec, lines, producer_stock=False, consumer_stock=False):
    text = "".join("%s\n" % l for l in lines)
    tool("kafka-console-producer.sh", "--bootstrap-server", bootstrap, "--topic", topic,
         "--compression-codec", codec, "--producer-property", "acks=all", "--producer-property", "linger.ms=50",
         input=text, stock=producer_stock)
    p = tool("kafka-console-consumer.sh", "--bootstrap-server", bootstrap, "--topic", topic, "--from-beginning",
             "--max-messages", str(len(lines)), "--timeout-ms", "30000", stock=consumer_stock)
    return p.stdout.splitlines()


def dumped_codecs(broker, topic):
    out = ""
    for seg in broker.segments(topic):
        out += tool("kafka-dump-log.sh", "--files", str(seg)).stdout
    return {l.split("compresscodec: ")[1].split()[0] for l in out.splitlines() if "compresscodec: " in l}


def test_every_codec_round_trips(broker_factory):
    require_dist()
    b = broker_factory()
    assert "Kafka version: %s" % DIST_VERSION in b.output()
    lines = [l.strip() for l in open(DATA / "json-records.ndjson")][:500]
    for codec in CODECS:
        topic = "codec-" + codec
        got = produce_consume(b.bootstrap, topic, codec, lines)
        assert got == lines, "%s: %d of %d records back" % (codec, len(got), len(lines))
        assert dumped_codecs(b, topic) == {codec}, codec


def test_perf_test_with_payload_file(broker_factory):
    b = broker_factory()
    tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", "perf")
    p = tool("kafka-producer-perf-test.sh", "--topic", "perf", "--num-records", "20000", "--throughput", "-1",
             "--payload-file", str(DATA / "json-records.ndjson"),
             "--producer-props", "bootstrap.servers=" + b.bootstrap, "compression.type=zstd", "acks=all",
             "batch.size=1048576", "linger.ms=100")
    assert "20000 records sent" in p.stdout, p.stdout
    off = tool("kafka-get-offsets.sh", "--bootstrap-server", b.bootstrap, "--topic", "perf").stdout
    assert off.strip() == "perf:0:20000", off


@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_stock_client_with_our_broker(broker_factory, codec):
    b = broker_factory()
    lines = ["stock-%d-%s" % (i, "x" * (i % 50)) for i in range(300)]
    assert produce_consume(b.bootstrap, "stock-in", codec, lines, producer_stock=True, consumer_stock=True) == lines
    # and mixed: stock producer, our consumer
    assert produce_consume(b.bootstrap, "stock-mixed", codec, lines, producer_stock=True) == lines


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_our_client_with_stock_broker(broker_factory, codec):
    b = broker_factory("stock", stock=True)
    assert "Kafka version: %s\n" % KAFKA_VERSION in b.output() or "Kafka version: %s " % KAFKA_VERSION in b.output()
    lines = ["ours-%d" % i for i in range(300)]
    assert produce_consume(b.bootstrap, "ours-in", codec, lines) == lines
