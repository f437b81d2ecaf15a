/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.qat;

import org.apache.kafka.common.compress.GzipOutputStream;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;

/**
 * Writes a batch as exactly ONE gzip member (librdkafka, and so the Python, Go, .NET and kcat clients, reads only
 * the first member of a batch). A batch of up to {@link QatGzipCompressionService#WHOLE_MAX} bytes is collected and
 * compressed with one QATzip call on close (see {@link QatGzipCompressionService#compressBatch}); a bigger one is
 * streamed, with bounded memory, through Kafka's own {@link GzipOutputStream} at the same level (what the built-in
 * codec writes).
 * <p>
 * The framework compresses its batches with the whole-batch call
 * ({@link QatGzipCompressionService#compress(java.nio.ByteBuffer, java.nio.ByteBuffer, java.util.Optional)}) and
 * uses this stream only when its owner has no buffer to lend, writing the batch in one write: the first write is
 * therefore collected into an array of exactly its size (no 16 KiB start and no regrowth); smaller writes from
 * other callers grow it by doubling.
 */
final class QatGzipOutputStream extends OutputStream {

    /** GzipCompression.wrapForOutput's deflater output buffer. */
    private static final int STREAM_BUFFER = 8 * 1024;

    private final QatGzipCompressionService service;
    private final OutputStream out;
    private final int level;
    private static final byte[] NONE = new byte[0];

    private byte[] buf = NONE;
    private int count;
    private GzipOutputStream streaming;
    private boolean closed;

    QatGzipOutputStream(QatGzipCompressionService service, OutputStream out, int level) {
        this.service = service;
        this.out = out;
        this.level = level;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        if ((off | len | (b.length - (len + off)) | (off + len)) < 0) throw new IndexOutOfBoundsException();
        if (streaming == null && (long) count + len > QatGzipCompressionService.WHOLE_MAX) {
            streaming = new GzipOutputStream(out, STREAM_BUFFER, level);
            streaming.write(buf, 0, count);
            buf = null;
            count = 0;
        }
        if (streaming != null) {
            streaming.write(b, off, len);
            return;
        }
        if ((long) count + len > buf.length)
            buf = Arrays.copyOf(buf, (int) Math.min(QatGzipCompressionService.WHOLE_MAX, Math.max(2L * buf.length, (long) count + len)));
        System.arraycopy(b, off, buf, count, len);
        count += len;
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
            streaming.close();   // ends the member, flushes and closes out
            return;
        }
        try {
            service.compressBatch(level, buf, 0, count, out);
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
