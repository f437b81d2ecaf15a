import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.PrimitiveRef;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogValidator;
import org.apache.kafka.storage.internals.log.RecordValidationStats;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;

/**
 * What the per-topic compression metrics add to a leader append, beside the validation the broker makes anyway:
 * ns per LogValidator pass over one batch (in place, as appended when the topic's codec is the producer's) and ns per
 * BrokerTopicStats.updateCompressionStats call (what ReplicaManager adds per partition append), in alternating rounds
 * on one thread. Usage: TopicMetricsCost RECORDS_FILE ROUNDS
 */
public class TopicMetricsCost {
    static final LogValidator.MetricsRecorder NO_RECORDER = new LogValidator.MetricsRecorder() {
        public void recordInvalidMagic() { }
        public void recordInvalidOffset() { }
        public void recordInvalidSequence() { }
        public void recordInvalidChecksums() { }
        public void recordNoKeyCompactedTopic() { }
    };
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        int rounds = Integer.parseInt(args[1]);
        BrokerTopicStats stats = new BrokerTopicStats();
        for (int records : new int[] {1, 25, 1600}) {
            for (CompressionType codec : new CompressionType[] {CompressionType.NONE, CompressionType.LZ4}) {
                SimpleRecord[] batch = new SimpleRecord[records];
                for (int i = 0; i < records; i++)
                    batch[i] = new SimpleRecord(System.currentTimeMillis(), lines.get(i % lines.size()).getBytes(StandardCharsets.UTF_8));
                MemoryRecords built = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V2, 0L,
                    Compression.of(codec).build(), TimestampType.CREATE_TIME, batch);
                byte[] bytes = new byte[built.sizeInBytes()];
                built.buffer().duplicate().get(bytes);
                // validated again and again in place: the pass rewrites the same offsets each time
                MemoryRecords input = MemoryRecords.readableRecords(java.nio.ByteBuffer.wrap(bytes));
                RequestLocal requestLocal = RequestLocal.withThreadConfinedCaching();
                double[] validate = new double[rounds], update = new double[rounds];
                RecordValidationStats last = null;
                for (int r = 0; r < rounds; r++) {
                    int iterations = Math.max(20, 200_000 / records);
                    long start = System.nanoTime();
                    for (int i = 0; i < iterations; i++) {
                        last = new LogValidator(input, new TopicPartition("t", 0), Time.SYSTEM, codec, Compression.of(codec).build(),
                            false, RecordBatch.MAGIC_VALUE_V2, TimestampType.CREATE_TIME, Long.MAX_VALUE, Long.MAX_VALUE,
                            0, AppendOrigin.CLIENT).validateMessagesAndAssignOffsets(PrimitiveRef.ofLong(0), NO_RECORDER, requestLocal)
                            .recordValidationStats();
                    }
                    validate[r] = (System.nanoTime() - start) / (double) iterations;
                    int calls = 1_000_000;
                    start = System.nanoTime();
                    for (int i = 0; i < calls; i++)
                        stats.updateCompressionStats("t", last.uncompressedBytes(), last.recompressedBytesIn(),
                            last.recompressedBytesOut(), last.conversionTimeNanos());
                    update[r] = (System.nanoTime() - start) / (double) calls;
                }
                sink += stats.topicStats("t").uncompressedBytesInRate().count();
                Arrays.sort(validate);
                Arrays.sort(update);
                System.out.printf("%-5s %5d records %8d bytes: validation %10.0f ns [%.0f-%.0f], metrics %5.1f ns [%.1f-%.1f], %.4f%%%n",
                    codec.name, records, bytes.length, validate[rounds / 2], validate[0], validate[rounds - 1],
                    update[rounds / 2], update[0], update[rounds - 1], 100 * update[rounds / 2] / validate[rounds / 2]);
            }
        }
        stats.close();
    }
}
