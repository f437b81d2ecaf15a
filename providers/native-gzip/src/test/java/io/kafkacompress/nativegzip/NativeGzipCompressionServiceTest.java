/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.compress.ProviderSet;
import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.internals.Plugin;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.ByteBufferOutputStream;

import io.kafkacompress.testkit.Allocations;
import io.kafkacompress.testkit.GzipMembers;
import io.kafkacompress.testkit.TestData;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

public class NativeGzipCompressionServiceTest {

    static final NativeGzipCompressionService SERVICE = new NativeGzipCompressionService();
    static byte[] json;

    @BeforeAll
    static void setUp() throws IOException {
        SERVICE.checkAvailable();
        System.out.println("[native-gzip] provider: " + SERVICE);
        json = TestData.jsonRecords();
    }

    // ------------------------------------------------------------------ helpers

    /**
     * What a batch becomes as the framework hands it over: the whole-batch call (the engines) for a batch the provider
     * takes, else the built-in codec (the provider has no stream).
     */
    static byte[] providerCompress(CompressionService s, byte[] data, Integer level) throws IOException {
        int bound = s.maxCompressedSize(data.length);
        if (bound < 0) {
            assertNull(s.compressedOutputStream(new ByteArrayOutputStream(), Optional.ofNullable(level)));
            return builtInCompress(data, level == null ? -1 : level);
        }
        ByteBuffer out = ByteBuffer.allocate(bound);
        s.compress(ByteBuffer.wrap(data), out, Optional.ofNullable(level));
        return Arrays.copyOf(out.array(), out.position());
    }

    /**
     * What the provider reads, as the framework asks it: the whole-batch call for a batch it takes (whatever it returns
     * must be the built-in reader's bytes), else, or when the call throws, the built-in reader (the provider has no
     * stream).
     */
    static byte[] providerDecompress(CompressionService s, byte[] gz) throws IOException {
        int size = s.maxDecompressedSize(ByteBuffer.wrap(gz));
        if (size >= 0) {
            ByteBuffer out = ByteBuffer.allocate(size);
            try {
                s.decompress(ByteBuffer.wrap(gz), out);
                assertEquals(size, out.position(), "decoded what it announced");
                return out.array();
            } catch (IOException e) {
                // the framework lets the built-in reader decide
            }
        }
        assertNull(s.decompressedInputStream(ByteBuffer.wrap(gz), null));
        return builtInDecompress(gz);
    }

    /** The framework with this provider, as a producer, consumer or broker holds it. */
    static Compression framework(CompressionService s, int level) {
        return ProviderSet.of(Map.of(CompressionType.GZIP, s)).sharedCompression(Compression.gzip().level(level).build());
    }

    static byte[] frameworkCompress(Compression framework, byte[] data) throws IOException {
        ByteBufferOutputStream buf = new ByteBufferOutputStream(1024);
        try (OutputStream out = framework.wrapForOutput(buf, RecordBatch.CURRENT_MAGIC_VALUE)) {
            out.write(data);
        }
        ByteBuffer written = buf.buffer().flip();
        byte[] gz = new byte[written.remaining()];
        written.get(gz);
        return gz;
    }

    static InputStream frameworkRead(Compression framework, ByteBuffer gz) {
        return framework.wrapForInput(gz, RecordBatch.CURRENT_MAGIC_VALUE, BufferSupplier.create());
    }

    static byte[] builtInCompress(byte[] data, int level) throws IOException {
        ByteBufferOutputStream buf = new ByteBufferOutputStream(1024);
        try (OutputStream out = Compression.gzip().level(level).build().wrapForOutput(buf, RecordBatch.CURRENT_MAGIC_VALUE)) {
            out.write(data);
        }
        ByteBuffer b = buf.buffer();
        b.flip();
        byte[] r = new byte[b.remaining()];
        b.get(r);
        return r;
    }

    static byte[] builtInDecompress(byte[] gz) throws IOException {
        try (InputStream in = Compression.gzip().build().wrapForInput(ByteBuffer.wrap(gz), RecordBatch.CURRENT_MAGIC_VALUE,
                BufferSupplier.create())) {
            return in.readAllBytes();
        }
    }

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    static byte[] real(int size) {
        byte[] b = new byte[size];
        for (int pos = 0; pos < size; pos += json.length) System.arraycopy(json, 0, b, pos, Math.min(json.length, size - pos));
        return b;
    }

    static void assertRoundTrips(byte[] data, int level) throws IOException {
        byte[] mine = providerCompress(SERVICE, data, level);
        assertArrayEquals(data, builtInDecompress(mine), "provider -> built-in, level " + level + ", " + data.length + " B");
        assertArrayEquals(data, providerDecompress(SERVICE, mine), "provider -> provider, level " + level);
        byte[] theirs = builtInCompress(data, level);
        assertArrayEquals(data, providerDecompress(SERVICE, theirs), "built-in -> provider, level " + level + ", " + data.length + " B");
    }

    /** What a reader makes of some bytes: the bytes, or "failed". */
    static String outcome(boolean provider, byte[] gz) {
        try {
            byte[] r = provider ? providerDecompress(SERVICE, gz) : builtInDecompress(gz);
            return "ok:" + Arrays.hashCode(r) + ":" + r.length;
        } catch (IOException | KafkaException e) {
            return "failed";
        }
    }

    static void assertSameOutcome(byte[] gz, String what) {
        String builtIn = outcome(false, gz);
        String mine = outcome(true, gz);
        assertEquals(builtIn, mine, what);
    }

    // ------------------------------------------------------------------ tests

    @Test
    void levelMappingIsDocumented() {
        for (int level = 1; level <= 9; level++) System.out.println("[native-gzip] level " + level + " -> " + GzipEngines.describe(level));
        assertEquals(GzipEngines.Engine.ISAL, GzipEngines.engine(1));
        assertEquals(GzipEngines.Engine.LIBDEFLATE, GzipEngines.engine(6));
        assertEquals(GzipEngines.Engine.LIBDEFLATE, GzipEngines.engine(2));
        // one libdeflate level up from Kafka's for small members only (outputIsNoBiggerThanBuiltInAtEachLevel checks both)
        assertEquals(7, GzipEngines.engineLevel(6, GzipEngines.LARGE_MEMBER - 1));
        assertEquals(6, GzipEngines.engineLevel(6, GzipEngines.LARGE_MEMBER));
    }

    @Test
    void roundTripsEverySizeAndLevel() throws IOException {
        int[] sizes = {0, 1, 2, 100, 4095, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 65536 + 3, 300_000, 1 << 20};
        for (int level = 1; level <= 9; level++) {
            for (int size : sizes) {
                assertRoundTrips(random(size, size * 31L + level), level);
                assertRoundTrips(real(size), level);
            }
        }
        // the default level (no level configured)
        byte[] data = real(100_000);
        assertArrayEquals(data, builtInDecompress(providerCompress(SERVICE, data, null)));
    }

    /**
     * No streams: the framework streams the batches the engines do not take with the built-in codec, one member past
     * the whole-batch limit too, read back through the framework in reads of any size.
     */
    @Test
    void theFrameworkStreamsWhatTheEnginesDoNotTakeWithTheBuiltInCodec() throws IOException {
        assertNull(SERVICE.compressedOutputStream(new ByteArrayOutputStream(), Optional.of(6)));
        assertNull(SERVICE.decompressedInputStream(ByteBuffer.wrap(builtInCompress(real(100), 6)), null));
        int[] sizes = {0, 1, 64 * 1024, 1 << 20, SERVICE.maxWholeBatchBytes(), SERVICE.maxWholeBatchBytes() + 5};
        for (int level : new int[] {1, 6}) {
            Compression framework = framework(SERVICE, level);
            for (int size : sizes) {
                byte[] data = real(size);
                byte[] gz = frameworkCompress(framework, data);
                assertArrayEquals(data, builtInDecompress(gz), "level " + level + ", " + size + " B");
                GzipMembers.assertOneMember(gz, data.length, "level " + level + ", " + size + " B");
                if (size > SERVICE.maxWholeBatchBytes())
                    assertArrayEquals(builtInCompress(data, level), gz, "the built-in codec's bytes past the limit");
                // big reads, small reads and both mixed
                for (int[] reads : new int[][] {{1 << 20}, {16 * 1024}, {100}, {1, 70_000, 3, 16_384, 9_000}}) {
                    ByteArrayOutputStream back = new ByteArrayOutputStream();
                    try (InputStream in = frameworkRead(framework, ByteBuffer.wrap(gz))) {
                        byte[] buf = new byte[1 << 20];
                        for (int i = 0; ; i++) {
                            int n = in.read(buf, 0, reads[i % reads.length]);
                            if (n < 0) break;
                            back.write(buf, 0, n);
                        }
                    }
                    assertArrayEquals(data, back.toByteArray(), "reads of " + Arrays.toString(reads) + ", level " + level + ", " + size + " B");
                }
            }
        }
    }

    @Test
    void roundTripsSixteenMebibytes() throws IOException {
        int size = 16 << 20;
        for (int level : new int[] {1, 6, 9}) {
            assertRoundTrips(real(size), level);
        }
        assertRoundTrips(random(size, 42), 1);
        assertRoundTrips(random(size + 12345, 43), 6);
    }

    @Test
    void outputIsNoBiggerThanBuiltInAtEachLevel() throws IOException {
        for (int batchSize : new int[] {16 * 1024, GzipEngines.LARGE_MEMBER, 112 * 1024, 1 << 20}) {
            for (int level = 1; level <= 9; level++) {
                long mine = 0;
                long theirs = 0;
                // every batch of the data set, each compressed separately, as Kafka does
                for (int pos = 0; pos + batchSize <= json.length; pos += batchSize) {
                    byte[] batch = Arrays.copyOfRange(json, pos, pos + batchSize);
                    mine += providerCompress(SERVICE, batch, level).length;
                    theirs += builtInCompress(batch, level).length;
                }
                System.out.printf("[native-gzip] %d B batches, level %d: %d B (built-in %d B, %.4f)%n", batchSize, level, mine, theirs,
                    (double) mine / theirs);
                assertTrue(mine <= theirs, batchSize + " B batches, level " + level + ": " + mine + " > built-in " + theirs);
            }
        }
    }

    @Test
    void readsMultiMemberAndConcatenatedGzip() throws IOException {
        byte[] a = real(50_000);
        byte[] b = random(70_000, 7);
        byte[] c = new byte[0];
        ByteArrayOutputStream concat = new ByteArrayOutputStream();
        concat.write(builtInCompress(a, 1));
        concat.write(providerCompress(SERVICE, b, 9));
        concat.write(builtInCompress(c, 6));
        concat.write(providerCompress(SERVICE, a, 3));
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        expected.write(a);
        expected.write(b);
        expected.write(c);
        expected.write(a);
        assertArrayEquals(expected.toByteArray(), providerDecompress(SERVICE, concat.toByteArray()));
        assertArrayEquals(expected.toByteArray(), builtInDecompress(concat.toByteArray()));
        // a batch over the whole-buffer limit is streamed as one member
        byte[] big = real(SERVICE.maxWholeBatchBytes() * 2 + 1000);
        byte[] gz = providerCompress(SERVICE, big, 1);
        assertArrayEquals(big, builtInDecompress(gz));
        GzipMembers.assertOneMember(gz, big.length, "streamed batch");
    }

    @Test
    void trailingGarbageIsTreatedAsTheBuiltInCodecDoes() throws IOException {
        byte[] member = builtInCompress(real(20_000), 6);
        Random r = new Random(1);
        for (int n : new int[] {1, 2, 7, 8, 17, 18, 19, 20, 26, 27, 30, 100, 5000}) {
            byte[] garbage = new byte[n];
            r.nextBytes(garbage);
            assertSameOutcome(concat(member, garbage), "random garbage of " + n + " B");
            Arrays.fill(garbage, (byte) 0);
            assertSameOutcome(concat(member, garbage), "zeros " + n + " B");
            if (n >= 2) {
                garbage[0] = 0x1f;
                garbage[1] = (byte) 0x8b;
                assertSameOutcome(concat(member, garbage), "gzip magic then " + (n - 2) + " B");
            }
            if (n >= 10) {
                byte[] header = Arrays.copyOf(member, 10);
                System.arraycopy(header, 0, garbage, 0, 10);
                assertSameOutcome(concat(member, garbage), "gzip header then " + (n - 10) + " B");
            }
        }
    }

    @Test
    void truncatedInputFailsAsTheBuiltInCodecDoes() throws IOException {
        byte[] member = builtInCompress(real(3_000), 6);
        for (int len = 0; len < member.length; len++) {
            byte[] cut = Arrays.copyOf(member, len);
            assertEquals("failed", outcome(true, cut), "truncated to " + len);
            assertEquals("failed", outcome(false, cut), "built-in, truncated to " + len);
        }
        byte[] big = builtInCompress(real(1 << 20), 1);
        for (int len : new int[] {big.length / 3, big.length / 2, big.length - 9, big.length - 1}) {
            assertEquals("failed", outcome(true, Arrays.copyOf(big, len)), "truncated to " + len);
        }
    }

    @Test
    void bitFlipsGiveTheBuiltInCodecsOutcome() throws IOException {
        byte[] member = builtInCompress(real(2_000), 6);
        int failures = 0;
        for (int bit = 0; bit < member.length * 8; bit++) {
            byte[] flipped = member.clone();
            flipped[bit / 8] ^= (byte) (1 << (bit % 8));
            assertSameOutcome(flipped, "bit " + bit + " of " + member.length + " B");
            if (outcome(true, flipped).equals("failed")) failures++;
        }
        System.out.println("[native-gzip] bit flips: " + member.length * 8 + " cases, " + failures + " reported corrupt, all as the built-in codec");
        assertTrue(failures > member.length * 8 / 2);
        // corruption deep inside a large stream
        byte[] big = providerCompress(SERVICE, real(1 << 20), 6);
        Random r = new Random(3);
        for (int i = 0; i < 50; i++) {
            byte[] flipped = big.clone();
            int bit = 80 + r.nextInt((big.length - 20) * 8);
            flipped[bit / 8] ^= (byte) (1 << (bit % 8));
            assertEquals("failed", outcome(true, flipped), "bit " + bit);
        }
    }

    @Test
    void errorsAreIOExceptionsFromReadAndKafkaExceptionForABadHeader() throws IOException {
        Compression framework = framework(SERVICE, 6);
        byte[] member = builtInCompress(real(100_000), 6);
        byte[] corrupt = member.clone();
        corrupt[member.length / 2] ^= 0x55;
        try (InputStream in = frameworkRead(framework, ByteBuffer.wrap(corrupt))) {
            in.readAllBytes();
            fail("corrupt data was read");
        } catch (IOException expected) {
            // the batch is reported corrupt, as with GZIPInputStream
        }
        try {
            frameworkRead(framework, ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})).read();
            fail("bad header accepted");
        } catch (KafkaException expected) {
            assertNotNull(expected.getCause());
        }
    }

    /** The whole-batch call's bytes, or "declined" (-1), or "failed". */
    static String whole(byte[] gz) {
        int size = SERVICE.maxDecompressedSize(ByteBuffer.wrap(gz));
        if (size < 0) return "declined";
        ByteBuffer out = ByteBuffer.allocate(size);
        try {
            SERVICE.decompress(ByteBuffer.wrap(gz), out);
        } catch (IOException e) {
            return "failed";
        }
        assertEquals(size, out.position(), "decoded what it announced");
        return "ok:" + Arrays.hashCode(out.array()) + ":" + size;
    }

    @Test
    void wholeBatchCallDecodesSingleMembersAndNothingElse() throws IOException {
        for (int size : new int[] {1, 16 * 1024, 1 << 20, 8 << 20}) {
            byte[] data = real(size);
            for (byte[] gz : new byte[][] {builtInCompress(data, 6), providerCompress(SERVICE, data, 1),
                builtInCompress(random(size, size), 9)}) {
                assertEquals(outcome(false, gz), whole(gz), size + " B");
                assertTrue(whole(gz).startsWith("ok:"), size + " B");
            }
        }
        // past the largest buffer the framework lends, an empty member, a size past deflate's ratio: the stream reads
        assertEquals("declined", whole(builtInCompress(real((8 << 20) + 1), 6)));
        assertEquals("declined", whole(builtInCompress(new byte[0], 6)));
        byte[] member = builtInCompress(real(50_000), 6);
        byte[] lying = member.clone();
        lying[lying.length - 1] = 0x7f;
        assertEquals("declined", whole(lying));
        // several members, bytes after the member, a trailer that lies: the call throws, the built-in reader decides
        assertEquals("failed", whole(concat(member, member)));
        for (int n : new int[] {1, 8, 19}) {
            // the last four bytes are no longer the member's size: declined (read as 0) or refused
            String verdict = whole(concat(member, new byte[n]));
            assertTrue(verdict.equals("failed") || verdict.equals("declined"), n + " bytes after: " + verdict);
        }
        byte[] sized = concat(member, new byte[] {1, 2, 3, 0, 0, 1, 0});   // ends in a plausible size (65536)
        assertEquals("failed", whole(sized));
        for (int at : new int[] {member.length - 1, member.length - 4, member.length - 5, member.length - 8}) {
            byte[] lie = member.clone();
            lie[at] ^= 0x01;
            // a CRC-32 that lies fails the call; a size that lies is declined (past 8 MiB) or fails it
            String verdict = whole(lie);
            assertTrue(verdict.equals("failed") || at >= member.length - 4 && verdict.equals("declined"),
                "trailer byte " + at + ": " + verdict);
        }
        byte[] corrupt = member.clone();
        corrupt[10] = (byte) 0xff;   // the first deflate block of the reserved type
        assertEquals("failed", whole(corrupt));
        assertEquals("failed", outcome(false, corrupt));
    }

    @Test
    void theFrameworkReadsSingleMembersAndTrailingBytesAsTheBuiltInCodec() throws IOException {
        Compression compression = ProviderSet.of(Map.of(CompressionType.GZIP, SERVICE)).sharedCompression(Compression.gzip().build());
        for (int size : new int[] {100, 300_000, 8 << 20}) {
            byte[] data = real(size);
            for (byte[] gz : new byte[][] {builtInCompress(data, 6), concat(builtInCompress(data, 6), new byte[3])}) {
                try (InputStream in = compression.wrapForInput(ByteBuffer.wrap(gz), RecordBatch.CURRENT_MAGIC_VALUE,
                        BufferSupplier.create())) {
                    assertArrayEquals(data, in.readAllBytes(), size + " B");
                }
            }
        }
    }

    /** The whole-batch call takes heap buffers only: the framework reads direct ones with the built-in codec. */
    @Test
    void directBuffersAreReadByTheBuiltInCodec() throws IOException {
        Compression framework = framework(SERVICE, 6);
        for (byte[] d : new byte[][] {real(1 << 20), real(500_000)}) {
            byte[] gz = builtInCompress(d, 6);
            ByteBuffer direct = ByteBuffer.allocateDirect(gz.length);
            direct.put(gz).flip();
            assertEquals(-1, SERVICE.maxDecompressedSize(direct), "the whole-batch call takes heap buffers only");
            try (InputStream in = frameworkRead(framework, direct)) {
                assertArrayEquals(d, in.readAllBytes());
            }
        }
    }

    @Test
    void theOwnersMetricsShowTheNativeEnginesItHolds() throws IOException {
        NativeGzipCompressionService s = new NativeGzipCompressionService();
        try (Metrics metrics = new Metrics()) {
            Plugin<NativeGzipCompressionService> plugin = Plugin.wrapInstance(s, metrics, "compression.gzip.provider");
            MetricName name = new MetricName("native-engines", "plugins", "",
                Map.of("config", "compression.gzip.provider", "class", "NativeGzipCompressionService"));
            assertEquals(0, metrics.metrics().get(name).metricValue());
            providerCompress(s, real(100_000), 6);
            providerDecompress(s, builtInCompress(real(100_000), 6));
            assertTrue((Integer) metrics.metrics().get(name).metricValue() >= 1);
            s.close();
            assertEquals(0, metrics.metrics().get(name).metricValue(), "close() freed them");
            plugin.close();
            assertEquals(null, metrics.metrics().get(name));
        } catch (Exception e) {
            throw new IOException(e);
        }
    }

    @Test
    void manyThreadsAtOnce() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> results = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                final int seed = t;
                results.add(pool.submit(() -> {
                    Random r = new Random(seed);
                    for (int i = 0; i < 150; i++) {
                        int level = 1 + r.nextInt(9);
                        int size = r.nextInt(200_000);
                        byte[] data = r.nextBoolean() ? real(size) : random(size, r.nextLong());
                        byte[] gz = providerCompress(SERVICE, data, level);
                        assertArrayEquals(data, builtInDecompress(gz));
                        assertArrayEquals(data, providerDecompress(SERVICE, gz));
                        assertArrayEquals(data, providerDecompress(SERVICE, builtInCompress(data, level)));
                    }
                    return null;
                }));
            }
            for (Future<?> f : results) f.get(10, TimeUnit.MINUTES);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void nativeMemoryStaysFlatOverAHundredThousandCycles() throws IOException {
        byte[] batch = real(16 * 1024);
        byte[] corrupt = builtInCompress(batch, 6);
        corrupt[corrupt.length / 2] ^= 0x10;
        for (int i = 0; i < 5_000; i++) cycle(batch, corrupt, i);
        System.gc();
        long before = rssKiB();
        for (int i = 0; i < 100_000; i++) cycle(batch, corrupt, i);
        System.gc();
        long after = rssKiB();
        System.out.printf("[native-gzip] 100,000 cycles: VmRSS %d KiB -> %d KiB (%+d KiB)%n", before, after, after - before);
        assertTrue(after - before < 48 * 1024, "RSS grew by " + (after - before) + " KiB");
    }

    private static final Compression CYCLE_FRAMEWORK = framework(SERVICE, 6);

    private static void cycle(byte[] batch, byte[] corrupt, int i) throws IOException {
        int level = 1 + i % 9;
        byte[] gz = providerCompress(SERVICE, batch, level);
        if (providerDecompress(SERVICE, gz).length != batch.length) throw new AssertionError();
        if (i % 10 == 0) {   // error path: the native state must be given back too
            try {
                providerDecompress(SERVICE, corrupt);
                throw new AssertionError("corrupt input read");
            } catch (IOException expected) {
                // expected
            }
        }
        if (i % 10 == 3) {   // two members: the whole-batch call refuses them, the built-in reader reads them
            if (providerDecompress(SERVICE, concat(gz, gz)).length != 2 * batch.length) throw new AssertionError();
        }
        if (i % 10 == 7) {   // the whole-batch call without room for the member: engine given back
            try {
                SERVICE.compress(ByteBuffer.wrap(batch), ByteBuffer.allocate(64), Optional.of(level));
                throw new AssertionError("a member fit in 64 B");
            } catch (IOException expected) {
                // expected
            }
        }
        if (i % 10 == 5) {   // a batch the framework decompressed whole, abandoned half-way, closed
            InputStream in = frameworkRead(CYCLE_FRAMEWORK, ByteBuffer.wrap(gz));
            in.read(new byte[100]);
            in.close();
        }
    }

    // ------------------------------------------------------------------ lifecycle and failures (issue 29)

    @Test
    void theWholeBatchCallInflatesWithOnePooledZlibNgInflater() throws IOException {
        NativeGzipCompressionService s = new NativeGzipCompressionService();
        try {
            s.checkAvailable();
            for (int size : new int[] {100_000, 3 << 20, SERVICE.maxWholeBatchBytes()}) {
                byte[] batch = real(size);
                assertArrayEquals(batch, providerDecompress(s, builtInCompress(batch, 6)), "size " + size);
                assertEquals(1, s.engines().idleInflaters(), "size " + size + ": the inflater went back to its pool");
            }
            byte[] corrupt = builtInCompress(real(100_000), 6);
            corrupt[corrupt.length / 2] ^= 0x10;
            assertThrows(IOException.class, () -> s.decompress(ByteBuffer.wrap(corrupt), ByteBuffer.allocate(100_000)));
            assertEquals(1, s.engines().idleInflaters(), "given back after corrupt data too");
            assertEquals(1, s.engines().live());
        } finally {
            s.close();
        }
    }

    @Test
    void theWholeBatchCallWritesOneMemberInPlace() throws IOException {
        for (int size : new int[] {0, 1, 1000, 64 * 1024, 1 << 20, SERVICE.maxWholeBatchBytes()}) {
            for (boolean incompressible : new boolean[] {false, true}) {
                byte[] data = incompressible ? random(size, size) : real(size);
                for (int level : new int[] {1, 6, 9}) {
                    String what = size + " B, level " + level + (incompressible ? ", random" : "");
                    int bound = SERVICE.maxCompressedSize(size);
                    assertTrue(bound > size, what);
                    // arrays with offsets, as a batch's buffer has them
                    byte[] in = new byte[size + 5];
                    System.arraycopy(data, 0, in, 5, size);
                    ByteBuffer input = ByteBuffer.wrap(in, 3, size + 2).slice();
                    input.position(2);
                    byte[] out = new byte[bound + 20];
                    ByteBuffer output = ByteBuffer.wrap(out, 4, bound + 16).slice();
                    output.position(7);
                    SERVICE.compress(input, output, Optional.of(level));
                    assertEquals(input.limit(), input.position(), what);
                    byte[] member = Arrays.copyOfRange(out, 11, 4 + output.position());
                    assertArrayEquals(providerCompress(SERVICE, data, level), member, what + ": what it writes without offsets");
                    assertArrayEquals(data, builtInDecompress(member), what);
                    GzipMembers.assertOneMember(member, size, what);
                }
            }
        }
        assertEquals(-1, SERVICE.maxCompressedSize(SERVICE.maxWholeBatchBytes() + 1), "past the framework's own limit");
        IOException e = assertThrows(IOException.class,
            () -> SERVICE.compress(ByteBuffer.wrap(real(100_000)), ByteBuffer.allocate(100), Optional.empty()));
        assertTrue(e.getMessage().contains("compression failed"), e.getMessage());
    }

    @Test
    void closeFreesTheServicesNativeCompressorsAndInflaters() throws IOException {
        NativeGzipCompressionService s = new NativeGzipCompressionService();
        s.checkAvailable();
        byte[] small = real(16 * 1024);
        byte[] large = real(200_000);
        for (int level = 1; level <= 9; level++) {
            for (byte[] batch : new byte[][] {small, large}) {
                byte[] gz = providerCompress(s, batch, level);
                assertArrayEquals(batch, providerDecompress(s, gz));
            }
        }
        int live = s.engines().live();
        System.out.println("[native-gzip] live native compressors and inflaters before close: " + live);
        assertTrue(live >= 9, "a compressor per engine setting (8) and an inflater are pooled, got " + live);
        s.close();
        assertEquals(0, s.engines().live(), "close() frees every idle native compressor and inflater");
    }

    @Test
    void callsAfterCloseFailCleanlySoThatTheFrameworkFallsBack() throws IOException {
        NativeGzipCompressionService s = new NativeGzipCompressionService();
        s.checkAvailable();
        byte[] batch = real(100_000);
        s.close();
        assertThrows(IllegalStateException.class, () -> s.compress(ByteBuffer.wrap(batch), ByteBuffer.allocate(200_000), Optional.empty()));
        assertThrows(IllegalStateException.class, () -> s.decompress(ByteBuffer.wrap(builtInCompress(batch, 6)), ByteBuffer.allocate(100_000)));
        // through the framework: the built-in codec serves the batch
        Compression framework = framework(s, 6);
        byte[] gz = frameworkCompress(framework, batch);
        assertArrayEquals(batch, builtInDecompress(gz));
        try (InputStream in = frameworkRead(framework, ByteBuffer.wrap(gz))) {
            assertArrayEquals(batch, in.readAllBytes());
        }
        assertEquals(0, s.engines().live());
    }

    @Test
    void aFailedNativeAllocationIsAnIOException() {
        // the engines return no handle (0) for a level they do not have, exactly as when malloc fails
        AtomicInteger live = new AtomicInteger();
        IOException isal = assertThrows(IOException.class, () -> GzipEngines.Compressor.create(GzipEngines.Engine.ISAL, 4, live));
        assertTrue(isal.getMessage().contains("could not allocate an ISA-L compressor"), isal.getMessage());
        IOException ld = assertThrows(IOException.class, () -> GzipEngines.Compressor.create(GzipEngines.Engine.LIBDEFLATE, 99, live));
        assertTrue(ld.getMessage().contains("could not allocate a libdeflate compressor"), ld.getMessage());
        assertEquals(0, live.get());
    }

    @Test
    void trailersClaimingSixtyFourMebibytesAllocateNothingOfThatSize() throws IOException {
        long bound = 8L * 1024 * 1024;
        // the whole-batch call declines both (past 8 MiB): the built-in codec reads them
        assertEquals(-1, SERVICE.maxDecompressedSize(ByteBuffer.wrap(Allocations.lyingTrailer())));
        assertEquals(-1, SERVICE.maxDecompressedSize(ByteBuffer.wrap(Allocations.bomb())));
        Allocations.assertBounded(SERVICE, Allocations.lyingTrailer(), bound, "100 KB member, trailer claiming 64 MiB");
        Allocations.assertBounded(SERVICE, Allocations.bomb(), bound, "64 MiB of zeros in one member");
    }

    static long rssKiB() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
        throw new IOException("no VmRSS");
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }
}
