import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Crc32C;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;

import javax.management.ObjectName;

/**
 * The decompression-bomb client of test_provider_bomb.py.
 *
 *   produce BOOTSTRAP TOPIC CODEC RECORDS RECORD_BYTES TIMESTAMP
 *       one batch of RECORDS records of RECORD_BYTES times 'a', compressed with CODEC (built-in), in one produce
 *       request (v12, acks=-1) over a plain socket; prints "wire=<batch bytes> error=<code> <message>"
 *   consume BOOTSTRAP TOPIC RECORDS RECORD_BYTES [PROVIDER_CLASS]
 *       reads the records back one at a time (max.poll.records=1), checks each, prints "records=<n>" and, with a
 *       provider, the gzip provider metrics of this process
 *   flood BOOTSTRAPS TOPIC SECONDS PRODUCERS
 *       for SECONDS, PRODUCERS connections to each broker of the comma-separated BOOTSTRAPS send produce requests
 *       one after the other, each one batch of one record of 4 to 8 MB of one repeated byte, gzip from even
 *       connections and lz4 from odd ones; prints "bootstrap=<b> requests=<n> errors=<code:count,...>" per broker
 *   corrupt BOOTSTRAP TOPIC DAMAGE REQUESTS
 *       one gzip batch of 100 records (the same bytes every time) whose payload is damaged but whose CRC is valid
 *       (DAMAGE "blocktype": the first deflate block of a reserved type; "trailer": the gzip member's size field
 *       wrong; "count": the batch declares one record more than its gzip member holds), sent REQUESTS times on one
 *       connection as client "corrupt-client"; prints "requests=<n> errors=<code:count,...>" and
 *       "message=<the first error message>"
 */
public class BombClient {

    public static void main(String[] args) throws Exception {
        if (args[0].equals("flood"))
            flood(args[1].split(","), args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
        else if (args[0].equals("corrupt"))
            corrupt(args[1], args[2], args[3], Integer.parseInt(args[4]));
        else if (args[0].equals("produce"))
            produce(args[1], args[2], CompressionType.forName(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]),
                Long.parseLong(args[6]));
        else
            consume(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]), args.length > 5 ? args[5] : "");
    }

    static MemoryRecords batch(CompressionType codec, byte[] value, int recordBytes, long timestamp) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(64 * 1024), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.of(codec).build(), TimestampType.CREATE_TIME, 0L);
        builder.append(timestamp, ByteBuffer.wrap("bomb".getBytes()), ByteBuffer.wrap(value, 0, recordBytes));
        return builder.build();
    }

    static void flood(String[] bootstraps, String topic, int seconds, int producers) throws Exception {
        // a few bombs of each codec, built once: the client spends its time sending, not compressing
        byte[] value = new byte[8 * 1000 * 1000];
        Arrays.fill(value, (byte) 'b');
        long timestamp = System.currentTimeMillis();
        Random random = new Random(29);
        List<List<MemoryRecords>> bombs = new ArrayList<>();
        for (CompressionType codec : new CompressionType[] {CompressionType.GZIP, CompressionType.LZ4}) {
            List<MemoryRecords> batches = new ArrayList<>();
            for (int i = 0; i < 8; i++)
                batches.add(batch(codec, value, 4 * 1000 * 1000 + random.nextInt(4 * 1000 * 1000 + 1), timestamp));
            bombs.add(batches);
        }
        long deadline = System.currentTimeMillis() + seconds * 1000L;
        List<Thread> threads = new ArrayList<>();
        List<Map<Short, Integer>> answers = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (String bootstrap : bootstraps) {
            for (int p = 0; p < producers; p++) {
                Map<Short, Integer> counts = new TreeMap<>();
                answers.add(counts);
                List<MemoryRecords> batches = bombs.get(p % 2);
                int producer = p;
                Thread thread = new Thread(() -> {
                    String[] hostPort = bootstrap.split(":");
                    try (Socket socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
                        socket.setSoTimeout(180_000);
                        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                        DataInputStream in = new DataInputStream(socket.getInputStream());
                        for (int i = 0; System.currentTimeMillis() < deadline; i++) {
                            short error = send(out, in, "bomb-" + producer, i, topic, batches.get((producer + i) % batches.size()));
                            counts.merge(error, 1, Integer::sum);
                        }
                    } catch (Throwable t) {
                        synchronized (failures) {
                            failures.add(t);
                        }
                    }
                });
                thread.start();
                threads.add(thread);
            }
        }
        for (Thread thread : threads)
            thread.join();
        for (Throwable t : failures)
            t.printStackTrace();
        for (int b = 0; b < bootstraps.length; b++) {
            Map<Short, Integer> total = new TreeMap<>();
            for (int p = 0; p < producers; p++)
                answers.get(b * producers + p).forEach((k, v) -> total.merge(k, v, Integer::sum));
            int requests = total.values().stream().mapToInt(Integer::intValue).sum();
            StringBuilder errors = new StringBuilder();
            total.forEach((k, v) -> errors.append(errors.length() == 0 ? "" : ",").append(k).append(':').append(v));
            System.out.println("bootstrap=" + bootstraps[b] + " requests=" + requests + " errors=" + errors);
        }
        if (!failures.isEmpty())
            System.exit(1);
    }

    static void corrupt(String bootstrap, String topic, String damage, int requests) throws Exception {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(64 * 1024), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.of(CompressionType.GZIP).build(), TimestampType.CREATE_TIME, 0L);
        Random random = new Random(3160);
        for (int i = 0; i < 100; i++)
            builder.append(1764000000000L + i, ("key-" + i).getBytes(), ("{\"id\":" + i + ",\"v\":" + random.nextLong() + "}").getBytes());
        ByteBuffer buffer = builder.build().buffer();
        int payload = 61;   // DefaultRecordBatch.RECORD_BATCH_OVERHEAD: the gzip member starts here
        int end = buffer.limit();
        if (damage.equals("blocktype")) {
            // the first deflate block (after the 10-byte gzip header) gets the reserved block type 11: zlib refuses
            // it before producing a byte, so the verdict does not depend on what garbage a decoder would produce
            buffer.put(payload + 10, (byte) (buffer.get(payload + 10) | 0x06));
        } else if (damage.equals("trailer")) {
            buffer.put(end - 4, (byte) (buffer.get(end - 4) + 1));
        } else if (damage.equals("count")) {
            buffer.putInt(57, buffer.getInt(57) + 1);   // the batch declares one record more than it holds
        } else {
            throw new IllegalArgumentException("damage must be blocktype, trailer or count: " + damage);
        }
        // CRC-32C from the attributes (offset 21) to the end, stored at offset 17: the batch passes its CRC check
        buffer.putInt(17, (int) Crc32C.compute(buffer, 21, end - 21));
        MemoryRecords batch = MemoryRecords.readableRecords(buffer);
        batch.batches().forEach(b -> b.ensureValid());
        Map<Short, Integer> counts = new TreeMap<>();
        String message = null;
        String[] hostPort = bootstrap.split(":");
        try (Socket socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
            socket.setSoTimeout(60_000);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            for (int i = 0; i < requests; i++) {
                ProduceResponseData.PartitionProduceResponse answer = sendOne(out, in, "corrupt-client", i, topic, batch);
                counts.merge(answer.errorCode(), 1, Integer::sum);
                if (message == null)
                    message = answer.errorMessage();
            }
        }
        StringBuilder errors = new StringBuilder();
        counts.forEach((k, v) -> errors.append(errors.length() == 0 ? "" : ",").append(k).append(':').append(v));
        System.out.println("requests=" + requests + " errors=" + errors);
        System.out.println("message=" + message);
    }

    static short send(DataOutputStream out, DataInputStream in, String clientId, int correlationId, String topic,
                      MemoryRecords batch) throws Exception {
        return sendOne(out, in, clientId, correlationId, topic, batch).errorCode();
    }

    /** One produce request (v12, acks=-1) of one batch to partition 0 of topic; the partition's answer. */
    static ProduceResponseData.PartitionProduceResponse sendOne(DataOutputStream out, DataInputStream in, String clientId,
                                                                int correlationId, String topic, MemoryRecords batch) throws Exception {
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(120_000);
        ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData().setName(topic);
        topicData.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.readableRecords(batch.buffer())));
        data.topicData().add(topicData);
        short version = 12;
        ProduceRequest request = new ProduceRequest.Builder(version, version, data).build(version);
        RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, version, clientId, correlationId);
        ByteBuffer bytes = request.serializeWithHeader(header);
        out.writeInt(bytes.remaining());
        out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
        out.flush();
        byte[] response = new byte[in.readInt()];
        in.readFully(response);
        ProduceResponse parsed = (ProduceResponse) AbstractResponse.parseResponse(ByteBuffer.wrap(response), header);
        return parsed.data().responses().iterator().next().partitionResponses().get(0);
    }

    static void produce(String bootstrap, String topic, CompressionType codec, int records, int recordBytes, long timestamp)
            throws Exception {
        byte[] value = new byte[recordBytes];
        Arrays.fill(value, (byte) 'a');
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1 << 20), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.of(codec).build(), TimestampType.CREATE_TIME, 0L);
        for (int i = 0; i < records; i++)
            builder.append(timestamp, ("key-" + i).getBytes(), value);
        MemoryRecords batch = builder.build();
        String[] hostPort = bootstrap.split(":");
        try (Socket socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
            socket.setSoTimeout(180_000);
            ProduceResponseData.PartitionProduceResponse answer = sendOne(new DataOutputStream(socket.getOutputStream()),
                new DataInputStream(socket.getInputStream()), "bomb-client", 1, topic, batch);
            System.out.println("wire=" + batch.sizeInBytes() + " error=" + answer.errorCode() + " " + answer.errorMessage());
        }
    }

    static void consume(String bootstrap, String topic, int records, int recordBytes, String provider) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("max.poll.records", "1");
        props.put("group.protocol", "classic");
        props.put("client.id", "bomb-consumer");
        if (!provider.isEmpty())
            props.put("compression.gzip.provider", provider);
        int read = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + 180_000;
            while (read < records && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofSeconds(1))) {
                    byte[] v = record.value();
                    if (v.length != recordBytes)
                        throw new AssertionError("record " + record.offset() + " has " + v.length + " bytes");
                    for (int i = 0; i < v.length; i += 4093)
                        if (v[i] != 'a')
                            throw new AssertionError("record " + record.offset() + " byte " + i + " is " + v[i]);
                    if (v[v.length - 1] != 'a')
                        throw new AssertionError("record " + record.offset() + " last byte");
                    read++;
                }
            }
            if (!provider.isEmpty()) {
                ObjectName name = new ObjectName("kafka.consumer:type=consumer-compression-provider-metrics,client-id=bomb-consumer,codec=gzip");
                for (String attribute : new String[] {"decompression-batches-total", "decompression-fallbacks-total", "decompression-bypassed-memory-total"})
                    System.out.println(attribute + "=" + ManagementFactory.getPlatformMBeanServer().getAttribute(name, attribute));
            }
        }
        System.out.println("records=" + read);
    }
}
