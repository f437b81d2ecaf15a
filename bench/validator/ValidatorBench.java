/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */

import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.compress.ProviderSet;
import org.apache.kafka.common.compress.ThreadProviders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.PrimitiveRef;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.common.RequestLocal;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogValidator;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The broker's LogValidator alone, in process: one batch of about 1 MiB of records of the data file, built by a
 * producer's MemoryRecordsBuilder in the source codec, validated into a gzip-6 topic again and again on one thread
 * (recompression when the source is lz4, in-place validation when it is gzip-6), with the built-in codec or with a
 * provider class. Prints the thread's CPU per MB of records after a warm-up.
 *
 * java ValidatorBench DATA_FILE SOURCE(lz4|gzip) PROVIDER_CLASS|builtin SECONDS [BATCH_BYTES, default 1 MiB]
 */
public class ValidatorBench {
    private static final LogValidator.MetricsRecorder NO_METRICS = new LogValidator.MetricsRecorder() {
        public void recordInvalidMagic() { }
        public void recordInvalidOffset() { }
        public void recordInvalidSequence() { }
        public void recordInvalidChecksums() { }
        public void recordNoKeyCompactedTopic() { }
    };

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        Compression source = args[1].equals("gzip") ? Compression.gzip().level(6).build() : Compression.lz4().build();
        String provider = args[2];
        double seconds = Double.parseDouble(args[3]);
        long batchBytes = args.length > 4 ? Long.parseLong(args[4]) : 1 << 20;
        Compression target = Compression.gzip().level(6).build();

        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate((int) batchBytes * 2 + (1 << 20)), RecordBatch.CURRENT_MAGIC_VALUE,
            source, TimestampType.CREATE_TIME, 0L);
        long timestamp = 1_700_000_000_000L;
        int records = 0;
        long bytes = 0;
        while (bytes < batchBytes) {
            byte[] value = lines.get(records % lines.size()).getBytes(StandardCharsets.UTF_8);
            builder.append(timestamp + records / 100, null, value);
            bytes += value.length;
            records++;
        }
        MemoryRecords batch = builder.build();
        byte[] wire = new byte[batch.sizeInBytes()];
        batch.buffer().duplicate().get(wire);

        ProviderSet providers = ProviderSet.NONE;
        if (!provider.equals("builtin")) {
            CompressionService service = (CompressionService) Class.forName(provider).getDeclaredConstructor().newInstance();
            if (service instanceof Configurable)
                ((Configurable) service).configure(Map.of());
            providers = ProviderSet.of(Map.of(CompressionType.GZIP, service));
        }
        // one thread's buffers and its handle on the owner's providers, as a broker's request handler has them
        ThreadProviders threadProviders = providers.threadProviders();
        RequestLocal requestLocal = new RequestLocal(BufferSupplier.create(), threadProviders);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long warmUpEnd = System.nanoTime() + (long) (Math.min(5, seconds / 3) * 1e9);
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long batches = 0;
        long cpuStart = 0;
        long wallStart = 0;
        int out = 0;
        while (true) {
            long now = System.nanoTime();
            if (wallStart == 0 && now > warmUpEnd) {
                batches = 0;
                wallStart = now;
                cpuStart = threads.getCurrentThreadCpuTime();
            }
            if (wallStart != 0 && now > end)
                break;
            LogValidator validator = new LogValidator(MemoryRecords.readableRecords(ByteBuffer.wrap(wire.clone())),
                new TopicPartition("t", 0), Time.SYSTEM, source.type(), target, false, RecordBatch.CURRENT_MAGIC_VALUE,
                TimestampType.CREATE_TIME, Long.MAX_VALUE, Long.MAX_VALUE, 0, AppendOrigin.CLIENT);
            out = validator.validateMessagesAndAssignOffsets(PrimitiveRef.ofLong(0), NO_METRICS, requestLocal)
                .validatedRecords().sizeInBytes();
            batches++;
        }
        double wall = (System.nanoTime() - wallStart) / 1e9;
        double cpu = (threads.getCurrentThreadCpuTime() - cpuStart) / 1e9;
        double mb = batches * bytes / 1e6;
        System.out.printf("%s -> gzip-6, %s: %,d records (%,d B) a batch, %,d B stored; %,d batches in %.1f s: "
                + "%.2f CPU ms per MB, %.0f MB/s%n", args[1], provider, records, bytes, out, batches, wall,
            cpu * 1000 / mb, mb / wall);
        requestLocal.close();
        providers.close();
    }
}
