"""6. Faults: gzip at a steady rate to a topic the brokers recompress to zstd; kill -9 a broker and
restart it, then the controller leader; nothing acknowledged is missing and the cluster is healthy."""

import time

from ducktape.mark.resource import cluster
from ducktape.tests.test import Test

from ..services.clients import ProducerService, VerifyingConsumer
from ..services.dumplog import DumpLog
from ..services.kafka import KafkaService
from .common import Events, bounce, timed

TOPIC = "faults"
RATE = 300          # records/s
RECORDS = 15000     # ~50 s of traffic


class FaultsTest(Test):

    @cluster(num_nodes=5)
    def test_kill_broker_and_controller_during_recompression(self):
        times = {}
        with timed(times, "start cluster"):
            kafka = KafkaService(self.test_context, 3)
            kafka.start()
        kafka.create_topic(TOPIC, partitions=3, configs={"compression.type": "zstd", "min.insync.replicas": 2})
        producer = ProducerService(self.test_context, kafka, TOPIC, max_records=RECORDS, throughput=RATE,
                                   name="steady", configs={"compression.type": "gzip", "linger.ms": 20,
                                                           "retries": 2147483647})
        consumer = VerifyingConsumer(self.test_context, kafka)
        consumer.start()
        note = Events(self.logger)
        producer.start()

        time.sleep(8)
        leader = kafka.controller_leader()
        assert leader is not None, "no controller leader"
        other = [n for n in kafka.nodes if n != leader][0]
        with timed(times, "broker bounce"):
            bounce(kafka, other, TOPIC, note, "a broker, not the controller leader")
        time.sleep(3)
        leader = kafka.controller_leader()
        with timed(times, "controller bounce"):
            bounce(kafka, leader, TOPIC, note, "the controller leader")
        new_leader = kafka.controller_leader()
        note("controller leader now node %s" % (kafka.idx(new_leader) if new_leader else None))
        with timed(times, "producer finish"):
            res = producer.wait_done(timeout_sec=300)
        note("producer: %s" % res)
        assert res["acked"] > 0 and res["acked"] + res["failed"] == RECORDS, res
        assert res["failed"] == 0, "records failed despite retries: %s" % res
        with timed(times, "verify"):
            v = consumer.assert_verified(TOPIC, [producer])
        note("verified: %d acknowledged records read back once each" % v["matched"])
        # healthy: all brokers registered, full ISR, a controller, recompressed data
        assert kafka.registered_brokers(kafka.nodes[0]) == 3
        assert kafka.isr_size(TOPIC) == 3
        assert kafka.controller_leader() is not None
        s = DumpLog(kafka).summary(kafka.nodes[0], TOPIC)
        assert set(s["codecs"]) == {"zstd"}, s
        return {"table": "\n".join(note.lines), "times": times}
