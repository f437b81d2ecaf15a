"""Shared helpers for the project's tests: paths of the build, and a real
single-node KRaft broker (ours, stock 4.3.1 or stock 4.3.2/4.4.0) on free loopback ports."""
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
UPSTREAM = BUILD / "upstream"
DATA = ROOT / "tests" / "data"   # the JSON test records, with their provenance and SHA-256 in its README.md


def pom_prop(name):
    m = re.search(r"<%s>(.*?)</%s>" % (re.escape(name), re.escape(name)), (ROOT / "pom.xml").read_text())
    return m.group(1)


KAFKA_VERSION = pom_prop("revision")
SUFFIX = pom_prop("changelist")
DIST_VERSION = KAFKA_VERSION + SUFFIX
COMMIT_ID = pom_prop("kafka.commitId")
DIST = BUILD / "dist" / ("kafka_%s-%s" % (pom_prop("kafka.scala.version"), DIST_VERSION))
# upstream's newest releases (4.3.2, 4.4.0) as stock test nodes run them, test-only: ./build.sh systest fetches them
NEWEST_UPSTREAM = BUILD / "newest-upstream"
# A JVM a test starts with java -cp (stock 4.3.1's tools from the release's jars, the test clients) logs as
# bin/kafka-run-class.sh has every tool log: config/tools-log4j2.yaml, WARN and above to stderr (the dist's copy is
# upstream's file, no patch touches it). Without a configuration log4j2 prints ERROR lines to stdout, where a test
# reads records: a stock console consumer's "LeaveGroup request ... failed" once came back as a 301st record.
TOOL_LOG4J = "-Dlog4j2.configurationFile=%s" % (DIST / "config" / "tools-log4j2.yaml")
PATCHED = {"kafka-clients": "clients", "kafka-server-common": "server-common",
           "kafka-storage": "storage", "kafka-server": "server", "kafka_2.13": "core"}


# Cases CI's 90-minute limit does not hold: ./build.sh test --full exports KC_SYSTEST_FULL=1 (docs/testing.md)
FULL = os.environ.get("KC_SYSTEST_FULL") == "1"
full_only = pytest.mark.skipif(not FULL,
                               reason="run by ./build.sh test --full (KC_SYSTEST_FULL=1): CI's time limit does not "
                                      "hold it; CI runs a shorter case of it (docs/testing.md, What CI leaves to "
                                      "test --full)")


def pytest_configure(config):
    config.addinivalue_line("markers", "container: needs a container engine (docker or rootful podman); "
                            "not run by ./build.sh test --quick")
    config.addinivalue_line("markers", "fresh: the fresh-machine test (Debian containers from scratch); "
                            "run by ./build.sh test --full only")


def stop_process_group(proc):
    """SIGTERM a process started with start_new_session=True and its children; SIGKILL after 60 s."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# Listening ports come from below the kernel's ephemeral range and are reserved across the test processes CI runs
# side by side: a port bind(0) returned and then released could be handed to another process's outgoing connection
# (its source port) or to its own bind(0) before our broker bound it, and the broker then exits at start with
# "Address already in use". A port is ours while this process holds the lock of its file in PORT_LOCKS.
PORT_LOCKS = Path(os.environ.get("TMPDIR", "/tmp")) / "kafka-compress-test-ports"
_reserved = []


def free_port():
    import fcntl
    import random
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    PORT_LOCKS.mkdir(exist_ok=True)
    for _ in range(1000):
        port = random.randrange(10000, low)
        f = open(PORT_LOCKS / str(port), "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with socket.socket() as s:
                s.bind(("127.0.0.1", port))
        except OSError:
            f.close()
            continue
        _reserved.append(f)
        return port
    raise AssertionError("no free loopback port in 10000-%d" % low)


def run(cmd, check=True, timeout=300, **kw):
    """Runs a command, returning CompletedProcess with text output."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError("command failed (%d): %s\nstdout:\n%s\nstderr:\n%s"
                             % (p.returncode, " ".join(map(str, cmd)), p.stdout[-4000:], p.stderr[-4000:]))
    return p


# Short-lived tool JVMs (kafka-topics.sh, kafka-dump-log.sh, ...) start faster with C1 only, the serial collector and a
# class-data-sharing archive of the classes a first tool run loaded (JDK 17's dynamic CDS): about 1 s instead of 2.5 s
# of wall time and a third of the CPU per call on the 2-core machine. What the tools do is unchanged; the throughput
# tool (kafka-producer-perf-test.sh) keeps upstream's JVM options. A stale or unusable archive is ignored by the JVM.
TOOL_JVM_OPTS = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]
UNTUNED_TOOLS = {"kafka-producer-perf-test.sh"}


def tool_cds(kind, libs):
    """(JVM options, then()) to use the tool CDS archive of one classpath (ours or stock), or the first time to write
    it: then() is called after that JVM exited and puts the archive in place."""
    import hashlib
    stamp = "\n".join("%s %d %d" % (p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(Path(libs).glob("*.jar")))
    key = hashlib.sha256((stamp + os.path.realpath(shutil.which("java") or "java")).encode()).hexdigest()[:16]
    archive = BUILD / "tool-cds" / ("%s-%s.jsa" % (kind, key))
    quiet = ["-Xlog:cds=off", "-Xlog:cds+dynamic=off"]   # a missed archive must not print on the tool's stdout
    if archive.exists():
        return quiet + ["-XX:SharedArchiveFile=%s" % archive], lambda: None
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_name("%s.%d.%d.tmp" % (archive.name, os.getpid(), time.monotonic_ns()))

    def then():
        if tmp.exists() and tmp.stat().st_size > 0:
            os.replace(tmp, archive)
        else:
            tmp.unlink(missing_ok=True)
    return quiet + ["-XX:ArchiveClassesAtExit=%s" % tmp], then


# kafka-console-producer.sh gives a batch up after its default 3 retries of a 1.5 s request (--message-send-max-retries,
# --request-timeout-ms), logs "Error when sending message ..." and still exits 0. Most likely what happened once on
# CI's loaded 2 cores: a fresh broker's first batch to an auto-created topic was gone and only a record count later
# said so. Tests run it with the producer's own request.timeout.ms and check its output with sent().
CONSOLE_PRODUCER_TIMEOUT = ["--request-timeout-ms", "30000"]


def sent(p):
    """A console producer's CompletedProcess, failing the test if it dropped a record (its exit code does not say)."""
    out = p.stdout + p.stderr
    assert "Error when sending message" not in out, "the console producer dropped records:\n" + out[-4000:]
    return p


_newest_verified = set()


def newest_upstream_libs(release):
    """build/newest-upstream/RELEASE/libs (RELEASE 4.3.2 or 4.4.0), fetched and checked as ./build.sh systest does
    (build.sh's fetch_newest_upstream: Maven when upstream/newest/*/pom.xml or the lock changed, then every jar
    against upstream/newest-upstream-libs.sha256 and kafka-clients' version), checked once per session. Skips only
    when the jars are missing and Maven cannot reach its repository."""
    libs = NEWEST_UPSTREAM / release / "libs"
    if release not in _newest_verified:
        p = run(["bash", "-c", 'source "$1"; if [[ -f "$NEWEST_OUT/.libs-stamp" && '
                 '"$(cat "$NEWEST_OUT/.libs-stamp")" == "$(newest_stamp)" ]]; then verify_newest_upstream; '
                 'else fetch_newest_upstream; fi', "-", str(ROOT / "build.sh")], cwd=ROOT, check=False, timeout=900)
        out = p.stdout + p.stderr
        if p.returncode != 0 and not libs.is_dir() and re.search(
                r"Could not (transfer|resolve)|UnknownHost|Connection refused|Network is unreachable|connect timed out",
                out, re.I):
            pytest.skip("stock Apache Kafka %s's jars are not in %s and Maven cannot fetch them:\n%s"
                        % (release, libs, out[-2000:]))
        assert p.returncode == 0, "stock Apache Kafka %s's jars did not verify:\n%s" % (release, out[-4000:])
        assert (libs / ("kafka-clients-%s.jar" % release)).is_file(), "not in build.sh's NEWEST_RELEASES: " + release
        _newest_verified.add(release)
    return libs


def stock_libs(stock):
    """The libs/ of a stock broker or tool: stock=True is Apache Kafka 4.3.1 (build/upstream/libs, which ./build.sh
    verifies), a release string ("4.3.2") one of upstream's newest (newest_upstream_libs)."""
    return UPSTREAM / "libs" if stock is True else newest_upstream_libs(stock)


def tool(name, *args, stock=False, **kw):
    """Runs a Kafka tool: ours through the dist's bin/ script, or a stock release's
    class from its jars (stock=True for 4.3.1, or "4.3.2"; script name -> class). The console
    producer gets CONSOLE_PRODUCER_TIMEOUT and its output is checked with sent()."""
    if name == "kafka-console-producer.sh":
        return sent(_tool(name, *CONSOLE_PRODUCER_TIMEOUT, *args, stock=stock, **kw))
    return _tool(name, *args, stock=stock, **kw)


def _tool(name, *args, stock=False, **kw):
    opts, then = [], lambda: None
    if name not in UNTUNED_TOOLS and not (not stock and "env" in kw):
        kind = "ours" if not stock else "stock" if stock is True else "stock-" + stock
        opts, then = tool_cds(kind, stock_libs(stock) if stock else DIST / "libs")
        opts = TOOL_JVM_OPTS + opts
    try:
        if not stock:
            if opts:
                kw["env"] = {**os.environ, "KAFKA_JVM_PERFORMANCE_OPTS": " ".join(opts)}
            return run([str(DIST / "bin" / name)] + list(args), **kw)
        return run(["java", "-Xmx512m", TOOL_LOG4J] + opts + ["-cp", str(stock_libs(stock) / "*"), STOCK_CLASSES[name]]
                   + list(args),
                   **kw)
    finally:
        then()


STOCK_CLASSES = {
    "kafka-storage.sh": "kafka.tools.StorageTool",
    "kafka-topics.sh": "org.apache.kafka.tools.TopicCommand",
    "kafka-configs.sh": "kafka.admin.ConfigCommand",
    "kafka-console-producer.sh": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer.sh": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-producer-perf-test.sh": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-dump-log.sh": "org.apache.kafka.tools.DumpLogSegments",
    "kafka-get-offsets.sh": "org.apache.kafka.tools.GetOffsetShell",
}


def zigzag_size(n):
    """Bytes of a zig-zag varint/varlong (Kafka's ByteUtils.sizeOfVarint/sizeOfVarlong)."""
    v = (n << 1) ^ (n >> 63)
    size = 1
    while v >= 0x80:
        v >>= 7
        size += 1
    return size


def dump_deep(segment):
    """[(records, uncompressed size, stored size, codec)] per batch of a segment, from kafka-dump-log.sh
    --deep-iteration: the uncompressed size is the batch header (61 bytes) plus each record's size as
    DefaultRecord.sizeInBytes computes it from the key and value sizes, offset and timestamp deltas (records
    without headers only: it checks that they have none)."""
    out = tool("kafka-dump-log.sh", "--deep-iteration", "--files", str(segment)).stdout
    batches = []
    current = None
    for line in out.splitlines():
        f = line.split()
        kv = {f[i].rstrip(":"): f[i + 1] for i in range(0, len(f) - 1) if f[i].endswith(":")}
        if line.startswith("baseOffset:"):
            current = {"base": int(kv["baseOffset"]), "count": int(kv["count"]), "stored": int(kv["size"]),
                       "codec": kv["compresscodec"], "records": [], "first_ts": None}
            batches.append(current)
        elif line.startswith("| offset:"):
            assert kv["headerKeys"] == "[]", line
            ts = int(kv["CreateTime"])
            if current["first_ts"] is None:
                current["first_ts"] = ts
            key, value = int(kv["keySize"]), int(kv["valueSize"])
            body = 1 + zigzag_size(ts - current["first_ts"]) + zigzag_size(int(kv["offset"]) - current["base"]) \
                + zigzag_size(key) + max(key, 0) + zigzag_size(value) + max(value, 0) + zigzag_size(0)
            current["records"].append(body + zigzag_size(body))
    result = []
    for b in batches:
        assert len(b["records"]) == b["count"], b["base"]
        result.append((b["count"], 61 + sum(b["records"]), b["stored"], b["codec"]))
    return result


class Broker:
    """A single-node KRaft broker (broker+controller) in its own directory: ours, or stock=True for Apache Kafka
    4.3.1, stock="4.3.2" (or "4.4.0") for one of upstream's newest releases."""

    def __init__(self, workdir, stock=False, extra_props=None, extra_classpath=None, env=None, heap="-Xmx768m",
                 jvm_opts=()):
        self.dir = Path(workdir)
        self.stock = stock
        self.port = free_port()
        self.controller_port = free_port()
        self.bootstrap = "127.0.0.1:%d" % self.port
        self.data = self.dir / "data"
        self.log = self.dir / "broker.out"
        self.props = self.dir / "server.properties"
        self.extra_classpath = extra_classpath or []
        self.env = env or {}
        self.heap = heap
        self.jvm_opts = list(jvm_opts)
        self.proc = None
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": "1@127.0.0.1:%d" % self.controller_port,
            "listeners": "PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (self.port, self.controller_port),
            "advertised.listeners": "PLAINTEXT://127.0.0.1:%d" % self.port,
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(self.data),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
        }
        props.update(extra_props or {})
        self.dir.mkdir(parents=True, exist_ok=True)
        self.props.write_text("".join("%s=%s\n" % kv for kv in props.items()))

    def command(self, main, *args):
        """Ours through the dist's bin/kafka-run-class.sh (extra classpath via CLASSPATH),
        a stock release with java -cp over its jars. Returns (argv, env)."""
        env = {**os.environ, **self.env, "LOG_DIR": str(self.dir / "logs"),
               "KAFKA_HEAP_OPTS": self.heap,
               "KAFKA_LOG4J_OPTS": "-Dlog4j2.configurationFile=%s" % (ROOT / "config" / "log4j2.yaml")}
        extra = ":".join(str(p) for p in self.extra_classpath)
        if self.stock:
            cp = ":".join(x for x in [extra, str(stock_libs(self.stock) / "*")] if x)
            return (["java", self.heap] + self.jvm_opts + ["-Dkafka.logs.dir=%s" % (self.dir / "logs"),
                     env["KAFKA_LOG4J_OPTS"], "-cp", cp, main] + list(args), env)
        if self.jvm_opts:
            env["KAFKA_OPTS"] = " ".join([env.get("KAFKA_OPTS", "")] + self.jvm_opts).strip()
        if extra:
            env["CLASSPATH"] = extra
        else:
            env.pop("CLASSPATH", None)
        return ([str(DIST / "bin" / "kafka-run-class.sh"), main] + list(args), env)

    def start(self, timeout=90, expect_failure=False):
        if not (self.data / "meta.properties").exists():
            argv, env = self.command("kafka.tools.StorageTool", "format", "-t",
                                     str(uuid.uuid4()).replace("-", "")[:22], "-c", str(self.props))
            run(argv, env=env)
        out = open(self.log, "ab")
        argv, env = self.command("kafka.Kafka", str(self.props))
        self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                if expect_failure:
                    return self.proc.returncode
                raise AssertionError("broker exited with %d:\n%s\n[...]\n%s" % (
                    self.proc.returncode, "\n".join(self.errors()[:20]), self.output()[-4000:]))
            if "Kafka Server started" in self.output():
                if expect_failure:
                    raise AssertionError("broker started although it should have refused to")
                return self
            time.sleep(0.5)
        raise AssertionError("broker did not start in %ds:\n%s" % (timeout, self.output()[-6000:]))

    def output(self):
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def errors(self):
        """The ERROR and FATAL lines of the broker's output and their exceptions: the cause of an exit at start, which
        the tail of a shutdown's INFO lines hides."""
        return [line for line in self.output().splitlines()
                if re.search(r"\b(ERROR|FATAL)\b|Exception|Error:", line)]

    def log_text(self, name):
        """The text of the broker's log file NAME (log-cleaner.log, say) and of the files it rolled into: Kafka's
        log4j2.yaml rolls its log files every hour (NAME.yyyy-MM-dd-HH), so a test that crosses the hour finds some
        of its lines there. Oldest first."""
        files = sorted((self.dir / "logs").glob(name + ".*")) + [self.dir / "logs" / name]
        return "".join(p.read_text(errors="replace") for p in files if p.exists())

    def stop(self):
        if self.proc:
            stop_process_group(self.proc)

    def restart(self, kill=False):
        """Stops the broker (SIGKILL with kill=True, else as stop() does) and starts it again; start() then waits
        for this run's "Kafka Server started", not the earlier one."""
        if kill:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        else:
            self.stop()
        self.log.unlink()
        return self.start()

    def segments(self, topic, partition=0):
        return sorted((self.data / ("%s-%d" % (topic, partition))).glob("*.log"))


@pytest.fixture
def broker_factory(tmp_path):
    """broker_factory(name, stock=False, extra_props=None, ...) -> started Broker (or cls, a subclass); all stopped
    at teardown."""
    started = []

    def make(name="broker", start=True, cls=Broker, **kw):
        b = cls(tmp_path / name, **kw)
        started.append(b)
        return b.start() if start else b

    yield make
    for b in started:
        b.stop()


def require_dist():
    if not DIST.is_dir():
        pytest.fail("no distribution at %s: run ./build.sh first" % DIST)
