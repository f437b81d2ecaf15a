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

import org.apache.kafka.common.record.internal.CompressionType;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The capacity plan of cold recompression (compaction.compression.type with recompression.lag.ms): how fast one log
 * cleaner thread rewrites the topic's closed segments into a target setting, and how many threads the topic's rate
 * needs. The cleaner rewrites batch by batch, keeping each batch's records, so a thread spends, per uncompressed
 * byte, the source codec's decompression and the target's compression, both measured here at the same batches.
 */
final class ColdCapacity {
    /** The most targets listed, the smallest first. */
    static final int MAX_TARGETS = 8;

    final Result source;
    final Result target;

    private ColdCapacity(Result source, Result target) {
        this.source = source;
        this.target = target;
    }

    /**
     * The built-in settings measured at the source's batches that store at most 95% of its bytes, smallest first. The
     * log cleaner uses the built-in codecs, so provider rows are left out.
     */
    static List<ColdCapacity> plan(Result source, List<Result> results) {
        List<ColdCapacity> plan = new ArrayList<>();
        if (source == null || source.setting.type == CompressionType.NONE)
            return plan;
        results.stream()
            .filter(r -> r.real == source.real && r.batchSize == source.batchSize && r.setting.providerClass == null)
            .filter(r -> r.setting.type != CompressionType.NONE && r.ratio() <= 0.95 * source.ratio())
            .sorted(Comparator.comparingDouble(Result::ratio))
            .limit(MAX_TARGETS)
            .forEach(r -> plan.add(new ColdCapacity(source, r)));
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
            + target.compressCpuSeconds / target.uncompressedBytes);
    }

    /** Segment bytes (in the source codec, as they are on disk) a cleaner thread rewrites per second. */
    double segmentMBps() {
        return uncompressedBytesPerSecond() * source.ratio() / 1e6;
    }

    /** The target's bytes on disk for each byte of the source's. */
    double storedFraction() {
        return target.ratio() / source.ratio();
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
        return m;
    }
}
