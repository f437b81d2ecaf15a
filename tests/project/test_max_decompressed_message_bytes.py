"""max.decompressed.message.bytes (upstream's bound on a record's decompressed size, backported as patches 0005 and 0006) on
running brokers of the distribution, with and without the native-gzip provider.

One batch of one record of N times 'a' (a few KB on the wire whatever N), built with Kafka's own codec by
tests/project/bomb/BombClient.java and sent in a produce request over a plain socket:

- a topic with max.decompressed.message.bytes=1000000 refuses a 2,000,000-byte record with INVALID_RECORD and
  appends nothing, and takes a 500,000-byte one, for gzip, lz4 and zstd, on a broker without a provider and on one
  whose gzip goes through native-gzip (its whole-batch decompression call);
- the broker default, set dynamically with kafka-configs.sh --entity-default, applies to a topic without an override,
  and kafka-configs.sh --describe --all lists it as the topic setting's synonym, as upstream 4.3.2 does; a value above
  2147483639 is refused;
- the decompression bombs of test_provider_bomb.py (8 MB and 64 MB records, gzip, lz4 and zstd) are refused before
  their records are allocated when the topic sets the bound, and the -Xmx512m broker stays up;
- stock Apache Kafka 4.3.1 does not know the setting: it refuses a topic that names it.

Needs: ./build.sh (the distribution), a JDK, the stock jars under build/upstream/libs.
"""
import re
import time

import pytest

from conftest import run, tool
from test_provider_bomb import PROVIDER, client  # noqa: F401 (client is a fixture)

INVALID_RECORD = "87"
MB = 1000 * 1000
BOUND = 1 * MB


def produce(client, broker, topic, codec, records, size):
    """(bytes on the wire, error code) of one batch of `records` records of `size` bytes."""
    p = run(["java", "-Xmx2g", "-cp", client, "BombClient", "produce", broker.bootstrap, topic, codec, str(records),
             str(size), str(int(time.time() * 1000))], timeout=300)
    wire, error = re.search(r"wire=(\d+) error=(-?\d+)", p.stdout).groups()
    return int(wire), error


def create(broker, topic, *configs, stock=False):
    args = ["--bootstrap-server", broker.bootstrap, "--create", "--topic", topic, "--partitions", "1",
            "--replication-factor", "1", "--config", "max.message.bytes=104857600"]
    for c in configs:
        args += ["--config", c]
    return tool("kafka-topics.sh", *args, stock=stock, check=not stock)


def stored_bytes(broker, topic):
    return sum(s.stat().st_size for s in broker.segments(topic))


@pytest.mark.parametrize("provider", [False, True], ids=["built-in", "native-gzip"])
def test_a_topic_bound_refuses_larger_records_and_appends_nothing(broker_factory, client, provider):
    props = {"compression.gzip.provider": PROVIDER, "compression.gzip.provider.required": "true"} if provider else {}
    b = broker_factory("bound", extra_props=props)
    for codec in ("gzip", "lz4", "zstd"):
        topic = "bound-" + codec
        create(b, topic, "max.decompressed.message.bytes=%d" % BOUND)
        wire, error = produce(client, b, topic, codec, 1, 2 * BOUND)
        print("%s, %s: a 2,000,000-byte record, %d bytes on the wire: error %s" % (codec, b.bootstrap, wire, error))
        assert wire < 20_000, wire
        assert error == INVALID_RECORD, (codec, error)
        assert stored_bytes(b, topic) == 0, "a refused batch was appended"
        assert produce(client, b, topic, codec, 1, BOUND // 2)[1] == "0", codec
        assert stored_bytes(b, topic) > 0
    if provider:
        # the gzip batches went through the provider: the broker says it loaded it
        assert re.search(r"Compression provider for gzip: native gzip", b.output()), b.output()[-3000:]
    assert b.proc.poll() is None


def test_the_dynamic_broker_default_applies_to_topics_without_an_override(broker_factory, client):
    b = broker_factory("default")
    create(b, "no-override")
    assert produce(client, b, "no-override", "gzip", 1, 2 * BOUND)[1] == "0"
    tool("kafka-configs.sh", "--bootstrap-server", b.bootstrap, "--entity-type", "brokers", "--entity-default",
         "--alter", "--add-config", "max.decompressed.message.bytes=%d" % BOUND)
    deadline = time.time() + 30
    while produce(client, b, "no-override", "gzip", 1, 2 * BOUND)[1] != INVALID_RECORD:
        assert time.time() < deadline, "the dynamic broker default did not reach the topic in 30 s"
        time.sleep(1)
    # as in upstream 4.3.2, DescribeConfigs lists the broker setting as the topic setting's synonym, and a value
    # above 2147483639 is refused (test_bound_definition.py compares the definitions themselves)
    described = tool("kafka-configs.sh", "--bootstrap-server", b.bootstrap, "--entity-type", "topics",
                     "--entity-name", "no-override", "--describe", "--all").stdout
    line = [x for x in described.splitlines() if x.strip().startswith("max.decompressed.message.bytes=")]
    assert len(line) == 1, described
    assert "DYNAMIC_DEFAULT_BROKER_CONFIG:max.decompressed.message.bytes=%d" % BOUND in line[0], line[0]
    assert "DEFAULT_CONFIG:max.decompressed.message.bytes=2147483639" in line[0], line[0]
    refused = tool("kafka-configs.sh", "--bootstrap-server", b.bootstrap, "--entity-type", "topics", "--entity-name",
                   "no-override", "--alter", "--add-config", "max.decompressed.message.bytes=2147483647", check=False)
    assert refused.returncode != 0 and "2147483639" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    # a topic override beats the broker default
    tool("kafka-configs.sh", "--bootstrap-server", b.bootstrap, "--entity-type", "topics", "--entity-name", "no-override",
         "--alter", "--add-config", "max.decompressed.message.bytes=%d" % (4 * BOUND))
    deadline = time.time() + 30
    while produce(client, b, "no-override", "gzip", 1, 2 * BOUND)[1] != "0":
        assert time.time() < deadline, "the topic override did not beat the broker default in 30 s"
        time.sleep(1)


def test_bombs_are_refused_before_their_records_are_allocated(broker_factory, client):
    # one broker for the four bombs, one after another (a broker start per bomb cost CI half a minute): each must
    # leave it up for the next
    b = broker_factory("bombs", heap="-Xmx512m", jvm_opts=["-XX:+ExitOnOutOfMemoryError"],
                       extra_props={"compression.gzip.provider": PROVIDER, "compression.gzip.provider.required": "true"})
    create(b, "bombs", "max.decompressed.message.bytes=%d" % BOUND, "compression.type=gzip")
    for codec, records, size in (("gzip", 100, 8 * MB), ("gzip", 4, 64 * MB), ("lz4", 40, 8 * MB),
                                 ("zstd", 40, 8 * MB)):
        for attempt in range(5):
            wire, error = produce(client, b, "bombs", codec, records, size)
            assert error == INVALID_RECORD, (codec, records, size, attempt, error)
        print("%d records of %d bytes, %s, %d bytes on the wire: refused 5 times, broker alive" % (
            records, size, codec, wire))
        assert b.proc.poll() is None and "OutOfMemoryError" not in b.output(), (codec, records, size)
        assert stored_bytes(b, "bombs") == 0, (codec, records, size)


def test_stock_kafka_refuses_a_topic_that_names_the_bound(broker_factory):
    stock = broker_factory("stock", stock=True)
    p = create(stock, "named", "max.decompressed.message.bytes=%d" % BOUND, stock=True)
    out = p.stdout + p.stderr
    print(out.strip()[-500:])
    assert p.returncode != 0
    assert "Unknown topic config name: max.decompressed.message.bytes" in out, out[-2000:]
