/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Monitorable;
import org.apache.kafka.common.metrics.PluginMetrics;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Optional;

/**
 * gzip through native engines: ISA-L and libdeflate (Debian's {@code libisal2} and {@code libdeflate0}), over JNI,
 * compress; zlib-ng (built into the JNI library) inflates. Writes exactly one gzip member per batch, whatever its size,
 * and reads exactly what Kafka's built-in gzip codec reads: the same bytes, or a failure where it fails.
 * <p>
 * The engines serve Kafka's provider framework's whole-batch calls, which hand over a batch of up to 8 MiB at once
 * ({@link #compress(ByteBuffer, ByteBuffer, Optional)}, {@link #decompress(ByteBuffer, ByteBuffer)}). The service
 * has no streams: neither whole-buffer engine can stream one gzip member (libdeflate has no streaming API; ISA-L
 * streams only at levels whose output is bigger than zlib's above level 1), and a stream that held the whole batch to
 * call them at its close would hold a second copy of it outside the framework's bound per owner, which is exactly
 * when the framework asks for a stream: when its owner has no room to lend for the whole-batch call. The framework's
 * built-in codec streams those batches, and reads the batches {@link #maxDecompressedSize(ByteBuffer)} declines
 * (several members, bytes after the member, over 8 MiB, direct buffers). See the module README.
 * <p>
 * Thread safe: native state is pooled and used by one thread at a time. The pools belong to this instance and
 * {@link #close()} frees them; the JNI library is loaded once per class loader, so no call takes a lock.
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

    /** A batch of up to {@link #maxWholeBatchBytes()} (the framework's own limit) is compressed in one engine call. */
    @Override
    public int maxCompressedSize(int uncompressedSize) {
        return uncompressedSize <= maxWholeBatchBytes() ? GzipEngines.maxMemberSize(uncompressedSize) : -1;
    }

    /** One engine call from the input's array into the output's: one gzip member, no copy. */
    @Override
    public void compress(ByteBuffer input, ByteBuffer output, Optional<Integer> compressionLevel) throws IOException {
        requireUsable();
        int level = GzipEngines.normalize(compressionLevel.orElse(null));
        int n = engines.compressMemberInto(level, input.array(), input.arrayOffset() + input.position(), input.remaining(),
            output.array(), output.arrayOffset() + output.position(), output.remaining());
        input.position(input.limit());
        output.position(output.position() + n);
    }

    /** A batch that is one gzip member of at most {@link #maxWholeBatchBytes()} is decompressed in one zlib-ng call. */
    @Override
    public int maxDecompressedSize(ByteBuffer buffer) {
        return GzipMember.wholeMemberSize(buffer, maxWholeBatchBytes());
    }

    /** One zlib-ng call from the input's array into the output's, with zlib's checks and the trailer's. */
    @Override
    public void decompress(ByteBuffer input, ByteBuffer output) throws IOException {
        requireUsable();
        GzipMember.inflateWholeMember(engines, input, output);
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
     * Frees this service's native compressors and zlib-ng inflaters, idle ones now and those in use when their call
     * gives them back. A whole-batch call made afterwards throws, and the framework falls back to the built-in codec.
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
            + NativeGzip.LIBDEFLATE_LIBRARY + " at levels 2-9, zlib-ng inflate; one call per batch of up to 8 MiB,"
            + " the built-in codec streams the rest)";
    }
}
