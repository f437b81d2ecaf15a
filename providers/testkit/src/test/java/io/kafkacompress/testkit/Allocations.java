/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.testkit;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.compress.ProviderSet;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Random;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What reading a batch through a provider allocates when its gzip trailer (ISIZE) claims a size: nothing may be sized
 * by that claim beyond a bound.
 */
public final class Allocations {

    /** The claim of the lying trailer and the size of the real bomb: what an unbounded reader would allocate. */
    public static final int CLAIM = 64 * 1024 * 1024;

    private Allocations() {
    }

    /** Bytes of heap the current thread allocates while running {@code r} (HotSpot's per-thread counter). */
    public static long allocatedBy(IoRunnable r) throws IOException {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(id);
        r.run();
        return threads.getThreadAllocatedBytes(id) - before;
    }

    /** Reads a stream to its end (or its failure) in 16 KiB pieces, as the framework does, keeping nothing. */
    public static String drain(InputStream in) {
        byte[] chunk = new byte[16 * 1024];
        long total = 0;
        try (InputStream s = in) {
            for (int n; (n = s.read(chunk)) >= 0; ) total += n;
            return "read " + total + " B";
        } catch (IOException | RuntimeException e) {
            return "failed after " + total + " B";
        }
    }

    /** 100 KB of incompressible bytes as one gzip member whose trailer claims {@link #CLAIM} bytes. */
    public static byte[] lyingTrailer() throws IOException {
        byte[] data = new byte[100_000];
        new Random(29).nextBytes(data);
        byte[] gz = gzip(data, 1);
        int end = gz.length;
        gz[end - 4] = (byte) CLAIM;
        gz[end - 3] = (byte) (CLAIM >>> 8);
        gz[end - 2] = (byte) (CLAIM >>> 16);
        gz[end - 1] = (byte) (CLAIM >>> 24);
        return gz;
    }

    /** A real bomb: {@link #CLAIM} zero bytes as one gzip member of about 64 KB, its trailer true. */
    public static byte[] bomb() throws IOException {
        return gzip(new byte[CLAIM], 9);
    }

    private static byte[] gzip(byte[] data, int level) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(bytes) {
            {
                def.setLevel(level);
            }
        }) {
            out.write(data);
        }
        return bytes.toByteArray();
    }

    /**
     * Reads {@code gz} as a producer, consumer or broker with the provider reads a batch (through the framework: the
     * provider's whole-batch call if it takes the batch, else the built-in codec) and asserts that the current thread
     * allocated less than {@code maxBytes}, with the verdict of the JDK's GZIPInputStream as Kafka's built-in codec
     * builds it (same bytes read, same failure).
     */
    public static void assertBounded(CompressionService service, byte[] gz, long maxBytes, String what)
            throws IOException {
        String expected = drain(new GZIPInputStream(new ByteArrayInputStream(gz), 8 * 1024));
        Compression framework = ProviderSet.of(Map.of(CompressionType.GZIP, service))
            .sharedCompression(Compression.gzip().build());
        String[] verdict = new String[1];
        long allocated = allocatedBy(() -> verdict[0] = drain(framework.wrapForInput(ByteBuffer.wrap(gz),
            RecordBatch.CURRENT_MAGIC_VALUE, BufferSupplier.NO_CACHING)));
        System.out.printf("[%s] %s: %s, %,d B allocated%n", service.getClass().getSimpleName(), what, verdict[0],
            allocated);
        assertEquals(expected, verdict[0], what);
        assertTrue(allocated < maxBytes, what + ": allocated " + allocated + " B, bound " + maxBytes);
    }

    /** A Runnable that may throw IOException. */
    public interface IoRunnable {
        void run() throws IOException;
    }
}
