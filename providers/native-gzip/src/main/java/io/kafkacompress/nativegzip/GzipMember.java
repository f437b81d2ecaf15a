/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * The whole-batch decompression of Kafka's provider framework ({@code maxDecompressedSize}, {@code decompress}): a
 * batch that is one gzip member with nothing after it (what every Kafka writer produces) is inflated in one zlib-ng
 * call, with zlib's checks (the same inflate state machine, checks and messages as zlib, faster), and accepted only
 * when {@link GZIPInputStream}, the reader of Kafka's built-in codec, returns exactly the same bytes: the header
 * parsed with its rules, the deflate data ending where the trailer begins, nothing after it, its CRC-32 and size
 * matching. Anything else throws, and the framework reads the batch with the built-in codec, which gives the verdict.
 * libdeflate's and ISA-L's inflaters are not used: they accept deflate data that zlib rejects (see the module README).
 */
final class GzipMember {

    private static final int FHCRC = 2;
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;

    private GzipMember() {
    }

    /**
     * The size a batch decodes to if it is one gzip member with nothing after it, from its trailer; -1 if it cannot
     * be one (no array, a header GZIPInputStream refuses, no deflate data, an empty member, or a size past deflate's
     * largest ratio of 1032 to 1 or past {@code wholeMax}, the service's whole-batch bound). Reads the header and the
     * trailer only.
     */
    static int wholeMemberSize(ByteBuffer buffer, int wholeMax) {
        if (!buffer.hasArray()) return -1;
        byte[] in = buffer.array();
        int end = buffer.arrayOffset() + buffer.limit();
        try {
            int data = readHeader(in, buffer.arrayOffset() + buffer.position(), end);
            int length = end - data - 8;
            if (length <= 0) return -1;
            long size = uint(in, end - 4, end);
            return size == 0 || size > wholeMax || size > 1032L * length ? -1 : (int) size;
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
}
