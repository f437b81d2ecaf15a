/*
 * Licensed to the Apache Software Foundation (ASF) under one or more
 * contributor license agreements. See the NOTICE file distributed with
 * this work for additional information regarding copyright ownership.
 * The ASF licenses this file to You under the Apache License, Version 2.0
 * (the "License"); you may not use this file except in compliance with
 * the License. You may obtain a copy of the License at
 *
 *    http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */
package io.kafkacompress.tools.advisor;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.DefaultHostResolver;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NetworkClientUtils;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.DecompressionContext;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FetchResponse;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The topic's own record batches, as its producers (or its broker, when the topic recompresses) built them: fetched
 * raw with FetchRequests of a consumer (replica id -1) through a NetworkClient, so their boundaries, codecs and
 * sizes are seen (a KafkaConsumer hides them). No group, no offsets: a FetchRequest needs neither. Only each batch's
 * figures are kept, so memory is bounded by one fetch response.
 */
final class RealBatches {
    /** Bytes asked for per fetch (one partition at a time); a larger batch still comes whole (KIP-74). */
    static final int FETCH_MAX_BYTES = 1 << 20;

    private int[] uncompressed = new int[64];   // header + records as uncompressed batch: what batch.size bounds
    private int[] records = new int[64];
    private int[] stored = new int[64];
    int batches;
    long recordCount;
    long uncompressedBytes;
    long storedBytes;
    final Map<String, Integer> codecs = new LinkedHashMap<>();

    void add(int recordsInBatch, int uncompressedSize, int storedSize, CompressionType codec) {
        if (batches == uncompressed.length) {
            uncompressed = Arrays.copyOf(uncompressed, batches * 2);
            records = Arrays.copyOf(records, batches * 2);
            stored = Arrays.copyOf(stored, batches * 2);
        }
        uncompressed[batches] = uncompressedSize;
        records[batches] = recordsInBatch;
        stored[batches] = storedSize;
        batches++;
        recordCount += recordsInBatch;
        uncompressedBytes += uncompressedSize;
        storedBytes += storedSize;
        codecs.merge(codec.name, 1, Integer::sum);
    }

    /** The codec most of the batches have. */
    String codec() {
        return codecs.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse("none");
    }

    static double percentile(int[] values, int n, double p) {
        int[] s = Arrays.copyOf(values, n);
        Arrays.sort(s);
        // nearest rank
        int rank = (int) Math.ceil(p / 100.0 * n);
        return s[Math.max(0, Math.min(n - 1, rank - 1))];
    }

    double uncompressedPercentile(double p) {
        return percentile(uncompressed, batches, p);
    }

    double recordsPercentile(double p) {
        return percentile(records, batches, p);
    }

    double storedPercentile(double p) {
        return percentile(stored, batches, p);
    }

    double storedBytesPerRecord() {
        return (double) storedBytes / recordCount;
    }

    double uncompressedBytesPerRecord() {
        return (double) uncompressedBytes / recordCount;
    }

    double sizeRatio() {
        return (double) storedBytes / uncompressedBytes;
    }

    /**
     * The uncompressed batch size the advisor measures "the topic's real batches" at: the median batch plus half a
     * record (batches cut at a size end on average half a record below it), to two significant digits.
     */
    int measuredBatchSize() {
        double target = uncompressedPercentile(50) + uncompressedBytesPerRecord() / 2;
        double magnitude = Math.pow(10, Math.floor(Math.log10(target)) - 1);
        return (int) Math.max(1, Math.round(target / magnitude) * magnitude);
    }

    Map<String, Object> json() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("batches", batches);
        m.put("records", recordCount);
        m.put("codecs", codecs);
        m.put("codec", codec());
        m.put("median_uncompressed_bytes", uncompressedPercentile(50));
        m.put("p90_uncompressed_bytes", uncompressedPercentile(90));
        m.put("median_records", recordsPercentile(50));
        m.put("p90_records", recordsPercentile(90));
        m.put("median_stored_bytes", storedPercentile(50));
        m.put("stored_bytes", storedBytes);
        m.put("uncompressed_bytes", uncompressedBytes);
        m.put("size_ratio", sizeRatio());
        m.put("bytes_per_record", storedBytesPerRecord());
        m.put("measured_batch_size", measuredBatchSize());
        m.put("measured_batch_max_records", (int) Math.max(1, recordsPercentile(90)));
        return m;
    }

    /**
     * Fetch the batches holding offsets [from, until) of each partition of {@code ranges} from its leader, at most
     * {@code maxBytes} of stored batches in all.
     */
    static RealBatches fetch(Properties clientProps, String topic, Uuid topicId, Map<Integer, Node> leaders,
                             Map<Integer, long[]> ranges, long maxBytes, long timeoutMs) throws IOException {
        ConsumerConfig config = new ConsumerConfig(Sample.consumerProperties(clientProps));
        Time time = Time.SYSTEM;
        RealBatches real = new RealBatches();
        BufferSupplier buffers = BufferSupplier.create();
        Map<Uuid, String> names = Map.of(topicId, topic);
        try (Metrics metrics = new Metrics(time)) {
            NetworkClient client = ClientUtils.createNetworkClient(config, config.getString(ConsumerConfig.CLIENT_ID_CONFIG),
                metrics, "advisor", new LogContext("[kafka-compression-advisor] "), new ApiVersions(), time, 1,
                (int) Math.min(Integer.MAX_VALUE, timeoutMs), null, new ManualMetadataUpdater(new ArrayList<>(leaders.values())),
                new DefaultHostResolver(), null, null);
            try {
                for (Map.Entry<Integer, long[]> e : ranges.entrySet()) {
                    Node leader = leaders.get(e.getKey());
                    if (leader == null || leader.isEmpty())
                        throw new IOException("partition " + topic + "-" + e.getKey() + " has no leader");
                    if (!NetworkClientUtils.awaitReady(client, leader, time, timeoutMs))
                        throw new IOException("cannot connect to " + leader + " in " + timeoutMs + " ms");
                    TopicPartition tp = new TopicPartition(topic, e.getKey());
                    long position = e.getValue()[0];
                    long until = e.getValue()[1];
                    while (position < until && real.storedBytes < maxBytes) {
                        Map<TopicPartition, FetchRequest.PartitionData> data = new LinkedHashMap<>();
                        data.put(tp, new FetchRequest.PartitionData(topicId, position, -1L, FETCH_MAX_BYTES, Optional.empty()));
                        FetchRequest.Builder request = FetchRequest.Builder
                            .forConsumer(ApiKeys.FETCH.latestVersion(), 0, 1, data)
                            .isolationLevel(IsolationLevel.READ_UNCOMMITTED)
                            .setMaxBytes(FETCH_MAX_BYTES);
                        ClientResponse response = NetworkClientUtils.sendAndReceive(client,
                            client.newClientRequest(leader.idString(), request, time.milliseconds(), true), time);
                        FetchResponse fetch = (FetchResponse) response.responseBody();
                        if (fetch.error() != Errors.NONE)
                            throw new IOException("fetching " + tp + ": " + fetch.error().message());
                        FetchResponseData.PartitionData partition = fetch.responseData(names, response.requestHeader().apiVersion()).get(tp);
                        if (partition == null)
                            throw new IOException("fetching " + tp + ": no data in the response");
                        Errors error = Errors.forCode(partition.errorCode());
                        if (error != Errors.NONE)
                            throw new IOException("fetching " + tp + " at offset " + position + ": " + error.message());
                        Records batches = FetchResponse.recordsOrFail(partition);
                        long before = position;
                        for (RecordBatch batch : batches.batches()) {
                            if (batch.lastOffset() < position)
                                continue;   // a batch the fetch offset falls after
                            if (batch.baseOffset() >= until || real.storedBytes >= maxBytes) {
                                position = until;
                                break;
                            }
                            position = batch.nextOffset();
                            if (batch.isControlBatch())
                                continue;
                            real.add(batch, buffers);
                        }
                        if (position == before)
                            break;          // nothing more (a truncated batch larger than the fetch, or the end)
                    }
                }
            } finally {
                Utils.closeQuietly(client, "advisor NetworkClient");
            }
        }
        return real;
    }

    private void add(RecordBatch batch, BufferSupplier buffers) {
        int count = 0;
        int uncompressedSize;
        if (batch.compressionType() == CompressionType.NONE) {
            uncompressedSize = batch.sizeInBytes();
            Integer n = batch.countOrNull();
            if (n != null) {
                count = n;
            } else {
                for (Record ignored : batch)
                    count++;
            }
        } else {
            // the records as an uncompressed batch holds them: what the producer's batch.size counts
            int recordBytes = 0;
            try (CloseableIterator<Record> it = batch.streamingIterator(DecompressionContext.of(buffers))) {
                while (it.hasNext()) {
                    recordBytes += it.next().sizeInBytes();
                    count++;
                }
            }
            uncompressedSize = (batch.magic() >= RecordBatch.MAGIC_VALUE_V2 ? DefaultRecordBatch.RECORD_BATCH_OVERHEAD : 0) + recordBytes;
        }
        add(count, uncompressedSize, batch.sizeInBytes(), batch.compressionType());
    }
}
