/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.qat;

import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.compress.GzipOutputStream;
import org.apache.kafka.common.config.ConfigException;

import com.intel.qat.QatZipper;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;
import java.util.zip.GZIPInputStream;

/**
 * gzip through Intel QAT with qat-java 2.3.2 (QATzip): on a QAT device when there is one, in QATzip's software path
 * otherwise. {@code compression.gzip.qat.mode}: {@code auto} (default: hardware if present, else software),
 * {@code hardware} (unavailable without a device), {@code software} (qat-java's AUTO mode on a host without devices;
 * qat-java 2.3.2 cannot force software where a device exists, so that combination is reported unavailable).
 * <p>
 * Compression: exactly one gzip member per batch, from one QATzip call (batches up to 8 MiB) or Kafka's built-in
 * writer (bigger batches, streamed). Decompression: one QATzip call per batch when the batch is a
 * single member whose trailer gives a size of at most {@link #ONE_SHOT_MAX}, into a buffer borrowed from the
 * framework's {@link BufferProvider}; anything else (bigger or lying trailers, several members, trailing bytes, a
 * QATzip error) is read by {@link GZIPInputStream} through its 8 KiB window, exactly as Kafka's built-in codec reads
 * it, so the provider never accepts or rejects what the built-in codec would not, and never sizes an array by a
 * trailer.
 * <p>
 * QATzip sessions are pooled per level by this instance, without a lock, and ended by {@link #close()}.
 */
public class QatGzipCompressionService implements CompressionService, Configurable {

    public static final String MODE_CONFIG = "compression.gzip.qat.mode";

    enum ConfiguredMode { AUTO, HARDWARE, SOFTWARE }

    static final int DEFAULT_LEVEL = 6;
    /** Batches up to this size are compressed with one QATzip call; bigger ones are streamed (one member either way). */
    static final int WHOLE_MAX = 8 * 1024 * 1024;
    /**
     * The largest single-member batch decompressed in one QATzip call, into a buffer from the framework's
     * {@link BufferProvider} (which lends up to 1 MiB without allocating); a trailer claiming more is not trusted
     * with an allocation and the batch is streamed by the JDK, as native-gzip's {@code WHOLE_MEMBER_MAX}.
     */
    static final int ONE_SHOT_MAX = 1024 * 1024;
    private static final int POOL_SIZE = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());

    private volatile ConfiguredMode mode = ConfiguredMode.AUTO;
    private volatile String failure;        // why unavailable, set by checkAvailable
    private volatile boolean checked;
    private volatile boolean hardware;      // a QAT device is present and will be used
    private volatile boolean closed;
    /** Idle sessions per level (index 1..9), created up front so that taking one needs no lock. */
    private final ZipperPool[] pools = new ZipperPool[10];
    /** QATzip sessions created and not yet ended (for tests). */
    private final AtomicInteger liveSessions = new AtomicInteger();

    public QatGzipCompressionService() {
        for (int level = 1; level <= 9; level++) pools[level] = new ZipperPool(POOL_SIZE);
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

    @Override
    public OutputStream compressedOutputStream(OutputStream bufferStream, Optional<Integer> compressionLevel) {
        requireAvailable();
        return new QatGzipOutputStream(this, bufferStream, normalize(compressionLevel.orElse(null)));
    }

    @Override
    public InputStream decompressedInputStream(ByteBuffer buffer, BufferProvider decompressionBufferProvider) {
        requireAvailable();
        byte[] in;
        int off;
        int len = buffer.remaining();
        if (buffer.hasArray()) {
            in = buffer.array();
            off = buffer.arrayOffset() + buffer.position();
        } else {
            in = new byte[len];
            buffer.duplicate().get(in);
            off = 0;
        }
        InputStream oneShot = tryOneShot(in, off, len, decompressionBufferProvider);
        if (oneShot != null) return oneShot;
        try {
            return new GZIPInputStream(new ByteArrayInputStream(in, off, len), 8 * 1024);
        } catch (IOException e) {
            throw new KafkaException(e);   // as the built-in GzipCompression.wrapForInput
        }
    }

    /**
     * One QATzip call for a batch that is exactly one gzip member of at most {@link #ONE_SHOT_MAX} bytes, into a
     * buffer borrowed from {@code buffers} (given back when the returned stream is closed; without a provider, a
     * buffer of that bounded size is allocated); null when that does not apply or fails.
     */
    private InputStream tryOneShot(byte[] in, int off, int len, BufferProvider buffers) {
        if (len < 20 || (in[off] & 0xff) != 0x1f || (in[off + 1] & 0xff) != 0x8b || in[off + 2] != 8 || in[off + 3] != 0)
            return null;   // only plain headers (no name/extra/comment flags): what Kafka writers produce
        int end = off + len;
        long isize = (in[end - 4] & 0xffL) | (in[end - 3] & 0xffL) << 8 | (in[end - 2] & 0xffL) << 16 | (in[end - 1] & 0xffL) << 24;
        // the trailer is the batch's own claim: bounded before anything is sized by it
        if (isize == 0 || isize > ONE_SHOT_MAX || isize > 1032L * len) return null;
        int size = (int) isize;
        ByteBuffer lent = buffers != null ? buffers.get(size) : ByteBuffer.allocate(size);
        if (!lent.hasArray() || lent.capacity() < size) {
            giveBack(buffers, lent);
            return null;
        }
        ZipperPool pool = pools[DEFAULT_LEVEL];
        Zipper z;
        try {
            z = pool.take(this, DEFAULT_LEVEL);
        } catch (IOException | RuntimeException e) {
            giveBack(buffers, lent);
            return null;
        }
        boolean ok = false;
        boolean decoded = false;
        try {
            int n = z.zipper.decompress(in, off, len, lent.array(), lent.arrayOffset(), size);
            ok = true;
            // the whole input must be exactly this one member, and the output its declared size;
            // QATzip checks the member's CRC-32 and size
            decoded = n == size && z.zipper.getBytesRead() == len;
        } catch (RuntimeException e) {
            // GZIPInputStream decides: same bytes, same verdict as the built-in codec
        } finally {
            if (ok) pool.release(z);
            else z.end();   // a session that failed is not reused
            if (!decoded) giveBack(buffers, lent);
        }
        return decoded ? new LentBufferInputStream(lent, size, buffers) : null;
    }

    private static void giveBack(BufferProvider buffers, ByteBuffer lent) {
        if (buffers != null) buffers.release(lent);
    }

    /** The decompressed batch in a borrowed buffer, given back on close. */
    private static final class LentBufferInputStream extends InputStream {
        private final BufferProvider buffers;
        private ByteBuffer lent;
        private final byte[] array;
        private int pos;
        private final int end;

        LentBufferInputStream(ByteBuffer lent, int size, BufferProvider buffers) {
            this.lent = lent;
            this.buffers = buffers;
            this.array = lent.array();
            this.pos = lent.arrayOffset();
            this.end = pos + size;
        }

        @Override
        public int read() throws IOException {
            ensureOpen();
            return pos < end ? array[pos++] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            ensureOpen();
            if ((off | len | (b.length - (len + off)) | (off + len)) < 0) throw new IndexOutOfBoundsException();
            if (len == 0) return 0;
            if (pos == end) return -1;
            int n = Math.min(len, end - pos);
            System.arraycopy(array, pos, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public int available() throws IOException {
            ensureOpen();
            return end - pos;
        }

        @Override
        public void close() {
            if (lent == null) return;
            giveBack(buffers, lent);
            lent = null;
        }

        private void ensureOpen() throws IOException {
            if (lent == null) throw new IOException("Stream closed");
        }
    }

    /** An empty gzip member (what GZIPOutputStream writes for no input). */
    private static final byte[] EMPTY_MEMBER = {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};

    /**
     * Writes in[off, off+len) as exactly one gzip member: one QATzip call ({@code DEFLATE_GZIP}), taken only if its
     * output ends with this batch's own trailer (CRC-32 and size of the whole batch: output split into several
     * members would end with the last member's), else the batch is compressed by Kafka's built-in gzip writer.
     * (QATzip 1.3.1's software path writes one member for batches of 100 KB to 70 MiB, tested in the container;
     * what a QAT device writes is checked here on every batch.)
     */
    void compressBatch(int level, byte[] in, int off, int len, OutputStream out) throws IOException {
        if (len == 0) {
            out.write(EMPTY_MEMBER);
            return;
        }
        ZipperPool pool = pools[level];
        Zipper z = pool.take(this, level);
        boolean ok = false;
        int n;
        try {
            int bound = z.zipper.maxCompressedLength(len);
            if (z.scratch == null || z.scratch.length < bound) z.scratch = new byte[bound];
            n = z.zipper.compress(in, off, len, z.scratch, 0, bound);
            if (n <= 0) throw new IOException("QATzip compression returned " + n);
            ok = true;
            if (endsWithTrailerOf(z.scratch, n, in, off, len)) {
                out.write(z.scratch, 0, n);
                return;
            }
        } catch (RuntimeException e) {
            throw new IOException("QATzip compression failed", e);
        } finally {
            if (z.scratch != null && z.scratch.length > 2 * 1024 * 1024 + 65536) z.scratch = null;
            if (ok) pool.release(z);
            else z.end();   // a session that failed is not reused
        }
        notOneMember++;
        ByteArrayOutputStream member = new ByteArrayOutputStream(len / 4 + 64);
        try (GzipOutputStream gz = new GzipOutputStream(member, 8 * 1024, level)) {
            gz.write(in, off, len);
        }
        member.writeTo(out);
    }

    /** Batches QATzip wrote as more than one member, rewritten by the built-in writer (for tests). */
    volatile long notOneMember;

    private static boolean endsWithTrailerOf(byte[] gz, int n, byte[] in, int off, int len) {
        if (n < 18 || (gz[0] & 0xff) != 0x1f || (gz[1] & 0xff) != 0x8b) return false;
        CRC32 crc = new CRC32();
        crc.update(in, off, len);
        return le32(gz, n - 8) == (int) crc.getValue() && le32(gz, n - 4) == len;
    }

    private static int le32(byte[] b, int p) {
        return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff) << 16 | (b[p + 3] & 0xff) << 24;
    }

    /** A QATzip session and its scratch buffer; used by one thread at a time. */
    static final class Zipper {
        final QatZipper zipper;
        byte[] scratch;
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
     * Bounded pool of sessions per level, lock-free: reused, never leaked (ended when the pool is full, on error or
     * on close). A take after {@link #close()} throws an IOException, so that the framework falls back.
     */
    static final class ZipperPool {
        private final ArrayBlockingQueue<Zipper> idle;
        private volatile boolean closed;

        ZipperPool(int capacity) {
            idle = new ArrayBlockingQueue<>(capacity);
        }

        Zipper take(QatGzipCompressionService s, int level) throws IOException {
            if (closed) throw new IOException("QAT gzip: the compression service is closed");
            Zipper z = idle.poll();
            return z != null ? z : s.newZipper(level);
        }

        void release(Zipper z) {
            if (closed || !idle.offer(z)) z.end();
            else if (closed) drain();   // close() ran between the check and the offer
        }

        void close() {
            closed = true;
            drain();
        }

        private void drain() {
            Zipper z;
            while ((z = idle.poll()) != null) z.end();
        }
    }

    /**
     * Ends this service's QATzip sessions: the idle ones now, those in use when their batch gives them back. A
     * stream created afterwards throws {@link IllegalStateException}; a batch in flight fails with an
     * {@link IOException} or is read by the JDK. Either way the framework falls back to the built-in codec.
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
