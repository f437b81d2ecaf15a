"""What a stock Apache Kafka 4.3.1 node does with the settings and files of ours that docs/upgrading.md's rollback
table lists beside the upgrade test's (broker settings in server.properties and as dynamic defaults, the
recompression progress file, stock clients configured with a provider key).

One combined KRaft node runs ours first: a delete-policy topic recompressed cold (recompression.lag.ms=0 into zstd,
which writes recompression-offset-checkpoint) and cluster-wide dynamic defaults of our broker settings
(log.cleaner.compaction.compression.type, log.cleaner.recompression.batch.bytes, max.decompressed.message.bytes).
Then stock 4.3.1 starts on the same log.dirs and metadata, with every broker key of ours in server.properties, and
the test asserts the rows: it starts and its output names none of the keys of server.properties, serves every
record and leaves the progress file as it is; it names our dynamic defaults only with their values hidden, as it does
any setting it does not know, and takes new values for them; a stock producer with a provider key sends, silent about
the key at the tools' log level. Ours again on the same data applies the defaults set meanwhile and serves every
record.
"""
import re
import time

from conftest import Broker, tool

TOPIC = "cold"
RECORDS = 3000
NATIVE = "io.kafkacompress.nativegzip.NativeGzipCompressionService"
# every broker key of ours a stock node can find in server.properties (the provider classes need not exist there)
OUR_BROKER_KEYS = {"compression.gzip.provider": NATIVE, "compression.gzip.provider.required": "true",
                   "compression.gzip.qat.mode": "auto", "compression.lz4.provider": "org.example.Lz4",
                   "compression.snappy.provider": "org.example.Snappy", "compression.zstd.provider": "org.example.Zstd",
                   "log.cleaner.compaction.compression.type": "zstd", "log.cleaner.recompression.batch.bytes": "65536",
                   "max.decompressed.message.bytes": "10000000"}
DYNAMIC = {"log.cleaner.compaction.compression.type": "zstd", "log.cleaner.recompression.batch.bytes": "65536",
           "max.decompressed.message.bytes": "10000000"}
# set while the stock node runs
SET_ON_STOCK = {"log.cleaner.compaction.compression.type": "gzip", "log.cleaner.recompression.batch.bytes": "32768",
                "max.decompressed.message.bytes": "20000000"}
PROGRESS = "recompression-offset-checkpoint"
KEYS = re.compile("|".join(re.escape(k) for k in OUR_BROKER_KEYS))


def configs(broker, *args, stock=False):
    return tool("kafka-configs.sh", "--bootstrap-server", broker.bootstrap, *args, stock=stock, check=False)


def on_same_node(ours, stock, extra_props, drop=()):
    """A Broker on OURS's directory, ports and node id (stock 4.3.1, or ours again), its properties those of the last
    start but DROP, plus EXTRA_PROPS."""
    props = dict(l.split("=", 1) for l in ours.props.read_text().splitlines() if "=" in l and l.split("=")[0] not in drop)
    props.update(extra_props)
    ours.log.replace(ours.log.with_name("broker.%d.out" % time.monotonic_ns()))   # start() waits for its own start
    b = Broker(ours.dir, stock=stock, extra_props=props)
    b.port, b.controller_port, b.bootstrap = ours.port, ours.controller_port, ours.bootstrap
    return b


def read_all(broker, stock, records=RECORDS):
    out = tool("kafka-console-consumer.sh", "--bootstrap-server", broker.bootstrap, "--topic", TOPIC,
               "--from-beginning", "--max-messages", str(records), "--timeout-ms", "60000", stock=stock)
    return len([l for l in out.stdout.splitlines() if l.strip()])


def test_stock_node_on_our_settings_and_files(broker_factory):
    ours = broker_factory("node", extra_props={"log.cleaner.backoff.ms": "500"})
    tool("kafka-topics.sh", "--bootstrap-server", ours.bootstrap, "--create", "--topic", TOPIC, "--partitions", "1",
         "--config", "segment.bytes=1048576", "--config", "compaction.compression.type=zstd",
         "--config", "recompression.lag.ms=0")
    p = tool("kafka-producer-perf-test.sh", "--topic", TOPIC, "--num-records", str(RECORDS), "--record-size", "1000",
             "--throughput", "-1", "--producer-props", "bootstrap.servers=" + ours.bootstrap, "compression.type=lz4",
             "batch.size=16384")
    assert "%d records sent" % RECORDS in p.stdout, p.stdout[-2000:]
    out = configs(ours, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
                  ",".join("%s=%s" % kv for kv in DYNAMIC.items()))
    assert "Completed updating default config for brokers" in out.stdout, out.stdout + out.stderr
    progress = ours.data / PROGRESS
    deadline = time.time() + 120
    while time.time() < deadline and not (progress.exists() and "%s 0 " % TOPIC in progress.read_text()):
        time.sleep(1)
    assert progress.exists() and "%s 0 " % TOPIC in progress.read_text(), "no progress of %s written" % TOPIC
    ours.stop()
    saved = progress.read_text()

    stock = on_same_node(ours, True, OUR_BROKER_KEYS)
    stock.start()
    try:
        output = stock.output()
        assert re.search(r"Kafka version: 4\.3\.1\b(?!-)", output), output[-3000:]
        named = [l for l in output.splitlines() if KEYS.search(l)]
        print("stock broker: lines naming our keys: %s" % named[:5])
        # docs/upgrading.md: a stock broker starts with every broker key of ours in server.properties and names none
        # of them; our dynamic defaults in the metadata it names only in its INFO lines of the cluster configuration,
        # their values hidden as it hides every setting it does not know
        for line in named:
            assert re.search(r" INFO \[DynamicConfigPublisher (controller|broker) id=1\] Updating cluster "
                             r"configuration : ", line), line
            for key in DYNAMIC:
                assert "%s -> [hidden]" % key in line, (key, line)
        assert len(named) == 2, named
        assert read_all(stock, True) == RECORDS
        # the progress file: left as it is, no line about it
        assert progress.read_text() == saved and PROGRESS not in stock.output()
        # our dynamic defaults: a stock broker lists them with their values hidden; can a stock controller set them?
        described = configs(stock, "--describe", "--entity-type", "brokers", "--entity-default", stock=True)
        print("stock --describe --entity-default: %s" % described.stdout.strip())
        # listed as settings it does not know: sensitive, their values hidden
        for key in DYNAMIC:
            assert "%s=null sensitive=true" % key in described.stdout, (key, described.stdout)
        # a stock controller takes broker settings it does not know: stored, and applied once ours runs again
        r = configs(stock, "--alter", "--entity-type", "brokers", "--entity-default", "--add-config",
                    ",".join("%s=%s" % kv for kv in SET_ON_STOCK.items()), stock=True)
        print("stock --alter --entity-default %s: %s" % (SET_ON_STOCK, (r.stdout + r.stderr).strip()[:300]))
        assert "Completed updating default config for brokers in the cluster" in r.stdout, (r.stdout, r.stderr)
        # our topic settings, recompression.batch.bytes too: refused by a stock controller
        r = tool("kafka-topics.sh", "--bootstrap-server", stock.bootstrap, "--create", "--topic", "merged",
                 "--config", "recompression.batch.bytes=0", stock=True, check=False)
        assert r.returncode != 0 and "Unknown topic config name: recompression.batch.bytes" in r.stdout + r.stderr, \
            (r.stdout, r.stderr)
        # a stock producer configured with a provider key: it sends, and says nothing about the key at the tools'
        # log level (WARN)
        p = tool("kafka-producer-perf-test.sh", "--topic", TOPIC, "--num-records", "100", "--record-size", "100",
                 "--throughput", "-1", "--producer-props", "bootstrap.servers=" + stock.bootstrap,
                 "compression.type=gzip", "compression.gzip.provider=" + NATIVE, stock=True)
        assert "100 records sent" in p.stdout, (p.stdout[-1000:], p.stderr[-1000:])
        assert "compression.gzip.provider" not in p.stdout + p.stderr, (p.stdout[-1000:], p.stderr[-1000:])
    finally:
        stock.stop()

    again = on_same_node(ours, False, {}, drop=OUR_BROKER_KEYS)
    again.start()
    try:
        described = configs(again, "--describe", "--entity-type", "brokers", "--entity-default")
        for key, value in SET_ON_STOCK.items():
            assert "%s=%s" % (key, value) in described.stdout, described.stdout
        assert read_all(again, False, RECORDS + 100) == RECORDS + 100
    finally:
        again.stop()
