"""7. Cold recompression (recompression.lag.ms): lz4 at a steady rate to a delete-policy topic whose closed
segments the log cleaner rewrites in zstd 19 (compaction.compression.type); kill -9 a broker and restart it
meanwhile; every acknowledged record is read back once, before and after the rewrite, and on every broker the
closed segments end up zstd with every offset kept, the producer's small batches merged (recompression.batch.bytes,
1 MiB by default), and no active segment is rewritten. A follower stopped while its leader merges the segments it has
not fetched yet comes back in sync: the leader merges only below every replica's log end."""

import re
import time

from ducktape.mark.resource import cluster
from ducktape.tests.test import Test
from ducktape.utils.util import wait_until

from ..services.clients import ProducerService, VerifyingConsumer
from ..services.dumplog import DumpLog
from ..services.kafka import KafkaService
from .common import Events, assert_no_stalled_follower, bounce, table, timed

TOPIC = "cold"
PARTITIONS = 1      # one partition: ~15 records per 50 ms batch (zstd 19 costs the cleaner ~0.1 s a batch of that size)
RATE = 300          # records/s
LINGER_MS = 50
# the cleaner merges a closed segment's batches (900 records in 3 s) into one of up to 1 MiB, but for the producer's
# last five, which it keeps for duplicate detection: a zstd batch holds at least this many records on average
MERGED_RECORDS = 10 * RATE * LINGER_MS // 1000
RECORDS = 13500     # ~45 s of traffic
# segment.ms small: segments close while producing; recompression.lag.ms is set afterwards with kafka-configs.sh
TOPIC_CONFIGS = {"cleanup.policy": "delete", "segment.ms": 3000, "compression.type": "producer",
                 "compaction.compression.type": "zstd", "compression.zstd.level": 19, "min.insync.replicas": 2}
RECOMPRESSED = re.compile(r"Recompressed segment (\d+) of log (\S+) with (\w+): (\d+) bytes into (\d+) bytes "
                          r"\((\d+) records\) in (\d+) ms")
# the cleaner's lines: log-cleaner.log with the distribution's log4j2.yaml, server.log with the node image's
CLEANER_LOGS = "%s/log-cleaner.log* %s/server.log*" % (KafkaService.LOGS, KafkaService.LOGS)


class ColdRecompressionTest(Test):

    def closed_state(self, dump, node):
        """What the closed segments (all but each partition's active one) of the topic hold on a broker."""
        segs = dump.segment_batches(node, TOPIC, range(PARTITIONS))
        data = [b for bs in segs.values() for b in bs if not b["control"]]
        return {"segments": len(segs), "partitions": len(set(p for p, _ in segs)),
                "zstd": sum(1 for b in data if b["codec"] == "zstd"),
                "lz4_kept": sum(1 for b in data if b["codec"] == "lz4" and b["count"] <= 2),
                "lz4_big": sum(1 for b in data if b["codec"] == "lz4" and b["count"] > 2),
                "other": sorted(set(b["codec"] for b in data) - {"zstd", "lz4"}),
                "bytes": sum(b["size"] for b in data), "records": sum(b["count"] for b in data),
                "zstd_records": sum(b["count"] for b in data if b["codec"] == "zstd"),
                "largest_zstd": max([b["count"] for b in data if b["codec"] == "zstd"] or [0])}

    def start_load(self, kafka, records):
        """The lz4 producer at RATE in LINGER_MS batches, retrying until acknowledged, and the verifying consumer:
        (producer, consumer, DumpLog, Events), both started."""
        producer = ProducerService(self.test_context, kafka, TOPIC, max_records=records, throughput=RATE,
                                   name="lz4", configs={"compression.type": "lz4", "linger.ms": LINGER_MS,
                                                        "batch.size": 262144, "retries": 2147483647})
        consumer = VerifyingConsumer(self.test_context, kafka)
        consumer.start()
        dump = DumpLog(kafka)
        note = Events(self.logger)
        producer.start()
        return producer, consumer, dump, note

    def cleaner_log(self, kafka, node):
        # one of the two files may not exist (which one depends on the log4j configuration); if neither holds the
        # lines, the test fails on log["segments"] > 0 below, so nothing is hidden
        out = kafka.ssh_out(node, "cat %s 2>/dev/null || true" % CLEANER_LOGS)
        lines = sorted(set(out.splitlines()))     # once each, were a line in both files
        done = [m for m in map(RECOMPRESSED.search, lines) if m and m.group(2).startswith(TOPIC + "-")]
        errors = [l for l in lines if " ERROR " in l and "cleaner" in l.lower()]
        return {"segments": len(done), "codecs": sorted(set(m.group(3) for m in done)),
                "rewritten": set((m.group(2), int(m.group(1))) for m in done),
                "before": sum(int(m.group(4)) for m in done), "after": sum(int(m.group(5)) for m in done),
                "records": sum(int(m.group(6)) for m in done), "ms": sum(int(m.group(7)) for m in done),
                "errors": errors}

    @cluster(num_nodes=5)
    def test_cold_recompression_with_broker_kill(self):
        times = {}
        with timed(times, "start cluster"):
            kafka = KafkaService(self.test_context, 3)
            kafka.start()
        kafka.create_topic(TOPIC, partitions=PARTITIONS, configs=TOPIC_CONFIGS)
        out = kafka.alter_topic_config(TOPIC, add={"recompression.lag.ms": 0})
        assert "Completed updating config" in out, out
        wait_until(lambda: "recompression.lag.ms=0" in kafka.describe_topic_config(TOPIC), timeout_sec=30,
                   backoff_sec=1, err_msg="kafka-configs --describe does not show recompression.lag.ms=0")
        time.sleep(3)   # let every broker apply the metadata change
        producer, consumer, dump, note = self.start_load(kafka, RECORDS)

        # let segments close and the cleaner start rewriting them, then kill -9 a broker (not the controller leader)
        time.sleep(12)
        leader = kafka.controller_leader()
        assert leader is not None, "no controller leader"
        victim = [n for n in kafka.nodes if n != leader][0]
        before_kill = self.cleaner_log(kafka, victim)["segments"]
        with timed(times, "broker bounce"):
            bounce(kafka, victim, TOPIC, note, "%d segments recompressed so far" % before_kill)
        with timed(times, "producer finish"):
            res = producer.wait_done(timeout_sec=300)
        note("producer: %s" % res)
        assert res["acked"] + res["failed"] == RECORDS, res
        assert res["failed"] == 0, "records failed despite retries: %s" % res
        with timed(times, "verify"):
            v = consumer.assert_verified(TOPIC, [producer])
        note("verified after producing: %d acknowledged records read back once each" % v["matched"])

        # every broker's closed segments: zstd, but for batches of one or two records zstd would make larger
        states = {}

        def recompressed_everywhere():
            for n in kafka.nodes:
                states[n] = s = self.closed_state(dump, n)
                if s["partitions"] < PARTITIONS or s["lz4_big"] or s["other"]:
                    self.logger.info("%s not yet recompressed: %s; cleaner log: %s", n.account.hostname, s,
                                     dict((k, v) for k, v in self.cleaner_log(kafka, n).items() if k != "rewritten"))
                    return False
            return True
        with timed(times, "wait for recompression"):
            wait_until(recompressed_everywhere, timeout_sec=90, backoff_sec=5,
                       err_msg=lambda: "closed segments not recompressed on every broker: %s" % {
                           n.account.hostname: s for n, s in states.items()})
        note("closed segments recompressed on every broker")
        with timed(times, "verify"):
            v2 = consumer.assert_verified(TOPIC, [producer])
        note("verified after recompression: %d acknowledged records read back once each" % v2["matched"])

        rows = []
        for n in kafka.nodes:
            s, log = states[n], self.cleaner_log(kafka, n)
            assert s["zstd"] > 0, "%s: no zstd batch in the closed segments: %s" % (n.account.hostname, s)
            assert s["zstd_records"] >= MERGED_RECORDS * s["zstd"], \
                "%s: %d records in %d zstd batches: the producer's batches were not merged: %s" % (
                    n.account.hostname, s["zstd_records"], s["zstd"], s)
            assert log["segments"] > 0 and log["codecs"] == ["zstd"], "%s: cleaner log: %s" % (n.account.hostname, log)
            assert not log["errors"], "%s: cleaner errors: %s" % (n.account.hostname, log["errors"][:5])
            # the whole log, active segments included: every offset once, the active segments untouched
            segs = dump.segment_batches(n, TOPIC, range(PARTITIONS), closed_only=False)
            records = 0
            for p in range(PARTITIONS):
                bases = sorted(b for q, b in segs if q == p)
                assert bases, "%s: no segment of partition %d" % (n.account.hostname, p)
                assert ("%s-%d" % (TOPIC, p), bases[-1]) not in log["rewritten"], \
                    "%s: the active segment %d of partition %d was rewritten" % (n.account.hostname, bases[-1], p)
                batches = [b for base in bases for b in segs[(p, base)]]
                nxt = 0
                for b in batches:
                    assert b["base"] == nxt, "%s: partition %d: batch at %d, expected offset %d" % (
                        n.account.hostname, p, b["base"], nxt)
                    nxt = b["last"] + 1
                records += sum(b["count"] for b in batches if not b["control"])
            assert records == res["acked"], "%s: %d records on disk, %d acknowledged" % (n.account.hostname, records,
                                                                                         res["acked"])
            rows.append([n.account.hostname, log["segments"], log["before"], log["after"],
                         "%.3f" % (log["after"] / float(log["before"])) if log["before"] else "-",
                         "%.1f" % (log["ms"] / 1000.0),
                         s["segments"], s["zstd"], s["zstd_records"] // s["zstd"], s["lz4_kept"], s["bytes"], records])
        t = table(["broker", "segments recompressed", "bytes before", "bytes after", "after/before", "cleaner s",
                   "closed segments", "zstd batches", "records per zstd batch", "lz4 batches kept", "closed bytes now", "records on disk"], rows)
        t += "\n(bytes before/after: the cleaner's \"Recompressed segment\" lines; lz4 batches kept: 1-2 records)"
        t += "\n" + "\n".join(note.lines)
        self.logger.info("\n%s", t)
        return {"table": t, "times": times}

    @cluster(num_nodes=5)
    def test_follower_away_while_leader_merges(self):
        """A follower is stopped (as in a rolling restart) while the leader closes and merges segments it has not
        fetched; started again, it fetches the rest and is back in the ISR, with no UnexpectedAppendOffsetException
        (a batch merged around its log end, which a follower refuses), and every acknowledged record is read back."""
        times = {}
        with timed(times, "start cluster"):
            kafka = KafkaService(self.test_context, 3)
            kafka.start()
        kafka.create_topic(TOPIC, partitions=PARTITIONS, configs=dict(TOPIC_CONFIGS, **{"recompression.lag.ms": 0}))
        producer, consumer, dump, note = self.start_load(kafka, RECORDS // 2)

        time.sleep(5)
        m = re.search(r"Leader: (\d+)", kafka.describe_topic(TOPIC))
        assert m, kafka.describe_topic(TOPIC)
        leader = kafka.get_node(int(m.group(1)))
        controller = kafka.controller_leader()
        follower = [n for n in kafka.nodes if n not in (leader, controller)][0]
        merged_before = self.cleaner_log(kafka, leader)["segments"]
        with timed(times, "follower away"):
            kafka.stop_node(follower)
            note("stopped follower %d (leader %d had recompressed %d segments)" % (
                kafka.idx(follower), kafka.idx(leader), merged_before))
            # segments close every 3 s and are rewritten at once (recompression.lag.ms=0): let the leader merge
            # several that the follower has not fetched
            wait_until(lambda: self.cleaner_log(kafka, leader)["segments"] >= merged_before + 4, timeout_sec=60,
                       backoff_sec=1, err_msg="the leader recompressed no segment while the follower was away")
            merged_away = self.cleaner_log(kafka, leader)["segments"] - merged_before
            note("leader %d recompressed %d more segments" % (kafka.idx(leader), merged_away))
            kafka.start_node(follower)
            note("started follower %d" % kafka.idx(follower))
        with timed(times, "back in sync"):
            wait_until(lambda: kafka.isr_size(TOPIC) == 3, timeout_sec=90, backoff_sec=1,
                       err_msg=lambda: "follower %d did not rejoin the ISR: %s" % (
                           kafka.idx(follower), kafka.describe_topic(TOPIC).strip()))
        note("ISR back to 3")
        with timed(times, "producer finish"):
            res = producer.wait_done(timeout_sec=300)
        assert res["failed"] == 0 and res["acked"] == RECORDS // 2, res
        with timed(times, "verify"):
            v = consumer.assert_verified(TOPIC, [producer])
        note("verified: %d acknowledged records read back once each" % v["matched"])
        rows = []
        assert_no_stalled_follower(kafka, kafka.nodes)
        for n in kafka.nodes:
            s = self.closed_state(dump, n)
            rows.append([kafka.idx(n), "leader" if n == leader else "stopped" if n == follower else "follower",
                         self.cleaner_log(kafka, n)["segments"], s["zstd"], s["zstd_records"], s["largest_zstd"],
                         s["lz4_big"]])
        # the leader merged where every replica held the records (before the stop, after the return), so the test
        # met merged batches; while the follower was away it rewrote the batches above its log end one by one
        leader_state = self.closed_state(dump, leader)
        assert leader_state["largest_zstd"] >= MERGED_RECORDS, "the leader merged no batches: %s" % leader_state
        t = table(["broker", "role", "segments recompressed", "zstd batches", "records in them", "largest zstd batch",
                   "lz4 batches left"], rows)
        t += "\n" + "\n".join(note.lines)
        self.logger.info("\n%s", t)
        return {"table": t, "times": times}
