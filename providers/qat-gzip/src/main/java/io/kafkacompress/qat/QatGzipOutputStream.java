/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.qat;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;

/** Collects a batch; compresses it with one QATzip call on close (a member per 8 MiB of bigger batches). */
final class QatGzipOutputStream extends OutputStream {

    private final QatGzipCompressionService service;
    private final OutputStream out;
    private final int level;
    private byte[] buf = new byte[16 * 1024];
    private int count;
    private boolean wroteMember;
    private boolean closed;

    QatGzipOutputStream(QatGzipCompressionService service, OutputStream out, int level) {
        this.service = service;
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
        if (count >= QatGzipCompressionService.MEMBER_SIZE) {
            service.compressMember(level, buf, 0, count, out);
            wroteMember = true;
            count = 0;
            return;
        }
        buf = Arrays.copyOf(buf, (int) Math.min(QatGzipCompressionService.MEMBER_SIZE, Math.max(2L * buf.length, (long) count + wanted)));
    }

    @Override
    public void flush() throws IOException {
        ensureOpen();
    }

    @Override
    public void close() throws IOException {
        if (closed) return;
        closed = true;
        try {
            if (count > 0 || !wroteMember) service.compressMember(level, buf, 0, count, out);
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
