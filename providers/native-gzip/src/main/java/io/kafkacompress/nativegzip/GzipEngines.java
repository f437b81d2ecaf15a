/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import java.io.IOException;
import java.util.Arrays;

/**
 * Which engine compresses at which Kafka gzip level, and the pools of native compressors.
 * <p>
 * Chosen by measurement on the JSON records (module README): at each Kafka level, the fastest engine setting whose
 * output is no bigger than zlib's ({@code java.util.zip}, what Kafka's built-in codec uses) at that level, for 16 KiB
 * and 1 MiB batches. ISA-L level 1 for Kafka level 1; libdeflate above (its level 1 for Kafka 2 and 3, where ISA-L's
 * levels 2 and 3 come out bigger than zlib's on 16 KiB batches; one level up from Kafka's where libdeflate's same
 * level is a hair bigger than zlib's). That last step is only needed for small members: from {@link #LARGE_MEMBER} up,
 * libdeflate at Kafka's own level 5-7 is already smaller than zlib's at that level, so larger members use it.
 */
final class GzipEngines {

    enum Engine { ISAL, LIBDEFLATE }

    static final int DEFAULT_LEVEL = 6;   // java.util.zip.Deflater.DEFAULT_COMPRESSION means 6

    /** Index: Kafka gzip level 1..9. */
    private static final Engine[] ENGINE = {null,
        Engine.ISAL, Engine.LIBDEFLATE, Engine.LIBDEFLATE, Engine.LIBDEFLATE, Engine.LIBDEFLATE,
        Engine.LIBDEFLATE, Engine.LIBDEFLATE, Engine.LIBDEFLATE, Engine.LIBDEFLATE};
    private static final int[] ENGINE_LEVEL = {0, 1, 1, 1, 4, 6, 7, 8, 8, 9};
    /** Engine levels for members of at least {@link #LARGE_MEMBER} bytes. */
    private static final int[] ENGINE_LEVEL_LARGE = {0, 1, 1, 1, 4, 5, 6, 7, 8, 9};

    /** Members of at least this size use {@link #ENGINE_LEVEL_LARGE}. */
    static final int LARGE_MEMBER = 64 * 1024;

    /** Keep scratch output buffers up to this size in pooled compressors; bigger ones are dropped after use. */
    private static final int MAX_RETAINED_SCRATCH = 2 * 1024 * 1024 + 64 * 1024;

    private static final int POOL_SIZE = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());

    /** Idle compressors per engine setting: ISA-L's level 1, libdeflate's levels 1-9 (index = engine level). */
    private static final NativeGzip.Pool<Compressor> ISAL_POOL = new NativeGzip.Pool<>(POOL_SIZE);
    @SuppressWarnings("unchecked")
    private static final NativeGzip.Pool<Compressor>[] LIBDEFLATE_POOLS = new NativeGzip.Pool[10];

    static {
        for (int level = 1; level <= 9; level++) LIBDEFLATE_POOLS[level] = new NativeGzip.Pool<>(POOL_SIZE);
    }

    private GzipEngines() {
    }

    static int normalize(Integer level) {
        if (level == null || level == -1) return DEFAULT_LEVEL;
        if (level < 1 || level > 9) throw new IllegalArgumentException("gzip level " + level + " is not in [1, 9] or -1");
        return level;
    }

    static Engine engine(int level) {
        return ENGINE[level];
    }

    static int engineLevel(int level, int memberLength) {
        return memberLength >= LARGE_MEMBER ? ENGINE_LEVEL_LARGE[level] : ENGINE_LEVEL[level];
    }

    static String describe(int level) {
        String d = (ENGINE[level] == Engine.ISAL ? "ISA-L" : "libdeflate") + " level " + ENGINE_LEVEL[level];
        if (ENGINE_LEVEL_LARGE[level] != ENGINE_LEVEL[level])
            d += " (level " + ENGINE_LEVEL_LARGE[level] + " for members of " + LARGE_MEMBER / 1024 + " KiB and more)";
        return d;
    }

    /** A native compressor for one Kafka level, with a reusable output buffer; used by one thread at a time. */
    static final class Compressor extends NativeGzip.NativeHandle {
        final Engine engine;
        byte[] scratch;

        private Compressor(Engine engine, long handle) {
            super(handle, engine == Engine.ISAL ? () -> NativeGzip.isalDeflaterFree(handle) : () -> NativeGzip.ldFree(handle));
            this.engine = engine;
        }

        static Compressor create(Engine engine, int engineLevel) {
            long h = engine == Engine.ISAL ? NativeGzip.isalDeflaterNew(engineLevel) : NativeGzip.ldNew(engineLevel);
            return new Compressor(engine, h);
        }

        private int bound(int length) {
            if (engine == Engine.LIBDEFLATE) return (int) Math.min(Integer.MAX_VALUE - 64, NativeGzip.ldBound(handle, length));
            // ISA-L: stored blocks at worst; a generous margin, grown if ever too small
            return (int) Math.min(Integer.MAX_VALUE - 64, length + (length >> 4) + 1024L);
        }

        /** in[off, off+len) as one gzip member. */
        byte[] compress(byte[] in, int off, int len) throws IOException {
            int size = bound(len);
            for (int attempt = 0; ; attempt++) {
                if (scratch == null || scratch.length < size) scratch = new byte[size];
                int n = engine == Engine.ISAL
                    ? NativeGzip.isalGzip(handle, in, off, len, scratch, 0, scratch.length)
                    : NativeGzip.ldGzip(handle, in, off, len, scratch, 0, scratch.length);
                if (n > 0) return Arrays.copyOf(scratch, n);
                if (n < 0 || attempt >= 3) throw new IOException("native gzip: " + engine + " compression failed (" + n + ")");
                size = (int) Math.min(Integer.MAX_VALUE - 64, 2L * size);
            }
        }
    }

    /** in[off, off+len) compressed as one gzip member at a Kafka level (1..9). */
    static byte[] compressMember(int level, byte[] in, int off, int len) throws IOException {
        Engine engine = ENGINE[level];
        int engineLevel = engineLevel(level, len);
        NativeGzip.Pool<Compressor> pool = engine == Engine.ISAL ? ISAL_POOL : LIBDEFLATE_POOLS[engineLevel];
        Compressor c = pool.poll();
        if (c == null) c = Compressor.create(engine, engineLevel);
        try {
            return c.compress(in, off, len);
        } finally {
            if (c.scratch != null && c.scratch.length > MAX_RETAINED_SCRATCH) c.scratch = null;
            pool.release(c);
        }
    }
}
