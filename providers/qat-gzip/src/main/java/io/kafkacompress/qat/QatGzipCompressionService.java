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
 * single member whose trailer gives its size; anything else (several members, trailing bytes, a QATzip error) is
 * read by {@link GZIPInputStream}, exactly as Kafka's built-in codec reads it, so the provider never accepts or
 * rejects what the built-in codec would not.
 */
public class QatGzipCompressionService implements CompressionService, Configurable {

    public static final String MODE_CONFIG = "compression.gzip.qat.mode";

    enum ConfiguredMode { AUTO, HARDWARE, SOFTWARE }

    static final int DEFAULT_LEVEL = 6;
    /** Batches up to this size are compressed with one QATzip call; bigger ones are streamed (one member either way). */
    static final int WHOLE_MAX = 8 * 1024 * 1024;
    /** The largest single-member batch decompressed in one QATzip call (bigger ones are streamed by the JDK). */
    static final int MAX_ONE_SHOT_OUTPUT = 64 * 1024 * 1024;

    private volatile ConfiguredMode mode = ConfiguredMode.AUTO;
    private volatile String failure;        // why unavailable, set by checkAvailable
    private volatile boolean checked;
    private volatile boolean hardware;      // a QAT device is present and will be used
    private final ZipperPool[] pools = new ZipperPool[10];

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
                Zipper z = new Zipper(newZipper(DEFAULT_LEVEL));
                pool(DEFAULT_LEVEL).release(z);
            } catch (Throwable e) {   // UnsatisfiedLinkError, RuntimeException from QATzip
                reason = "qat-java could not start a QATzip session: " + e;
            }
        }
        failure = reason;
        checked = true;
        if (reason != null) throw new IllegalStateException("QAT gzip unavailable: " + reason);
    }

    private QatZipper newZipper(int level) {
        return new QatZipper.Builder()
            .setAlgorithm(QatZipper.Algorithm.DEFLATE)
            .setDataFormat(QatZipper.DataFormat.DEFLATE_GZIP)
            .setMode(hardware && mode == ConfiguredMode.HARDWARE ? QatZipper.Mode.HARDWARE : QatZipper.Mode.AUTO)
            .setLevel(level)
            .build();
    }

    private void requireAvailable() {
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
        byte[] oneShot = tryOneShot(in, off, len);
        if (oneShot != null) return new ByteArrayInputStream(oneShot);
        try {
            return new GZIPInputStream(new ByteArrayInputStream(in, off, len), 8 * 1024);
        } catch (IOException e) {
            throw new KafkaException(e);   // as the built-in GzipCompression.wrapForInput
        }
    }

    /** One QATzip call for a batch that is exactly one gzip member; null when that does not apply or fails. */
    private byte[] tryOneShot(byte[] in, int off, int len) {
        if (len < 20 || (in[off] & 0xff) != 0x1f || (in[off + 1] & 0xff) != 0x8b || in[off + 2] != 8 || in[off + 3] != 0)
            return null;   // only plain headers (no name/extra/comment flags): what Kafka writers produce
        int end = off + len;
        long isize = (in[end - 4] & 0xffL) | (in[end - 3] & 0xffL) << 8 | (in[end - 2] & 0xffL) << 16 | (in[end - 1] & 0xffL) << 24;
        if (isize > MAX_ONE_SHOT_OUTPUT || isize > 1032L * len) return null;
        byte[] out = new byte[(int) isize];
        ZipperPool pool = pool(DEFAULT_LEVEL);
        Zipper z = pool.take(this, DEFAULT_LEVEL);
        boolean ok = false;
        try {
            int n = isize == 0 ? 0 : z.zipper.decompress(in, off, len, out, 0, out.length);
            // the whole input must be exactly this one member, and the output its declared size;
            // QATzip checks the member's CRC-32 and size
            if (n == isize && (isize == 0 || z.zipper.getBytesRead() == len)) {
                ok = true;
                return isize == 0 ? null : out;
            }
            ok = true;
            return null;
        } catch (RuntimeException e) {
            return null;   // GZIPInputStream decides: same bytes, same verdict as the built-in codec
        } finally {
            if (ok) pool.release(z);
            else z.end();
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
        ZipperPool pool = pool(level);
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

    private synchronized ZipperPool pool(int level) {
        if (pools[level] == null) pools[level] = new ZipperPool(Math.max(4, 2 * Runtime.getRuntime().availableProcessors()));
        return pools[level];
    }

    /** A QATzip session and its scratch buffer; used by one thread at a time. */
    static final class Zipper {
        final QatZipper zipper;
        byte[] scratch;

        Zipper(QatZipper zipper) {
            this.zipper = zipper;
        }

        void end() {
            try {
                zipper.end();
            } catch (RuntimeException ignored) {
                // already ended
            }
        }
    }

    /** Bounded pool of sessions per level: reused, never leaked (ended when the pool is full or on error). */
    static final class ZipperPool {
        private final ArrayBlockingQueue<Zipper> idle;

        ZipperPool(int capacity) {
            idle = new ArrayBlockingQueue<>(capacity);
        }

        Zipper take(QatGzipCompressionService s, int level) {
            Zipper z = idle.poll();
            return z != null ? z : new Zipper(s.newZipper(level));
        }

        void release(Zipper z) {
            if (!idle.offer(z)) z.end();
        }
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
