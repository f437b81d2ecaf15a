"""Every Kafka client reads the large gzip batches this distribution writes (issue 17).

librdkafka (through confluent-kafka) decodes only the first gzip member of a batch; given a batch of
several members it delivers the first member's records and then re-fetches the same offset forever,
without an error reaching the application. So one gzip batch of more than 8 MiB, and one of more than
32 MiB, of JSON records is written through each gzip provider, on both routes by which a provider writes
gzip:

- producer: our Java producer with the provider (compression.gzip.provider), batch.size and
  max.request.size raised so that all records go out as one batch;
- recompression: a Java producer sends the same records as one lz4 batch into a topic with
  compression.type=gzip on a broker with the provider, which recompresses it through the provider;

and read back by librdkafka (confluent-kafka), kafka-python and kcat (Debian's, with Debian's
librdkafka), each record checked by key, offset, length and CRC32 of its value against what the
producer had acknowledged (tests/kafkacompress_systest/python/systest_client.py, the same reader as the
system tests'). A consumer that stops getting records for 20 s (kcat: not done in 60 s) is stopped and
the test fails with how many of the records it delivered and where it stopped.

Providers: native-gzip on this host; qat-gzip (software mode) where QATzip is: on this host if it has
libqatzip.so.3, else in a container of the broker image (Debian trixie with QATzip), broker and producer
on the host's network; the test then needs a container engine (run it under
`flock /tmp/kc-containers.lock`), and is skipped, saying so, when none works. "builtin" is the control
(./build.sh test --full only): the same scenario with Kafka's built-in gzip, which writes one member per batch.

Needs: ./build.sh, the Python clients of requirements.txt in the Python that runs pytest, and kcat.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import pytest

from conftest import DATA, DIST, ROOT, TOOL_LOG4J, Broker, full_only, require_dist, run, tool

CLIENT_PY = ROOT / "tests/kafkacompress_systest/python/systest_client.py"
CLIENT_JAVA = ROOT / "tests/kafkacompress_systest/java/SysTestClient.java"
PAYLOAD = DATA / "json-records.ndjson"
MIB = 1 << 20
SIZES = {"9MiB": 9 * MIB, "33MiB": 33 * MIB}     # bytes of record values in one batch
PROVIDERS = {
    "builtin": {},
    "native-gzip": {"compression.gzip.provider": "io.kafkacompress.nativegzip.NativeGzipCompressionService",
                    "compression.gzip.provider.required": "true"},
    "qat-gzip": {"compression.gzip.provider": "io.kafkacompress.qat.QatGzipCompressionService",
                 "compression.gzip.provider.required": "true", "compression.gzip.qat.mode": "software"},
}
QATZIP_ON_HOST = any(Path(d, "libqatzip.so.3").exists() for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"))
# one batch of up to 48 MiB from the producer, stored and served by the broker
PRODUCER_BIG = {"batch.size": 48 * MIB, "max.request.size": 64 * MIB, "buffer.memory": 256 * MIB,
                "linger.ms": 60000, "request.timeout.ms": 120000, "delivery.timeout.ms": 300000}
BROKER_BIG = {"message.max.bytes": 64 * MIB, "socket.request.max.bytes": 128 * MIB}
# what the readers need for such batches (librdkafka: receive.message.max.bytes >= fetch.max.bytes + 512)
READERS = {
    "confluent-kafka": {"fetch.max.bytes": 64 * MIB, "max.partition.fetch.bytes": 64 * MIB,
                        "receive.message.max.bytes": 128 * MIB},
    "kafka-python": {"fetch.max.bytes": 64 * MIB, "max.partition.fetch.bytes": 64 * MIB},
}
IDLE_MS = 20000
BATCH = re.compile(r"baseOffset: (\d+) lastOffset: (\d+) count: (\d+) .*size: (\d+) magic: \d+ compresscodec: (\w+)")


def say(msg):
    print("[client-interop] " + msg, flush=True)


def records_for(nbytes):
    """How many records (values = lines of the payload file, cycled, as SysTestClient sends them) hold nbytes."""
    lines = [l.rstrip(b"\n") for l in open(PAYLOAD, "rb") if l.strip()]
    total = n = 0
    while total <= nbytes:
        total += len(lines[n % len(lines)])
        n += 1
    return n


# ----------------------------------------------------------------------------------------- where things run

def engine():
    """(argv prefix, env) of the container engine docker/engine.sh picks, or (None, reason)."""
    env = dict(os.environ, CONTAINERS_CONF=os.environ.get("CONTAINERS_CONF", str(ROOT / "docker/containers.conf")))
    r = subprocess.run(["bash", "-c", '. docker/engine.sh; printf "%s|%s" "$KC_ENGINE" "${KC_ENGINE_REASON:-}"'],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    name, _, reason = r.stdout.partition("|")
    return (name or None), (env if name else reason)


class Host:
    """Broker and Java producer on this host, from the distribution."""
    label = "host"

    def broker(self, workdir, props):
        return Broker(workdir, extra_props=props)

    def java(self, jar, *args):
        return ["java", "-Xmx1g", TOOL_LOG4J, "-cp", "%s/libs/*:%s" % (DIST, jar), "SysTestClient"] + list(args), None

    def close(self):
        pass


class Container:
    """Broker and Java producer in containers of the broker image (Debian trixie with QATzip), on the host's
    network; the test's directories are mounted at the same paths."""

    def __init__(self, engine_name, env, image, mounts):
        self.engine, self.env, self.image, self.mounts = engine_name, env, image, mounts
        self.label = "container %s" % image
        self.names = []

    def argv(self, entrypoint, args, env=None):
        name = "kc-interop-%d-%d" % (os.getpid(), len(self.names))
        self.names.append(name)
        argv = [self.engine, "run", "--rm", "--name", name, "--user", "0", "--network", "host",
                "--entrypoint", entrypoint]
        for m in self.mounts:
            argv += ["-v", "%s:%s" % (m, m)]
        for k, v in (env or {}).items():
            argv += ["-e", "%s=%s" % (k, v)]
        return argv + [self.image] + list(args)

    def broker(self, workdir, props):
        c = self

        class ContainerBroker(Broker):
            def command(self, main, *args):
                _, env = Broker.command(self, main, *args)
                keep = {k: env[k] for k in ("LOG_DIR", "KAFKA_HEAP_OPTS", "KAFKA_LOG4J_OPTS")}
                return c.argv("/opt/kafka/bin/kafka-run-class.sh", [main] + list(args), keep), dict(env, **c.env)

        return ContainerBroker(workdir, extra_props=props)

    def java(self, jar, *args):
        return self.argv("java", ["-Xmx1g", "-Dlog4j2.configurationFile=/opt/kafka/config/tools-log4j2.yaml",
                                  "-cp", "/opt/kafka/libs/*:%s" % jar, "SysTestClient"] + list(args)), \
            dict(os.environ, **self.env)

    def close(self):
        for n in self.names:
            subprocess.run([self.engine, "rm", "-f", "-t", "2", n], env=dict(os.environ, **self.env),
                           capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def work():
    require_dist()
    for mod, name in (("confluent_kafka", "confluent-kafka"), ("kafka", "kafka-python")):
        if importlib.util.find_spec(mod) is None:
            pytest.fail("%s is not installed in %s: pip install -r %s/requirements.txt"
                        % (name, sys.executable, ROOT))
    if KCAT_VERSION is None:
        pytest.fail("kcat is not installed: apt-get install kcat (Debian's, with Debian's librdkafka)")
    d = Path(tempfile.mkdtemp(prefix="clients-interop-", dir="/tmp"))
    classes = d / "classes"
    run(["javac", "--release", "17", "-nowarn", "-d", str(classes), "-cp", "%s/libs/*" % DIST, str(CLIENT_JAVA)])
    run(["jar", "cf", str(d / "systest-client.jar"), "-C", str(classes), "."])
    yield d
    subprocess.run(["rm", "-rf", str(d)])


def place(provider, work):
    if provider != "qat-gzip" or QATZIP_ON_HOST:
        return Host()
    name, env = engine()
    if name is None:
        say("qat-gzip NOT exercised: no libqatzip.so.3 on this host and no container engine (%s)" % env)
        pytest.skip("qat-gzip needs QATzip: not on this host, and no container engine (%s)" % env)
    image = "localhost/kafka-compress:%s" % DIST.name.split("-", 1)[1]
    r = subprocess.run(["bash", str(ROOT / "docker/images.sh"), "build"], cwd=ROOT, capture_output=True, text=True,
                       timeout=2400)
    assert r.returncode == 0, "docker/images.sh build failed:\n" + (r.stdout + r.stderr)[-3000:]
    return Container(name, env, image, [str(ROOT), str(work)])   # the test data (DATA) are in ROOT/tests/data


# ----------------------------------------------------------------------------------------- the scenario

def java_produce(where, jar, bootstrap, topic, n, configs, acked):
    args = ["produce", "--bootstrap", bootstrap, "--topic", topic, "--input", str(PAYLOAD), "--max", str(n),
            "--id", topic, "--acked", str(acked)]
    for k, v in configs.items():
        args += ["--config", "%s=%s" % (k, v)]
    argv, env = where.java(jar, *args)
    p = run(argv, env=env, timeout=600)
    res = json.loads(p.stdout.strip().splitlines()[-1])
    assert res["acked"] == n and res["failed"] == 0, "%s: %s" % (topic, res)
    return res


def largest_batch(broker, topic, acked):
    """(codec, records, bytes of values, bytes on disk) of the topic's largest batch, from kafka-dump-log.sh."""
    lengths = {}
    for line in open(acked):
        f = line.rstrip("\n").split("\t")
        lengths[int(f[2])] = int(f[4])
    best = None
    for seg in broker.segments(topic):
        for m in BATCH.finditer(tool("kafka-dump-log.sh", "--files", str(seg)).stdout):
            base, last, count, size, codec = m.groups()
            values = sum(lengths.get(o, 0) for o in range(int(base), int(last) + 1))
            if best is None or values > best[2]:
                best = (codec, int(count), values, int(size))
    return best


def read_back(client, bootstrap, topic, acked):
    args = [sys.executable, str(CLIENT_PY), "consume", "--client", client, "--bootstrap", bootstrap,
            "--topic", topic, "--acked", str(acked), "--idle-ms", str(IDLE_MS), "--timeout-ms", "240000"]
    for k, v in READERS[client].items():
        args += ["--config", "%s=%s" % (k, v)]
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return {"ok": False, "read": "?", "acked": "?", "stopped": "killed after 300 s"}
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"ok": False, "read": "?", "acked": "?", "stopped": "no summary (exit %d): %s"
                % (p.returncode, (p.stdout + p.stderr)[-1500:])}


def read_kcat(bootstrap, topic, acked, timeout=60):
    """kcat (Debian's, with Debian's librdkafka) reading the topic to its end (-e), checked like read_back.
    kcat never exits when librdkafka stalls: it is stopped after `timeout` seconds."""
    expect = {}
    for line in open(acked):
        k, part, off, c, length = line.rstrip("\n").split("\t")
        expect[k] = (int(off), c, int(length))
    argv = ["kcat", "-C", "-b", bootstrap, "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q",
            "-X", "fetch.max.bytes=%d" % (64 * MIB), "-X", "receive.message.max.bytes=%d" % (128 * MIB),
            "-f", "%k\\t%o\\t%s\\n"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = p.communicate(timeout=timeout)
        stopped = "end of partition (exit %d)" % p.returncode
    except subprocess.TimeoutExpired:
        p.terminate()       # kcat writes what it has and exits on SIGTERM
        try:
            out, err = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        stopped = "stopped after %d s" % timeout
        out = out[:out.rfind(b"\n") + 1]     # a line cut off by the stop is not a record read
    read = matched = 0
    bad, next_offset = [], 0
    for line in out.split(b"\n"):
        if not line:
            continue
        k, off, value = line.split(b"\t", 2)
        read += 1
        next_offset = max(next_offset, int(off) + 1)
        e = expect.get(k.decode())
        if e == (int(off), str(zlib.crc32(value) & 0xFFFFFFFF), len(value)):
            matched += 1
        elif len(bad) < 3:
            bad.append("%s at %s" % (k.decode(), off.decode()))
    return {"ok": matched == len(expect) == read, "matched": matched, "acked": len(expect), "read": read,
            "stopped": stopped, "next_offset": {"0": next_offset}, "client": "kcat (%s)" % KCAT_VERSION,
            "examples": "; ".join(bad) + err.decode(errors="replace")[-300:]}


def kcat_version():
    try:
        out = subprocess.run(["kcat", "-V"], capture_output=True, text=True, timeout=30).stdout
    except OSError:
        return None
    m = re.search(r"Version (\S+) .*?(librdkafka \S+)", out)
    return "%s, %s" % m.groups() if m else out.strip()[:60]


KCAT_VERSION = kcat_version()


@pytest.mark.parametrize("route", ["producer", "recompression"])
# "builtin", the control, runs Kafka's own gzip writer, which the gate tests: with ./build.sh test --full only
@pytest.mark.parametrize("provider", [pytest.param("builtin", marks=full_only), "native-gzip", "qat-gzip"])
def test_large_gzip_batches_read_by_every_client(work, provider, route):
    where = place(provider, work)
    pcfg = PROVIDERS[provider]
    b = where.broker(work / ("broker-%s-%s" % (provider, route)), dict(BROKER_BIG, **pcfg))
    try:
        b.start(timeout=180)
        if pcfg:
            line = next((l for l in b.output().splitlines() if "Compression provider for gzip" in l), "")
            assert pcfg["compression.gzip.provider"] in line and "not available" not in line, \
                "broker does not use %s:\n%s" % (provider, line or b.output()[-3000:])
        rows, failures = [], []
        for size, nbytes in SIZES.items():
            n = records_for(nbytes)
            topic = "%s-%s" % (route, size.lower())
            tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", topic,
                 "--config", "compression.type=%s" % ("gzip" if route == "recompression" else "producer"))
            acked = work / ("%s-%s-%s.acked" % (provider, route, size))
            if route == "producer":     # the producer compresses with the provider
                produce_cfg = dict(PRODUCER_BIG, **pcfg, **{"compression.type": "gzip"})
            else:                       # the broker recompresses lz4 into gzip with the provider
                produce_cfg = dict(PRODUCER_BIG, **{"compression.type": "lz4"})
            java_produce(where, work / "systest-client.jar", b.bootstrap, topic, n, produce_cfg, acked)
            codec, count, values, ondisk = largest_batch(b, topic, acked)
            say("%s %s %s: largest batch %s, %d records, %.1f MiB of values, %.1f MiB on disk"
                % (provider, route, size, codec, count, values / MIB, ondisk / MIB))
            assert codec == "gzip" and values > nbytes - MIB, \
                "the scenario did not make one large gzip batch: %s %d records %d bytes" % (codec, count, values)
            for client in list(READERS) + ["kcat"]:
                v = read_kcat(b.bootstrap, topic, acked) if client == "kcat" else read_back(client, b.bootstrap, topic, acked)
                row = "%-13s %-13s %-5s %-15s %s of %s records verified (read %s; stopped: %s; next offset %s; %s)" % (
                    provider, route, size, client, v.get("matched", 0), v["acked"], v["read"], v["stopped"],
                    v.get("next_offset"), v.get("client", ""))
                say(row)
                rows.append(row)
                if not v["ok"]:
                    failures.append(row + (" examples: " + v["examples"][:300] if v.get("examples") else ""))
        assert not failures, "records not read back from %s gzip batches (%s):\n%s" % (
            provider, where.label, "\n".join(failures))
    finally:
        b.stop()
        where.close()
