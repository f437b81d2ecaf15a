/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import org.apache.kafka.common.compress.CompressionService.BufferProvider;
import org.apache.kafka.common.utils.ByteBufferInputStream;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.GZIPInputStream;
import java.util.zip.Inflater;
import java.util.zip.ZipException;

/**
 * Reads gzip with exactly the verdicts of Kafka's built-in gzip codec ({@code GzipCompression.wrapForInput}:
 * {@link GZIPInputStream} with an 8 KiB input buffer), with inflaters that apply zlib's rules: zlib-ng (the same
 * inflate state machine, checks and messages as zlib, faster) and zlib itself through {@link Inflater}.
 * libdeflate's and ISA-L's inflaters accept deflate data that zlib rejects (issue 17), and checking the data with
 * zlib's rules before them costs more than zlib's own inflate (see the module README).
 * <p>
 * The common case, a batch that is one gzip member with nothing after it (what every Kafka writer produces), is
 * inflated in one call at the first read: members of at most {@link #LENT_MEMBER_MAX} by zlib-ng into the
 * {@link BufferProvider}'s array (of at most {@link #WHOLE_MEMBER_MAX} into a pooled one when there is no
 * provider), then copied out; bigger ones, when the read has room for the whole
 * member, by zlib straight into the caller's array; no 8 KiB input steps and one CRC-32 pass. If the input turns
 * out to be anything else (several members, bytes after the member, a trailer that does not match), the bytes
 * inflated so far are returned (they are the start of what the built-in reader returns) and
 * {@link GZIPInputStream} reads on from there, so that the built-in reader gives the verdict: on trailing bytes it
 * depends on where the trailer falls in its 8 KiB buffer. Corrupt deflate data fails as it fails the built-in
 * reader (zlib's rules). A read never writes into the caller's array past the bytes it returns.
 */
final class NativeGzipInputStream extends InputStream {

    /** GzipCompression.wrapForInput's GZIPInputStream buffer size. */
    static final int JDK_BUFFER = 8 * 1024;
    /** Members decoded at once into a pooled array hold at most this many bytes, see the class comment. */
    static final int WHOLE_MEMBER_MAX = 1024 * 1024;
    /**
     * Members decoded at once into the {@link BufferProvider}'s array hold at most this many bytes: the largest batch
     * Kafka's provider framework compresses whole, and the largest buffer it lends (within its bound per owner, past
     * which it refuses the buffer and its built-in codec reads the batch).
     */
    static final int LENT_MEMBER_MAX = 8 * 1024 * 1024;

    private static final int FHCRC = 2;
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;

    /** The service's inflaters and output arrays. */
    private final GzipEngines engines;
    private final ByteBuffer source;
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
    private boolean eof;
    /** Thrown by the read after the data of a member whose CRC-32 differs from its trailer's. */
    private IOException afterData;
    /** When >= 0: once the bytes in out are read, GZIPInputStream goes on from this many bytes of output. */
    private long continueAfter = -1;
    private InputStream jdk;
    private IOException failure;
    private boolean closed;

    /** Parses the first member's header now, as GZIPInputStream's constructor does. */
    NativeGzipInputStream(GzipEngines engines, ByteBuffer buffer, BufferProvider bufferProvider) throws IOException {
        this.engines = engines;
        this.source = buffer.duplicate();
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
        pendingWholeSize = -1;
        try {
            inPos = readHeader(inPos);
            if (inEnd - inPos - 8 > 0) pendingWholeSize = uint(inEnd - 4);
        } catch (IOException e) {
            // GZIPInputStream's constructor gives the verdict on this header (and its exception)
        }
        if (pendingWholeSize < 0) startJdk();
    }

    /** From here on the batch is read by GZIPInputStream, as Kafka's built-in codec reads it. */
    private void startJdk() throws IOException {
        pendingWholeSize = -1;
        jdk = new GZIPInputStream(new ByteBufferInputStream(source.duplicate()), JDK_BUFFER);
    }

    /**
     * Decodes the pending member at once into dst[off, off + its size), in one call: with zlib-ng into this stream's
     * own array, with zlib ({@link Inflater}) into the caller's (zlib-ng's copies may write up to 258 bytes past the
     * output they return, inside the room they are given, which a read must not do to the caller's array). Returns
     * the number of bytes written there, all of them output the built-in reader gives too: the whole member (and
     * the input is done, or a CRC-32 failure follows), or a prefix of the output after which GZIPInputStream goes on
     * (several members, bytes after the member, a trailer that does not match: its verdict). Corrupt deflate data
     * fails here, as it fails the built-in reader.
     */
    private int decodeWhole(byte[] dst, int off, boolean callersArray) throws IOException {
        int size = (int) pendingWholeSize;
        pendingWholeSize = -1;
        if (size == 0) {
            startJdk();
            return 0;
        }
        int n;
        boolean whole;
        if (callersArray) {
            Inflater inflater = engines.zlibInflater();
            boolean reusable = false;
            n = 0;
            try {
                inflater.setInput(in, inPos, inEnd - inPos - 8);
                while (n < size && !inflater.finished() && !inflater.needsInput() && !inflater.needsDictionary()) {
                    int k = inflater.inflate(dst, off + n, size - n);
                    if (k == 0 && !inflater.finished() && !inflater.needsInput()) break;
                    n += k;
                }
                whole = inflater.finished() && inflater.getRemaining() == 0 && n == size;
                reusable = true;
            } catch (DataFormatException e) {
                failure = new ZipException(e.getMessage() != null ? e.getMessage() : "Invalid ZLIB data format");
                throw failure;
            } finally {
                engines.release(inflater, reusable);
            }
        } else {
            long r;
            try {
                r = zngInflate(engines, in, inPos, inEnd - inPos - 8, dst, off, size);
            } catch (ZipException e) {
                failure = e;
                throw e;
            }
            n = (int) (r & 0xffffffffL);
            whole = (r & NativeGzip.ZNG_END) != 0 && (r & NativeGzip.ZNG_INPUT_DONE) != 0 && n == size;
        }
        if (whole) {
            inPos = inEnd;
            eof = true;
            wholeMember = true;
            CRC32 crc = new CRC32();
            crc.update(dst, off, n);
            if ((int) crc.getValue() != (int) uint(inEnd - 8)) afterData = new ZipException("Corrupt GZIP trailer");
        } else {
            continueAfter = n;
        }
        return n;
    }

    /**
     * One zlib-ng call from in[off, off + len) into at most size bytes of out from outOff: the result of
     * {@link NativeGzip#zngInflate} (bytes written and the end flags), never negative.
     *
     * @throws ZipException with zlib's message if the deflate data is corrupt (zlib's verdict)
     * @throws IOException  if the inflate failed otherwise (out of native memory, arrays not pinned): no verdict on
     *                      the data, the built-in codec may manage
     */
    private static long zngInflate(GzipEngines engines, byte[] in, int off, int len, byte[] out, int outOff, int size)
            throws IOException {
        GzipEngines.ZngInflater inflater = engines.inflater();
        long r;
        String message = null;
        try {
            r = inflater.inflate(in, off, len, out, outOff, size);
            if (r == NativeGzip.ZNG_CORRUPT) message = inflater.message();
        } finally {
            engines.release(inflater);
        }
        if (r == NativeGzip.ZNG_CORRUPT)
            throw new ZipException(message != null ? message : "Invalid ZLIB data format");
        if (r < 0)
            throw new IOException("native gzip: zlib-ng inflate failed (" + r + ")");
        return r;
    }

    /** After a prefix decoded at once: GZIPInputStream reads the batch from the start, past that prefix. */
    private void continueWithJdk() throws IOException {
        long skip = continueAfter;
        continueAfter = -1;
        startJdk();
        // InputStream.skipNBytes is Java 12; this jar targets Java 11, as kafka-clients does
        while (skip > 0) {
            long n = jdk.skip(skip);
            if (n > 0) {
                skip -= n;
            } else if (jdk.read() == -1) {
                throw new EOFException("Batch ended before the prefix already decoded");
            } else {
                skip--;
            }
        }
    }

    /** Whether the input was decoded at once (one inflater call), once read (for tests). */
    boolean decodedWholeMember() {
        return wholeMember;
    }

    /** GZIPInputStream.readHeader's rules; returns the position after the header. */
    private int readHeader(int pos) throws IOException {
        return readHeader(in, pos, inEnd);
    }

    /** GZIPInputStream.readHeader's rules on in[pos, end); returns the position after the header. */
    static int readHeader(byte[] in, int pos, int end) throws IOException {
        int start = pos;
        if (ushort(in, pos, end) != 0x8b1f) throw new ZipException("Not in GZIP format");
        pos += 2;
        if (ubyte(in, pos++, end) != 8) throw new ZipException("Unsupported compression method");
        int flg = ubyte(in, pos++, end);
        pos += 6;   // MTIME, XFL, OS
        if (pos > end) throw new EOFException();
        if ((flg & FEXTRA) == FEXTRA) {
            int m = ushort(in, pos, end);
            pos += 2 + m;
            if (pos > end) throw new EOFException();
        }
        if ((flg & FNAME) == FNAME) {
            while (ubyte(in, pos++, end) != 0) { }
        }
        if ((flg & FCOMMENT) == FCOMMENT) {
            while (ubyte(in, pos++, end) != 0) { }
        }
        if ((flg & FHCRC) == FHCRC) {
            CRC32 crc = new CRC32();
            crc.update(in, start, pos - start);
            if (ushort(in, pos, end) != ((int) crc.getValue() & 0xffff)) throw new ZipException("Corrupt GZIP header");
            pos += 2;
        }
        return pos;
    }

    private long uint(int pos) throws EOFException {
        return uint(in, pos, inEnd);
    }

    private static int ubyte(byte[] in, int pos, int end) throws EOFException {
        if (pos >= end) throw new EOFException();
        return in[pos] & 0xff;
    }

    private static int ushort(byte[] in, int pos, int end) throws EOFException {
        return ubyte(in, pos, end) | (ubyte(in, pos + 1, end) << 8);
    }

    private static long uint(byte[] in, int pos, int end) throws EOFException {
        return ((long) ushort(in, pos + 2, end) << 16) | ushort(in, pos, end);
    }

    /**
     * The size a batch decodes to if it is one gzip member with nothing after it, from its trailer; -1 if it cannot
     * be one (no array, a header GZIPInputStream refuses, no deflate data, an empty member, or a size past deflate's
     * largest ratio of 1032 to 1 or past {@link #LENT_MEMBER_MAX}).
     */
    static int wholeMemberSize(ByteBuffer buffer) {
        if (!buffer.hasArray()) return -1;
        byte[] in = buffer.array();
        int end = buffer.arrayOffset() + buffer.limit();
        try {
            int data = readHeader(in, buffer.arrayOffset() + buffer.position(), end);
            int length = end - data - 8;
            if (length <= 0) return -1;
            long size = uint(in, end - 4, end);
            return size == 0 || size > LENT_MEMBER_MAX || size > 1032L * length ? -1 : (int) size;
        } catch (IOException e) {
            return -1;
        }
    }

    /**
     * Decodes a batch that {@link #wholeMemberSize(ByteBuffer)} sized into {@code output}, in one zlib-ng call, and
     * returns only if GZIPInputStream returns the same bytes: one member, its deflate data ending where the trailer
     * begins, its CRC-32 and size matching. Anything else throws (corrupt data with zlib's message), and Kafka's
     * built-in codec reads the batch again for its own verdict.
     */
    static void inflateWholeMember(GzipEngines engines, ByteBuffer input, ByteBuffer output) throws IOException {
        byte[] in = input.array();
        int end = input.arrayOffset() + input.limit();
        int data = readHeader(in, input.arrayOffset() + input.position(), end);
        int size = output.remaining();
        if (end - data - 8 <= 0 || uint(in, end - 4, end) != size)
            throw new IOException("native gzip: not one member of " + size + " bytes");
        byte[] out = output.array();
        int outOff = output.arrayOffset() + output.position();
        long r = zngInflate(engines, in, data, end - data - 8, out, outOff, size);
        int n = (int) (r & 0xffffffffL);
        if ((r & NativeGzip.ZNG_END) == 0 || (r & NativeGzip.ZNG_INPUT_DONE) == 0 || n != size)
            throw new IOException("native gzip: not one member of " + size + " bytes (" + n + " decoded)");
        CRC32 crc = new CRC32();
        crc.update(out, outOff, n);
        if ((int) crc.getValue() != (int) uint(in, end - 8, end)) throw new ZipException("Corrupt GZIP trailer");
        input.position(input.limit());
        output.position(output.position() + n);
    }

    @Override
    public int read() throws IOException {
        ensureOpen();
        if (outPos == outLim) {
            if (jdk == null) fillWhole();
            if (outPos == outLim) {
                if (continueAfter >= 0) continueWithJdk();
                if (jdk != null) return jdk.read();
                return endOfData();
            }
        }
        return out[outPos++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        if ((off | len | (b.length - (len + off)) | (off + len)) < 0) throw new IndexOutOfBoundsException();
        if (len == 0) return 0;
        if (outPos == outLim) {
            if (continueAfter >= 0) continueWithJdk();
            if (jdk != null) return jdk.read(b, off, len);
            // a member over the one-call limit read with room for all of it is decoded in place (zlib)
            long size = pendingWholeSize;
            if (size > wholeMemberMax() && len >= size) {
                int n = decodeWhole(b, off, true);
                if (n > 0) return n;
                if (continueAfter >= 0) continueWithJdk();
                if (jdk != null) return jdk.read(b, off, len);
            }
            if (jdk == null) fillWhole();
            if (outPos == outLim) {
                if (continueAfter >= 0) continueWithJdk();
                if (jdk != null) return jdk.read(b, off, len);
                return endOfData();
            }
        }
        int n = Math.min(len, outLim - outPos);
        System.arraycopy(out, outPos, b, off, n);
        outPos += n;
        return n;
    }

    /** -1, or the CRC-32 failure of a member whose data has been returned. */
    private int endOfData() throws IOException {
        if (afterData != null) throw afterData;
        return -1;
    }

    /** The largest member decoded at once into an output array. */
    private int wholeMemberMax() {
        return bufferProvider != null ? LENT_MEMBER_MAX : WHOLE_MEMBER_MAX;
    }

    /**
     * Decodes a pending member of at most {@link #wholeMemberMax()} into an output array, or hands over to
     * GZIPInputStream. A buffer the provider refuses (past its owner's bound) is let through as its exception.
     */
    private void fillWhole() throws IOException {
        if (failure != null) throw new IOException(failure.getMessage(), failure);
        if (pendingWholeSize < 0) return;   // decoded already
        if (pendingWholeSize == 0 || pendingWholeSize > wholeMemberMax()) {
            startJdk();
            return;
        }
        int size = (int) pendingWholeSize;
        byte[] buffer = null;
        ByteBuffer b = bufferProvider == null ? null : bufferProvider.get(size);
        if (b != null && b.hasArray() && b.arrayOffset() == 0 && b.array().length >= size) {
            buffer = b.array();
        } else if (b != null) {
            bufferProvider.release(b);
            b = null;
        }
        if (buffer == null) {
            if (size > WHOLE_MEMBER_MAX) {
                startJdk();
                return;
            }
            buffer = engines.outputArray(size);
        }
        out = buffer;
        if (b != null) borrowed = b;
        else pooledOut = true;
        outPos = 0;
        outLim = decodeWhole(buffer, 0, false);
    }

    @Override
    public int available() throws IOException {
        ensureOpen();
        return jdk != null ? jdk.available() : outLim - outPos;
    }

    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        if (borrowed != null) {
            bufferProvider.release(borrowed);
            borrowed = null;
        }
        if (pooledOut) engines.release(out);
        out = null;
        if (jdk != null) jdk.close();
    }

    private void ensureOpen() throws IOException {
        if (closed) throw new IOException("Stream closed");
    }
}
