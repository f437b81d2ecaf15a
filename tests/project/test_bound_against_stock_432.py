"""max.decompressed.message.bytes on a broker of the distribution and on a stock Apache Kafka 4.3.2 broker, which
defines the bound upstream (patches 0005 and 0006 backport it): the same requests to both, the same verdicts.

A stock 4.3.2 broker from upstream's jars (build/newest-upstream/4.3.2/libs, fetched and checked against
upstream/newest-upstream-libs.sha256 as ./build.sh systest does) and ours start side by side, each with the same
topic settings, and each case runs on both, every answer printed. The records are one batch of one record of N times
'a' (a few KB on the wire whatever N), built with Kafka's own codec by tests/project/bomb/BombClient.java and sent in a
produce request over a plain socket, the same bytes to both; each broker is asked through its own release's tools
(kafka-topics.sh, kafka-configs.sh, kafka-get-offsets.sh).

- produce: a topic with max.decompressed.message.bytes=1000000 refuses a 2,000,000-byte gzip, lz4 or zstd record
  with INVALID_RECORD and appends nothing, and takes a 500,000-byte one;
- ListOffsets: a 2,000,000-byte gzip record appended while the topic's bound is above it, then the bound lowered to
  1,000,000: the offset of its timestamp, and of the largest timestamp;
- cleaner: the same in a compacted topic, then a segment rolled: what the log cleaner does with the segment (marks
  the partition uncleanable, or cleans it), beside a topic whose bound stays above the record, and whether the
  record is still served to a consumer;
- the broker default set dynamically (kafka-configs.sh --entity-default) applying to a topic without an override;
  kafka-configs.sh --describe --all of a topic with and one without an override, of the broker and of the broker
  default, as their max.decompressed.message.bytes lines read; 2147483640, one above the largest value, refused on a
  topic and as the broker default.

Every verdict must be the same on both. What the brokers answer beyond the verdicts differs where DIFFERENCES says
(docs/upgrading.md, "Moving on to Apache Kafka 4.3.2 or 4.4.0"); the test asserts those too.

Needs: ./build.sh (the distribution), a JDK, stock 4.3.2's jars (fetched through Maven when missing).
"""
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import DIST_VERSION, ROOT, Broker, require_dist, run, tool
from test_provider_bomb import client  # noqa: F401 (client is a fixture)

STOCK = "4.3.2"
DOCS = ROOT / "docs" / "upgrading.md"
INVALID_RECORD = "87"
MB = 1000 * 1000
BOUND = 1 * MB
# upstream's setting, on both brokers: the cleaner looks for work every 0.5 s instead of every 15 s
CLEANER = {"log.cleaner.backoff.ms": "500"}
# What differs beyond the verdicts. The partition's error message in the produce response: ours sends the reason
# (patch 0004 sends it for every refused batch), stock 4.3.2 none; the reason is worded as 4.3.2 words it (patch
# 0005), which 4.3.2 only writes to its log.
DIFFERENCES = {
    "produce error message": {
        "ours": "Invalid record size: 2000014 exceeds the configured maximum record size of 1000000.",
        STOCK: "null",
    },
}


@pytest.fixture(scope="module")
def brokers(tmp_path_factory):
    """{"ours": Broker, "4.3.2": Broker}, started side by side, for every case of the module (a topic each)."""
    require_dist()
    workdir = tmp_path_factory.mktemp("bound-432")
    pair = {"ours": Broker(workdir / "ours", extra_props=CLEANER),
            STOCK: Broker(workdir / "stock", stock=STOCK, extra_props=CLEANER)}
    try:
        both(pair, lambda name, b: b.start())
        for name, b in pair.items():
            version = re.search(r"Kafka version: (\S+)", b.output()).group(1)
            print("%s: Kafka version %s on %s" % (name, version, b.bootstrap))
            assert version == (STOCK if b.stock else DIST_VERSION), version
        yield pair
    finally:
        for b in pair.values():
            b.stop()


def both(pair, step):
    """{name: step(name, broker)} for both brokers, run at the same time."""
    with ThreadPoolExecutor(len(pair)) as ex:
        futures = {name: ex.submit(step, name, b) for name, b in pair.items()}
        return {name: f.result() for name, f in futures.items()}


def own_tool(broker, name, *args, **kw):
    """A tool of the broker's own release, against it."""
    return tool(name, "--bootstrap-server", broker.bootstrap, *args, stock=broker.stock, **kw)


def create(broker, topic, *configs):
    args = ["--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1",
            "--config", "max.message.bytes=104857600"]
    for c in configs:
        args += ["--config", c]
    own_tool(broker, "kafka-topics.sh", *args)


def alter(broker, entity, config, check=True):
    """kafka-configs.sh --alter --add-config CONFIG on ENTITY ("topic NAME", "broker 1", "broker default")."""
    kind, name = entity.split(" ", 1)
    target = ["--entity-type", kind + "s"] + (["--entity-default"] if name == "default" else ["--entity-name", name])
    return own_tool(broker, "kafka-configs.sh", *target, "--alter", "--add-config", config, check=check)


def applied(broker, topic, config):
    """Waits until the broker has taken a topic's new configuration (its DynamicConfigPublisher logs it, then applies
    it on the same thread); a tool JVM started after that finds it applied."""
    line = re.compile(r"broker id=1\] Updating topic %s with new configuration : .*\b%s\b"
                      % (re.escape(topic), re.escape(config.replace("=", " -> "))))
    deadline = time.time() + 30
    while not line.search(broker.output()):
        assert time.time() < deadline, "%s did not apply %s to %s in 30 s" % (broker.bootstrap, config, topic)
        time.sleep(0.2)


def produce(client, broker, topic, codec, size, timestamp=None):
    """(error code, error message) of one batch of one record of `size` bytes."""
    p = run(["java", "-Xmx512m", "-cp", client, "BombClient", "produce", broker.bootstrap, topic, codec, "1", str(size),
             str(timestamp or int(time.time() * 1000))])
    error, message = re.search(r"wire=\d+ error=(-?\d+) (.*)", p.stdout).groups()
    return error, message


def stored_bytes(broker, topic):
    return sum(s.stat().st_size for s in broker.segments(topic))


def show(case, verdicts):
    for name, verdict in verdicts.items():
        print("%s, %s: %s" % (case, name, verdict))


def assert_same(case, verdicts):
    show(case, verdicts)
    assert verdicts["ours"] == verdicts[STOCK], "%s: ours and stock %s differ:\n  ours:  %s\n  %s: %s" % (
        case, STOCK, verdicts["ours"], STOCK, verdicts[STOCK])


def test_produce_above_the_topic_bound_refused(brokers, client):
    messages = {}

    def case(name, b):
        verdict = []
        for codec in ("gzip", "lz4", "zstd"):
            topic = "bound-" + codec
            create(b, topic, "max.decompressed.message.bytes=%d" % BOUND)
            error, message = produce(client, b, topic, codec, 2 * BOUND)
            messages.setdefault(name, set()).add(message)
            refused = (codec, "2,000,000 bytes: error %s, appended %d bytes" % (error, stored_bytes(b, topic)))
            error, _ = produce(client, b, topic, codec, BOUND // 2)
            taken = (codec, "500,000 bytes: error %s, appended %s" % (error, stored_bytes(b, topic) > 0))
            verdict += [refused, taken]
        return verdict

    verdicts = both(brokers, case)
    assert_same("produce", verdicts)
    for codec in ("gzip", "lz4", "zstd"):
        assert (codec, "2,000,000 bytes: error %s, appended 0 bytes" % INVALID_RECORD) in verdicts["ours"], codec
        assert (codec, "500,000 bytes: error 0, appended True") in verdicts["ours"], codec
    show("produce error message", messages)
    assert messages == {n: {m} for n, m in DIFFERENCES["produce error message"].items()}, messages
    for message in DIFFERENCES["produce error message"].values():
        assert "`%s`" % message in DOCS.read_text(), "docs/upgrading.md does not list %r" % message


def offset_lookup(broker, topic, time_spec):
    """kafka-get-offsets.sh --time TIME_SPEC: "offset N", or the error the tool reports for the partition."""
    p = own_tool(broker, "kafka-get-offsets.sh", "--topic", topic, "--time", str(time_spec))
    answer = re.search(r"^%s:0:(-?\d+)$" % re.escape(topic), p.stdout, re.M)
    error = re.search(r"failed due to an unexpected error (\w+)", p.stderr)
    return "offset " + answer.group(1) if answer else "error " + error.group(1) if error else "none: " + p.stderr[-300:]


def test_list_offsets_by_timestamp_over_a_record_above_the_bound(brokers, client):
    timestamp = int(time.time() * 1000) - 60_000

    def case(name, b):
        create(b, "offsets", "max.decompressed.message.bytes=%d" % (4 * BOUND))
        verdict = [("2,000,000-byte gzip record under a bound of 4,000,000", produce(client, b, "offsets", "gzip",
                                                                                   2 * BOUND, timestamp)[0]),
                   ("its timestamp", offset_lookup(b, "offsets", timestamp))]
        alter(b, "topic offsets", "max.decompressed.message.bytes=%d" % BOUND)
        applied(b, "offsets", "max.decompressed.message.bytes=%d" % BOUND)
        for what, spec in (("its timestamp", timestamp), ("a second earlier", timestamp - 1000),
                           ("the largest timestamp (-3)", -3), ("the latest offset (-1)", -1)):
            verdict.append(("bound 1,000,000, " + what, offset_lookup(b, "offsets", spec)))
        return verdict

    verdicts = both(brokers, case)
    assert_same("ListOffsets", verdicts)
    assert verdicts["ours"][1][1] == "offset 0" and verdicts["ours"][2][1] == "error INVALID_RECORD", verdicts["ours"]


def cleaner_state(broker, topic):
    """What the log cleaner did with TOPIC: marked it uncleanable (and why), or cleaned it up to an offset."""
    text = broker.output()
    uncleanable = re.search(r"Marking its partition \(%s-0\) as uncleanable" % re.escape(topic), text)
    if uncleanable:
        cause = re.search(r"Caused by: ([\w.]+)", text[uncleanable.end():])
        return "uncleanable, caused by %s" % (cause.group(1) if cause else "?")
    checkpoint = broker.data / "cleaner-offset-checkpoint"
    done = [line.split()[2] for line in (checkpoint.read_text().splitlines()[2:] if checkpoint.exists() else [])
            if line.split()[0] == topic]
    return "cleaned to offset %s" % done[0] if done and int(done[0]) > 0 else None


def test_cleaner_over_a_record_above_the_bound(brokers, client):
    compacted = ["cleanup.policy=compact", "segment.ms=1000", "min.cleanable.dirty.ratio=0.01",
                 "min.compaction.lag.ms=0"]

    def case(name, b):
        # "kept" keeps a bound above the record: the cleaner runs, and cleans it
        for topic in ("compacted", "kept"):
            create(b, topic, "max.decompressed.message.bytes=%d" % (4 * BOUND), *compacted)
        appended = time.time()
        verdict = [("2,000,000-byte gzip record", [produce(client, b, t, "gzip", 2 * BOUND)[0]
                                                  for t in ("compacted", "kept")])]
        alter(b, "topic compacted", "max.decompressed.message.bytes=%d" % BOUND)
        applied(b, "compacted", "max.decompressed.message.bytes=%d" % BOUND)
        time.sleep(max(0.0, appended + 1.5 - time.time()))     # past segment.ms: the next record rolls a segment
        verdict.append(("100-byte record, a segment rolled", [produce(client, b, t, "gzip", 100)[0]
                                                             for t in ("compacted", "kept")]))
        verdict.append(("segments", [len(b.segments(t)) for t in ("compacted", "kept")]))
        deadline = time.time() + 60
        while not all(cleaner_state(b, t) for t in ("compacted", "kept")) and time.time() < deadline:
            time.sleep(0.5)
        verdict += [("cleaner, bound lowered to 1,000,000", cleaner_state(b, "compacted")),
                    ("cleaner, bound 4,000,000", cleaner_state(b, "kept"))]
        p = run(["java", "-Xmx512m", "-cp", client, "BombClient", "consume", b.bootstrap, "compacted", "1",
                 str(2 * BOUND)])
        verdict.append(("the 2,000,000-byte record consumed after", p.stdout.strip().splitlines()[-1]))
        return verdict

    verdicts = both(brokers, case)
    for name, b in brokers.items():
        for line in re.findall(r".*(?:Invalid record size|as uncleanable).*", b.output()):
            print("%s, broker log: %s" % (name, line))
    assert_same("cleaner", verdicts)
    assert verdicts["ours"][3:] == [
        ("cleaner, bound lowered to 1,000,000",
         "uncleanable, caused by org.apache.kafka.common.InvalidRecordException"),
        ("cleaner, bound 4,000,000", "cleaned to offset 1"),
        ("the 2,000,000-byte record consumed after", "records=1")], verdicts["ours"]


def bound_lines(text):
    """The max.decompressed.message.bytes lines of kafka-configs.sh --describe output (stripped)."""
    return [line.strip() for line in text.splitlines() if "max.decompressed.message.bytes" in line]


def refusal(p):
    """Exit code and the last line naming the setting of a kafka-configs.sh --alter that failed."""
    lines = [line for line in (p.stdout + p.stderr).splitlines() if "max.decompressed.message.bytes" in line]
    return p.returncode, lines[-1].strip() if lines else None


def test_broker_default_describe_and_largest_value(brokers, client):
    def case(name, b):
        create(b, "no-override")
        create(b, "override", "max.decompressed.message.bytes=%d" % (4 * BOUND))
        verdict = [("2,000,000-byte gzip record, no bound set",
                    produce(client, b, "no-override", "gzip", 2 * BOUND)[0])]
        alter(b, "broker default", "max.decompressed.message.bytes=%d" % BOUND)
        # the broker applies a dynamic default to its logs after it logs the update: asked until it answers otherwise
        deadline = time.time() + 30
        while True:
            error = produce(client, b, "no-override", "gzip", 2 * BOUND)[0]
            if error != "0" or time.time() > deadline:
                break
            time.sleep(1)
        verdict.append(("the same after --entity-default 1,000,000", error))
        for entity in (["topics", "--entity-name", "no-override"], ["topics", "--entity-name", "override"],
                       ["brokers", "--entity-name", "1"], ["brokers", "--entity-default"]):
            p = own_tool(b, "kafka-configs.sh", "--entity-type", *entity, "--describe", "--all")
            verdict.append(("--describe --all " + " ".join(entity), bound_lines(p.stdout)))
        for entity in ("topic no-override", "broker default"):
            p = alter(b, entity, "max.decompressed.message.bytes=2147483640", check=False)
            verdict.append(("2147483640 on " + entity, refusal(p)))
        return verdict

    verdicts = both(brokers, case)
    assert_same("broker default, describe, largest value", verdicts)
    ours = dict(verdicts["ours"])
    assert ours["the same after --entity-default 1,000,000"] == INVALID_RECORD, ours
    assert ours["2147483640 on topic no-override"][0] != 0, ours
    assert "DYNAMIC_DEFAULT_BROKER_CONFIG:max.decompressed.message.bytes=1000000" in \
        ours["--describe --all topics --entity-name no-override"][0], ours
