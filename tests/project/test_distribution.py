"""The distribution is a drop-in Apache Kafka 4.3.1: patched jars carry every
upstream class, replace their upstream counterparts, and report our version."""
import concurrent.futures
import os
import re
import subprocess
import time
import zipfile

import pytest

from conftest import (BUILD, COMMIT_ID, DIST, DIST_VERSION, KAFKA_VERSION, PATCHED, ROOT, UPSTREAM, require_dist,
                      run, tool)


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


def test_stock_tools_log_to_stderr_as_their_scripts_do():
    """Stock 4.3.1's tools from the release's jars (tool(stock=True)) log as bin/kafka-run-class.sh has them log, to
    stderr, so a console consumer's stdout holds records only. Against a port nothing listens on, the stock console
    consumer gives up with an ERROR line, which log4j2 without a configuration prints on stdout."""
    require_dist()
    p = tool("kafka-console-consumer.sh", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--timeout-ms", "3000",
             stock=True)
    assert "ERROR Error processing message" in p.stderr, p.stderr[-2000:]
    assert p.stdout == "", p.stdout


def test_second_build_is_incremental():
    t = time.time()
    run([str(ROOT / "build.sh")], timeout=120)
    took = time.time() - t
    assert took < 30, "a build with nothing changed took %.1fs" % took


# Apache Kafka 4.3's bin/*.sh, the scripts its binary distribution ships
# (build.gradle's releaseTarGz copies the whole of bin/). Taken from apache/kafka's
# bin/ at the 4.3 branch (read with the project's code search; each script's main
# class was checked to exist in the 4.3.1 jars). Upstream's bin/windows/*.bat are
# left out on purpose: this distribution is built and tested on Linux only
# (docs/distribution.md).
UPSTREAM_BIN = """
connect-distributed.sh connect-mirror-maker.sh connect-plugin-path.sh connect-standalone.sh
kafka-acls.sh kafka-broker-api-versions.sh kafka-client-metrics.sh kafka-cluster.sh kafka-configs.sh
kafka-console-consumer.sh kafka-console-producer.sh kafka-console-share-consumer.sh kafka-consumer-groups.sh
kafka-consumer-perf-test.sh kafka-delegation-tokens.sh kafka-delete-records.sh kafka-dump-log.sh
kafka-e2e-latency.sh kafka-features.sh kafka-get-offsets.sh kafka-groups.sh kafka-jmx.sh
kafka-leader-election.sh kafka-log-dirs.sh kafka-metadata-quorum.sh kafka-metadata-shell.sh
kafka-producer-perf-test.sh kafka-reassign-partitions.sh kafka-replica-verification.sh kafka-run-class.sh
kafka-server-start.sh kafka-server-stop.sh kafka-share-consumer-perf-test.sh kafka-share-groups.sh
kafka-storage.sh kafka-streams-application-reset.sh kafka-streams-groups.sh kafka-topics.sh
kafka-transactions.sh kafka-verifiable-consumer.sh kafka-verifiable-producer.sh
kafka-verifiable-share-consumer.sh trogdor.sh
""".split()
OUR_BIN = ["kafka-compression-advisor.sh"]      # this distribution's own tool

# The projects whose jar and runtime classpath upstream's releaseTarGz puts in libs/,
# besides core's (kafka_2.13) runtime classpath, under their Maven Central artifact ids.
UPSTREAM_LIBS_MODULES = """
kafka_2.13 kafka-tools kafka-tools-api trogdor kafka-shell connect-api connect-runtime connect-transforms
connect-json connect-file connect-basic-auth-extension connect-mirror connect-mirror-client kafka-streams
kafka-streams-scala_2.13 kafka-streams-test-utils kafka-streams-examples
""".split()

# Upstream's config/ files the scripts' usual invocations name (broker.properties and
# controller.properties, for split broker/controller roles, are not carried: our
# server.properties is a combined node).
UPSTREAM_CONFIG = """
connect-console-sink.properties connect-console-source.properties connect-distributed.properties
connect-file-sink.properties connect-file-source.properties connect-log4j2.yaml
connect-mirror-maker.properties connect-standalone.properties consumer.properties log4j2.yaml
producer.properties server.properties tools-log4j2.yaml trogdor.conf
""".split()


def jar_name(artifact, version=KAFKA_VERSION):
    return "%s-%s.jar" % (artifact, DIST_VERSION if artifact in PATCHED else version)


def test_bin_holds_upstreams_scripts():
    require_dist()
    ours = {p.name for p in (DIST / "bin").iterdir()}
    missing = sorted(set(UPSTREAM_BIN) - ours)
    extra = sorted(ours - set(UPSTREAM_BIN) - set(OUR_BIN))
    assert not missing, "upstream's scripts missing from bin/: %s" % missing
    assert not extra, "scripts in bin/ that upstream does not ship: %s" % extra
    for name in ours:
        assert (DIST / "bin" / name).stat().st_mode & 0o111, "%s is not executable" % name


def test_config_holds_upstreams_files():
    require_dist()
    missing = [f for f in UPSTREAM_CONFIG if not (DIST / "config" / f).is_file()]
    assert not missing, "config/ lacks %s" % missing


def test_libs_holds_upstreams_modules_once():
    require_dist()
    libs = sorted(p.name for p in (DIST / "libs").glob("*.jar"))
    missing = [jar_name(a) for a in UPSTREAM_LIBS_MODULES if jar_name(a) not in libs]
    assert not missing, "libs/ lacks upstream's %s" % missing
    # one version of each library, as upstream's libs/ (name = file name without its version)
    names = {}
    for jar in libs:
        m = re.match(r"(.+?)-\d[\w.+-]*\.jar$", jar)
        assert m, "unversioned jar in libs/: %s" % jar
        names.setdefault(m.group(1), []).append(jar)
    dups = {n: v for n, v in names.items() if len(v) > 1}
    assert not dups, "several versions of one library in libs/: %s" % dups


# What each script is asked to show that it starts: --help unless noted. kafka-server-stop.sh
# would stop every broker of the machine, so it is only asked for a node id no broker has.
HELP_ARGS = {
    "kafka-server-start.sh": ["--version"],
    "kafka-server-stop.sh": ["--node-id", "-4242"],
    "kafka-run-class.sh": [],
    "trogdor.sh": ["agent", "--help"],
}
HELP_EXPECT = {
    "kafka-server-start.sh": re.escape(DIST_VERSION),
    "kafka-server-stop.sh": "No kafka server to stop",
}
FAILURE_SIGNS = re.compile(r"Exception|Error:|Could not find or load main class|^\s+at [\w.$]+\(", re.M)


def test_every_script_answers_help(tmp_path):
    """Every script starts its class (or its own usage) and answers with usage, no stack trace.
    Three at a time: each is a JVM start."""
    require_dist()
    env = {**os.environ, "LOG_DIR": str(tmp_path / "logs")}
    for v in ("KAFKA_HEAP_OPTS", "KAFKA_OPTS", "KAFKA_LOG4J_OPTS", "CLASSPATH", "KAFKA_DEBUG", "EXTRA_ARGS"):
        env.pop(v, None)
    scripts = sorted(p.name for p in (DIST / "bin").iterdir() if p.name.endswith(".sh"))

    def one(name):
        argv = [str(DIST / "bin" / name)] + HELP_ARGS.get(name, ["--help"])
        t = time.time()
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
                           cwd=tmp_path)
        return name, p.stdout + p.stderr, time.time() - t

    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(one, scripts))
    problems = []
    for name, out, took in results:
        expect = HELP_EXPECT.get(name, r"(?i)usage|^Option\s")
        if not re.search(expect, out, re.M):
            problems.append("%s: no usage in its answer (%.1fs):\n%s" % (name, took, out[-1500:]))
        elif FAILURE_SIGNS.search(out):
            problems.append("%s: error or stack trace in its answer:\n%s" % (name, out[-3000:]))
    print("%d scripts answered in %.1fs" % (len(results), time.time() - t0))
    assert not problems, "\n\n".join(problems)
