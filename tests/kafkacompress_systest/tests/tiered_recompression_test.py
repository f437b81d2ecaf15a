"""9. Cold recompression of a tiered topic: three brokers share a remote store (upstream's LocalTieredStorage from
kafka-storage 4.3.1's test jar, on a directory every node mounts); lz4 goes at a steady rate into a topic with
remote.storage.enable=true, a short local.retention.ms and recompression.lag.ms=0 into zstd 19. The partition's
leader is killed with kill -9 while its cleaner rewrites a segment, and the next leader once remote storage holds a
segment; after local retention removed the local copies of the closed segments, every acknowledged record is read
back once from the beginning by our Java client, stock 4.3.1's and librdkafka (remote segments included), the remote
segments are zstd and hold at most 0.6x of the bytes the cleaners read in lz4.

Runs only with KC_SYSTEST_FULL=1 (./build.sh test --full): about 4 minutes, beside the project test of the same case
(test_tiered_recompression.py, one broker) and the gate's unit tests, which CI runs."""

import os
import re
import time

from ducktape.mark.resource import cluster
from ducktape.tests.test import Test
from ducktape.utils.util import wait_until

from ..services.clients import ProducerService, VerifyingConsumer
from ..services.kafka import KafkaService
from ..services.paths import KAFKA_HOME, TIERED, TOOLS
from .common import full_only, Events, bounce, table, timed

TOPIC = "tiered"
RATE = 400          # records/s, in batches of about 200 records (linger.ms 500)
RECORDS = 20000     # ~50 s of traffic
TOPIC_CONFIGS = {"cleanup.policy": "delete", "segment.ms": 3000, "compression.type": "producer",
                 "remote.storage.enable": "true", "local.retention.ms": 5000,
                 "compaction.compression.type": "zstd", "compression.zstd.level": 19, "recompression.lag.ms": 0,
                 "min.insync.replicas": 2}
STORE = TIERED + "/kafka-tiered-storage"     # LocalTieredStorage's root under rsm.config.dir
SERVER_PROPS = {
    "log.retention.check.interval.ms": 1000,
    "remote.log.storage.system.enable": "true",
    "remote.log.storage.manager.class.name": "org.apache.kafka.server.log.remote.storage.LocalTieredStorage",
    "remote.log.storage.manager.class.path": TOOLS + "/kafka-storage-4.3.1-test.jar",
    "remote.log.storage.manager.impl.prefix": "rsm.config.",
    "rsm.config.dir": TIERED,
    "remote.log.metadata.manager.listener.name": "PLAINTEXT",
    "remote.log.manager.task.interval.ms": 500,
}
RECOMPRESSED = re.compile(r"Recompressed segment (\d+) of log (\S+) with (\w+): (\d+) bytes into (\d+) bytes")
CLEANER_LOGS = "%s/log-cleaner.log* %s/server.log*" % (KafkaService.LOGS, KafkaService.LOGS)
# LocalTieredStorage's segment files: <base offset, 20 digits>-<segment id>.log in <topic>-<partition>-<topic id>/
REMOTE_LOG = re.compile(r"/%s-0-[^/]+/(\d{20})-[^/]+\.log$" % TOPIC)


class TieredRecompressionTest(Test):
    # the ssh reads below poll for files that may not exist yet: ssh_out allows a non-zero exit, and an empty
    # answer is then read as "none yet" by the assertions and waits that use it

    def remote_segments(self, kafka):
        """{base offset: [(path, size)]}: every .log file of the partition in the shared remote store."""
        out = kafka.ssh_out(kafka.nodes[0], "find %s -name '*.log' -printf '%%p %%s\\n' 2>/dev/null" % STORE)
        res = {}
        for line in out.splitlines():
            path, size = line.rsplit(" ", 1)
            m = REMOTE_LOG.search(path)
            if m:
                res.setdefault(int(m.group(1)), []).append((path, int(size)))
        return res

    def lz4_bytes(self, kafka):
        """(log, base offset) -> the bytes the cleaner read, from every broker's "Recompressed segment" lines."""
        res = {}
        for n in kafka.nodes:
            out = kafka.ssh_out(n, "cat %s 2>/dev/null" % CLEANER_LOGS)
            for m in map(RECOMPRESSED.search, out.splitlines()):
                if m and m.group(2) == TOPIC + "-0":
                    res[int(m.group(1))] = int(m.group(4))
        return res

    def leader(self, kafka):
        out = kafka.describe_topic(TOPIC)
        m = re.search(r"Partition: 0\s+Leader: (\d+)", out)
        return kafka.nodes[int(m.group(1)) - 1] if m and m.group(1) != "-1" else None

    def closed_local_segments(self, kafka, node):
        """Base offsets of the partition's local segments on a broker but the active (last) one."""
        out = kafka.ssh_out(node, "ls %s/*.log 2>/dev/null" % kafka.partition_dir(TOPIC))
        bases = sorted(int(os.path.basename(p).split(".")[0]) for p in out.split())
        return bases[:-1]

    @cluster(num_nodes=5)
    def test_tiered_topic_recompressed_before_copy_with_kills(self):
        skipped = full_only("the tiered case", 4)
        if skipped:
            return skipped
        times = {}
        with timed(times, "start cluster"):
            kafka = KafkaService(self.test_context, 3, server_props=SERVER_PROPS)
            kafka.ssh_out(kafka.nodes[0], "rm -rf %s/*" % TIERED)   # the store of an earlier test of this run
            kafka.start()
        kafka.create_topic(TOPIC, partitions=1, configs=TOPIC_CONFIGS)
        producer = ProducerService(self.test_context, kafka, TOPIC, max_records=RECORDS, throughput=RATE,
                                   name="lz4", configs={"compression.type": "lz4", "linger.ms": 500,
                                                        "batch.size": 262144, "retries": 2147483647})
        consumer = VerifyingConsumer(self.test_context, kafka)
        consumer.start()
        note = Events(self.logger)
        producer.start()

        # kill -9 the leader while its cleaner rewrites a segment (the .cleaned file exists)
        leader = self.leader(kafka)
        assert leader is not None, "no leader for %s" % TOPIC
        cleaned = "ls %s/*.cleaned 2>/dev/null" % kafka.partition_dir(TOPIC)
        wait_until(lambda: kafka.ssh_out(leader, cleaned).strip(), timeout_sec=90, backoff_sec=0.05,
                   err_msg="the leader's cleaner never rewrote a segment of %s" % TOPIC)
        with timed(times, "bounce during rewrite"):
            bounce(kafka, leader, TOPIC, note, "leader, rewriting a segment")
        # kill -9 the leader once remote storage holds a segment (the next copies are under way)
        wait_until(lambda: self.remote_segments(kafka), timeout_sec=120, backoff_sec=0.5,
                   err_msg="no segment of %s reached remote storage" % TOPIC)
        with timed(times, "bounce during copy"):
            bounce(kafka, self.leader(kafka), TOPIC, note,
                   "leader, %d segments in remote storage" % len(self.remote_segments(kafka)))
        with timed(times, "producer finish"):
            res = producer.wait_done(timeout_sec=300)
        note("producer: %s" % res)
        assert res["acked"] + res["failed"] == RECORDS, res
        assert res["failed"] == 0, "records failed despite retries: %s" % res

        # every closed segment copied, then removed locally by local.retention.ms, on every broker
        closed = {}

        def local_copies_gone():
            remote = self.remote_segments(kafka)
            for n in kafka.nodes:
                closed[n.account.hostname] = left = self.closed_local_segments(kafka, n)
                if any(b not in remote for b in left) or len(left) > 2:
                    return False
            return True
        with timed(times, "wait for copy and local retention"):
            wait_until(local_copies_gone, timeout_sec=240, backoff_sec=3,
                       err_msg=lambda: "local copies of closed segments left: %s" % closed)
        note("closed segments in remote storage, local copies removed")

        rows = []
        for client in ("ours", "stock", "confluent-kafka"):
            with timed(times, "verify"):
                v = consumer.assert_verified(TOPIC, [producer], client=client)
            rows.append(["read back by %s" % client, v["matched"]])
        note("every acknowledged record read back once by our client, stock 4.3.1's and librdkafka")

        remote = self.remote_segments(kafka)
        read = self.lz4_bytes(kafka)
        # one copy per segment; a kill during a copy leaves the interrupted copy beside the one made after the
        # restart, as upstream's remote log manager does (its metadata never reached COPY_SEGMENT_FINISHED, so no
        # reader sees it, and retention deletes it)
        interrupted = sum(len(v) - 1 for v in remote.values())
        measured = [b for b in remote if b in read]
        assert len(measured) >= len(remote) - 2, "remote segments the cleaners did not rewrite: %s" % sorted(
            set(remote) - set(read))
        lz4 = sum(read[b] for b in measured)
        dense = sum(min(s for _, s in remote[b]) for b in measured)
        ratio = dense / float(lz4)
        codecs = self.remote_codecs(kafka, [min(remote[b])[0] for b in measured])
        rows += [["remote segments", len(remote)], ["interrupted copies beside them", interrupted],
                 ["lz4 bytes read by the cleaners", lz4], ["bytes in remote storage", dense],
                 ["remote / lz4", "%.3f" % ratio], ["codecs of remote batches (> 2 records)", ",".join(codecs)]]
        t = table(["", "value"], rows) + "\n" + "\n".join(note.lines)
        self.logger.info("\n%s", t)
        assert codecs == ["zstd"], codecs
        assert ratio <= 0.6, "remote storage holds %.3fx of the lz4 bytes" % ratio
        return {"table": t, "times": times}

    def remote_codecs(self, kafka, paths):
        """The codecs of the remote segments' data batches of more than two records (zstd 19 makes one or two short
        records larger than lz4: the cleaner keeps those as they are) (kafka-dump-log.sh on copies
        named <base offset>.log, the name it reads the base offset from)."""
        node = kafka.nodes[0]
        kafka.ssh_out(node, "rm -rf /tmp/remote-dump && mkdir -p /tmp/remote-dump")
        files = []
        for p in paths:
            dst = "/tmp/remote-dump/%s.log" % os.path.basename(p).split("-")[0]
            kafka.ssh_out(node, "cp %s %s" % (p, dst))
            files.append(dst)
        out = kafka.ssh_out(node, "KAFKA_HEAP_OPTS=-Xmx128m %s/bin/kafka-dump-log.sh --files %s 2>&1"
                            % (KAFKA_HOME, ",".join(files)))
        return sorted(set(re.findall(r"count: (?![12] )\d+ .*?isControl: false.*?compresscodec: (\w+)", out)))
