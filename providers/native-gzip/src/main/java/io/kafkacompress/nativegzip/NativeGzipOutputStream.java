/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import org.apache.kafka.common.compress.GzipOutputStream;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;

/**
 * Writes a batch as exactly ONE gzip member, whatever its size and however it is written (librdkafka, and so the
 * Python, Go, .NET and kcat clients, reads only the first member of a batch).
 * <ul>
 * <li>A batch of up to {@link #WHOLE_MAX} bytes is compressed by a whole-buffer engine (ISA-L or libdeflate, see
 * {@link GzipEngines}) in one native call when the stream is closed. A batch written in one piece of at least
 * {@link #DIRECT_WRITE} bytes (what Kafka's provider framework does) is compressed straight from the caller's array
 * and held until close; should more bytes follow, the held member is decoded back and the batch goes on as below.</li>
 * <li>A bigger batch is streamed, with bounded memory, as one member through Kafka's own {@link GzipOutputStream}
 * (zlib at the same level, what the built-in codec writes, so never bigger than its output).</li>
 * </ul>
 */
final class NativeGzipOutputStream extends OutputStream {

    /** The largest batch compressed by a whole-buffer engine; bigger batches are streamed as one member. */
    static final int WHOLE_MAX = 8 * 1024 * 1024;
    /** A write of at least this much into an empty stream is compressed at once (see write). */
    static final int DIRECT_WRITE = 64 * 1024;
    private static final int INITIAL_SIZE = 16 * 1024;
    /** GzipCompression.wrapForOutput's deflater output buffer. */
    private static final int STREAM_BUFFER = 8 * 1024;
    private static final byte[] EMPTY = new byte[0];

    private final GzipEngines engines;
    private final OutputStream out;
    private final int level;
    private byte[] buf = EMPTY;   // allocated on the first piecewise write: a whole-batch write never needs it
    private int count;
    /** A member compressed from a whole-batch write, written on close unless more bytes follow. */
    private byte[] held;
    private GzipOutputStream streaming;
    private boolean closed;

    NativeGzipOutputStream(GzipEngines engines, OutputStream out, int level) {
        this.engines = engines;
        this.out = out;
        this.level = level;
    }

    @Override
    public void write(int b) throws IOException {
        ensureOpen();
        if (held != null) unhold();
        if (streaming == null && count == buf.length) makeRoom(1);
        if (streaming != null) streaming.write(new byte[] {(byte) b}, 0, 1);
        else buf[count++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        if ((off | len | (b.length - (len + off)) | (off + len)) < 0) throw new IndexOutOfBoundsException();
        if (len == 0) return;
        if (held != null) unhold();
        if (streaming == null && count == 0 && len >= DIRECT_WRITE) {
            if (len <= WHOLE_MAX) {
                // a whole batch in one write (what Kafka's provider framework does): compressed from the caller's
                // array without copying it into this stream's buffer; written on close
                held = engines.compressMember(level, b, off, len);
            } else {
                streaming = new GzipOutputStream(out, STREAM_BUFFER, level);
                streaming.write(b, off, len);
            }
            return;
        }
        if (streaming != null) {
            streaming.write(b, off, len);
            return;
        }
        while (len > 0) {
            if (count == buf.length) {
                makeRoom(len);
                if (streaming != null) {
                    streaming.write(b, off, len);
                    return;
                }
            }
            int n = Math.min(len, buf.length - count);
            System.arraycopy(b, off, buf, count, n);
            count += n;
            off += n;
            len -= n;
        }
    }

    /** Grows the buffer, or, past {@link #WHOLE_MAX}, starts streaming the batch with what the buffer holds. */
    private void makeRoom(int wanted) throws IOException {
        if ((long) count + wanted > WHOLE_MAX) {
            streaming = new GzipOutputStream(out, STREAM_BUFFER, level);
            streaming.write(buf, 0, count);
            buf = EMPTY;
            count = 0;
            return;
        }
        int size = (int) Math.min(WHOLE_MAX, Math.max(Math.max(INITIAL_SIZE, 2L * buf.length), (long) count + wanted));
        buf = Arrays.copyOf(buf, size);
    }

    /** More bytes follow a whole-batch write: its held member is decoded back into the buffer. */
    private void unhold() throws IOException {
        byte[] member = held;
        held = null;
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(member))) {
            buf = in.readAllBytes();
        }
        count = buf.length;
    }

    @Override
    public void flush() throws IOException {
        // a member per flush would break "one member per batch": the batch is compressed on close
        ensureOpen();
    }

    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        if (streaming != null) {
            buf = null;
            streaming.close();   // ends the member, flushes and closes out
            return;
        }
        try {
            out.write(held != null ? held : engines.compressMember(level, buf, 0, count));
            out.flush();
        } finally {
            buf = null;
            held = null;
            out.close();
        }
    }

    private void ensureOpen() throws IOException {
        if (closed) throw new IOException("Stream closed");
    }
}
