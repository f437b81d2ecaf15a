/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import io.kafkacompress.slots.SlotPool;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Which engine compresses at which Kafka gzip level (fixed tables), and one service's pools of native compressors
 * and zlib-ng inflaters (owned by that {@link NativeGzipCompressionService}, released by its {@link #close()}).
 * <p>
 * Chosen by measurement on the JSON records (module README): at each Kafka level, the fastest engine setting whose
 * output is no bigger than zlib's ({@code java.util.zip}, what Kafka's built-in codec uses) at that level, for 16 KiB
 * and 1 MiB batches. ISA-L level 1 for Kafka level 1; libdeflate above (its level 1 for Kafka 2 and 3, where ISA-L's
 * levels 2 and 3 come out bigger than zlib's on 16 KiB batches; one level up from Kafka's where libdeflate's same
 * level is a hair bigger than zlib's). That last step is only needed for small members: from {@link #LARGE_MEMBER} up,
 * libdeflate at Kafka's own level 5-7 is already smaller than zlib's at that level, so larger members use it.
 */
final class GzipEngines implements AutoCloseable {

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

    private static final String CLOSED = "native gzip: the compression service is closed";

    /** Native compressors and inflaters created by this object and not yet freed (for tests). */
    private final AtomicInteger live = new AtomicInteger();
    /** Idle compressors per engine setting: ISA-L's level 1, libdeflate's levels 1-9 (index = engine level). */
    private final SlotPool<Compressor> isalPool = new SlotPool<>(Compressor::free, CLOSED);
    @SuppressWarnings("unchecked")
    private final SlotPool<Compressor>[] libdeflatePools = new SlotPool[10];
    /** Idle raw-deflate zlib-ng inflaters (zlib's checks, see {@link GzipMember}). */
    private final SlotPool<ZngInflater> inflaters = new SlotPool<>(ZngInflater::free, CLOSED);

    GzipEngines() {
        for (int level = 1; level <= 9; level++)
            libdeflatePools[level] = new SlotPool<>(Compressor::free, CLOSED);
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

    /** A native compressor for one Kafka level; used by one thread at a time. */
    static final class Compressor extends NativeGzip.NativeHandle {
        final Engine engine;

        private Compressor(Engine engine, long handle, AtomicInteger live) {
            super(handle, freeing(engine, handle, live));
            this.engine = engine;
        }

        /** The cleaner's action: must not refer to the Compressor itself. */
        private static Runnable freeing(Engine engine, long handle, AtomicInteger live) {
            return () -> {
                if (engine == Engine.ISAL) NativeGzip.isalDeflaterFree(handle);
                else NativeGzip.ldFree(handle);
                live.decrementAndGet();
            };
        }

        /**
         * A new native compressor, counted in {@code live} until freed.
         *
         * @throws IOException if the native allocation fails, so that the framework falls back to the built-in
         *                     codec (an OutOfMemoryError would be rethrown by the framework, see the SPI)
         */
        static Compressor create(Engine engine, int engineLevel, AtomicInteger live) throws IOException {
            long h = engine == Engine.ISAL ? NativeGzip.isalDeflaterNew(engineLevel) : NativeGzip.ldNew(engineLevel);
            if (h == 0)
                throw new IOException("native gzip: could not allocate " + (engine == Engine.ISAL ? "an ISA-L" : "a libdeflate")
                    + " compressor at engine level " + engineLevel + " (out of native memory?)");
            live.incrementAndGet();
            return new Compressor(engine, h, live);
        }

        /** in[off, off+len) as one gzip member into out[outOff, outOff+outLen): its size, 0 if it did not fit. */
        int compressInto(byte[] in, int off, int len, byte[] out, int outOff, int outLen) {
            return engine == Engine.ISAL
                ? NativeGzip.isalGzip(handle, in, off, len, out, outOff, outLen)
                : NativeGzip.ldGzip(handle, in, off, len, out, outOff, outLen);
        }
    }

    /**
     * The most a gzip member of {@code length} bytes of input takes, whichever engine writes it: stored blocks at
     * worst for ISA-L, with a generous margin; libdeflate's own bound is below it.
     */
    static int maxMemberSize(int length) {
        return (int) Math.min(Integer.MAX_VALUE - 64, length + (length >> 4) + 1024L);
    }

    /**
     * in[off, off+len) compressed as one gzip member at a Kafka level (1..9) into out[outOff, outOff+outLen), which
     * has room for {@link #maxMemberSize(int)} bytes: one engine call, no copy.
     *
     * @return the member's size
     */
    int compressMemberInto(int level, byte[] in, int off, int len, byte[] out, int outOff, int outLen) throws IOException {
        SlotPool<Compressor> pool = compressors(level, len);
        Compressor c = take(pool, level, len);
        try {
            int n = c.compressInto(in, off, len, out, outOff, outLen);
            if (n <= 0) throw new IOException("native gzip: " + c.engine + " compression failed (" + n + ") for "
                + len + " bytes into " + outLen);
            return n;
        } finally {
            pool.release(c);
        }
    }

    /** The pool of idle compressors for a member of len bytes at a Kafka level. */
    private SlotPool<Compressor> compressors(int level, int len) {
        return ENGINE[level] == Engine.ISAL ? isalPool : libdeflatePools[engineLevel(level, len)];
    }

    /** An idle compressor from the pool, or a new one. */
    private Compressor take(SlotPool<Compressor> pool, int level, int len) throws IOException {
        Compressor c = pool.poll();
        return c != null ? c : Compressor.create(ENGINE[level], engineLevel(level, len), live);
    }

    /**
     * A zlib-ng raw-deflate inflater (native state of a few KiB, plus a 32 KiB window allocated the first time a member
     * does not end in one call), used by one thread at a time, for one member in one call.
     */
    static final class ZngInflater extends NativeGzip.NativeHandle {
        private ZngInflater(long handle, AtomicInteger live) {
            super(handle, freeing(handle, live));
        }

        /** The cleaner's action: must not refer to the inflater itself. */
        private static Runnable freeing(long handle, AtomicInteger live) {
            return () -> {
                NativeGzip.zngInflaterFree(handle);
                live.decrementAndGet();
            };
        }

        /**
         * A new native inflater, counted in {@code live} until freed.
         *
         * @throws IOException if the native allocation fails, so that the framework falls back to the built-in codec
         */
        static ZngInflater create(AtomicInteger live) throws IOException {
            long h = NativeGzip.zngInflaterNew();
            if (h == 0)
                throw new IOException("native gzip: could not allocate a zlib-ng inflater (out of native memory?)");
            live.incrementAndGet();
            return new ZngInflater(h, live);
        }

        /** See {@link NativeGzip#zngInflate}. */
        long inflate(byte[] in, int inOff, int inLen, byte[] out, int outOff, int outLen) {
            return NativeGzip.zngInflate(handle, in, inOff, inLen, out, outOff, outLen);
        }

        String message() {
            return NativeGzip.zngMessage(handle);
        }
    }

    /** A zlib-ng raw-deflate inflater from the pool, or a new one. */
    ZngInflater inflater() throws IOException {
        ZngInflater inflater = inflaters.poll();
        return inflater != null ? inflater : ZngInflater.create(live);
    }

    /** Gives an inflater back (it is reset before each use), or frees it if the pool is full or closed. */
    void release(ZngInflater inflater) {
        inflaters.release(inflater);
    }

    /** Idle zlib-ng inflaters (for tests). */
    int idleInflaters() {
        return inflaters.idle();
    }

    /** Native compressors and inflaters created by this object and not yet freed. */
    int live() {
        return live.get();
    }

    /** Frees every idle compressor and inflater, and those given back later; a later take throws IOException. */
    @Override
    public void close() {
        isalPool.close();
        for (int level = 1; level <= 9; level++) libdeflatePools[level].close();
        inflaters.close();
    }
}
