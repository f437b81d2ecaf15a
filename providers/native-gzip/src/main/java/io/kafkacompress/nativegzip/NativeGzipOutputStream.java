/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;

/**
 * Collects a batch and compresses it with one native call when closed; a batch written in one piece of at least
 * {@link #DIRECT_WRITE} bytes is compressed straight away, from the caller's array. Batches bigger than {@link #MEMBER_SIZE}
 * are written as several gzip members of that size (standard multi-member gzip, which every gzip reader,
 * {@code java.util.zip.GZIPInputStream} included, reads as one stream), so memory stays bounded.
 */
final class NativeGzipOutputStream extends OutputStream {

    static final int MEMBER_SIZE = 8 * 1024 * 1024;
    /** A write of at least this much into an empty stream is compressed at once (see write). */
    static final int DIRECT_WRITE = 64 * 1024;
    private static final int INITIAL_SIZE = 16 * 1024;
    private static final byte[] EMPTY = new byte[0];

    private final OutputStream out;
    private final int level;
    private byte[] buf = EMPTY;   // allocated on the first piecewise write: a whole-batch write never needs it
    private int count;
    private boolean wroteMember;
    private boolean closed;

    NativeGzipOutputStream(OutputStream out, int level) {
        this.out = out;
        this.level = level;
    }

    @Override
    public void write(int b) throws IOException {
        ensureOpen();
        if (count == buf.length) makeRoom(1);
        buf[count++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        if ((off | len | (b.length - (len + off)) | (off + len)) < 0) throw new IndexOutOfBoundsException();
        if (count == 0 && len >= DIRECT_WRITE) {
            // a whole batch in one write (what Kafka's provider framework does): compressed from the caller's
            // array as members of its own, without copying it into this stream's buffer first
            while (len > 0) {
                int n = Math.min(len, MEMBER_SIZE);
                GzipEngines.compressMember(level, b, off, n, out);
                wroteMember = true;
                off += n;
                len -= n;
            }
            return;
        }
        while (len > 0) {
            if (count == buf.length) makeRoom(len);
            int n = Math.min(len, buf.length - count);
            System.arraycopy(b, off, buf, count, n);
            count += n;
            off += n;
            len -= n;
        }
    }

    private void makeRoom(int wanted) throws IOException {
        if (count >= MEMBER_SIZE) {
            GzipEngines.compressMember(level, buf, 0, count, out);
            wroteMember = true;
            count = 0;
            return;
        }
        int size = (int) Math.min(MEMBER_SIZE, Math.max(Math.max(INITIAL_SIZE, 2L * buf.length), (long) count + wanted));
        buf = Arrays.copyOf(buf, size);
    }

    @Override
    public void flush() throws IOException {
        // a member per flush would cost ratio for nothing: the batch is compressed on close
        ensureOpen();
    }

    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        try {
            if (count > 0 || !wroteMember) GzipEngines.compressMember(level, buf, 0, count, out);
            out.flush();
        } finally {
            buf = null;
            out.close();
        }
    }

    private void ensureOpen() throws IOException {
        if (closed) throw new IOException("Stream closed");
    }
}
