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

import org.apache.kafka.common.record.internal.CompressionType;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The capacity plan of cold recompression (compaction.compression.type with recompression.lag.ms): how fast one log
 * cleaner thread rewrites the topic's closed segments into a target setting, and how many threads the topic's rate
 * needs. The cleaner decompresses the source's batches and, by default, merges runs of consecutive batches into
 * batches of up to recompression.batch.bytes of records before it compresses them into the target (with 0, or when
 * the source's batches already hold that much, it rewrites batch by batch). So a thread spends, per uncompressed
 * byte, the source codec's decompression measured at the source's batches plus the target's compression measured at
 * the batches it writes, the merged batch size or the source's; the target's size is measured at those batches too.
 * Targets are chosen by their size at the source's batches (the ranked results: the same ones with or without
 * merging) and listed by the bytes they store, the smallest first.
 */
final class ColdCapacity {
    /** The most targets listed. */
    static final int MAX_TARGETS = 8;

    final Result source;
    /** The target at the source's batches: how it was chosen. */
    final Result target;
    /** The target at the batches the cleaner writes: the merged batch size, or the source's ({@link #target}). */
    final Result written;

    private ColdCapacity(Result source, Result target, Result written) {
        this.source = source;
        this.target = target;
        this.written = written;
    }

    /**
     * The built-in settings measured at the source's batches that store at most 95% of its bytes, smallest first. The
     * log cleaner uses the built-in codecs, so provider rows are left out.
     */
    static List<Result> targets(Result source, List<Result> results) {
        List<Result> targets = new ArrayList<>();
        if (source == null || source.setting.type == CompressionType.NONE)
            return targets;
        results.stream()
            .filter(r -> r.real == source.real && r.batchSize == source.batchSize && r.setting.providerClass == null)
            .filter(r -> r.setting.type != CompressionType.NONE && r.ratio() <= 0.95 * source.ratio())
            .sorted(Comparator.comparingDouble(Result::ratio))
            .limit(MAX_TARGETS)
            .forEach(targets::add);
        return targets;
    }

    /**
     * The uncompressed size of the batches the cleaner writes when it merges: recompression.batch.bytes (already capped
     * by the topic's max.message.bytes), or 0 when it rewrites batch by batch: recompression.batch.bytes is 0, or not
     * above the uncompressed bytes the source's batches hold (their average), so that no two of them merge.
     */
    static int mergedBatchBytes(Result source, int recompressionBatchBytes) {
        return recompressionBatchBytes > source.uncompressedBatchBytes ? recompressionBatchBytes : 0;
    }

    /**
     * The plan, the smallest stored fraction first: each target at the batches the cleaner writes,
     * {@code measureMerged} measuring a target's setting at {@code mergedBatchBytes} (not called when it is 0).
     */
    static List<ColdCapacity> plan(Result source, List<Result> targets, int mergedBatchBytes,
                                   Function<Setting, Result> measureMerged) {
        List<ColdCapacity> plan = new ArrayList<>();
        for (Result t : targets)
            plan.add(new ColdCapacity(source, t, mergedBatchBytes > 0 ? measureMerged.apply(t.setting) : t));
        plan.sort(Comparator.comparingDouble(ColdCapacity::storedFraction));
        return plan;
    }

    /**
     * The source whose segments are rewritten: today's setting of a sampled topic, else lz4 at its default level and
     * the largest batch.size.
     */
    static Result source(CompressionAdvisor.Today today, List<Result> results) {
        if (today != null && today.result != null)
            return today.result;
        return results.stream()
            .filter(r -> !r.real && r.setting.type == CompressionType.LZ4 && r.setting.providerClass == null)
            .filter(r -> Objects.equals(r.setting.level, CompressionAdvisor.Today.defaultLevel(CompressionType.LZ4)))
            .max(Comparator.comparingInt(r -> r.batchSize))
            .orElse(null);
    }

    /** Uncompressed bytes a cleaner thread rewrites per second: source decompression plus target compression. */
    double uncompressedBytesPerSecond() {
        return 1 / (source.decompressCpuSeconds / source.uncompressedBytes
            + written.compressCpuSeconds / written.uncompressedBytes);
    }

    /** Segment bytes (in the source codec, as they are on disk) a cleaner thread rewrites per second. */
    double segmentMBps() {
        return uncompressedBytesPerSecond() * source.ratio() / 1e6;
    }

    /** The target's bytes on disk for each byte of the source's (both ratios are over the source's uncompressed bytes). */
    double storedFraction() {
        return written.ratio() / source.ratio();
    }

    /** Cleaner threads the topic's rate keeps busy, summed over the brokers (every replica is rewritten). */
    double threads(Sizing sizing) {
        return sizing.uncompressedBytesPerSecond(source) * sizing.replicationFactor / uncompressedBytesPerSecond();
    }

    Map<String, Object> json(Sizing sizing) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("codec", target.setting.codec());
        m.put("level", target.setting.level);
        m.put("stored_fraction_of_source", storedFraction());
        m.put("segment_mb_per_sec_per_thread", segmentMBps());
        m.put("uncompressed_mb_per_sec_per_thread", uncompressedBytesPerSecond() / 1e6);
        m.put("cleaner_threads_all_replicas", sizing.cores() ? threads(sizing) : null);
        // what the figures above are computed from
        m.put("size_ratio_at_source_batches", target.ratio());
        m.put("batch", written == target ? target.batchLabel() : "merged:" + written.batchSize);
        m.put("uncompressed_bytes_per_batch", written.uncompressedBatchBytes);
        m.put("uncompressed_bytes", written.uncompressedBytes);
        m.put("compressed_bytes", written.compressedBytes);
        m.put("size_ratio", written.ratio());
        m.put("compress_mb_per_s", written.compressMBps());
        return m;
    }
}
