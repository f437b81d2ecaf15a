"""Kafka Connect and MirrorMaker 2 run on the distribution, through its own scripts,
with the native gzip provider on their producers and consumers: a standalone worker
moves a file through a broker of ours with the FileStream connectors, and
connect-mirror-maker.sh replicates a topic between two brokers of ours. Every record
must arrive, in order and unchanged, and the batches on disk must be gzip."""
import os
import re
import subprocess
import time

import pytest

from conftest import DIST, KAFKA_VERSION, free_port, require_dist, run, stop_process_group, tool

PROVIDER = "io.kafkacompress.nativegzip.NativeGzipCompressionService"
RECORDS = 3000


def lines(n, tag):
    """n distinct, compressible, JSON-like records."""
    return ['{"id":%d,"source":"%s","payload":"%s"}' % (i, tag, ("value-%d " % (i % 97)) * (1 + i % 13))
            for i in range(n)]


def props(path, values):
    path.write_text("".join("%s=%s\n" % kv for kv in values.items()))
    return path


def script_env(tmp_path):
    env = {**os.environ, "LOG_DIR": str(tmp_path / "logs"), "KAFKA_HEAP_OPTS": "-Xms128M -Xmx512M"}
    for v in ("KAFKA_OPTS", "KAFKA_LOG4J_OPTS", "CLASSPATH", "KAFKA_DEBUG", "EXTRA_ARGS"):
        env.pop(v, None)
    return env


class Process:
    """A bin/ script in the background, its output in a file, stopped with its process group."""

    def __init__(self, argv, log, env, cwd):
        self.log = log
        self.proc = subprocess.Popen(argv, stdout=open(log, "ab"), stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                     start_new_session=True)

    def output(self):
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        stop_process_group(self.proc)


def wait_for(what, check, process, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if check():
            return
        if not process.alive():
            raise AssertionError("%s: the process exited with %d before that:\n%s"
                                 % (what, process.proc.returncode, process.output()[-6000:]))
        time.sleep(1)
    raise AssertionError("%s: not within %ds:\n%s" % (what, timeout, process.output()[-6000:]))


def assert_provider_used(output, side):
    chosen = [l for l in output.splitlines() if "Compression provider for gzip:" in l]
    assert chosen, "no %s announced a gzip provider:\n%s" % (side, output[-4000:])
    assert all(PROVIDER in l for l in chosen), chosen
    fallbacks = [l for l in output.splitlines() if "not available" in l and "gzip" in l]
    assert not fallbacks, "the provider fell back to the built-in codec: %s" % fallbacks


def assert_gzip_on_disk(broker, topic, env):
    segments = broker.segments(topic)
    assert segments, "no segment of %s on %s" % (topic, broker.dir)
    dump = run([str(DIST / "bin" / "kafka-dump-log.sh"), "--files", ",".join(map(str, segments))], env=env).stdout
    codecs = set(re.findall(r"compresscodec: (\w+)", dump))
    assert codecs == {"gzip"}, "batches of %s are %s, not gzip" % (topic, codecs or "absent")


def test_connect_standalone_file_source_to_sink(broker_factory, tmp_path):
    """connect-standalone.sh with the FileStream source and sink (plugin.path, as upstream's
    quickstart) moves a file through a broker, gzip with the provider on both sides."""
    require_dist()
    broker = broker_factory()
    env = script_env(tmp_path)
    source, sink = tmp_path / "input.txt", tmp_path / "output.txt"
    records = lines(RECORDS, "connect")
    source.write_text("\n".join(records) + "\n")
    worker = props(tmp_path / "connect-standalone.properties", {
        "bootstrap.servers": broker.bootstrap,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.storage.file.filename": tmp_path / "connect.offsets",
        "offset.flush.interval.ms": "1000",
        "listeners": "http://127.0.0.1:%d" % free_port(),
        "plugin.path": DIST / "libs" / ("connect-file-%s.jar" % KAFKA_VERSION),
        "producer.compression.type": "gzip",
        "producer.compression.gzip.provider": PROVIDER,
        "producer.linger.ms": "50",
        "consumer.compression.gzip.provider": PROVIDER,
    })
    src = props(tmp_path / "file-source.properties", {
        "name": "file-source", "connector.class": "FileStreamSource", "tasks.max": "1",
        "file": source, "topic": "connect-test"})
    snk = props(tmp_path / "file-sink.properties", {
        "name": "file-sink", "connector.class": "FileStreamSink", "tasks.max": "1",
        "file": sink, "topics": "connect-test"})
    p = Process([str(DIST / "bin" / "connect-standalone.sh"), str(worker), str(src), str(snk)],
                tmp_path / "connect.out", env, tmp_path)
    try:
        wait_for("%d records in the sink's file" % RECORDS,
                 lambda: sink.exists() and sink.read_text().count("\n") >= RECORDS, p, 180)
        time.sleep(2)                   # nothing more may arrive
        out = p.output()
    finally:
        p.stop()
    got = sink.read_text().splitlines()
    assert len(got) == RECORDS, "%d records in the sink's file, expected %d" % (len(got), RECORDS)
    assert got == records, "the sink's file differs from the source's"
    assert_provider_used(out, "Connect producer or consumer")
    assert len([l for l in out.splitlines() if "Compression provider for gzip:" in l]) >= 2, \
        "expected the source task's producer and the sink task's consumer to announce the provider"
    errors = [l for l in out.splitlines() if re.match(r"\[[^]]*\] ERROR ", l)]
    assert not errors, "the worker logged errors: %s" % errors
    assert_gzip_on_disk(broker, "connect-test", env)


def test_mirror_maker_2_between_two_brokers(broker_factory, tmp_path):
    """connect-mirror-maker.sh replicates a topic from broker A to broker B, its consumers
    reading and its producers writing gzip with the provider."""
    require_dist()
    a = broker_factory("a")
    b = broker_factory("b")
    env = script_env(tmp_path)
    records = lines(RECORDS, "mm2")
    tool("kafka-console-producer.sh", "--bootstrap-server", a.bootstrap, "--topic", "orders",
         "--compression-codec", "gzip", "--producer-property", "compression.gzip.provider=" + PROVIDER,
         input="\n".join(records) + "\n", env=env)
    mm2 = props(tmp_path / "mm2.properties", {
        "clusters": "A, B",
        "A.bootstrap.servers": a.bootstrap,
        "B.bootstrap.servers": b.bootstrap,
        "A->B.enabled": "true",
        "A->B.topics": "orders",
        "B->A.enabled": "false",
        "replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "config.storage.replication.factor": "1",
        "refresh.topics.interval.seconds": "5",
        "B.producer.compression.type": "gzip",
        "B.producer.compression.gzip.provider": PROVIDER,
        "A.consumer.compression.gzip.provider": PROVIDER,
    })
    p = Process([str(DIST / "bin" / "connect-mirror-maker.sh"), str(mm2)], tmp_path / "mm2.out", env, tmp_path)
    try:
        consumed = run([str(DIST / "bin" / "kafka-console-consumer.sh"), "--bootstrap-server", b.bootstrap,
                        "--topic", "A.orders", "--from-beginning", "--max-messages", str(RECORDS),
                        "--timeout-ms", "180000"], env=env, check=False, timeout=240)
        time.sleep(1)
        out = p.output()
        assert p.alive(), "MirrorMaker exited with %s:\n%s" % (p.proc.returncode, out[-6000:])
    finally:
        p.stop()
    got = consumed.stdout.splitlines()
    assert len(got) == RECORDS, "%d records replicated to B's A.orders, expected %d\n%s\n%s" % (
        len(got), RECORDS, consumed.stderr[-2000:], out[-4000:])
    assert got == records, "the records on B differ from those produced to A"
    assert_provider_used(out, "MirrorMaker producer or consumer")
    assert_gzip_on_disk(b, "A.orders", env)
