"""KIP-1121 at broker level: a real broker from the distribution with the test gzip
provider on its classpath recompresses an lz4 producer's batches into a gzip level 9
topic through the provider, and a consumer with stock Apache Kafka 4.3.1 jars reads
every record back.

Needs: ./build.sh (the distribution and kafka/ with the series applied), a JDK.
Uses its own free ports and a temporary directory, never 9092.
"""
import glob
import os
import re
import shutil
import socket
import subprocess
import time
import uuid

import pytest

from conftest import CONSOLE_PRODUCER_TIMEOUT, free_port, sent, tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROVIDER_CLASS = "org.apache.kafka.common.compress.TestGzipCompressionService"
PROVIDER_SOURCE = os.path.join(ROOT, "kafka/clients/src/test/java/org/apache/kafka/common/compress/TestGzipCompressionService.java")
MARKER = b"kip1121-test-provider"
RECORDS = 3000
TOPIC = "kip1121-gzip9"
OBJECT_NAME = "kafka.server:type=compression-provider-metrics,codec=gzip"


def dist_dir():
    d = os.environ.get("KC_DIST")
    if d and os.path.isdir(d):
        return d
    found = sorted(glob.glob(os.path.join(ROOT, "build/dist/kafka_2.13-*/")))
    assert found, "no distribution under build/dist: run ./build.sh first"
    return found[0].rstrip("/")


def wait_port(port, proc, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.5)
    return False


def run(cmd, env=None, timeout=120, check=True, **kw):
    p = subprocess.run(cmd, env=env, timeout=timeout, capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"{cmd} failed ({p.returncode}):\nstdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


def build_provider_jar(dist, work):
    """The test provider from the series' clients test sources, compiled into a jar of its own."""
    assert os.path.exists(PROVIDER_SOURCE), "kafka/ has no test provider: is the KIP-1121 series applied?"
    classes = os.path.join(work, "provider-classes")
    os.makedirs(os.path.join(classes, "META-INF/services"))
    clients = glob.glob(os.path.join(dist, "libs/kafka-clients-*.jar"))
    run(["javac", "--release", "17", "-proc:none", "-d", classes, "-cp", ":".join(clients), PROVIDER_SOURCE])
    with open(os.path.join(classes, "META-INF/services/org.apache.kafka.common.compress.CompressionService"), "w") as f:
        f.write(PROVIDER_CLASS + "\n")
    jar = os.path.join(work, "kip1121-test-provider.jar")
    run(["jar", "cf", jar, "-C", classes, "."])
    return jar


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    dist = dist_dir()
    work = str(tmp_path_factory.mktemp("kip1121-broker"))
    jar = build_provider_jar(dist, work)
    port, controller, jmx = free_port(), free_port(), free_port()
    props = os.path.join(work, "server.properties")
    with open(props, "w") as f:
        f.write(f"""process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{controller}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs={work}/data
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
compression.gzip.provider={PROVIDER_CLASS}
""")
    env = dict(os.environ, LOG_DIR=os.path.join(work, "logs"), KAFKA_HEAP_OPTS="-Xmx512M")
    # the storage tool reads server.properties into a broker configuration too, so it loads the provider
    run([f"{dist}/bin/kafka-storage.sh", "format", "-t", str(uuid.uuid4()), "-c", props], env=dict(env, CLASSPATH=jar))
    broker_env = dict(env, CLASSPATH=jar, JMX_PORT=str(jmx),
                      KAFKA_LOG4J_OPTS=f"-Dlog4j2.configurationFile={dist}/config/log4j2.yaml")
    out = open(os.path.join(work, "broker.out"), "w")
    proc = subprocess.Popen([f"{dist}/bin/kafka-server-start.sh", props], env=broker_env,
                            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        if not wait_port(port, proc):
            out.flush()
            raise AssertionError("broker did not start:\n" + open(os.path.join(work, "broker.out")).read()[-5000:])
        yield dict(dist=dist, work=work, port=port, jmx=jmx, env=env, proc=proc, jar=jar,
                   bootstrap=f"127.0.0.1:{port}", out=os.path.join(work, "broker.out"))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out.close()


def jmx_attribute(b, attribute, object_name=OBJECT_NAME):
    p = run([f"{b['dist']}/bin/kafka-run-class.sh", "org.apache.kafka.tools.JmxTool",
             "--jmx-url", f"service:jmx:rmi:///jndi/rmi://127.0.0.1:{b['jmx']}/jmxrmi",
             "--object-name", object_name, "--attributes", attribute, "--one-time", "true",
             "--report-format", "properties"], env=b["env"])
    m = re.search(re.escape(f"{object_name}:{attribute}") + r"=(.*)", p.stdout)
    assert m, f"no {attribute} in JmxTool output:\n{p.stdout}\n{p.stderr}"
    return m.group(1).strip()


def test_recompression_goes_through_provider_and_stock_consumer_reads(broker):
    b = broker
    dist, env = b["dist"], b["env"]
    log = open(b["out"]).read()
    # the start-up INFO line names codec, provider, class and jar
    assert re.search(r"Compression provider for gzip: test gzip \(JDK streams\) \(class " + re.escape(PROVIDER_CLASS)
                     + r" from .*kip1121-test-provider\.jar\)", log), log[-5000:]
    assert jmx_attribute(b, "provider") == "test gzip (JDK streams)"
    before = float(jmx_attribute(b, "compression-batches-total"))

    run([f"{dist}/bin/kafka-topics.sh", "--bootstrap-server", b["bootstrap"], "--create", "--topic", TOPIC,
         "--partitions", "1", "--replication-factor", "1",
         "--config", "compression.type=gzip", "--config", "compression.gzip.level=9"], env=env)

    values = [f"record-{i:05d}-" + "payload " * (i % 20) for i in range(RECORDS)]
    sent(run([f"{dist}/bin/kafka-console-producer.sh", "--bootstrap-server", b["bootstrap"], "--topic", TOPIC,
              *CONSOLE_PRODUCER_TIMEOUT, "--command-property", "compression.type=lz4",
              "--command-property", "linger.ms=20", "--command-property", "batch.size=65536"],
             env=env, input="\n".join(values) + "\n"))

    after = float(jmx_attribute(b, "compression-batches-total"))
    assert after > before, f"no batch recompressed through the provider ({before} -> {after})"
    assert float(jmx_attribute(b, "compression-fallbacks-total")) == 0

    # the log holds gzip batches written by the provider (its gzip members carry a marker comment)
    segments = glob.glob(os.path.join(b["work"], "data", f"{TOPIC}-0", "*.log"))
    data = b"".join(open(s, "rb").read() for s in segments)
    assert MARKER in data, "the topic's log has no batch written by the test provider"
    dump = run([f"{dist}/bin/kafka-dump-log.sh", "--files", ",".join(segments)], env=env).stdout
    codecs = set(re.findall(r"compresscodec: (\w+)", dump))
    assert codecs == {"gzip"}, dump[-3000:]

    # a consumer with the stock Apache Kafka 4.3.1 jars reads every record
    stock = os.path.join(ROOT, "build/upstream/libs")
    assert glob.glob(os.path.join(stock, "kafka-clients-4.3.1.jar")), "no stock jars in build/upstream/libs"
    p = tool("kafka-console-consumer.sh", "--bootstrap-server", b["bootstrap"], "--topic", TOPIC, "--from-beginning",
             "--max-messages", str(RECORDS), "--timeout-ms", "60000", stock=True, env=env, timeout=180)
    got = p.stdout.splitlines()
    assert got == values, f"stock consumer read {len(got)} of {RECORDS} records"


def test_broker_config_lists_provider_settings(broker):
    b = broker
    p = run([f"{b['dist']}/bin/kafka-configs.sh", "--bootstrap-server", b["bootstrap"], "--describe",
             "--entity-type", "brokers", "--entity-name", "1", "--all"], env=b["env"])
    assert f"compression.gzip.provider={PROVIDER_CLASS}" in p.stdout, p.stdout
    for codec in ("snappy", "lz4", "zstd"):
        assert f"compression.{codec}.provider=" in p.stdout
        assert f"compression.{codec}.provider.required=false" in p.stdout
