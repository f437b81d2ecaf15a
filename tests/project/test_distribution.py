"""The distribution is a drop-in Apache Kafka 4.3.1: patched jars carry every
upstream class, replace their upstream counterparts, and report our version."""
import subprocess
import time
import zipfile

import pytest

from conftest import (BUILD, COMMIT_ID, DIST, DIST_VERSION, KAFKA_VERSION, PATCHED, ROOT, UPSTREAM, require_dist,
                      run)


def entries(jar):
    with zipfile.ZipFile(jar) as z:
        return {n for n in z.namelist() if not n.endswith("/")}


@pytest.mark.parametrize("artifact", sorted(PATCHED))
def test_patched_jar_has_every_upstream_class(artifact):
    require_dist()
    upstream = entries(UPSTREAM / "libs" / ("%s-%s.jar" % (artifact, KAFKA_VERSION)))
    ours = entries(DIST / "libs" / ("%s-%s.jar" % (artifact, DIST_VERSION)))
    missing = sorted(upstream - ours)
    assert not missing, "%d entries of upstream's %s missing from ours, e.g. %s" % (len(missing), artifact, missing[:20])


def test_kafka_clients_keeps_upstream_relocations():
    require_dist()
    ours = entries(DIST / "libs" / ("kafka-clients-%s.jar" % DIST_VERSION))
    assert any(n.startswith("org/apache/kafka/shaded/com/google/protobuf/") for n in ours)
    assert any(n.startswith("org/apache/kafka/shaded/io/opentelemetry/proto/") for n in ours)
    assert not any(n.startswith("com/google/protobuf/") or n.startswith("io/opentelemetry/") for n in ours), \
        "unrelocated protobuf/opentelemetry classes in kafka-clients"


@pytest.mark.parametrize("artifact", sorted(PATCHED))
def test_version_marker(artifact):
    require_dist()
    with zipfile.ZipFile(DIST / "libs" / ("%s-%s.jar" % (artifact, DIST_VERSION))) as z:
        props = dict(l.split("=", 1) for l in z.read("kafka/kafka-version.properties").decode().split())
    assert props == {"version": DIST_VERSION, "commitId": COMMIT_ID}


def test_never_both_jars_on_the_classpath():
    require_dist()
    libs = {p.name for p in (DIST / "libs").glob("*.jar")}
    for artifact in PATCHED:
        assert "%s-%s.jar" % (artifact, DIST_VERSION) in libs
        assert "%s-%s.jar" % (artifact, KAFKA_VERSION) not in libs, "stock %s beside ours" % artifact
    # everything else is the stock runtime closure, unchanged
    stock = {p.name for p in (UPSTREAM / "libs").glob("*.jar")}
    assert stock - libs == {"%s-%s.jar" % (a, KAFKA_VERSION) for a in PATCHED}


def test_layout_and_scripts():
    require_dist()
    for script in ["kafka-run-class.sh", "kafka-server-start.sh", "kafka-server-stop.sh", "kafka-storage.sh",
                   "kafka-topics.sh", "kafka-configs.sh", "kafka-console-producer.sh", "kafka-console-consumer.sh",
                   "kafka-producer-perf-test.sh", "kafka-consumer-perf-test.sh", "kafka-dump-log.sh",
                   "kafka-get-offsets.sh", "kafka-metadata-quorum.sh", "kafka-features.sh"]:
        assert (DIST / "bin" / script).stat().st_mode & 0o111, script
    for f in ["server.properties", "log4j2.yaml", "tools-log4j2.yaml", "producer.properties", "consumer.properties"]:
        assert (DIST / "config" / f).is_file(), f
    assert (DIST / "LICENSE").is_file() and (DIST / "NOTICE").is_file()
    assert (DIST.parent / (DIST.name + ".tgz")).is_file()


def test_tools_report_the_fork_version():
    require_dist()
    p = run([str(DIST / "bin" / "kafka-topics.sh"), "--version"])
    assert p.stdout.split()[0] == DIST_VERSION, p.stdout
    p = run(["java", "-cp", str(UPSTREAM / "libs" / "*"), "org.apache.kafka.tools.TopicCommand", "--version"])
    assert p.stdout.split()[0] == KAFKA_VERSION, "stock reports %r" % p.stdout


def test_second_build_is_incremental():
    t = time.time()
    run([str(ROOT / "build.sh")], timeout=120)
    took = time.time() - t
    assert took < 30, "a build with nothing changed took %.1fs" % took
