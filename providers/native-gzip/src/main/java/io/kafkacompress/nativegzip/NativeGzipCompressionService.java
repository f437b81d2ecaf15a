/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Monitorable;
import org.apache.kafka.common.metrics.PluginMetrics;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Optional;

/**
 * gzip through native engines: ISA-L and libdeflate (Debian's {@code libisal2} and {@code libdeflate0}), over JNI.
 * Writes exactly one gzip member per batch, whatever its size, and reads exactly what Kafka's built-in gzip codec
 * reads: the same bytes, or a failure where it fails. Thread safe: native state is pooled and used by
 * one thread at a time. The pools belong to this instance and {@link #close()} frees them; the JNI library is loaded
 * once per class loader, so no stream takes a lock.
 */
public class NativeGzipCompressionService implements CompressionService, Monitorable {

    private final GzipEngines engines = new GzipEngines();
    private volatile boolean closed;

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
        requireUsable();
        return new NativeGzipOutputStream(engines, bufferStream, GzipEngines.normalize(compressionLevel.orElse(null)));
    }

    /** A batch up to the largest one written whole by the stream is compressed in one engine call. */
    @Override
    public int maxCompressedSize(int uncompressedSize) {
        return uncompressedSize <= NativeGzipOutputStream.WHOLE_MAX ? GzipEngines.maxMemberSize(uncompressedSize) : -1;
    }

    /** One engine call from the input's array into the output's: the same member the stream writes, no copy. */
    @Override
    public void compress(ByteBuffer input, ByteBuffer output, Optional<Integer> compressionLevel) throws IOException {
        requireUsable();
        int level = GzipEngines.normalize(compressionLevel.orElse(null));
        int n = engines.compressMemberInto(level, input.array(), input.arrayOffset() + input.position(), input.remaining(),
            output.array(), output.arrayOffset() + output.position(), output.remaining());
        input.position(input.limit());
        output.position(output.position() + n);
    }

    /** A batch that is one gzip member of at most 8 MiB is decompressed in one zlib-ng call. */
    @Override
    public int maxDecompressedSize(ByteBuffer buffer) {
        return NativeGzipInputStream.wholeMemberSize(buffer);
    }

    /** One zlib-ng call from the input's array into the output's, with zlib's checks and the trailer's. */
    @Override
    public void decompress(ByteBuffer input, ByteBuffer output) throws IOException {
        requireUsable();
        NativeGzipInputStream.inflateWholeMember(engines, input, output);
    }

    @Override
    public InputStream decompressedInputStream(ByteBuffer buffer, BufferProvider decompressionBufferProvider) {
        requireUsable();
        try {
            return new NativeGzipInputStream(engines, buffer, decompressionBufferProvider);
        } catch (IOException e) {
            // as the built-in GzipCompression.wrapForInput reports a bad gzip header
            throw new KafkaException(e);
        }
    }

    /**
     * The native memory this service holds, in the owner's metrics (group {@code plugins}, tags {@code config} and
     * {@code class}, and a client's {@code client-id}): its native compressors and inflaters, in use and idle.
     */
    @Override
    public void withPluginMetrics(PluginMetrics metrics) {
        metrics.addMetric(metrics.metricName("native-engines", "The native compressors and inflaters this "
            + "provider holds (in use and idle); close() frees them", new LinkedHashMap<>()),
            (Gauge<Integer>) (config, now) -> engines.live());
    }

    /** No lock: the load's result is fixed once made, closed is a volatile read. */
    private void requireUsable() {
        if (closed) throw new IllegalStateException("native gzip: the compression service is closed");
        String failure = NativeGzip.load();
        if (failure != null) throw new IllegalStateException("native gzip unavailable: " + failure);
    }

    /**
     * Frees this service's native compressors and its zlib-ng and zlib inflaters, idle ones now and those in use when
     * their stream gives them back. A stream created afterwards throws {@link IllegalStateException}; a stream still
     * open fails with an {@link IOException} when it next needs an engine. Either way the framework falls back to the
     * built-in codec.
     */
    @Override
    public void close() {
        closed = true;
        engines.close();
    }

    /** This service's engines and pools (for tests). */
    GzipEngines engines() {
        return engines;
    }

    @Override
    public String toString() {
        return "native gzip (JNI: ISA-L " + NativeGzip.ISAL_LIBRARY + " at level 1, libdeflate "
            + NativeGzip.LIBDEFLATE_LIBRARY + " at levels 2-9, zlib for batches over 8 MiB; zlib-ng inflate"
            + " (zlib over 1 MiB), one call per single-member batch)";
    }
}
