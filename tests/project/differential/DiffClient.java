import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.ByteBufferOutputStream;
import org.apache.kafka.common.utils.ByteUtils;
import org.apache.kafka.common.utils.Crc32C;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The client of test_always_on_differences.py: the same produce requests, byte for byte, to any broker.
 *
 *   produce BOOTSTRAP TIMESTAMP
 *       creates the topics below (one partition each) and sends each case's batches over a plain socket (produce
 *        v12, acks=-1, no producer id), the records timestamped from TIMESTAMP on (ms; recent, or
 *       retention deletes them at its first run); prints one line per request: "case=NAME request=I error=CODE base=OFFSET"
 *   clean BOOTSTRAP
 *       lets the cleaner at the compacted topics (min.compaction.lag.ms=0, min.cleanable.dirty.ratio=0.01)
 *
 * Every batch is built from a Random of a fixed seed with the given timestamps, so two brokers given the same requests
 * store the same bytes unless they treat them differently.
 */
public class DiffClient {
    private static final String[] CODECS = {"none", "gzip", "lz4", "zstd", "snappy"};
    /** Compacted topics the cleaner rewrites: name -> topic configs (beside cleanup.policy=compact). */
    private static final Map<String, Map<String, String>> CLEANED = new LinkedHashMap<>();

    static {
        CLEANED.put("clean-gzip", Map.of("compression.type", "gzip"));
        CLEANED.put("clean-lz4", Map.of("compression.type", "lz4"));
        CLEANED.put("clean-producer", Map.of("compression.type", "producer"));
        CLEANED.put("clean-zstd-19", Map.of("compression.type", "zstd", "compression.zstd.level", "19"));
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("produce"))
            produce(args[1], Long.parseLong(args[2]));
        else
            clean(args[1]);
    }

    static void produce(String bootstrap, long timestamp) throws Exception {
        Map<String, Map<String, String>> topics = new LinkedHashMap<>();
        Map<String, List<MemoryRecords>> cases = new LinkedHashMap<>();
        // well-formed batches of every codec into topics of every compression.type (and two KIP-390 levels)
        for (String topicCodec : new String[] {"producer", "uncompressed", "gzip", "lz4", "zstd", "snappy"}) {
            for (String codec : CODECS) {
                String topic = "wf-" + topicCodec + "-" + codec;
                topics.put(topic, Map.of("compression.type", topicCodec));
                cases.put(topic, List.of(batch(codec, new Random(topic.hashCode()), timestamp, 40, 200)));
            }
        }
        topics.put("wf-gzip-1-lz4", Map.of("compression.type", "gzip", "compression.gzip.level", "1"));
        cases.put("wf-gzip-1-lz4", List.of(batch("lz4", new Random(1), timestamp, 40, 200)));
        topics.put("wf-zstd-19-gzip", Map.of("compression.type", "zstd", "compression.zstd.level", "19"));
        cases.put("wf-zstd-19-gzip", List.of(batch("gzip", new Random(2), timestamp, 40, 200)));
        // hostile batches, valid CRC: into a topic of the batch's codec and into one of another codec
        for (String topicCodec : new String[] {"gzip", "lz4"}) {
            Map<String, String> config = Map.of("compression.type", topicCodec);
            topics.put("corrupt-deflate-" + topicCodec, config);
            cases.put("corrupt-deflate-" + topicCodec, List.of(corruptDeflate(timestamp)));
            topics.put("gaps-" + topicCodec, config);
            cases.put("gaps-" + topicCodec, List.of(withGaps(timestamp)));
            topics.put("negative-size-" + topicCodec, config);
            cases.put("negative-size-" + topicCodec, List.of(negativeSize(timestamp)));
        }
        // compacted topics: 3 MB of records over 150 keys in 1 MiB segments, for the cleaner afterwards
        for (Map.Entry<String, Map<String, String>> e : CLEANED.entrySet()) {
            Map<String, String> config = new LinkedHashMap<>(e.getValue());
            config.put("cleanup.policy", "compact");
            config.put("segment.bytes", "1048576");
            config.put("min.compaction.lag.ms", "3600000");
            topics.put(e.getKey(), config);
            String codec = e.getKey().equals("clean-producer") ? "gzip" : e.getValue().get("compression.type");
            Random random = new Random(e.getKey().hashCode());
            List<MemoryRecords> batches = new ArrayList<>();
            for (int b = 0; b < 300; b++)
                batches.add(batch(codec, random, timestamp + b * 100L, 20, 500));
            cases.put(e.getKey(), batches);
        }
        try (Admin admin = admin(bootstrap)) {
            List<NewTopic> newTopics = new ArrayList<>();
            topics.forEach((name, config) -> newTopics.add(new NewTopic(name, 1, (short) 1).configs(config)));
            admin.createTopics(newTopics).all().get();
        }
        Thread.sleep(2000);     // every partition's leader known to the broker's request handlers
        String[] hostPort = bootstrap.split(":");
        try (Socket socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
            socket.setSoTimeout(120_000);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int correlation = 0;
            for (Map.Entry<String, List<MemoryRecords>> e : cases.entrySet()) {
                int i = 0;
                for (MemoryRecords batch : e.getValue()) {
                    ProduceResponseData.PartitionProduceResponse answer =
                        BombClient.sendOne(out, in, "diff-client", correlation++, e.getKey(), batch);
                    System.out.println("case=" + e.getKey() + " request=" + i++ + " error=" + answer.errorCode() +
                        " base=" + answer.baseOffset() + " message=" + answer.errorMessage());
                }
            }
        }
    }

    static void clean(String bootstrap) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            Map<ConfigResource, java.util.Collection<AlterConfigOp>> ops = new LinkedHashMap<>();
            for (String topic : CLEANED.keySet())
                ops.put(new ConfigResource(ConfigResource.Type.TOPIC, topic), List.of(
                    new AlterConfigOp(new ConfigEntry("min.compaction.lag.ms", "0"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("min.cleanable.dirty.ratio", "0.01"), AlterConfigOp.OpType.SET)));
            admin.incrementalAlterConfigs(ops).all().get();
        }
        System.out.println("cleaning");
    }

    static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    /** COUNT records of keys "key-0".."key-149" and values of VALUE_BYTES bytes, CreateTime from TIMESTAMP on. */
    static MemoryRecords batch(String codec, Random random, long timestamp, int count, int valueBytes) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(16 * 1024), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.of(CompressionType.forName(codec)).build(), TimestampType.CREATE_TIME, 0L);
        for (int i = 0; i < count; i++)
            builder.append(timestamp + i, ("key-" + random.nextInt(150)).getBytes(StandardCharsets.UTF_8),
                value(random, valueBytes));
        return builder.build();
    }

    /** JSON-ish text of random letters and digits: compressed to about 0.7, so 3 MB fill several 1 MiB segments. */
    static byte[] value(Random random, int bytes) {
        StringBuilder s = new StringBuilder("{\"n\":" + random.nextInt(1000) + ",\"text\":\"");
        while (s.length() < bytes - 2)
            s.append(Character.forDigit(random.nextInt(36), 36));
        return s.append("\"}").toString().getBytes(StandardCharsets.UTF_8);
    }

    /** A gzip batch whose first deflate block has the reserved block type; its CRC valid. */
    static MemoryRecords corruptDeflate(long timestamp) {
        ByteBuffer buffer = batch("gzip", new Random(3), timestamp, 40, 200).buffer();
        int payload = 61;   // DefaultRecordBatch.RECORD_BATCH_OVERHEAD: the gzip member starts here
        buffer.put(payload + 10, (byte) (buffer.get(payload + 10) | 0x06));
        return withCrc(buffer);
    }

    /**
     * A gzip batch of 20 records whose second record's offset delta is 0 instead of 1: the batch's offset range and
     * record count agree, but its inner offsets are not consecutive (0, 0, 2, 3, ...).
     */
    static MemoryRecords withGaps(long timestamp) throws Exception {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(16 * 1024), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE, TimestampType.CREATE_TIME, 0L);
        Random random = new Random(4);
        for (int i = 0; i < 20; i++)
            builder.append(timestamp, ("key-" + i).getBytes(StandardCharsets.UTF_8), value(random, 100));
        return gzipped(builder.build().buffer(), section -> {
            // the second record: its length, attributes, timestamp delta (0), then its offset delta, 1 (zigzag 2)
            int second = ByteUtils.readVarint(section) + section.position();
            section.position(second);
            ByteUtils.readVarint(section);
            int offsetDelta = section.position() + 2;
            if (section.get(offsetDelta) != 2)
                throw new IllegalStateException("the second record's offset delta is not where expected");
            section.put(offsetDelta, (byte) 0);
            return section.rewind();
        });
    }

    /** A gzip batch whose first record declares a negative size (its other bytes intact). */
    static MemoryRecords negativeSize(long timestamp) throws Exception {
        return gzipped(batch("none", new Random(5), timestamp, 20, 100).buffer(), section -> {
            int size = ByteUtils.readVarint(section);
            ByteBuffer edited = ByteBuffer.allocate(section.limit() + 8);
            ByteUtils.writeVarint(-size, edited);
            edited.put(section);
            return edited.flip();
        });
    }

    /**
     * The uncompressed batch PLAIN with its records' bytes changed by EDIT (given them from their start, it returns
     * the bytes to write), compressed with gzip as the built-in codec does; its CRC valid.
     */
    static MemoryRecords gzipped(ByteBuffer plain, java.util.function.UnaryOperator<ByteBuffer> edit) throws Exception {
        ByteBuffer section = plain.duplicate();
        section.position(61);   // DefaultRecordBatch.RECORD_BATCH_OVERHEAD: the records start here
        ByteBuffer edited = edit.apply(section.slice());
        ByteBufferOutputStream compressed = new ByteBufferOutputStream(1 << 16);
        compressed.write(plain.array(), plain.arrayOffset() + plain.position(), 61);
        try (OutputStream gzip = Compression.gzip().build().wrapForOutput(compressed, RecordBatch.CURRENT_MAGIC_VALUE)) {
            gzip.write(edited.array(), edited.arrayOffset() + edited.position(), edited.remaining());
        }
        ByteBuffer buffer = compressed.buffer();
        buffer.flip();
        buffer.putInt(8, buffer.limit() - 12);                                          // the batch length
        buffer.putShort(21, (short) (buffer.getShort(21) | CompressionType.GZIP.id));   // attributes: gzip
        return withCrc(buffer);
    }

    /** CRC-32C from the attributes (offset 21) to the end, stored at offset 17. */
    static MemoryRecords withCrc(ByteBuffer buffer) {
        buffer.putInt(17, (int) Crc32C.compute(buffer, 21, buffer.limit() - 21));
        MemoryRecords batch = MemoryRecords.readableRecords(buffer);
        batch.batches().forEach(RecordBatch::ensureValid);
        return batch;
    }
}
