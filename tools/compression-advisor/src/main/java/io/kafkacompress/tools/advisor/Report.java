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

import io.kafkacompress.tools.advisor.CompressionAdvisor.Sizing;
import io.kafkacompress.tools.advisor.Measurement.Result;
import io.kafkacompress.tools.advisor.Measurement.Setting;

import org.apache.kafka.common.utils.AppInfoParser;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** The advisor's output: a human table, JSON or CSV. */
final class Report {
    private final Sample sample;
    private final Advice advice;
    private final Sizing sizing;
    private final String bootstrap;
    private final String topic;
    private final Map<String, String> topicConfig;
    private final List<String> skippedProviders;
    private final Set<String> providers = new LinkedHashSet<>();
    private final RealBatches real;          // null: not sampled from a topic
    private final CompressionAdvisor.Today today;
    private final String realSkipped;        // why the settings were not measured at the real batch size, or null
    private final List<Integer> batchSizes;
    private final BrokerMetrics live;        // null: no --jmx-url, or not read
    private final List<ColdCapacity> cold;   // empty: nothing stores less than the source
    private final int recompressionBatchBytes;
    private final int mergedBatchBytes;      // 0: the cleaner rewrites batch by batch

    Report(Sample sample, Advice advice, Sizing sizing, String bootstrap, String topic, Map<String, String> topicConfig,
           List<String> skippedProviders, List<Setting> provided, RealBatches real, CompressionAdvisor.Today today,
           String realSkipped, List<Integer> batchSizes, BrokerMetrics live, List<ColdCapacity> cold,
           int recompressionBatchBytes, int mergedBatchBytes) {
        this.live = live;
        this.cold = cold;
        this.recompressionBatchBytes = recompressionBatchBytes;
        this.mergedBatchBytes = mergedBatchBytes;
        this.real = real;
        this.today = today;
        this.realSkipped = realSkipped;
        this.batchSizes = batchSizes;
        this.sample = sample;
        this.advice = advice;
        this.sizing = sizing;
        this.bootstrap = bootstrap;
        this.topic = topic;
        this.topicConfig = topicConfig;
        this.skippedProviders = skippedProviders;
        for (Setting s : provided)
            providers.add(s.providerName + " = " + s.providerClass + " (" + s.provider + ")");
    }

    private static String f(String fmt, Object... args) {
        return String.format(Locale.ROOT, fmt, args);
    }

    private String currentSetting() {
        String type = topicConfig.get("compression.type");
        if (type == null)
            return null;
        String level = topicConfig.get("compression." + type + ".level");
        return "compression.type=" + type + (level != null ? ", compression." + type + ".level=" + level : "");
    }

    void table(PrintStream out) {
        out.println(f("Kafka compression advisor (Kafka %s): %d records, %s of keys, values and headers, from %s",
            AppInfoParser.getVersion(), sample.size(), CompressionAdvisor.bytes(sample.bytes), sample.source));
        if (currentSetting() != null)
            out.println("Topic " + topic + " now: " + currentSetting());
        for (String p : providers)
            out.println("Provider: " + p);
        for (String s : skippedProviders)
            out.println("Provider not available here, skipped: " + s);
        if (real != null) {
            out.println(f("Topic's batches (fetched raw, the sampled offsets): %d batches of %d records, codec %s; uncompressed size " +
                    "median %.0f B, p90 %.0f B; records per batch median %.0f, p90 %.0f; on disk today %.1f B/record (size ratio %.4f)",
                real.batches, real.recordCount, codecs(), real.uncompressedPercentile(50), real.uncompressedPercentile(90),
                real.recordsPercentile(50), real.recordsPercentile(90), real.storedBytesPerRecord(), real.sizeRatio()));
            if (realSkipped == null)
                out.println(f("Batch real:%d = batches of at most %d uncompressed bytes and %.0f records for every codec, the size of " +
                    "the topic's batches (their median plus half a record; their p90 records); the other batch sizes are the producer's " +
                    "batch.size.", real.measuredBatchSize(), real.measuredBatchSize(), Math.max(1, real.recordsPercentile(90))));
            else
                out.println(f("Not measured again at the topic's batch size (%d B uncompressed): it is %s.", real.measuredBatchSize(),
                    realSkipped));
        }
        out.println("Ranked for --goal " + advice.goal + "; * = on the size/speed Pareto front (no other setting is both smaller " +
            "and cheaper to compress). MB/s and CPU s/GB are per core, of uncompressed data, with Kafka's record-batch code.");
        out.println();
        List<String[]> rows = new ArrayList<>();
        List<String> header = new ArrayList<>(List.of("#", "", "codec", "level", "provider", "batch", "size ratio", "B/record",
            "comp MB/s", "decomp MB/s", "comp CPU s/GB", "decomp CPU s/GB"));
        if (sizing.disk())
            header.add("disk GB");
        if (sizing.cores()) {
            header.add("comp cores");
            header.add("decomp cores");
        }
        rows.add(header.toArray(new String[0]));
        int rank = 0;
        for (Result r : advice.ranked) {
            rank++;
            List<String> row = new ArrayList<>(List.of(String.valueOf(rank), (r.pareto ? "*" : "") + (r == advice.recommendation() ? "<" : "")
                    + (r.partial < 1 ? "~" : ""),
                r.setting.codec(), r.setting.level == null ? "-" : String.valueOf(r.setting.level), r.setting.providerName,
                r.batchLabel(), f("%.4f", r.ratio()), f("%.1f", r.bytesPerRecord()), f("%.1f", r.compressMBps()),
                f("%.1f", r.decompressMBps()), f("%.2f", r.compressCpuSecondsPerGB()), f("%.2f", r.decompressCpuSecondsPerGB())));
            if (sizing.disk())
                row.add(f("%.1f", sizing.diskGB(r)));
            if (sizing.cores()) {
                row.add(f("%.3f", sizing.compressCores(r)));
                row.add(f("%.3f", sizing.decompressCores(r)));
            }
            rows.add(row.toArray(new String[0]));
        }
        int[] width = new int[rows.get(0).length];
        for (String[] row : rows)
            for (int i = 0; i < row.length; i++)
                width[i] = Math.max(width[i], row[i].length());
        for (String[] row : rows) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                boolean left = i >= 1 && i <= 4;
                String cell = left ? pad(row[i], width[i], false) : pad(row[i], width[i], true);
                b.append(i == 0 ? "" : "  ").append(cell);
            }
            out.println(b.toString().replaceAll("\\s+$", ""));
        }
        out.println();
        long partial = advice.ranked.stream().filter(r -> r.partial < 1).count();
        if (partial > 0) {
            out.println(f("~ = %d setting(s) at the topic's batch size measured on runs of records spread over the sample, as many as " +
                "about %d s allow (tiny batches make some codecs cost much per batch); figures scaled to the sample.", partial,
                Measurement.REAL_TIMED_NANOS / 1_000_000_000L));
            out.println();
        }
        if (sizing.cores()) {
            out.println(f("Sizing: %,.0f messages/day (%s)%s, replication factor %d (%s).", sizing.messagesPerDay, sizing.messagesPerDaySource,
                sizing.disk() ? f(", retention %.2f days (%s)", sizing.retentionDays, sizing.retentionSource) : "",
                sizing.replicationFactor, sizing.replicationSource));
            out.println("disk GB = bytes per record on disk x messages/day x retention days x replication factor; comp cores = cores " +
                "the producers spend compressing at that rate; decomp cores = cores each reader (the broker's validation, every " +
                "consumer group) spends decompressing.");
            out.println();
        }
        Result rec = advice.recommendation();
        out.println(f("Recommendation for --goal %s: %s, %s", advice.goal, rec.setting.label(), batchText(rec)));
        out.println(f("  stores %.1f%% of the uncompressed size (%.2fx smaller), compresses %.1f MB/s and decompresses %.1f MB/s per core%s",
            rec.ratio() * 100, 1 / rec.ratio(), rec.compressMBps(), rec.decompressMBps(),
            sizing.disk() ? f(", %.1f GB on disk", sizing.diskGB(rec)) : ""));
        out.println("  Topic (the broker keeps batches that arrive in the topic's codec as they are, so set the producers too):");
        out.println("    " + Advice.kafkaConfigsCommand(bootstrap, topic, rec));
        out.println("  Producer properties:");
        for (Map.Entry<String, String> e : Advice.producerProperties(rec).entrySet())
            out.println("    " + e.getKey() + "=" + e.getValue());
        if (rec.setting.providerClass != null) {
            out.println(f("  Brokers (server.properties, static; the provider jar is in libs/): compression.%s.provider=%s",
                rec.setting.codec(), rec.setting.providerClass));
            out.println("  Consumers read the batches with any Kafka client; with the provider they decompress faster: "
                + "compression." + rec.setting.codec() + ".provider=" + rec.setting.providerClass);
        }
        for (Map.Entry<String, Result> e : advice.picks.entrySet()) {
            if (!e.getKey().equals(advice.goal))
                out.println(f("  (--goal %s would pick %s, %s: size ratio %.4f, %.1f MB/s)", e.getKey(), e.getValue().setting.label(),
                    batchText(e.getValue()), e.getValue().ratio(), e.getValue().compressMBps()));
        }
        if (today != null && today.result != null) {
            Result t = today.result;
            out.println();
            out.println(f("Today: %s (%s) at the topic's batches (real:%d): size ratio %.4f, %.1f B/record measured; the fetched " +
                "batches store %.1f B/record.", t.setting.label(), today.source, t.batchSize, t.ratio(), t.bytesPerRecord(),
                real.storedBytesPerRecord()));
            out.println(f("  The recommendation (%s, %s): size ratio %.4f, %.1f B/record: %+.1f%% on disk against today's measured " +
                    "setting, compressing at %.1f MB/s per core (today's: %.1f MB/s).", rec.setting.label(), batchText(rec), rec.ratio(),
                rec.bytesPerRecord(), 100 * (rec.bytesPerRecord() / t.bytesPerRecord() - 1), rec.compressMBps(), t.compressMBps()));
        }
        for (String line : batchGain())
            out.println(line);
        coldCapacity(out);
        if (live != null) {
            out.println();
            for (String line : live.lines())
                out.println(line);
        }
    }

    /** The capacity plan of cold recompression from today's setting (or lz4) into the smaller settings. */
    private void coldCapacity(PrintStream out) {
        if (cold.isEmpty())
            return;
        Result source = cold.get(0).source;
        out.println();
        out.println(f("Cold recompression (compaction.compression.type with recompression.lag.ms): one log cleaner thread rewrites " +
            "the closed segments of %s (%s, batch %s), %s, on one core, at:", source.setting.label(),
            today != null && today.result == source ? "today's setting" : "assumed: sample a topic for its own", source.batchLabel(),
            mergedBatchBytes > 0 ? f("merging batches up to %d B (recompression.batch.bytes)", mergedBatchBytes)
                : recompressionBatchBytes == 0 ? "batch by batch (recompression.batch.bytes=0)"
                : f("batch by batch (its batches hold %.0f B, recompression.batch.bytes=%d merges none)",
                    source.uncompressedBatchBytes, recompressionBatchBytes)));
        for (ColdCapacity c : cold)
            out.println(f("  %-8s stores %.3f of the segment's bytes, %6.2f MB/s of segment per thread%s", c.target.setting.label(),
                c.storedFraction(), c.segmentMBps(), sizing.cores() ? f(", %.2f cleaner threads at the rate (all replicas, summed " +
                "over the brokers)", c.threads(sizing)) : ""));
        out.println("  A thread that falls behind leaves the backlog in RecompressionLagBytes; add log.cleaner.threads (a dynamic " +
            "broker setting) or choose a lower level.");
    }

    private String codecs() {
        if (real.codecs.size() == 1)
            return real.codec();
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, Integer> e : real.codecs.entrySet())
            parts.add(e.getKey() + " " + e.getValue());
        return real.codec() + " (batches: " + String.join(", ", parts) + ")";
    }

    static String batchText(Result r) {
        return r.real ? f("at the topic's batch size (%d B uncompressed: the producers' batch.size and linger.ms unchanged)",
            r.batchSize) : f("batch.size=%d", r.batchSize);
    }

    /**
     * What fuller or larger batches would gain: for today's setting and the recommendation, its size ratio at the
     * topic's own batches against at the largest --batch-size measured, when that is at least 3% smaller.
     */
    List<String> batchGain() {
        List<String> lines = new ArrayList<>();
        for (Map<String, Object> g : batchGains()) {
            boolean small = (Boolean) g.get("batches_underfilled");
            lines.add(f("  %s: the topic's batches hold %.0f B uncompressed (median; %.0f records); a producer compressing with it " +
                    "fills batch.size=%d with %.0f B (measured)%s. At batch.size=%d it stores size ratio %.4f instead of %.4f, " +
                    "%.1f%% less on disk.",
                g.get("setting"), real.uncompressedPercentile(50), real.recordsPercentile(50), g.get("batch_size"),
                g.get("full_batch_uncompressed_bytes"),
                small ? ": the batches close long before they are full (linger.ms too low for the rate, a smaller batch.size, " +
                    "or producers that send uncompressed batches to a topic that compresses them); raise linger.ms so they fill" : "",
                g.get("batch_size"), g.get("size_ratio_at_batch_size"), g.get("size_ratio_at_topic_batches"),
                g.get("disk_saving_percent")));
        }
        return lines;
    }

    List<Map<String, Object>> batchGains() {
        List<Map<String, Object>> gains = new ArrayList<>();
        if (real == null)
            return gains;
        int largest = batchSizes.stream().max(Integer::compare).orElseThrow();
        List<Setting> settings = new ArrayList<>();
        if (today != null && today.result != null)
            settings.add(today.result.setting);
        if (!settings.contains(advice.recommendation().setting))
            settings.add(advice.recommendation().setting);
        for (Setting s : settings) {
            Result atReal = find(s, true, real.measuredBatchSize());
            Result atBatch = find(s, false, largest);
            if (atReal == null || atBatch == null || atBatch.ratio() >= 0.97 * atReal.ratio())
                continue;
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("setting", s.label());
            g.put("batch_size", largest);
            g.put("full_batch_uncompressed_bytes", atBatch.uncompressedBatchBytes);
            g.put("topic_batch_median_uncompressed_bytes", real.uncompressedPercentile(50));
            g.put("batches_underfilled", real.uncompressedPercentile(50) < 0.5 * atBatch.uncompressedBatchBytes);
            g.put("size_ratio_at_topic_batches", atReal.ratio());
            g.put("size_ratio_at_batch_size", atBatch.ratio());
            g.put("disk_saving_percent", 100 * (1 - atBatch.bytesPerRecord() / atReal.bytesPerRecord()));
            gains.add(g);
        }
        return gains;
    }

    private Result find(Setting s, boolean atReal, int batchSize) {
        if (atReal && today != null && today.result != null && today.result.setting == s)
            return today.result;
        for (Result r : advice.ranked) {
            if (r.setting.sameAs(s) && r.real == atReal && r.batchSize == batchSize)
                return r;
        }
        return null;
    }

    private static String pad(String s, int w, boolean right) {
        if (s.length() >= w)
            return s;
        String p = " ".repeat(w - s.length());
        return right ? p + s : s + p;
    }

    Map<String, Object> row(Result r, int rank) {
        Map<String, Object> m = new LinkedHashMap<>();
        if (rank > 0)
            m.put("rank", rank);
        m.put("codec", r.setting.codec());
        m.put("level", r.setting.level);
        m.put("provider", r.setting.providerName);
        m.put("provider_class", r.setting.providerClass);
        m.put("batch_size", r.batchSize);
        m.put("batch_basis", r.basis());
        m.put("pareto", r.pareto);
        m.put("recommended", r == advice.recommendation());
        m.put("records", r.records);
        m.put("batches", r.batches);
        m.put("records_per_batch", r.recordsPerBatch());
        m.put("uncompressed_bytes_per_batch", r.uncompressedBatchBytes);
        m.put("timed_fraction", r.partial);
        m.put("uncompressed_bytes", r.uncompressedBytes);
        m.put("compressed_bytes", r.compressedBytes);
        m.put("size_ratio", r.ratio());
        m.put("bytes_per_record", r.bytesPerRecord());
        m.put("compress_mb_per_s", r.compressMBps());
        m.put("decompress_mb_per_s", r.decompressMBps());
        m.put("compress_cpu_s_per_gb", r.compressCpuSecondsPerGB());
        m.put("decompress_cpu_s_per_gb", r.decompressCpuSecondsPerGB());
        m.put("disk_gb", sizing.disk() ? sizing.diskGB(r) : null);
        m.put("compress_cores", sizing.cores() ? sizing.compressCores(r) : null);
        m.put("decompress_cores", sizing.cores() ? sizing.decompressCores(r) : null);
        return m;
    }

    Map<String, Object> advice(Result r) {
        Map<String, Object> m = row(r, 0);
        m.put("kafka_configs_command", Advice.kafkaConfigsCommand(bootstrap, topic, r));
        m.put("topic_configs", Advice.topicConfigs(r));
        m.put("producer_properties", Advice.producerProperties(r));
        if (r.setting.providerClass != null)
            m.put("broker_properties", Map.of("compression." + r.setting.codec() + ".provider", r.setting.providerClass));
        return m;
    }

    void json(PrintStream out) throws IOException {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("kafka_version", AppInfoParser.getVersion());
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("source", sample.source);
        s.put("records", sample.size());
        s.put("bytes", sample.bytes);
        if (topic != null)
            s.put("topic", topic);
        if (currentSetting() != null)
            s.put("topic_compression", currentSetting());
        m.put("sample", s);
        if (real != null) {
            Map<String, Object> b = real.json();
            b.put("measured", realSkipped == null);
            b.put("not_measured_because", realSkipped);
            m.put("topic_batches", b);
        }
        if (today != null && today.result != null) {
            Map<String, Object> t = row(today.result, 0);
            t.put("source", today.source);
            t.put("stored_bytes_per_record", real.storedBytesPerRecord());
            t.put("recommendation_bytes_per_record", advice.recommendation().bytesPerRecord());
            t.put("recommendation_disk_change_percent",
                100 * (advice.recommendation().bytesPerRecord() / today.result.bytesPerRecord() - 1));
            m.put("today", t);
            m.put("batch_gains", batchGains());
        }
        if (!cold.isEmpty()) {
            Result source = cold.get(0).source;
            List<Object> targets = new ArrayList<>();
            for (ColdCapacity c : cold)
                targets.add(c.json(sizing));
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("source", source.setting.label());
            c.put("source_batch", source.batchLabel());
            c.put("recompression_batch_bytes", recompressionBatchBytes);
            c.put("merged_batch_bytes", mergedBatchBytes > 0 ? mergedBatchBytes : null);
            // what the targets' figures are computed from, on the source's side
            c.put("source_uncompressed_bytes_per_batch", source.uncompressedBatchBytes);
            c.put("source_records", source.records);
            c.put("source_uncompressed_bytes", source.uncompressedBytes);
            c.put("source_compressed_bytes", source.compressedBytes);
            c.put("source_size_ratio", source.ratio());
            c.put("source_decompress_mb_per_s", source.decompressMBps());
            c.put("targets", targets);
            m.put("cold_recompression", c);
        }
        if (live != null)
            m.put("broker_metrics", live.json());
        m.put("providers", new ArrayList<>(providers));
        m.put("providers_skipped", skippedProviders);
        Map<String, Object> z = new LinkedHashMap<>();
        z.put("messages_per_day", sizing.messagesPerDay);
        z.put("messages_per_day_source", sizing.messagesPerDay == null ? null : sizing.messagesPerDaySource);
        z.put("retention_days", sizing.retentionDays);
        z.put("retention_days_source", sizing.retentionDays == null ? null : sizing.retentionSource);
        z.put("replication_factor", sizing.replicationFactor);
        z.put("replication_factor_source", sizing.replicationSource);
        m.put("sizing", z);
        m.put("goal", advice.goal);
        m.put("recommendation", advice(advice.recommendation()));
        Map<String, Object> picks = new LinkedHashMap<>();
        for (Map.Entry<String, Result> e : advice.picks.entrySet())
            picks.put(e.getKey(), advice(e.getValue()));
        m.put("recommendations", picks);
        List<Object> rows = new ArrayList<>();
        int rank = 0;
        for (Result r : advice.ranked)
            rows.add(row(r, ++rank));
        m.put("results", rows);
        CompressionAdvisor.writeJson(out, m);
    }

    void csv(PrintStream out) {
        List<String> keys = null;
        int rank = 0;
        for (Result r : advice.ranked) {
            Map<String, Object> row = row(r, ++rank);
            // the topic's batches, the same on every row (empty for --input)
            row.put("topic_codec", real == null ? null : real.codec());
            row.put("topic_batch_median_uncompressed_bytes", real == null ? null : real.uncompressedPercentile(50));
            row.put("topic_batch_p90_uncompressed_bytes", real == null ? null : real.uncompressedPercentile(90));
            row.put("topic_batch_median_records", real == null ? null : real.recordsPercentile(50));
            row.put("topic_batch_p90_records", real == null ? null : real.recordsPercentile(90));
            row.put("topic_bytes_per_record", real == null ? null : real.storedBytesPerRecord());
            if (keys == null) {
                keys = new ArrayList<>(row.keySet());
                out.println(String.join(",", keys));
            }
            List<String> cells = new ArrayList<>();
            for (String k : keys) {
                Object v = row.get(k);
                String c = v == null ? "" : v instanceof Double ? f("%.6g", (Double) v) : v.toString();
                if (c.contains(",") || c.contains("\""))
                    c = "\"" + c.replace("\"", "\"\"") + "\"";
                cells.add(c);
            }
            out.println(String.join(",", cells));
        }
    }
}
