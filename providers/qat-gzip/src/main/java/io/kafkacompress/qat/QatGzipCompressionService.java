/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.qat;

import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.config.ConfigException;

import com.intel.qat.QatZipper;

import io.kafkacompress.slots.SlotPool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;

/**
 * gzip through Intel QAT with qat-java 2.3.2 (QATzip): on a QAT device when there is one, in QATzip's software path
 * otherwise. {@code compression.gzip.qat.mode}: {@code auto} (default: hardware if present, else software),
 * {@code hardware} (unavailable without a device), {@code software} (qat-java's AUTO mode on a host without devices;
 * qat-java 2.3.2 cannot force software where a device exists, so that combination is reported unavailable).
 * <p>
 * Compression: exactly one gzip member per batch. The framework's whole-batch call
 * ({@link #compress(ByteBuffer, ByteBuffer, Optional)}) runs QATzip once from the batch's array straight
 * into the buffer it lends, within {@link #maxCompressedSize(int)}. The service has no stream, so the framework's
 * built-in codec streams the other batches: qat-java compresses whole buffers only, each call one member, so a QATzip
 * stream of one member would have to hold the whole batch, and the framework asks for a stream exactly when its owner
 * has no room to lend for such a batch.
 * Decompression: none; the framework's built-in codec reads every batch. QATzip's decompression is not used: in its software path (qat-java 2.3.2, QATzip 1.3.1) a failed call returns 0
 * bytes without an error and leaves the thread's inflate state unusable for every session with the same settings,
 * and a session left inside a stream decodes the next batch as its continuation, so a pooled session could return
 * another batch's bytes; ending and recreating sessions leaks QATzip's thread keys (after about 1,000 it logs
 * {@code Init local thread key failed}). See the module README.
 * <p>
 * QATzip sessions are pooled per level by this instance, without a lock, and ended by {@link #close()}.
 */
public class QatGzipCompressionService implements CompressionService, Configurable {

    public static final String MODE_CONFIG = "compression.gzip.qat.mode";

    enum ConfiguredMode { AUTO, HARDWARE, SOFTWARE }

    static final int DEFAULT_LEVEL = 6;
    private static final String CLOSED = "QAT gzip: the compression service is closed";

    private volatile ConfiguredMode mode = ConfiguredMode.AUTO;
    private volatile String failure;        // why unavailable, set by checkAvailable
    private volatile boolean checked;
    private volatile boolean hardware;      // a QAT device is present and will be used
    private volatile boolean closed;
    /** Idle sessions per level (index 1..9), created up front so that taking one needs no lock. */
    @SuppressWarnings("unchecked")
    private final SlotPool<Zipper>[] pools = new SlotPool[10];
    /** QATzip sessions created and not yet ended (for tests). */
    private final AtomicInteger liveSessions = new AtomicInteger();

    public QatGzipCompressionService() {
        for (int level = 1; level <= 9; level++) pools[level] = new SlotPool<>(Zipper::end, CLOSED);
    }

    @Override
    public void configure(Map<String, ?> configs) {
        Object v = configs.get(MODE_CONFIG);
        if (v == null || v.toString().trim().isEmpty()) return;
        try {
            mode = ConfiguredMode.valueOf(v.toString().trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(MODE_CONFIG, v, "must be one of auto, hardware, software");
        }
    }

    @Override
    public String type() {
        return "gzip";
    }

    @Override
    public synchronized void checkAvailable() {
        String reason = QatEnvironment.librariesAbsentReason();
        String noDevice = QatEnvironment.hardwareAbsentReason();
        if (reason == null) {
            if (mode == ConfiguredMode.HARDWARE && noDevice != null) reason = "mode=hardware but " + noDevice;
            else if (mode == ConfiguredMode.SOFTWARE && noDevice == null)
                reason = "mode=software but this host has QAT devices, and qat-java 2.3.2 cannot force QATzip's software path; use mode=auto";
        }
        if (reason == null) {
            hardware = noDevice == null;
            try {
                // the first session proves the library loads and QATzip starts (never in HARDWARE mode without a device)
                pools[DEFAULT_LEVEL].release(newZipper(DEFAULT_LEVEL));
            } catch (Throwable e) {   // UnsatisfiedLinkError, RuntimeException from QATzip
                reason = "qat-java could not start a QATzip session: " + e;
            }
        }
        failure = reason;
        checked = true;
        if (reason != null) throw new IllegalStateException("QAT gzip unavailable: " + reason);
    }

    /** A new QATzip session, counted until ended. */
    private Zipper newZipper(int level) {
        QatZipper zipper = new QatZipper.Builder()
            .setAlgorithm(QatZipper.Algorithm.DEFLATE)
            .setDataFormat(QatZipper.DataFormat.DEFLATE_GZIP)
            .setMode(hardware && mode == ConfiguredMode.HARDWARE ? QatZipper.Mode.HARDWARE : QatZipper.Mode.AUTO)
            .setLevel(level)
            .build();
        liveSessions.incrementAndGet();
        return new Zipper(zipper, liveSessions);
    }

    /** No lock once checked: volatile reads only. */
    private void requireAvailable() {
        if (closed) throw new IllegalStateException("QAT gzip: the compression service is closed");
        if (!checked) checkAvailable();
        if (failure != null) throw new IllegalStateException("QAT gzip unavailable: " + failure);
    }

    static int normalize(Integer level) {
        if (level == null || level == -1) return DEFAULT_LEVEL;
        if (level < 1 || level > 9) throw new IllegalArgumentException("gzip level " + level + " is not in [1, 9] or -1");
        return level;
    }

    /**
     * The room {@link #compress(ByteBuffer, ByteBuffer, Optional)} writes into at most, for batches up to
     * {@link #maxWholeBatchBytes()} (the framework's own limit), so that it never overflows; -1 above. It is a true upper bound by construction: QATzip is given no more
     * room than this, so a member that would not fit fails the call (an IOException: the framework compresses the
     * batch with the built-in codec) instead of being written past it.
     * <ul>
     * <li>QATzip's software path (no device): {@link #softwareBound(int)}, zlib's output for incompressible data
     * with a wide margin, far below what QATzip's own {@code qzMaxCompressedLength} asks (9/8 of the input + 80),
     * which the software path does not need;</li>
     * <li>on a QAT device: QATzip's own bound ({@link #qatzipBound(int)}), which {@code compress} also checks
     * against the session's {@code maxCompressedLength} before it calls QATzip.</li>
     * </ul>
     */
    @Override
    public int maxCompressedSize(int uncompressedSize) {
        if (uncompressedSize < 0 || uncompressedSize > maxWholeBatchBytes()) return -1;
        return hardware ? qatzipBound(uncompressedSize) : softwareBound(uncompressedSize);
    }

    /**
     * The software path's bound: the gzip header and trailer (18 B), plus 1/256 of the input and 128 B. QATzip
     * 1.3.1 without a device deflates with zlib (memory level 9 in QATzip's source) in 64 KiB chunks ended by full flushes; for
     * incompressible input zlib writes stored blocks, 5 B a block, and a chunk's flush adds an empty stored block:
     * measured in the broker image, about 15 B per 64 KiB beyond the input (253 B for 1 MiB of random bytes, 1,972 B
     * for 8 MiB), where this bound allows 256 B per 64 KiB (4,224 B for 1 MiB). Tested with random input of every
     * size class by {@code wholeBatchBoundHoldsForIncompressibleInput}.
     */
    static int softwareBound(int n) {
        return n + (n >> 8) + 128 + 18;
    }

    /** QATzip 1.3.1's own {@code qzMaxCompressedLength}: 9/8 of the input, rounded up, plus 80 (measured, every size). */
    static int qatzipBound(int n) {
        return (int) ((9L * n + 7) / 8) + 80;
    }

    /**
     * One QATzip call from {@code input}'s array straight into {@code output}'s: one gzip member, with no copy and,
     * once the session pool is warm, no allocation. QATzip gets the room of {@link #maxCompressedSize(int)} at most. Every failure is an {@link IOException} (the framework then rewinds and
     * writes the batch with the built-in codec): the service closed, QATzip failing or lacking room, QATzip
     * reading less than the whole input, or an output that is not exactly one member of this batch (its trailer
     * must be this batch's CRC-32 and size).
     */
    @Override
    public void compress(ByteBuffer input, ByteBuffer output, Optional<Integer> compressionLevel) throws IOException {
        int level;
        try {
            requireAvailable();
            level = normalize(compressionLevel.orElse(null));
        } catch (IllegalStateException | IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
        if (!input.hasArray() || !output.hasArray() || output.isReadOnly())
            throw new IOException("QAT gzip: the whole-batch call needs heap buffers with accessible arrays");
        int len = input.remaining();
        int bound = maxCompressedSize(len);
        if (bound < 0) throw new IOException("QAT gzip: a batch of " + len + " B is past the whole-batch limit");
        int room = Math.min(output.remaining(), bound);
        int n = compressMember(level, input.array(), input.arrayOffset() + input.position(), len,
            output.array(), output.arrayOffset() + output.position(), room);
        input.position(input.limit());
        output.position(output.position() + n);
    }

    /** An empty gzip member (what GZIPOutputStream writes for no input). */
    private static final byte[] EMPTY_MEMBER = {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};

    /**
     * in[off, off+len) as exactly one gzip member into out[outOff, outOff+room), with a pooled session: the member's
     * size. For the whole-batch call; a member that is not exactly one member of this batch is an IOException.
     */
    private int compressMember(int level, byte[] in, int off, int len, byte[] out, int outOff, int room) throws IOException {
        if (len == 0) {
            if (room < EMPTY_MEMBER.length) throw new IOException("QAT gzip: no room for an empty member");
            System.arraycopy(EMPTY_MEMBER, 0, out, outOff, EMPTY_MEMBER.length);
            return EMPTY_MEMBER.length;
        }
        SlotPool<Zipper> pool = pools[level];
        Zipper z = pool.poll();
        if (z == null) z = newZipper(level);
        boolean ok = false;
        try {
            int n = compressWith(z, in, off, len, out, outOff, room);
            ok = true;
            return n;
        } catch (NotOneMember e) {
            ok = true;   // QATzip worked; its output is not ours to take
            throw e;
        } finally {
            if (ok) pool.release(z);
            else z.end();   // a session that failed is not reused
        }
    }

    /**
     * One QATzip call with session {@code z}: in[off, off+len) (len > 0) into out[outOff, outOff+room). Its size when
     * QATzip read the whole input and wrote exactly one member of it; {@link NotOneMember} when the output is
     * otherwise valid but not that (counted in {@link #notOneMember}); any other IOException when QATzip failed
     * (the session must then be ended).
     */
    private int compressWith(Zipper z, byte[] in, int off, int len, byte[] out, int outOff, int room) throws IOException {
        int n;
        try {
            // on a device, never less room than QATzip itself asks for (its software path does not need it)
            if (hardware && room < z.zipper.maxCompressedLength(len))
                throw new IOException("QAT gzip: " + room + " B of room for a batch of " + len + " B, QATzip asks for "
                    + z.zipper.maxCompressedLength(len));
            n = z.zipper.compress(in, off, len, out, outOff, room);
        } catch (RuntimeException e) {
            throw new IOException("QATzip compression failed (" + len + " B into " + room + " B)", e);
        }
        if (n <= 0 || n > room) throw new IOException("QATzip compression returned " + n + " for " + room + " B of room");
        if (z.zipper.getBytesRead() != len)
            throw new IOException("QATzip read " + z.zipper.getBytesRead() + " of " + len + " B");
        if (!endsWithTrailerOf(z.crc, out, outOff, n, in, off, len)) {
            notOneMember++;
            throw new NotOneMember(len);
        }
        return n;
    }

    /** QATzip's output is not exactly one member of the batch (for the whole-batch call, a fallback). */
    static final class NotOneMember extends IOException {
        NotOneMember(int len) {
            super("QATzip did not write a batch of " + len + " B as one gzip member");
        }
    }

    /** Batches QATzip wrote as more than one member, rewritten by the built-in writer (for tests). */
    volatile long notOneMember;

    private static boolean endsWithTrailerOf(CRC32 crc, byte[] gz, int gzOff, int n, byte[] in, int off, int len) {
        if (n < 18 || (gz[gzOff] & 0xff) != 0x1f || (gz[gzOff + 1] & 0xff) != 0x8b) return false;
        crc.reset();
        crc.update(in, off, len);
        return le32(gz, gzOff + n - 8) == (int) crc.getValue() && le32(gz, gzOff + n - 4) == len;
    }

    private static int le32(byte[] b, int p) {
        return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff) << 16 | (b[p + 3] & 0xff) << 24;
    }

    /** A QATzip session and its CRC-32; used by one thread at a time. */
    static final class Zipper {
        final QatZipper zipper;
        /** For the trailer check: no allocation per batch. */
        final CRC32 crc = new CRC32();
        private final AtomicInteger live;
        private final AtomicBoolean ended = new AtomicBoolean();

        Zipper(QatZipper zipper, AtomicInteger live) {
            this.zipper = zipper;
            this.live = live;
        }

        /** Ends the QATzip session (once). */
        void end() {
            if (!ended.compareAndSet(false, true)) return;
            live.decrementAndGet();
            try {
                zipper.end();
            } catch (RuntimeException ignored) {
                // already ended by QATzip
            }
        }
    }

    /**
     * Ends this service's QATzip sessions: the idle ones now, those in use when their batch gives them back. A
     * whole-batch call made afterwards, or in flight, fails with an {@link IOException}, and the framework falls back
     * to the built-in codec.
     */
    @Override
    public void close() {
        closed = true;
        for (int level = 1; level <= 9; level++) pools[level].close();
    }

    /** QATzip sessions created by this instance and not yet ended (for tests). */
    int liveSessions() {
        return liveSessions.get();
    }

    boolean usesHardware() {
        return hardware;
    }

    @Override
    public String toString() {
        String path = !checked ? "not checked" : failure != null ? "unavailable" : hardware ? "QAT hardware" : "QATzip software";
        return "QAT gzip (mode=" + mode.name().toLowerCase(Locale.ROOT) + ", " + path + ", qat-java 2.3.2)";
    }
}
