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

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The records the advisor measures: read from a file (one record per line) or sampled from a topic by a consumer
 * without a group that commits nothing (assign + seek).
 */
final class Sample {
    static final Header[] NO_HEADERS = new Header[0];

    final List<byte[]> keys = new ArrayList<>();
    final List<byte[]> values = new ArrayList<>();
    final List<Header[]> headers = new ArrayList<>();
    final List<Long> timestamps = new ArrayList<>();
    long bytes;                 // key + value + header bytes
    String source;
    long minTimestamp = Long.MAX_VALUE;
    long maxTimestamp = Long.MIN_VALUE;
    int partitionsSampled;
    int partitionsTotal;
    /** Sampled from a topic: per partition, the first offset sampled and the one after the last. */
    final Map<Integer, long[]> offsets = new TreeMap<>();

    int size() {
        return values.size();
    }

    private void add(byte[] key, byte[] value, Header[] hs, long timestamp) {
        keys.add(key);
        values.add(value);
        headers.add(hs);
        timestamps.add(timestamp);
        bytes += (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        for (Header h : hs)
            bytes += h.key().length() + (h.value() == null ? 0 : h.value().length);
        minTimestamp = Math.min(minTimestamp, timestamp);
        maxTimestamp = Math.max(maxTimestamp, timestamp);
    }

    /** One record per line (the value; no key), as kafka-producer-perf-test.sh --payload-file reads a file. */
    static Sample fromFile(Path file, int maxRecords, long maxBytes) throws IOException {
        Sample s = new Sample();
        s.source = "file " + file;
        long now = System.currentTimeMillis();
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            ByteArrayOutputStream line = new ByteArrayOutputStream(4096);
            int c;
            while (s.size() < maxRecords && s.bytes < maxBytes) {
                c = in.read();
                if (c == '\n' || c < 0) {
                    if (line.size() > 0)
                        s.add(null, line.toByteArray(), NO_HEADERS, now);
                    line.reset();
                    if (c < 0)
                        break;
                } else {
                    line.write(c);
                }
            }
        }
        if (s.size() == 0)
            throw new IllegalArgumentException("no records in " + file);
        return s;
    }

    /** --command-config's client properties for reading without a group: no group.id, no commits. */
    static Properties consumerProperties(Properties clientProps) {
        Properties props = new Properties();
        props.putAll(clientProps);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "kafka-compression-advisor");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return props;
    }

    /**
     * The most recent records of {@code topic} (or from {@code startOffset} when it is not null; -2 = earliest),
     * spread evenly over the partitions, up to {@code maxRecords} and {@code maxBytes}. No group.id, no commits.
     */
    static Sample fromTopic(Properties clientProps, String topic, List<Integer> partitions, Long startOffset,
                            int maxRecords, long maxBytes, long timeoutMs) {
        Properties props = consumerProperties(clientProps);
        props.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "2000");
        Sample s = new Sample();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofMillis(timeoutMs));
            if (infos == null || infos.isEmpty())
                throw new IllegalArgumentException("topic " + topic + " does not exist or has no partitions");
            s.partitionsTotal = infos.size();
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo info : infos) {
                if (partitions == null || partitions.contains(info.partition()))
                    tps.add(new TopicPartition(topic, info.partition()));
            }
            if (tps.isEmpty())
                throw new IllegalArgumentException("topic " + topic + " has none of the partitions " + partitions);
            Map<TopicPartition, Long> begin = consumer.beginningOffsets(tps, Duration.ofMillis(timeoutMs));
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofMillis(timeoutMs));
            long perPartition = Math.max(1, maxRecords / tps.size());
            Map<TopicPartition, Long> recent = recentQuotas(tps, begin, end, maxRecords);
            List<TopicPartition> withData = new ArrayList<>();
            Map<TopicPartition, Long> start = new HashMap<>();
            for (TopicPartition tp : tps) {
                long b = begin.get(tp);
                long e = end.get(tp);
                long from;
                if (startOffset == null)
                    from = e - recent.get(tp);
                else if (startOffset == -2L)
                    from = b;
                else
                    from = Math.max(b, startOffset);
                if (from < e) {
                    withData.add(tp);
                    start.put(tp, from);
                }
            }
            s.partitionsSampled = withData.size();
            s.source = "topic " + topic + " (" + withData.size() + " of " + infos.size() + " partitions)";
            if (withData.isEmpty())
                throw new IllegalArgumentException("topic " + topic + " has no records in the partitions and offsets asked for");
            consumer.assign(withData);
            for (TopicPartition tp : withData)
                consumer.seek(tp, start.get(tp));
            Map<TopicPartition, Integer> taken = new HashMap<>();
            List<TopicPartition> active = new ArrayList<>(withData);
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (!active.isEmpty() && s.size() < maxRecords && s.bytes < maxBytes && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
                List<TopicPartition> done = new ArrayList<>();
                for (TopicPartition tp : records.partitions()) {
                    for (ConsumerRecord<byte[], byte[]> r : records.records(tp)) {
                        if (r.offset() >= end.get(tp) || s.size() >= maxRecords || s.bytes >= maxBytes)
                            break;
                        if (startOffset != null && taken.getOrDefault(tp, 0) >= perPartition)
                            break;
                        s.add(r.key(), r.value(), r.headers().toArray(), r.timestamp());
                        long[] range = s.offsets.computeIfAbsent(tp.partition(), p -> new long[] {r.offset(), r.offset() + 1});
                        range[1] = r.offset() + 1;
                        taken.merge(tp, 1, Integer::sum);
                    }
                }
                for (TopicPartition tp : active) {
                    if (consumer.position(tp) >= end.get(tp) || (startOffset != null && taken.getOrDefault(tp, 0) >= perPartition))
                        done.add(tp);
                }
                if (!done.isEmpty()) {
                    active.removeAll(done);
                    consumer.pause(done);
                }
            }
        }
        if (s.size() == 0)
            throw new IllegalArgumentException("read no records from topic " + topic);
        return s;
    }

    /**
     * How many of its most recent records each partition gives to a sample of {@code maxRecords}: an even share, and
     * what a partition holding fewer than its share leaves goes to the others (the partitions of a topic written
     * without keys are rarely even: the sticky partitioner fills one batch at a time).
     */
    static Map<TopicPartition, Long> recentQuotas(List<TopicPartition> tps, Map<TopicPartition, Long> begin,
                                                  Map<TopicPartition, Long> end, long maxRecords) {
        List<TopicPartition> smallestFirst = new ArrayList<>(tps);
        smallestFirst.sort(Comparator.comparingLong(tp -> end.get(tp) - begin.get(tp)));
        Map<TopicPartition, Long> quotas = new HashMap<>();
        long left = maxRecords;
        for (int i = 0; i < smallestFirst.size(); i++) {
            TopicPartition tp = smallestFirst.get(i);
            long take = Math.min(end.get(tp) - begin.get(tp), left / (smallestFirst.size() - i));
            quotas.put(tp, take);
            left -= take;
        }
        return quotas;
    }

    /** Records per day the sample's timestamps span, scaled to every partition; 0 if they do not tell. */
    double messagesPerDayFromTimestamps() {
        long span = maxTimestamp - minTimestamp;
        if (span < 1000 || partitionsSampled == 0)
            return 0;
        return size() * (86_400_000.0 / span) * partitionsTotal / partitionsSampled;
    }
}
