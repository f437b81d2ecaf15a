"""Decompression bombs against the broker image with the QAT provider (issue 29).

test_provider_bomb.py's bombs and flood, with io.kafkacompress.qat.QatGzipCompressionService as
compression.gzip.provider (required) in the broker image (Debian trixie with QATzip, no QAT device here: mode auto
runs QATzip's software path, which the start-up log line must say):

- test_qat_bombs_are_stored_as_by_a_stock_broker: a -Xmx1g QAT broker and a -Xmx1g stock Apache Kafka 4.3.1 broker
  (on the host, as in test_provider_bomb.py) get the bomb variants of test_provider_bomb.VARIANTS (QAT_VARIANTS: all
  with ./build.sh test --full, two in CI): the same answers,
  the same stored batches, no OutOfMemoryError (-XX:+ExitOnOutOfMemoryError), the QAT broker alive and holding at
  most the stock broker's heap + 64 MB after a collection; a consumer reads the gzip bombs back from it.
- test_qat_bombs_from_many_producers_keep_the_heap_bounded: the flood (60 s with ./build.sh test --full, 20 s in CI) of bombs from 8 producers against two
  brokers of the image with num.io.threads=32, the QAT provider and none.

The brokers are conftest's Broker run by the image (ImageBroker): host network, so their listeners are the host's
loopback ports as for every other broker of these tests; their directory (data, GC log) mounted at the same path;
BombClient and the Kafka tools run on the host. About 3 minutes in all on 2 cores (2026-11-25).

Needs: the distribution, the broker image (used as it is: test_images.py, which runs first, builds it when missing or
stale; ./build.sh image), the stock jars under
build/upstream/libs, a container engine (skipped with the reason otherwise).
"""
import os

import pytest

from conftest import FULL, Broker
from test_images import BROKER_IMAGE, ENGINE, ENGINE_REASON, engine, engine_argv, engine_env, unique
from test_provider_bomb import (FLOOD_IO_THREADS, LIVE_HEAP_OPTS, VARIANTS, check_bombs_against_stock,  # noqa: F401
                                client, flood_and_check, gc_log_opt)   # (client is a fixture)

QAT = "io.kafkacompress.qat.QatGzipCompressionService"
# ./build.sh test --full sends every variant; CI the gzip bomb (decompressed through QAT on produce and on
# consume) and the lz4 bomb into a gzip topic (compressed through it), test_provider_bomb.py sending all to native-gzip
QAT_VARIANTS = tuple(VARIANTS) if FULL else ("gzip-100x8MB", "lz4-40x8MB-to-gzip")
QAT_PROPS = {"compression.gzip.provider": QAT, "compression.gzip.provider.required": "true",
             "compression.gzip.qat.mode": "auto"}

pytestmark = [pytest.mark.container,
              pytest.mark.skipif(ENGINE is None, reason="no container engine: %s" % ENGINE_REASON)]


def say(msg):
    print(f"[test_qat_provider_bomb] {msg}", flush=True)


@pytest.fixture(scope="module")
def image():
    """The broker image as it is (test_images.py, run before this file, builds it when missing or stale)."""
    p = engine("image", "inspect", "--format", '{{.Created}} {{index .Config.Labels "io.kafkacompress.content-hash"}}',
               BROKER_IMAGE, check=False)
    if p.returncode != 0:
        pytest.fail("no broker image %s: ./build.sh image (or tests/project/test_images.py) builds it" % BROKER_IMAGE)
    say("broker image %s, created %s" % (BROKER_IMAGE, p.stdout.strip()))
    return BROKER_IMAGE


class ImageBroker(Broker):
    """conftest's Broker, run by the broker image in a container named like test_images.py's (swept when a killed
    run leaves it): host network, the broker's directory mounted at the same path, its server.properties as the
    image's /mnt/shared/config/server.properties. The image's entry point formats the storage on the first start
    and runs kafka-server-start.sh as appuser, with the heap and jvm_opts as KAFKA_HEAP_OPTS and KAFKA_OPTS."""

    def __init__(self, workdir, **kw):
        super().__init__(workdir, **kw)
        self.name = unique("kctest-qatbomb")
        os.chmod(self.dir, 0o777)   # appuser writes the data and the GC log

    def command(self, main, *args):
        if main == "kafka.tools.StorageTool":
            return ["true"], engine_env()   # the entry point formats
        assert main == "kafka.Kafka", main
        return (engine_argv() + ["run", "--rm", "--name", self.name, "--label", "io.kafkacompress.cluster=" + self.name,
                                 "--network", "host", "-v", "%s:%s" % (self.dir, self.dir),
                                 "-v", "%s:/mnt/shared/config/server.properties:ro" % self.props,
                                 "-e", "KAFKA_HEAP_OPTS=" + self.heap, "-e", "KAFKA_OPTS=" + " ".join(self.jvm_opts),
                                 BROKER_IMAGE], engine_env())

    def start(self, timeout=180, expect_failure=False):
        return super().start(timeout, expect_failure)

    def stop(self):
        engine("stop", "-t", "60", self.name, check=False, timeout=120)
        super().stop()
        engine("rm", "-f", self.name, check=False, timeout=120)


def qat_broker(broker_factory, tmp_path, name, heap, props=(), jvm_opts=()):
    b = broker_factory(name, cls=ImageBroker, heap=heap, extra_props=dict(QAT_PROPS, **dict(props)),
                       jvm_opts=["-XX:+ExitOnOutOfMemoryError", gc_log_opt(tmp_path, name)] + list(jvm_opts))
    line = next((l for l in b.output().splitlines() if "Compression provider for gzip:" in l), "")
    say("%s broker: %s" % (name, line[line.find("Compression provider"):][:120]))
    # available, on QATzip's software path (no device here), not the built-in codec it would fall back to
    assert "QAT gzip" in line and "QATzip software" in line and "not available" not in line, b.output()[-4000:]
    return b


def test_qat_bombs_are_stored_as_by_a_stock_broker(image, broker_factory, client, tmp_path):
    ours = qat_broker(broker_factory, tmp_path, "qat", "-Xmx1g", jvm_opts=LIVE_HEAP_OPTS)
    stock = broker_factory("stock", stock=True, heap="-Xmx1g",
                           jvm_opts=["-XX:+ExitOnOutOfMemoryError", gc_log_opt(tmp_path, "stock")] + LIVE_HEAP_OPTS)
    check_bombs_against_stock(ours, stock, client, QAT, QAT_VARIANTS)


# the heap of test_provider_bomb's flood (-Xmx512m for both there)
FLOOD_HEAP = "-Xmx512m"


def test_qat_bombs_from_many_producers_keep_the_heap_bounded(image, broker_factory, client, tmp_path):
    io = {"num.io.threads": str(FLOOD_IO_THREADS)}
    brokers = {"provider": qat_broker(broker_factory, tmp_path, "flood-qat", FLOOD_HEAP, io),
               "none": broker_factory("flood-none", cls=ImageBroker, heap=FLOOD_HEAP, extra_props=io,
                                      jvm_opts=["-XX:+ExitOnOutOfMemoryError", gc_log_opt(tmp_path, "flood-none")])}
    flood_and_check(brokers, client)
