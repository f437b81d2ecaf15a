/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import org.apache.kafka.common.compress.CompressionService.BufferProvider;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.zip.CRC32;
import java.util.zip.ZipException;

/**
 * Reads gzip. The common case, one member with nothing after it (what a Kafka writer produces for a batch of up to
 * 8 MiB), is decoded at once by libdeflate, the fastest inflater here on whole buffers, at the first read: straight
 * into the caller's array if the read has room for the whole member (the provider framework reads a batch into one
 * array), else into a pooled array that reads copy from if the member holds at most 1 MiB. Anything else, and
 * anything libdeflate or the trailer check does not accept, is read with ISA-L's inflate, 64 KiB of output per
 * native call (or straight into the caller's array when a read asks for at least 16 KiB). (When libdeflate gives up
 * on a read straight into the caller's array, that array past the bytes the read returns may hold some of its
 * output.)
 * <p>
 * The gzip framing (header, trailer, concatenated members, what follows the last member) is handled here, in
 * Java, with the same rules as {@link java.util.zip.GZIPInputStream}, which Kafka's built-in gzip codec uses: the
 * same input gives the same bytes or an {@link IOException} ({@link ZipException} for corrupt data,
 * {@link EOFException} for truncated data) where the built-in reader gives one. ISA-L decodes the raw deflate data
 * and computes its CRC-32; the trailer is checked here.
 */
final class NativeGzipInputStream extends InputStream {

    static final int OUTPUT_CHUNK = 64 * 1024;
    /** Reads of at least this many bytes, when no output is pending, are inflated straight into the caller's array. */
    static final int DIRECT_READ = 16 * 1024;
    private static final int POOL_SIZE = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
    private static final NativeGzip.Pool<Inflater> POOL = new NativeGzip.Pool<>(POOL_SIZE);
    /** Members decoded at once into a pooled array hold at most this many bytes, see the class comment. */
    static final int WHOLE_MEMBER_MAX = 1024 * 1024;
    private static final NativeGzip.Pool<WholeInflater> WHOLE_POOL = new NativeGzip.Pool<>(POOL_SIZE);
    /**
     * Output arrays (whole members, and chunks for callers that give no BufferProvider), 64 KiB to
     * {@link #WHOLE_MEMBER_MAX}; given back on close.
     */
    private static final ArrayBlockingQueue<byte[]> BUFFERS = new ArrayBlockingQueue<>(POOL_SIZE);

    /**
     * GZIPInputStream before JDK 23 looks for another member only when more than 18 bytes follow a trailer; from
     * JDK 23 on (JDK-8322256) it always tries. Either way, bytes that do not parse as a header end the stream.
     */
    private static final int NEXT_MEMBER_MIN_BYTES = Runtime.version().feature() >= 23 ? 1 : 19;

    private static final int FHCRC = 2;
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;

    static final class Inflater extends NativeGzip.NativeHandle {
        private Inflater(long handle) {
            super(handle, () -> NativeGzip.inflaterFree(handle));
        }

        static Inflater acquire() {
            Inflater i = POOL.poll();
            if (i == null) i = new Inflater(NativeGzip.inflaterNew());
            NativeGzip.inflaterReset(i.handle);
            return i;
        }
    }

    static final class WholeInflater extends NativeGzip.NativeHandle {
        private WholeInflater(long handle) {
            super(handle, () -> NativeGzip.ldInflaterFree(handle));
        }

        static WholeInflater acquire() {
            WholeInflater i = WHOLE_POOL.poll();
            return i != null ? i : new WholeInflater(NativeGzip.ldInflaterNew());
        }
    }

    private final byte[] in;
    private int inPos;
    private final int inEnd;
    private final BufferProvider bufferProvider;
    private ByteBuffer borrowed;
    private boolean pooledOut;
    /** The size of the single member that has not been tried at once yet; -1 when there is none (any more). */
    private long pendingWholeSize;
    private boolean wholeMember;
    private byte[] out;
    private int outPos;
    private int outLim;
    private final int[] result = new int[4];
    private Inflater inflater;
    private long memberSize;
    private int memberCrc;
    private boolean eof;
    private IOException failure;
    private boolean closed;

    /** Parses the first member's header now, as GZIPInputStream's constructor does. */
    NativeGzipInputStream(ByteBuffer buffer, BufferProvider bufferProvider) throws IOException {
        if (buffer.hasArray()) {
            in = buffer.array();
            inPos = buffer.arrayOffset() + buffer.position();
            inEnd = buffer.arrayOffset() + buffer.limit();
        } else {
            in = new byte[buffer.remaining()];
            buffer.duplicate().get(in);
            inPos = 0;
            inEnd = in.length;
        }
        this.bufferProvider = bufferProvider;
        inPos = readHeader(inPos);
        pendingWholeSize = wholeMemberSize();
        if (pendingWholeSize < 0) startStreaming();
    }

    /** Acquires the streaming inflater and its output chunk. */
    private void startStreaming() {
        inflater = Inflater.acquire();
        ByteBuffer b = bufferProvider == null ? null : bufferProvider.get(OUTPUT_CHUNK);
        if (b != null && b.hasArray() && b.arrayOffset() == 0 && b.array().length >= OUTPUT_CHUNK) {
            borrowed = b;
            out = b.array();
        } else {
            if (b != null) bufferProvider.release(b);
            out = takeBuffer(OUTPUT_CHUNK);
            pooledOut = true;
        }
    }

    /** What the trailer at the end of the input says the member holds; -1 if there is no room for a trailer. */
    private long wholeMemberSize() throws IOException {
        if (inEnd - inPos - 8 <= 0) return -1;
        return Math.min(uint(inEnd - 4), Integer.MAX_VALUE - 8);
    }

    /**
     * Decodes the pending member with libdeflate into dst[off, off + its size), if the input is that single member
     * with nothing after it: the deflate data ends at the trailer and decodes to the trailer's size and CRC-32.
     * Otherwise starts the streaming inflater, having consumed nothing, and returns false.
     */
    private boolean decodeWhole(byte[] dst, int off) throws IOException {
        int size = (int) pendingWholeSize;
        pendingWholeSize = -1;
        WholeInflater inflater = WholeInflater.acquire();
        int rc;
        try {
            rc = NativeGzip.ldInflateMember(inflater.handle, in, inPos, inEnd - inPos - 8, dst, off, size,
                (int) uint(inEnd - 8));
        } finally {
            WHOLE_POOL.release(inflater);
        }
        if (rc != 0) {
            streamInstead();
            return false;
        }
        inPos = inEnd;
        eof = true;
        wholeMember = true;
        return true;
    }

    private void streamInstead() {
        pendingWholeSize = -1;
        startStreaming();
    }

    /** An output array of at least {@code min} bytes (and at least a chunk), from the pool if it has one. */
    private static byte[] takeBuffer(int min) {
        byte[] b = BUFFERS.poll();
        if (b != null && b.length >= min) return b;
        if (b != null) BUFFERS.offer(b);
        return new byte[Math.max(OUTPUT_CHUNK, (min + OUTPUT_CHUNK - 1) & -OUTPUT_CHUNK)];
    }

    /** Whether the input was decoded at once by libdeflate, once read (for tests). */
    boolean decodedWholeMember() {
        return wholeMember;
    }

    /** GZIPInputStream.readHeader's rules; returns the position after the header. */
    private int readHeader(int pos) throws IOException {
        int start = pos;
        if (ushort(pos) != 0x8b1f) throw new ZipException("Not in GZIP format");
        pos += 2;
        if (ubyte(pos++) != 8) throw new ZipException("Unsupported compression method");
        int flg = ubyte(pos++);
        pos += 6;   // MTIME, XFL, OS
        if (pos > inEnd) throw new EOFException();
        if ((flg & FEXTRA) == FEXTRA) {
            int m = ushort(pos);
            pos += 2 + m;
            if (pos > inEnd) throw new EOFException();
        }
        if ((flg & FNAME) == FNAME) {
            while (ubyte(pos++) != 0) { }
        }
        if ((flg & FCOMMENT) == FCOMMENT) {
            while (ubyte(pos++) != 0) { }
        }
        if ((flg & FHCRC) == FHCRC) {
            CRC32 crc = new CRC32();
            crc.update(in, start, pos - start);
            if (ushort(pos) != ((int) crc.getValue() & 0xffff)) throw new ZipException("Corrupt GZIP header");
            pos += 2;
        }
        return pos;
    }

    private int ubyte(int pos) throws EOFException {
        if (pos >= inEnd) throw new EOFException();
        return in[pos] & 0xff;
    }

    private int ushort(int pos) throws EOFException {
        return ubyte(pos) | (ubyte(pos + 1) << 8);
    }

    private long uint(int pos) throws EOFException {
        return ((long) ushort(pos + 2) << 16) | ushort(pos);
    }

    @Override
    public int read() throws IOException {
        ensureOpen();
        if (outPos == outLim && !fill()) return -1;
        return out[outPos++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        if ((off | len | (b.length - (len + off)) | (off + len)) < 0) throw new IndexOutOfBoundsException();
        if (len == 0) return 0;
        if (outPos == outLim) {
            // a read with room for the whole member (the framework reading a batch) is decoded in place
            long size = pendingWholeSize;
            if (size >= 0 && len >= size && decodeWhole(b, off)) return size > 0 ? (int) size : -1;
            if (pendingWholeSize > WHOLE_MEMBER_MAX) streamInstead();
            // a big read is inflated in place, without the chunk's copy
            if (len >= DIRECT_READ && pendingWholeSize < 0) return inflate(b, off, len);
            if (!fill()) return -1;
        }
        int n = Math.min(len, outLim - outPos);
        System.arraycopy(out, outPos, b, off, n);
        outPos += n;
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        ensureOpen();
        long skipped = 0;
        while (skipped < n) {
            if (outPos == outLim && !fill()) break;
            int k = (int) Math.min(n - skipped, outLim - outPos);
            outPos += k;
            skipped += k;
        }
        return skipped;
    }

    @Override
    public int available() throws IOException {
        ensureOpen();
        return outLim - outPos;
    }

    /** Decodes the next chunk; false at the end of the gzip stream. */
    private boolean fill() throws IOException {
        if (pendingWholeSize > WHOLE_MEMBER_MAX) streamInstead();
        if (pendingWholeSize >= 0) {
            int size = (int) pendingWholeSize;
            byte[] buffer = takeBuffer(size);
            if (decodeWhole(buffer, 0)) {
                out = buffer;
                pooledOut = true;
                outPos = 0;
                outLim = size;
                return size > 0;
            }
            BUFFERS.offer(buffer);
        }
        if (eof) return false;
        int n = inflate(out, 0, out.length);
        if (n < 0) return false;
        outPos = 0;
        outLim = n;
        return true;
    }

    /** Decodes into dst[off, off+len); the number of bytes written (at least 1), -1 at the end of the gzip stream. */
    private int inflate(byte[] dst, int off, int len) throws IOException {
        if (failure != null) throw new IOException(failure.getMessage(), failure);
        try {
            while (!eof) {
                int rc = NativeGzip.inflate(inflater.handle, in, inPos, inEnd - inPos, dst, off, len, result);
                if (rc == -1000) throw new IOException("native gzip: could not pin buffers");
                if (rc < 0) throw new ZipException(message(rc));
                int used = result[0];
                int produced = result[1];
                inPos += used;
                memberSize += produced;
                memberCrc = result[3];
                if (result[2] == 1) {
                    endOfMember();
                } else if (produced == 0 && inPos >= inEnd) {
                    throw new EOFException("Unexpected end of ZLIB input stream");
                }
                if (produced > 0) return produced;
            }
            return -1;
        } catch (IOException | RuntimeException e) {
            failure = e instanceof IOException ? (IOException) e : new IOException(e);
            outPos = outLim = 0;
            releaseInflater();
            throw e;
        }
    }

    /** Checks the trailer, then starts the next member if a gzip header follows (GZIPInputStream's rule). */
    private void endOfMember() throws IOException {
        if (inEnd - inPos < 8) throw new EOFException("Unexpected end of ZLIB input stream");
        if (uint(inPos) != (memberCrc & 0xffffffffL) || uint(inPos + 4) != (memberSize & 0xffffffffL))
            throw new ZipException("Corrupt GZIP trailer");
        inPos += 8;
        // as GZIPInputStream: another member if a header follows, anything else ends the stream
        if (inEnd - inPos >= NEXT_MEMBER_MIN_BYTES) {
            try {
                int next = readHeader(inPos);
                inPos = next;
                memberSize = 0;
                NativeGzip.inflaterReset(inflater.handle);
                return;
            } catch (IOException ignored) {
                // trailing bytes that are not a gzip member: ignored, as GZIPInputStream does
            }
        }
        eof = true;
        releaseInflater();
    }

    private static String message(int rc) {
        switch (rc) {
            case -1: return "invalid deflate block (ISA-L)";
            case -2: return "invalid deflate symbol (ISA-L)";
            case -3: return "invalid lookback distance (ISA-L)";
            default: return "corrupt deflate data (ISA-L error " + rc + ")";
        }
    }

    private void releaseInflater() {
        Inflater i = inflater;
        inflater = null;
        if (i != null) POOL.release(i);
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        releaseInflater();
        if (borrowed != null) {
            bufferProvider.release(borrowed);
            borrowed = null;
        }
        if (pooledOut) BUFFERS.offer(out);
        out = null;
    }

    private void ensureOpen() throws IOException {
        if (closed) throw new IOException("Stream closed");
    }
}
