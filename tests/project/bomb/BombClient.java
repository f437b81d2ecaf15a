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

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

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
 */
public class BombClient {

    public static void main(String[] args) throws Exception {
        if (args[0].equals("produce"))
            produce(args[1], args[2], CompressionType.forName(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]),
                Long.parseLong(args[6]));
        else
            consume(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]), args.length > 5 ? args[5] : "");
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
        ProduceRequestData data = new ProduceRequestData().setAcks((short) -1).setTimeoutMs(120_000);
        ProduceRequestData.TopicProduceData topicData = new ProduceRequestData.TopicProduceData().setName(topic);
        topicData.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(batch));
        data.topicData().add(topicData);
        short version = 12;
        ProduceRequest request = new ProduceRequest.Builder(version, version, data).build(version);
        RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, version, "bomb-client", 1);
        ByteBuffer bytes = request.serializeWithHeader(header);
        String[] hostPort = bootstrap.split(":");
        try (Socket socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
            socket.setSoTimeout(180_000);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(bytes.remaining());
            out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] response = new byte[in.readInt()];
            in.readFully(response);
            ProduceResponse parsed = (ProduceResponse) AbstractResponse.parseResponse(ByteBuffer.wrap(response), header);
            for (ProduceResponseData.TopicProduceResponse t : parsed.data().responses())
                for (ProduceResponseData.PartitionProduceResponse p : t.partitionResponses())
                    System.out.println("wire=" + batch.sizeInBytes() + " error=" + p.errorCode() + " " + p.errorMessage());
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
                for (String attribute : new String[] {"decompression-batches-total", "decompression-fallbacks-total"})
                    System.out.println(attribute + "=" + ManagementFactory.getPlatformMBeanServer().getAttribute(name, attribute));
            }
        }
        System.out.println("records=" + read);
    }
}
