"""5. Misconfiguration: a broker given an unknown provider class or an out-of-range level refuses to
start and says why in its log; the rest of the cluster keeps serving."""

import re

from ducktape.mark.resource import cluster
from ducktape.tests.test import Test
from ducktape.utils.util import wait_until

from ..services.clients import ProducerService, VerifyingConsumer
from ..services.kafka import KafkaService
from .common import full_only, has_provider_framework, timed

TOPIC = "misconf"


class MisconfigurationTest(Test):

    @cluster(num_nodes=5)
    def test_bad_provider_and_level_refused(self):
        skipped = full_only("the misconfiguration case", 1.5, "CI's time limit does not hold it; the project tests cover it on one broker")
        if skipped:
            return skipped
        times = {}
        with timed(times, "start cluster"):
            kafka = KafkaService(self.test_context, 3)
            kafka.start()
        kafka.create_topic(TOPIC, configs={"min.insync.replicas": 2})
        producer = ProducerService(self.test_context, kafka, TOPIC, max_records=1000, name="mc",
                                   configs={"compression.type": "gzip", "linger.ms": 20})
        consumer = VerifyingConsumer(self.test_context, kafka)
        consumer.start()
        assert producer.run_once()["failed"] == 0
        victim = kafka.nodes[2]
        cases = [("out-of-range level", {"compression.gzip.level": 42}, r"Invalid value 42 for configuration compression\.gzip\.level")]
        skipped = None
        if has_provider_framework(victim):
            cases.insert(0, ("unknown provider class", {"compression.gzip.provider": "com.example.NoSuchProvider"},
                             r"(ERROR|Exception|rror:).*NoSuchProvider"))
        else:
            skipped = "unknown-provider case skipped: the provider framework (KIP-1121) is not in this build"
            self.logger.warning(skipped)
        results = []
        for label, props, pattern in cases:
            kafka.stop_node(victim)
            kafka.node_props[3] = props
            kafka.start_node(victim, expect_failure=True)
            why = []

            def refused():
                why[:] = [l for l in kafka.output_since_last_start(victim).splitlines() if re.search(pattern, l)]
                return bool(why) and not kafka.alive(victim)
            wait_until(refused, timeout_sec=120, backoff_sec=2,
                       err_msg="broker with %s: did not refuse to start, or its log does not say why (no line "
                               "matching %s)" % (label, pattern))
            self.logger.info("%s: %s", label, why[-1])
            results.append("%s refused: %s" % (label, why[-1][-200:]))
            # the others keep serving: produce with acks=all (min.insync.replicas=2) and read back
            res = producer.run_once()
            assert res["acked"] == 1000 and res["failed"] == 0, "cluster stopped serving with %s: %s" % (label, res)
        kafka.node_props.pop(3, None)
        kafka.start_node(victim)
        kafka.wait_for_cluster()
        wait_until(lambda: kafka.isr_size(TOPIC) == 3, timeout_sec=60, backoff_sec=1,
                   err_msg="restarted broker did not rejoin the ISR")
        with timed(times, "verify"):
            consumer.assert_verified(TOPIC, [producer])
        out = {"times": times, "table": "\n".join(results)}
        if skipped:
            out["partial"] = skipped
        return out
