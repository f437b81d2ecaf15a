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

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

/**
 * Producer and verifying consumer of the system tests.
 *
 * produce: sends records (values = lines of a payload file, cycled; key = id-seq or, with --keys K,
 * "k" + seq % K), acks=all, and writes one line per acknowledged record: key, partition, offset,
 * crc32 of the value ("-" for a tombstone), value length. Prints a JSON summary. With --until-file F it
 * stops sending (and flushes) as soon as F exists, --max records at most.
 *
 * consume: reads every partition of a topic from the beginning and checks the acknowledged records
 * of the given ack files: every one read back exactly once with the same content (default), or,
 * with --compacted, the last value read per key is the last acknowledged one (tombstoned keys absent
 * or null). Prints a JSON summary. Works with stock and patched kafka-clients alike.
 */
public class SysTestClient {

    static Map<String, String> parse(String[] args, int from, Properties extra) {
        Map<String, String> opts = new HashMap<>();
        for (int i = from; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--config")) {
                String kv = args[++i];
                int eq = kv.indexOf('=');
                extra.put(kv.substring(0, eq), kv.substring(eq + 1));
            } else if (a.startsWith("--")) {
                opts.put(a.substring(2), args[++i]);
            } else {
                throw new IllegalArgumentException("unexpected argument " + a);
            }
        }
        return opts;
    }

    static long crc(byte[] v) {
        CRC32 c = new CRC32();
        c.update(v);
        return c.getValue();
    }

    public static void main(String[] args) throws Exception {
        Properties extra = new Properties();
        Map<String, String> o = parse(args, 1, extra);
        if (args[0].equals("produce")) {
            produce(o, extra);
        } else if (args[0].equals("consume")) {
            consume(o, extra);
        } else if (args[0].equals("topics")) {
            topics(o, extra);
        } else {
            throw new IllegalArgumentException("mode must be produce or consume");
        }
    }

    static void produce(Map<String, String> o, Properties extra) throws Exception {
        List<byte[]> payloads = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(o.get("input")), StandardCharsets.UTF_8)) {
            if (!line.isEmpty()) {
                payloads.add(line.getBytes(StandardCharsets.UTF_8));
            }
        }
        long max = Long.parseLong(o.getOrDefault("max", "1000"));
        double throughput = Double.parseDouble(o.getOrDefault("throughput", "-1"));
        int keys = Integer.parseInt(o.getOrDefault("keys", "0"));
        int tombstoneEvery = Integer.parseInt(o.getOrDefault("tombstone-every", "0"));
        String id = o.getOrDefault("id", "p");
        String topic = o.get("topic");
        String untilFile = o.get("until-file");

        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        props.putAll(extra);

        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        String lastError = null;
        final String[] err = new String[1];
        long start = System.nanoTime();
        long sent = 0;
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(o.get("acked"))));
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (long seq = 0; seq < max; seq++, sent++) {
                if (untilFile != null && seq % 50 == 0 && Files.exists(Paths.get(untilFile))) {
                    break;
                }
                if (throughput > 0) {
                    long due = start + (long) (seq * 1e9 / throughput);
                    long now = System.nanoTime();
                    if (due > now) {
                        Thread.sleep((due - now) / 1_000_000, (int) ((due - now) % 1_000_000));
                    }
                }
                String key = keys > 0 ? "k" + (seq % keys) : id + "-" + seq;
                byte[] value = tombstoneEvery > 0 && seq % tombstoneEvery == tombstoneEvery - 1
                    ? null : payloads.get((int) (seq % payloads.size()));
                final String k = key;
                final String c = value == null ? "-" : Long.toString(crc(value));
                final int len = value == null ? 0 : value.length;
                producer.send(new ProducerRecord<>(topic, key.getBytes(StandardCharsets.UTF_8), value), (md, e) -> {
                    if (e == null) {
                        acked.incrementAndGet();
                        bytes.addAndGet(len);
                        synchronized (out) {
                            out.println(k + "\t" + md.partition() + "\t" + md.offset() + "\t" + c + "\t" + len);
                        }
                    } else {
                        failed.incrementAndGet();
                        err[0] = e.toString();
                    }
                });
            }
            producer.flush();
            lastError = err[0];
            String providerMetrics = metricsMatching(producer.metrics(), "compression");
            double secs = (System.nanoTime() - start) / 1e9;
            System.out.println("{\"sent\":" + sent + ",\"acked\":" + acked.get() + ",\"failed\":" + failed.get()
                + ",\"bytes\":" + bytes.get() + ",\"seconds\":" + secs
                + ",\"records_per_sec\":" + (acked.get() / secs)
                + ",\"mb_per_sec\":" + (bytes.get() / secs / 1e6)
                + ",\"last_error\":" + quote(lastError)
                + ",\"compression_metrics\":" + quote(providerMetrics) + "}");
        }
    }

    /**
     * topics --create "name:partitions:rf[:k=v,k=v]|..." : creates the topics in one go and waits until every
     * partition has its full ISR. Prints one line per topic, "created NAME" or "error NAME: message".
     */
    static void topics(Map<String, String> o, Properties extra) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        props.putAll(extra);
        List<NewTopic> topics = new ArrayList<>();
        Map<String, Integer> rf = new HashMap<>();
        for (String spec : o.get("create").split("\\|")) {
            String[] f = spec.split(":", 4);
            NewTopic t = new NewTopic(f[0], Integer.parseInt(f[1]), Short.parseShort(f[2]));
            Map<String, String> cfg = new HashMap<>();
            if (f.length > 3 && !f[3].isEmpty()) {
                for (String kv : f[3].split(",")) {
                    cfg.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
                }
            }
            topics.add(t.configs(cfg));
            rf.put(f[0], Integer.parseInt(f[2]));
        }
        boolean ok = true;
        try (Admin admin = Admin.create(props)) {
            List<String> created = new ArrayList<>();
            for (Map.Entry<String, org.apache.kafka.common.KafkaFuture<Void>> e : admin.createTopics(topics).values().entrySet()) {
                try {
                    e.getValue().get();
                    created.add(e.getKey());
                } catch (Exception ex) {
                    ok = false;
                    System.out.println("error " + e.getKey() + ": " + (ex.getCause() != null ? ex.getCause() : ex));
                }
            }
            long deadline = System.currentTimeMillis() + 60_000;
            while (!created.isEmpty() && System.currentTimeMillis() < deadline) {
                boolean full = true;
                try {
                    for (TopicDescription d : admin.describeTopics(created).allTopicNames().get().values()) {
                        for (org.apache.kafka.common.TopicPartitionInfo p : d.partitions()) {
                            full &= p.isr().size() >= rf.get(d.name());
                        }
                    }
                } catch (Exception ex) {
                    full = false;
                }
                if (full) {
                    break;
                }
                Thread.sleep(200);
            }
            for (String t : created) {
                System.out.println("created " + t);
            }
        }
        System.exit(ok ? 0 : 1);
    }

    static String metricsMatching(Map<MetricName, ? extends Metric> metrics, String word) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName n = e.getKey();
            if (n.name().contains(word) || n.group().contains(word)) {
                sb.append(n.group()).append(':').append(n.name()).append(n.tags()).append('=')
                    .append(e.getValue().metricValue()).append("; ");
            }
        }
        return sb.toString();
    }

    static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                sb.append('\\').append(ch);
            } else if (ch < 0x20) {
                sb.append(' ');
            } else {
                sb.append(ch);
            }
        }
        return sb.append('"').toString();
    }

    static final class Expect {
        String crc;
        long offset;
        int partition;
        int seen;
        boolean matched;
    }

    static void consume(Map<String, String> o, Properties extra) throws Exception {
        boolean compacted = Boolean.parseBoolean(o.getOrDefault("compacted", "false"));
        long idleMs = Long.parseLong(o.getOrDefault("idle-ms", "15000"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "120000"));
        String topic = o.get("topic");

        // acknowledged records: key -> expectation (compacted: the last acknowledged value of each key)
        Map<String, Expect> expect = new HashMap<>();
        long ackedTotal = 0;
        for (String file : o.get("acked").split(",")) {
            for (String line : Files.readAllLines(Paths.get(file), StandardCharsets.UTF_8)) {
                if (line.isEmpty()) {
                    continue;
                }
                String[] f = line.split("\t");
                ackedTotal++;
                Expect e = new Expect();
                e.partition = Integer.parseInt(f[1]);
                e.offset = Long.parseLong(f[2]);
                e.crc = f[3];
                Expect prev = expect.get(f[0]);
                if (prev != null && !compacted) {
                    throw new IllegalStateException("duplicate key in ack files: " + f[0]);
                }
                if (prev == null || prev.offset < e.offset) {
                    expect.put(f[0], e);
                }
            }
        }

        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, o.get("bootstrap"));
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "1048576");
        props.putAll(extra);

        long read = 0;
        long duplicates = 0;
        long mismatched = 0;
        long unexpected = 0;
        List<String> examples = new ArrayList<>();
        Map<String, String> lastValue = new HashMap<>();   // compacted: key -> crc of last value read
        long start = System.currentTimeMillis();
        String metrics;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo p : consumer.partitionsFor(topic, Duration.ofSeconds(60))) {
                tps.add(new TopicPartition(topic, p.partition()));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(60));
            long lastProgress = System.currentTimeMillis();
            while (true) {
                boolean done = true;
                for (TopicPartition tp : tps) {
                    if (consumer.position(tp, Duration.ofSeconds(60)) < end.get(tp)) {
                        done = false;
                    }
                }
                long now = System.currentTimeMillis();
                if (done || now - lastProgress > idleMs || now - start > timeoutMs) {
                    break;
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    lastProgress = System.currentTimeMillis();
                    read++;
                    String key = r.key() == null ? "" : new String(r.key(), StandardCharsets.UTF_8);
                    String c = r.value() == null ? "-" : Long.toString(crc(r.value()));
                    if (compacted) {
                        lastValue.put(key, c);
                        continue;
                    }
                    Expect e = expect.get(key);
                    if (e == null) {
                        unexpected++;    // sent but not acknowledged (e.g. during a fault): allowed
                        continue;
                    }
                    e.seen++;
                    if (e.seen > 1) {
                        duplicates++;
                        if (examples.size() < 10) {
                            examples.add("duplicate " + key + " at " + r.partition() + "/" + r.offset());
                        }
                    }
                    if (!e.crc.equals(c) || e.partition != r.partition() || e.offset != r.offset()) {
                        mismatched++;
                        if (examples.size() < 10) {
                            examples.add("mismatch " + key + " acked " + e.partition + "/" + e.offset + " crc " + e.crc
                                + ", read " + r.partition() + "/" + r.offset() + " crc " + c);
                        }
                    } else {
                        e.matched = true;
                    }
                }
            }
            metrics = metricsMatching(consumer.metrics(), "compression");
        }

        long missing = 0;
        long matched = 0;
        for (Map.Entry<String, Expect> en : expect.entrySet()) {
            Expect e = en.getValue();
            if (compacted) {
                String got = lastValue.get(en.getKey());
                boolean ok = e.crc.equals("-") ? (got == null || got.equals("-")) : e.crc.equals(got);
                if (ok) {
                    matched++;
                } else {
                    if (got == null) {
                        missing++;
                    } else {
                        mismatched++;
                    }
                    if (examples.size() < 10) {
                        examples.add("key " + en.getKey() + " latest acked crc " + e.crc + ", read " + got);
                    }
                }
            } else if (e.seen == 0) {
                missing++;
                if (examples.size() < 10) {
                    examples.add("missing " + en.getKey() + " acked at " + e.partition + "/" + e.offset);
                }
            } else if (e.matched) {
                matched++;
            }
        }
        boolean ok = missing == 0 && duplicates == 0 && mismatched == 0;
        System.out.println("{\"ok\":" + ok + ",\"acked\":" + ackedTotal + ",\"expected_keys\":" + expect.size()
            + ",\"matched\":" + matched + ",\"missing\":" + missing + ",\"duplicates\":" + duplicates
            + ",\"mismatched\":" + mismatched + ",\"unacked_read\":" + unexpected + ",\"read\":" + read
            + ",\"distinct_keys_read\":" + lastValue.size()
            + ",\"examples\":" + quote(String.join("; ", examples))
            + ",\"compression_metrics\":" + quote(metrics) + "}");
    }
}
