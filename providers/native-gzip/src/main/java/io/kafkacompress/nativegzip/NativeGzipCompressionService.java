/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.compress.CompressionService;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * gzip through native engines: ISA-L and libdeflate (Debian's {@code libisal2} and {@code libdeflate0}), over JNI.
 * Writes exactly one gzip member per batch, whatever its size, and reads exactly what Kafka's built-in gzip codec
 * reads: the same bytes, or a failure where it fails. Thread safe: native state is pooled and used by
 * one thread at a time.
 */
public class NativeGzipCompressionService implements CompressionService {

    @Override
    public String type() {
        return "gzip";
    }

    @Override
    public void checkAvailable() {
        String failure = NativeGzip.load();
        if (failure != null) throw new IllegalStateException("native gzip unavailable: " + failure);
    }

    @Override
    public OutputStream compressedOutputStream(OutputStream bufferStream, Optional<Integer> compressionLevel) {
        requireLoaded();
        return new NativeGzipOutputStream(bufferStream, GzipEngines.normalize(compressionLevel.orElse(null)));
    }

    @Override
    public InputStream decompressedInputStream(ByteBuffer buffer, BufferProvider decompressionBufferProvider) {
        requireLoaded();
        try {
            return new NativeGzipInputStream(buffer, decompressionBufferProvider);
        } catch (IOException e) {
            // as the built-in GzipCompression.wrapForInput reports a bad gzip header
            throw new KafkaException(e);
        }
    }

    private static void requireLoaded() {
        String failure = NativeGzip.load();
        if (failure != null) throw new IllegalStateException("native gzip unavailable: " + failure);
    }

    @Override
    public String toString() {
        return "native gzip (JNI: ISA-L " + NativeGzip.ISAL_LIBRARY + " at level 1, libdeflate "
            + NativeGzip.LIBDEFLATE_LIBRARY + " at levels 2-9, zlib for batches over 8 MiB; zlib inflate, one call"
            + " per single-member batch)";
    }
}
