"""1. Codec and level matrix: every codec/level from the producer to a 3-node RF=3 topic with
compression.type=producer; the log dump shows the codec; throughput and bytes on disk per combination."""

from ducktape.mark.resource import cluster
from ducktape.tests.test import Test

from ..services.clients import ProducerService, VerifyingConsumer
from ..services.dumplog import DumpLog
from ..services.kafka import KafkaService
from .common import full_only, table, timed

COMBOS = [("gzip", 1), ("gzip", 6), ("gzip", 9), ("lz4", 1), ("lz4", 9), ("lz4", 17),
          ("zstd", -5), ("zstd", 1), ("zstd", 3), ("zstd", 12), ("zstd", 18), ("snappy", None), ("none", None)]
RECORDS = 3000


class CodecMatrixTest(Test):

    def __init__(self, test_context):
        super(CodecMatrixTest, self).__init__(test_context)
        self.times = {}

    @cluster(num_nodes=5)
    def test_codec_level_matrix(self):
        skipped = full_only("the codec and level matrix", 3.5, "CI's time limit does not hold it; the project tests cover it on one broker")
        if skipped:
            return skipped
        with timed(self.times, "start cluster"):
            kafka = KafkaService(self.test_context, 3)
            kafka.start()
        producer = ProducerService(self.test_context, kafka, None, max_records=RECORDS, name="matrix")
        consumer = VerifyingConsumer(self.test_context, kafka)
        consumer.start()
        dump = DumpLog(kafka)
        broker = kafka.nodes[0]
        rows = []
        name = lambda codec, level: "matrix-%s-%s" % (codec, "default" if level is None else str(level).replace("-", "m"))
        with timed(self.times, "create topics"):
            kafka.create_topics([(name(c, l), 1, 3, {"compression.type": "producer", "min.insync.replicas": 2})
                                 for c, l in COMBOS])
        for codec, level in COMBOS:
            topic = name(codec, level)
            configs = {"compression.type": codec, "linger.ms": 50, "batch.size": 262144}
            if level is not None:
                configs["compression.%s.level" % codec] = level
            with timed(self.times, "produce"):
                res = producer.run_once(topic=topic, configs=configs)
            assert res["acked"] == RECORDS and res["failed"] == 0, "%s: %s" % (topic, res)
            with timed(self.times, "verify"):
                consumer.assert_verified(topic, [producer])
            s = dump.summary(broker, topic)
            assert s["records"] == RECORDS, "%s: dump shows %d records, acked %d" % (topic, s["records"], RECORDS)
            assert set(s["codecs"]) == {codec}, "%s: dump shows codecs %s, expected only %s" % (topic, s["codecs"], codec)
            disk = kafka.bytes_on_disk(broker, topic)
            rows.append([codec, "-" if level is None else level, "%.0f" % res["records_per_sec"],
                         "%.1f" % res["mb_per_sec"], disk, "%.3f" % (disk / float(res["bytes"])), s["batches"]])
        t = table(["codec", "level", "records/s", "MB/s", "bytes on disk", "ratio", "batches"], rows)
        t += ("\n(%d records of json-records.ndjson per combination, 3 brokers, RF=3, acks=all; records/s of such short "
              "runs includes client start-up: compare sizes here, throughput in ./build.sh bench)" % RECORDS)
        self.logger.info("codec matrix:\n%s", t)
        return {"table": t, "times": self.times}
