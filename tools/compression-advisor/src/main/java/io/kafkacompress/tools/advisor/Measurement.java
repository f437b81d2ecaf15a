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

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.compress.ProviderSet;
import org.apache.kafka.common.compress.ThreadProviders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.AbstractRecords;
import org.apache.kafka.common.record.internal.CompressionRatioEstimator;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.DecompressionContext;
import org.apache.kafka.common.record.internal.DefaultRecord;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Measures one codec setting on a sample: the records are cut into batches as the producer's RecordAccumulator
 * cuts them (MemoryRecordsBuilder.hasRoomFor with the producer's CompressionRatioEstimator), each batch is built
 * and compressed with Kafka's own MemoryRecordsBuilder, then read back record by record as a consumer does.
 * Times are the measuring thread's CPU time, so figures are per core.
 */
final class Measurement {

    /** A codec at a level, through the built-in codec or a KIP-1121 provider. */
    static final class Setting {
        final CompressionType type;
        final Integer level;                 // null: the codec has no level (none, snappy)
        final CompressionService provider;   // null: the built-in codec
        final String providerName;           // "built-in" or the provider's short name
        final String providerClass;          // null for the built-in codec

        Setting(CompressionType type, Integer level, CompressionService provider, String providerName) {
            this.type = type;
            this.level = level;
            this.provider = provider;
            this.providerName = provider == null ? "built-in" : providerName;
            this.providerClass = provider == null ? null : provider.getClass().getName();
        }

        Compression compression() {
            Compression c;
            switch (type) {
                case GZIP: c = Compression.gzip().level(level).build(); break;
                case LZ4: c = Compression.lz4().level(level).build(); break;
                case ZSTD: c = Compression.zstd().level(level).build(); break;
                case SNAPPY: c = Compression.snappy().build(); break;
                default: c = Compression.NONE; break;
            }
            return provider == null ? c : ProviderSet.of(Map.of(type, provider)).threadProviders().forCompression(c);
        }

        String codec() {
            return type.name;
        }

        /** The same codec, level and provider. */
        boolean sameAs(Setting o) {
            return type == o.type && java.util.Objects.equals(level, o.level) && java.util.Objects.equals(providerClass, o.providerClass);
        }

        String label() {
            return type.name + (level == null ? "" : " " + level) + (provider == null ? "" : " (" + providerName + ")");
        }
    }

    /** What one setting measured at one batch size. */
    static final class Result {
        final Setting setting;
        final int batchSize;
        /**
         * false: batches cut as a producer with batch.size = batchSize cuts them (for a compressed codec that depends on
         * its ratio estimate); true: batches of batchSize uncompressed bytes for every codec, the size the topic's own
         * batches have (RealBatches.measuredBatchSize).
         */
        final boolean real;
        double uncompressedBatchBytes;  // average uncompressed bytes (header + records) per batch
        double partial = 1;             // the part of the sample (by uncompressed bytes) the timed pass covered
        long records;
        double batches;             // per sample (an average over several passes)
        long uncompressedBytes;     // the same records as uncompressed batches (codec none)
        long compressedBytes;       // the batches as Kafka writes them: header + compressed records
        double compressCpuSeconds;  // per timed pass over the whole sample
        double decompressCpuSeconds;
        double compressWallSeconds;
        boolean pareto;

        Result(Setting setting, int batchSize, boolean real) {
            this.setting = setting;
            this.batchSize = batchSize;
            this.real = real;
        }

        String batchLabel() {
            return real ? "real:" + batchSize : String.valueOf(batchSize);
        }

        String basis() {
            return real ? "topic" : "batch.size";
        }

        double ratio() {
            return (double) compressedBytes / uncompressedBytes;
        }

        double compressMBps() {
            return uncompressedBytes / 1e6 / compressCpuSeconds;
        }

        double decompressMBps() {
            return uncompressedBytes / 1e6 / decompressCpuSeconds;
        }

        double compressCpuSecondsPerGB() {
            return compressCpuSeconds / (uncompressedBytes / 1e9);
        }

        double decompressCpuSecondsPerGB() {
            return decompressCpuSeconds / (uncompressedBytes / 1e9);
        }

        double bytesPerRecord() {
            return (double) compressedBytes / records;
        }

        double avgBatchBytes() {
            return (double) compressedBytes / batches;
        }

        double recordsPerBatch() {
            return (double) records / batches;
        }
    }

    interface Progress {
        void advance(long bytes);
    }

    /** Batches of the warm-up's ratios Kafka's estimate update rule is run over (it falls 0.005 per batch). */
    static final int SIMULATED_BATCHES = 1000;
    /** Batches built as the producer does before a setting is timed, at most, and the CPU time they may take. */
    static final long SETTLE_BATCHES = 300;
    static final long SETTLE_CPU_NANOS = 1_500_000_000L;
    static final long SETTLE_WHOLE_BYTES = 8L << 20;
    /**
     * At the topic's own batch size, wall time a warm-up pass and a timed pass may take: tiny batches (a producer with
     * linger.ms=0 at a low rate sends one record a batch) make the high zstd levels cost tens of milliseconds a batch
     * (setting up their context), minutes for a sample. The warm-up stops at a batch boundary past its time; when it
     * shows that the timed pass would take longer than its time, the timed pass covers every n-th run of
     * STRIDE_RECORDS records, spread over the whole sample, and its figures are scaled to the sample by the
     * uncompressed bytes they had.
     */
    static final long REAL_WARMUP_NANOS = 5_000_000_000L;
    static final long REAL_TIMED_NANOS = 20_000_000_000L;
    static final int STRIDE_RECORDS = 64;

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Sample sample;
    private final int repeats;
    private final long warmupBytes;
    private final Progress progress;
    private BufferSupplier bufferSupplier = BufferSupplier.create();
    private ThreadProviders providers = ThreadProviders.NONE;
    private boolean timing;     // progress counts the timed passes
    /** At the topic's batch size, at most this many records a batch too (the p90 of its batches'). */
    int realMaxRecords = Integer.MAX_VALUE;

    Measurement(Sample sample, int repeats, long warmupBytes, Progress progress) {
        this.sample = sample;
        this.repeats = repeats;
        this.warmupBytes = warmupBytes;
        this.progress = progress;
        if (THREADS.isCurrentThreadCpuTimeSupported() && !THREADS.isThreadCpuTimeEnabled())
            THREADS.setThreadCpuTimeEnabled(true);
    }

    static long cpuNanos() {
        return THREADS.isCurrentThreadCpuTimeSupported() ? THREADS.getCurrentThreadCpuTime() : System.nanoTime();
    }

    /** The records the warm-up passes cover: enough for the JIT, at most the sample. */
    int warmupRecords() {
        long b = 0;
        int n = 0;
        while (n < sample.size() && b < warmupBytes) {
            b += sample.values.get(n) == null ? 0 : sample.values.get(n).length;
            n++;
        }
        return n;
    }

    /** Work units for the progress bar: uncompressed sample bytes each setting handles. */
    long workPerSetting() {
        int w = warmupRecords();
        long warm = 0;
        long all = 0;
        for (int i = 0; i < sample.size(); i++) {
            long n = sample.values.get(i) == null ? 0 : sample.values.get(i).length;
            all += n;
            if (i < w)
                warm += n;
        }
        return 2L * repeats * all;
    }

    /**
     * Measure one setting at one batch size. {@code uncompressedBytes} is the size of the sample as uncompressed
     * batches at this batch size (measured with codec none first), the base of every ratio and rate.
     */
    Result measure(Setting setting, int batchSize, long uncompressedBytes) {
        return measure(setting, batchSize, uncompressedBytes, false);
    }

    /**
     * With {@code real}, the batches hold {@code batchSize} uncompressed bytes whatever the codec (the size the topic's
     * batches have), instead of what a producer with that batch.size would put into them.
     */
    Result measure(Setting setting, int batchSize, long uncompressedBytes, boolean real) {
        Result r = new Result(setting, batchSize, real);
        Compression compression = setting.compression();
        // read back as a consumer configured with the setting's provider does: its fetcher's buffers and providers
        bufferSupplier = BufferSupplier.create();
        providers = setting.provider == null ? ThreadProviders.NONE
            : ProviderSet.of(Map.of(setting.type, setting.provider)).threadProviders();
        // the producer keeps one estimate per topic and codec; one "topic" per setting here
        String estimatorKey = "kafka-compression-advisor/" + setting.label() + "/" + batchSize + (real ? "/real" : "");
        CompressionRatioEstimator.resetEstimation(estimatorKey);
        int warm = warmupRecords();
        // Warm-up: the JIT, and the producer's compression ratio estimate, which decides how many records go into a
        // compressed batch. A long-running producer's estimate is in its steady state: it rises by at least
        // COMPRESSION_RATIO_DETERIORATE_STEP when a batch compresses worse than estimated and falls by
        // COMPRESSION_RATIO_IMPROVING_STEP per batch otherwise, so it sits well above the average batch's ratio.
        // Start from the ratio the warm-up records have, run Kafka's update rule over the ratios the warm-up batches
        // had, then build batches as the producer does (cycling over the warm-up records) until the estimate has seen
        // SETTLE_BATCHES of them or SETTLE_CPU_NANOS have gone. The sizes of those batches count with the timed
        // pass's: the batches of one pass are few, and how full each is depends on where the estimate is.
        List<ByteBuffer> out = new ArrayList<>();
        List<Float> observed = new ArrayList<>();
        long warmStart = System.nanoTime();
        long[] sizes = build(compression, batchSize, real, estimatorKey, 0, warm, out, observed,
            real ? warmStart + REAL_WARMUP_NANOS : Long.MAX_VALUE);
        int every = 1;
        if (real && uncompressedBytes > 0 && sizes[2] > 0) {
            double estimate = (double) (System.nanoTime() - warmStart) * uncompressedBytes / sizes[2];
            every = (int) Math.max(1, Math.ceil(estimate / REAL_TIMED_NANOS));
        }
        long settledBatches = 0, settledBytes = 0, settledRecords = 0, settledUncompressed = 0;
        if (!real && setting.type != CompressionType.NONE && sizes[1] > 0) {
            out.clear();
            CompressionRatioEstimator.setEstimation(estimatorKey, setting.type, (float) sizes[1] / sizes[2]);
            observed.clear();
            build(compression, batchSize, false, estimatorKey, 0, warm, out, observed, Long.MAX_VALUE);
            for (int i = 0; i < SIMULATED_BATCHES; i++)
                CompressionRatioEstimator.updateEstimation(estimatorKey, setting.type, observed.get(i % observed.size()));
            // a small sample is settled on whole (and its sizes count); a large one on the warm-up records
            int settleRecords = sample.bytes <= SETTLE_WHOLE_BYTES ? sample.size() : warm;
            long deadline = cpuNanos() + SETTLE_CPU_NANOS;
            long seen = 0;
            while (seen < SETTLE_BATCHES && cpuNanos() < deadline) {
                out.clear();
                long[] pass = build(compression, batchSize, false, estimatorKey, 0, settleRecords, out, null, Long.MAX_VALUE);
                seen += pass[0];
                if (seen > SETTLE_BATCHES / 2 && settleRecords == sample.size()) {
                    settledBatches += pass[0];
                    settledBytes += pass[1];
                    settledUncompressed += pass[2];
                    settledRecords += settleRecords;
                }
            }
            out.clear();
            build(compression, batchSize, false, estimatorKey, 0, warm, out, null, Long.MAX_VALUE);
        }
        decompress(out, sizes[3]);
        out.clear();

        timing = true;
        double[] cpu = new double[repeats];
        double[] wall = new double[repeats];
        List<ByteBuffer> kept = null;
        long keptRecords = 0;
        double scale = 1;       // sample / the records a pass covered (REAL_TIMED_NANOS)
        for (int i = 0; i < repeats; i++) {
            out = new ArrayList<>();
            long w0 = System.nanoTime();
            long c0 = cpuNanos();
            sizes = build(compression, batchSize, real, estimatorKey, 0, sample.size(), every, out, null, Long.MAX_VALUE);
            cpu[i] = (cpuNanos() - c0) / 1e9;
            wall[i] = (System.nanoTime() - w0) / 1e9;
            if (kept == null && sizes[3] < sample.size()) {
                // a part of the sample: its bytes scaled to the sample's by the uncompressed bytes they had
                kept = out;
                keptRecords = sizes[3];
                scale = (double) uncompressedBytes / sizes[2];
                r.compressedBytes = Math.round(sizes[1] * scale);
                r.batches = sizes[0] * scale;
                r.uncompressedBatchBytes = (double) sizes[2] / sizes[0];
                r.partial = (double) sizes[2] / uncompressedBytes;
            } else if (kept == null) {
                kept = out;
                keptRecords = sample.size();
                // per record over the settling passes and this one, for the sample's records
                double perRecord = (double) (settledBytes + sizes[1]) / (settledRecords + sample.size());
                r.compressedBytes = Math.round(perRecord * sample.size());
                r.batches = (double) (settledBatches + sizes[0]) * sample.size() / (settledRecords + sample.size());
                r.uncompressedBatchBytes = (double) (settledUncompressed + sizes[2]) / (settledBatches + sizes[0]);
            }
        }
        r.records = sample.size();
        r.uncompressedBytes = uncompressedBytes > 0 ? uncompressedBytes : r.compressedBytes;
        r.compressCpuSeconds = median(cpu) * scale;
        r.compressWallSeconds = median(wall) * scale;
        double[] dcpu = new double[repeats];
        for (int i = 0; i < repeats; i++) {
            long c0 = cpuNanos();
            decompress(kept, keptRecords);
            dcpu[i] = (cpuNanos() - c0) / 1e9;
        }
        r.decompressCpuSeconds = median(dcpu) * scale;
        timing = false;
        return r;
    }

    /**
     * Build batches of records [from, to) as the producer does, stopping at the first batch boundary after
     * {@code deadlineNanos} (System.nanoTime). Returns {batches, batch bytes, uncompressed bytes written into them,
     * records}.
     */
    private long[] build(Compression compression, int batchSize, boolean real, String estimatorKey, int from, int to,
                         List<ByteBuffer> out, List<Float> ratios, long deadlineNanos) {
        return build(compression, batchSize, real, estimatorKey, from, to, 1, out, ratios, deadlineNanos);
    }

    /** The same over every {@code every}-th run of STRIDE_RECORDS records of [from, to). */
    private long[] build(Compression compression, int batchSize, boolean real, String estimatorKey, int from, int to,
                         int every, List<ByteBuffer> out, List<Float> ratios, long deadlineNanos) {
        long[] totals = new long[4];    // batches, batch bytes, uncompressed bytes, records
        long progressBytes = 0;
        MemoryRecordsBuilder builder = null;
        CompressionType type = compression.type();
        int inBatch = 0;
        long baseTimestamp = 0;
        for (int i = from; i < to; i++) {
            if (every > 1 && ((i - from) / STRIDE_RECORDS) % every != 0) {
                i += STRIDE_RECORDS - 1 - (i - from) % STRIDE_RECORDS;
                continue;
            }
            byte[] key = sample.keys.get(i);
            byte[] value = sample.values.get(i);
            org.apache.kafka.common.header.Header[] headers = sample.headers.get(i);
            long ts = sample.timestamps.get(i);
            boolean room;
            if (builder == null) {
                room = false;
            } else if (real) {
                // batchSize bytes of uncompressed batch, whatever the codec (at least one record)
                int recordSize = DefaultRecord.sizeInBytes(inBatch, ts - baseTimestamp, key == null ? -1 : key.length,
                    value == null ? -1 : value.length, headers);
                room = builder.uncompressedBytesWritten() + recordSize <= batchSize && inBatch < realMaxRecords;
            } else {
                room = builder.hasRoomFor(ts, key, value, headers);
            }
            if (builder != null && !room) {
                close(builder, estimatorKey, type, out, totals, ratios);
                builder = null;
                if (deadlineNanos != Long.MAX_VALUE && System.nanoTime() > deadlineNanos)
                    break;
            }
            if (builder == null) {
                inBatch = 0;
                baseTimestamp = ts;
                // RecordAccumulator.append: a buffer of batch.size, or larger for a record that does not fit
                int size = Math.max(batchSize, AbstractRecords.estimateSizeInBytesUpperBound(
                    RecordBatch.CURRENT_MAGIC_VALUE, type, key, value, headers));
                builder = MemoryRecords.builder(ByteBuffer.allocate(size), RecordBatch.CURRENT_MAGIC_VALUE, compression,
                    TimestampType.CREATE_TIME, 0L);
                // ProducerBatch's constructor
                builder.setEstimatedCompressionRatio(CompressionRatioEstimator.estimation(estimatorKey, type));
            }
            builder.append(ts, key, value, headers);
            inBatch++;
            totals[3]++;
            progressBytes += value == null ? 0 : value.length;
            if (progressBytes >= 1 << 20) {
                report(progressBytes);
                progressBytes = 0;
            }
        }
        if (builder != null)
            close(builder, estimatorKey, type, out, totals, ratios);
        report(progressBytes);
        return totals;
    }

    private static void close(MemoryRecordsBuilder builder, String estimatorKey, CompressionType type, List<ByteBuffer> out,
                              long[] totals, List<Float> ratios) {
        builder.close();
        // ProducerBatch.close
        CompressionRatioEstimator.updateEstimation(estimatorKey, type, (float) builder.compressionRatio());
        // the batch as the producer sends it (the buffer holds batch.size, like the producer's)
        ByteBuffer batch = builder.build().buffer();
        out.add(batch);
        totals[0]++;
        totals[1] += batch.remaining();
        totals[2] += builder.uncompressedBytesWritten();
        if (ratios != null)
            ratios.add((float) builder.compressionRatio());
    }

    /** Read every record of every batch as a consumer does (streaming iterator, key and value). */
    private void decompress(List<ByteBuffer> batches, long expectedRecords) {
        long records = 0;
        long touched = 0;
        long progressBytes = 0;
        for (ByteBuffer buffer : batches) {
            MemoryRecords memoryRecords = MemoryRecords.readableRecords(buffer.duplicate());
            for (RecordBatch batch : memoryRecords.batches()) {
                try (CloseableIterator<Record> it = batch.streamingIterator(DecompressionContext.of(bufferSupplier, providers, DecompressionContext.UNBOUNDED))) {
                    while (it.hasNext()) {
                        Record record = it.next();
                        records++;
                        if (record.hasValue()) {
                            touched += record.valueSize();
                            progressBytes += record.valueSize();
                        }
                        if (record.hasKey())
                            touched += record.keySize();
                    }
                }
            }
            if (progressBytes >= 1 << 20) {
                report(progressBytes);
                progressBytes = 0;
            }
        }
        report(progressBytes);
        if (records != expectedRecords)
            throw new IllegalStateException("read back " + records + " records, wrote " + expectedRecords + " (" + touched + " bytes)");
    }

    private void report(long bytes) {
        if (timing)
            progress.advance(bytes);
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

}
