"""4. Providers: brokers with the native (ISA-L/libdeflate) gzip provider and, in another run, the QAT
provider in software mode; stock 4.3.1 clients, ours, librdkafka (confluent-kafka) and kafka-python read
each other's data, every record checked by content; the provider metrics of the brokers, of our producer and of our
consumer show the provider did the work.
Reports "skipped: provider not built" when the jars are not in the distribution. The qat-gzip case runs only with
KC_SYSTEST_FULL=1 (./build.sh test --full): CI runs the native-gzip case, and the project tests put the QAT provider
on a broker with every client (test_providers.py, test_client_interop.py, test_qat_provider_bomb.py)."""

import re

from ducktape.mark import matrix
from ducktape.mark.resource import cluster
from ducktape.tests.test import Test

from ..services.clients import ProducerService, VerifyingConsumer
from ..services.dumplog import DumpLog
from ..services.kafka import KafkaService
from .common import full_only, has_provider_framework, table, timed

PROVIDERS = {
    "native-gzip": ("kafka-compress-native-gzip*.jar", "io.kafkacompress.nativegzip.NativeGzipCompressionService", {}),
    "qat-gzip": ("kafka-compress-qat-gzip*.jar", "io.kafkacompress.qat.QatGzipCompressionService",
                 {"compression.gzip.qat.mode": "software"}),
}
RECORDS = 2000
OBJ = "kafka.server:type=compression-provider-metrics,codec=gzip"


def parse_jmx(out):
    """JmxTool --report-format properties output ("<object name>:<attribute>=<value>" lines) -> {attribute: value}."""
    return dict(re.findall(r"^kafka\.server:type=compression-provider-metrics,.*?codec=\w+:([A-Za-z-]+)=(.*)$", out, re.M))


def client_batches(summary, name):
    """The client's provider metric `name` (e.g. compression-batches-total) from SysTestClient's
    compression_metrics ("<group>:<name>{<tags>}=<value>; ..."), summed over codecs; 0 when absent."""
    found = re.findall(r"compression-provider-metrics:%s\{[^}]*\}=([0-9.Ee+-]+)" % re.escape(name),
                       summary.get("compression_metrics") or "")
    return sum(float(v) for v in found)


class ProvidersTest(Test):

    @cluster(num_nodes=5)
    @matrix(provider=["native-gzip", "qat-gzip"])
    def test_provider(self, provider):
        skipped = provider != "native-gzip" and full_only("the %s case" % provider, 1.5, "CI runs the native-gzip case")
        if skipped:
            return skipped
        times = {}
        jar, cls, extra = PROVIDERS[provider]
        kafka = KafkaService(self.test_context, 3)
        node = kafka.nodes[0]
        if not has_provider_framework(node):
            return {"skipped": "provider framework (KIP-1121) not in this build"}
        if not kafka.dist_has(node, jar):
            return {"skipped": "provider not built (no %s in the distribution's libs/)" % jar}
        provider_cfg = dict({"compression.gzip.provider": cls, "compression.gzip.provider.required": "true"}, **extra)
        kafka.server_props.update(provider_cfg)
        with timed(times, "start cluster"):
            kafka.start()
        logline = [l for l in kafka.output_since_last_start(node).splitlines() if "Compression provider for gzip" in l]
        assert logline, "broker log does not name the gzip provider"
        self.logger.info("broker: %s", logline[-1])
        # topic gzip: what producers send as zstd the brokers recompress with the provider
        kafka.create_topic("prov-gzip", configs={"compression.type": "gzip", "min.insync.replicas": 2})
        producer = ProducerService(self.test_context, kafka, "prov-gzip", max_records=RECORDS, name="pv")
        consumer = VerifyingConsumer(self.test_context, kafka)
        consumer.start()
        rows = []
        runs = [  # (label, producer client, producer configs, consumer clients, consumer configs of Java ones)
            ("zstd from our producer, recompressed to gzip by the brokers", "ours", {"compression.type": "zstd"},
             ["stock", "confluent-kafka", "kafka-python"], {}),
            ("gzip from our producer with the provider", "ours", dict({"compression.type": "gzip"}, **provider_cfg),
             ["stock", "confluent-kafka", "kafka-python"], {}),
            ("gzip from the stock 4.3.1 producer", "stock", {"compression.type": "gzip"}, ["ours"], provider_cfg),
            ("lz4 from librdkafka, recompressed to gzip by the brokers", "confluent-kafka", {"compression.type": "lz4"},
             ["ours", "confluent-kafka", "kafka-python"], provider_cfg),
            ("gzip from kafka-python", "kafka-python", {"compression.type": "gzip"},
             ["ours", "confluent-kafka"], provider_cfg),
        ]
        for label, pclient, pcfg, cclients, ccfg in runs:
            topic = "prov-%d" % (len(rows) + 1)
            kafka.create_topic(topic, configs={"compression.type": "gzip", "min.insync.replicas": 2})
            with timed(times, "produce"):
                res = producer.run_once(topic=topic, client=pclient, configs=dict(pcfg, **{"linger.ms": 20}))
            assert res["acked"] == RECORDS and res["failed"] == 0, "%s: %s" % (label, res)
            if pclient == "ours" and pcfg.get("compression.gzip.provider"):
                # the producer's own batches, not only the brokers': a producer that loads its provider but
                # compresses with the built-in codec passes every other check here
                assert client_batches(res, "compression-batches-total") > 0, \
                    "%s: the producer's provider compressed nothing: %s" % (label, res.get("compression_metrics"))
            verified = []
            for cclient in cclients:
                with timed(times, "verify"):
                    v = consumer.assert_verified(topic, [producer], client=cclient,
                                                 configs=ccfg if cclient in ("ours", "stock") else {})
                verified.append("%s %d" % (cclient, v["matched"]))
                if cclient == "ours" and ccfg.get("compression.gzip.provider") and provider == "native-gzip":
                    # QAT decompresses nothing itself; the native provider reads every gzip batch it is handed
                    assert client_batches(v, "decompression-batches-total") > 0, \
                        "%s: the consumer's provider decompressed nothing: %s" % (label, v.get("compression_metrics"))
            s = DumpLog(kafka).summary(node, topic)
            assert set(s["codecs"]) == {"gzip"}, "%s: %s" % (label, s)
            rows.append([label, pclient, ", ".join(verified), "%.0f" % res["records_per_sec"]])
        metrics = {}
        for n in kafka.nodes:
            m = parse_jmx(kafka.jmx_dump(n, OBJ))
            self.logger.info("%s provider metrics: %s", n.account.hostname, m)
            metrics[n.account.hostname] = m
        total = lambda k: sum(float(m.get(k, 0) or 0) for m in metrics.values())
        assert total("compression-batches-total") > 0, "provider metric shows no compression work: %s" % metrics
        if provider == "native-gzip":
            assert total("decompression-batches-total") > 0, "provider metric shows no decompression work: %s" % metrics
        else:
            # QAT decompresses nothing itself (no whole-batch call, no stream): the built-in codec reads every batch
            assert total("decompression-batches-total") == 0, "QAT decompressed batches: %s" % metrics
        shown = [m.get("provider") for m in metrics.values()]
        t = table(["run", "producer", "records verified by each consumer", "records/s"], rows)
        t += "\nbroker provider: %s\nbroker provider batches: compressed %d, decompressed %d; fallbacks %d/%d" % (
            logline[-1].split("Compression provider for gzip:")[-1].strip()[:120],
            total("compression-batches-total"), total("decompression-batches-total"),
            total("compression-fallbacks-total"), total("decompression-fallbacks-total"))
        self.logger.info("\n%s\nmetric provider values: %s", t, shown)
        return {"table": t, "times": times}
