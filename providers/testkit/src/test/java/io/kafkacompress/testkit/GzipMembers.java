/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.testkit;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.compress.ProviderSet;
import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.ByteBufferOutputStream;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Parses gzip output and asserts it is exactly one member: one header, one deflate stream that ends with a BFINAL
 * block, one trailer (CRC-32 and ISIZE of the content), nothing after.
 */
public final class GzipMembers {

    private GzipMembers() {
    }

    /** Batch sizes of the conformance test: 0 B to 64 MiB, around the providers' internal limits. */
    public static final int[] SIZES = {0, 1, 100, 16 * 1024, 64 * 1024 - 1, 64 * 1024, 1 << 20, (8 << 20) - 1, 8 << 20,
        (8 << 20) + 1, (16 << 20) + 3, 64 << 20};

    /**
     * Asserts one member for every size in {@link #SIZES} through the KIP-1121 framework as Kafka uses it
     * ({@code ProviderSet#sharedCompression}): the batch in one write, and in pieces of random sizes (with single
     * bytes), at levels 1 and 6 (every level up to 1 MiB).
     */
    public static void assertOneMemberPerBatch(CompressionService service, String name, byte[] json) throws IOException {
        Random r = new Random(17);
        for (int size : SIZES) {
            byte[] batch = new byte[size];
            for (int pos = 0; pos < size; pos += json.length) System.arraycopy(json, 0, batch, pos, Math.min(json.length, size - pos));
            int[] levels = size <= 1 << 20 ? new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9} : new int[] {1, 6};
            for (int level : levels) {
                Compression framework = ProviderSet.of(Map.of(CompressionType.GZIP, service)).sharedCompression(Compression.gzip().level(level).build());
                ByteBufferOutputStream buf = new ByteBufferOutputStream(size / 4 + 64);
                try (OutputStream out = framework.wrapForOutput(buf, RecordBatch.CURRENT_MAGIC_VALUE)) {
                    out.write(batch);
                }
                ByteBuffer b = buf.buffer().flip();
                byte[] gz = new byte[b.remaining()];
                b.get(gz);
                assertOneMember(gz, size, name + " through the framework, " + size + " B, level " + level);

                ByteBufferOutputStream pieces = new ByteBufferOutputStream(size / 4 + 64);
                try (OutputStream out = framework.wrapForOutput(pieces, RecordBatch.CURRENT_MAGIC_VALUE)) {
                    int pos = 0;
                    while (pos < size) {
                        int n = Math.min(size - pos, r.nextInt(4) == 0 ? 1 : 1 + r.nextInt(r.nextBoolean() ? 300_000 : 5_000));
                        if (n == 1) out.write(batch[pos]);
                        else out.write(batch, pos, n);
                        pos += n;
                    }
                }
                b = pieces.buffer().flip();
                gz = new byte[b.remaining()];
                b.get(gz);
                assertOneMember(gz, size, name + " written in pieces, " + size + " B, level " + level);
            }
        }
        System.out.println("[" + name + "] one gzip member per batch: 0 B to 64 MiB, through the framework and in pieces");
    }

    public static void assertOneMember(byte[] gz, long expectedSize, String what) {
        assertTrue(gz.length >= 18, what + ": " + gz.length + " B is too short for a gzip member");
        assertEquals(0x1f, gz[0] & 0xff, what + ": ID1");
        assertEquals(0x8b, gz[1] & 0xff, what + ": ID2");
        assertEquals(8, gz[2] & 0xff, what + ": CM");
        int flg = gz[3] & 0xff;
        assertEquals(0, flg & 0xe0, what + ": reserved flags");
        int pos = 10;
        if ((flg & 4) != 0) pos += 2 + ((gz[pos] & 0xff) | (gz[pos + 1] & 0xff) << 8);
        if ((flg & 8) != 0) while (gz[pos++] != 0) { }
        if ((flg & 16) != 0) while (gz[pos++] != 0) { }
        if ((flg & 2) != 0) pos += 2;
        Inflater inflater = new Inflater(true);
        CRC32 crc = new CRC32();
        long size = 0;
        try {
            inflater.setInput(gz, pos, gz.length - pos);
            byte[] out = new byte[1 << 16];
            // inflate() reports finished() only after a block with BFINAL set has ended
            while (!inflater.finished()) {
                int n = inflater.inflate(out);
                if (n == 0 && (inflater.needsInput() || inflater.needsDictionary()))
                    fail(what + ": the deflate stream does not end (no BFINAL block) before the end of the input");
                crc.update(out, 0, n);
                size += n;
            }
            int trailer = gz.length - inflater.getRemaining();
            assertEquals(8, gz.length - trailer, what + ": expected exactly the 8-byte trailer after the deflate stream, found "
                + (gz.length - trailer) + " B (a second member or trailing bytes)");
            assertEquals(expectedSize, size, what + ": content size");
            assertEquals((int) crc.getValue(), le32(gz, trailer), what + ": trailer CRC-32");
            assertEquals((int) size, le32(gz, trailer + 4), what + ": trailer ISIZE");
        } catch (DataFormatException e) {
            fail(what + ": corrupt deflate data: " + e);
        } finally {
            inflater.end();
        }
    }

    private static int le32(byte[] b, int p) {
        return (b[p] & 0xff) | (b[p + 1] & 0xff) << 8 | (b[p + 2] & 0xff) << 16 | (b[p + 3] & 0xff) << 24;
    }
}
