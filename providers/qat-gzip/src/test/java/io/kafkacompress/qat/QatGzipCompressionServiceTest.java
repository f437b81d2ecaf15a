/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.qat;

import io.kafkacompress.testkit.Allocations;
import io.kafkacompress.testkit.GzipFuzz;
import io.kafkacompress.testkit.GzipMembers;
import io.kafkacompress.testkit.TestData;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.compress.ProviderSet;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.ByteBufferOutputStream;

import com.intel.qat.QatZipper;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
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
import java.util.zip.GZIPInputStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where QATzip is installed (the trixie container of tests/project/test_providers.py, KC_QAT_EXPECT=available), the
 * software path is exercised in full; elsewhere (KC_QAT_EXPECT=unavailable, the bookworm host) the provider must
 * report itself unavailable, without crashing, so that the framework falls back.
 */
public class QatGzipCompressionServiceTest {

    static final String EXPECT = System.getenv().getOrDefault("KC_QAT_EXPECT", "");
    static QatGzipCompressionService service;
    static String unavailable;
    static byte[] json;

    @BeforeAll
    static void setUp() throws IOException {
        service = new QatGzipCompressionService();
        service.configure(Map.of(QatGzipCompressionService.MODE_CONFIG, "software"));
        try {
            service.checkAvailable();
            System.out.println("[qat-gzip] QAT path: AVAILABLE here: " + service);
        } catch (IllegalStateException e) {
            unavailable = e.getMessage();
            System.out.println("[qat-gzip] QAT path: UNAVAILABLE here (the framework falls back to the built-in codec): " + unavailable);
        }
        json = TestData.jsonRecords();
    }

    static void requireAvailable() {
        Assumptions.assumeTrue(unavailable == null, "QATzip not available here: " + unavailable);
    }

    @Test
    void availabilityIsAsExpected() {
        if (EXPECT.equals("available")) assertEquals(null, unavailable, "QATzip should work here");
        if (EXPECT.equals("unavailable")) {
            assertTrue(unavailable != null && unavailable.contains("libqatzip.so.3"), String.valueOf(unavailable));
            // and every entry point refuses cleanly rather than crashing
            assertThrows(IOException.class, () -> service.compress(ByteBuffer.wrap(new byte[100]), ByteBuffer.allocate(200), Optional.empty()));
        }
    }

    @Test
    void hardwareModeWithoutADeviceIsUnavailableWithoutCrashing() {
        Assumptions.assumeTrue(QatEnvironment.hardwareAbsentReason() != null, "this host has QAT devices");
        QatGzipCompressionService s = new QatGzipCompressionService();
        s.configure(Map.of(QatGzipCompressionService.MODE_CONFIG, "hardware"));
        IllegalStateException e = assertThrows(IllegalStateException.class, s::checkAvailable);
        System.out.println("[qat-gzip] mode=hardware: " + e.getMessage());
    }

    @Test
    void badModeIsAConfigError() {
        assertThrows(ConfigException.class, () -> new QatGzipCompressionService().configure(Map.of(QatGzipCompressionService.MODE_CONFIG, "turbo")));
    }

    // ------------------------------------------------------------------ with QATzip

    static byte[] compress(byte[] data, Integer level) throws IOException {
        return compress(service, data, level);
    }

    /**
     * What a batch becomes as the framework hands it over: QATzip's whole-batch call, else the built-in codec (the
     * service has no stream).
     */
    static byte[] compress(QatGzipCompressionService s, byte[] data, Integer level) throws IOException {
        int bound = s.maxCompressedSize(data.length);
        if (bound >= 0) {
            ByteBuffer out = ByteBuffer.allocate(bound);
            s.compress(ByteBuffer.wrap(data), out, Optional.ofNullable(level));
            return Arrays.copyOf(out.array(), out.position());
        }
        assertNull(s.compressedOutputStream(new ByteArrayOutputStream(), Optional.ofNullable(level)));
        return builtInCompress(data, level == null ? -1 : level);
    }

    /** What the framework reads a batch with for this service: the built-in codec (no whole-batch call, no stream). */
    static byte[] decompress(byte[] gz) throws IOException {
        assertEquals(-1, service.maxDecompressedSize(ByteBuffer.wrap(gz)));
        assertNull(service.decompressedInputStream(ByteBuffer.wrap(gz), null));
        return builtInDecompress(gz);
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
        try (InputStream in = Compression.gzip().build().wrapForInput(ByteBuffer.wrap(gz), RecordBatch.CURRENT_MAGIC_VALUE, BufferSupplier.create())) {
            return in.readAllBytes();
        }
    }

    static byte[] real(int size) {
        byte[] b = new byte[size];
        for (int pos = 0; pos < size; pos += json.length) System.arraycopy(json, 0, b, pos, Math.min(json.length, size - pos));
        return b;
    }

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    static String outcome(boolean provider, byte[] gz) {
        try {
            byte[] r = provider ? decompress(gz) : builtInDecompress(gz);
            return "ok:" + Arrays.hashCode(r) + ":" + r.length;
        } catch (IOException | KafkaException e) {
            return "failed";
        }
    }

    /** Issue 17: exactly one gzip member per batch, 0 B to 64 MiB, through the framework and written in pieces. */
    @Test
    void everyBatchIsOneGzipMember() throws IOException {
        requireAvailable();
        GzipMembers.assertOneMemberPerBatch(service, "qat-gzip", json);
        System.out.println("[qat-gzip] batches QATzip wrote as more than one member (rewritten by the built-in writer): "
            + service.notOneMember);
        assertEquals(0, service.notOneMember, "QATzip's software path writes one member");
    }

    /** What QATzip itself writes for a large input: one member (DEFLATE_GZIP) and one deflate stream (DEFLATE_RAW). */
    @Test
    void qatzipWritesOneMemberForLargeInputs() {
        requireAvailable();
        for (int size : new int[] {100_000, 1 << 20, 20 << 20}) {
            byte[] data = real(size);
            for (QatZipper.HardwareBufferSize hb : QatZipper.HardwareBufferSize.values()) {
                for (QatZipper.DataFormat format : new QatZipper.DataFormat[] {QatZipper.DataFormat.DEFLATE_GZIP, QatZipper.DataFormat.DEFLATE_RAW}) {
                    QatZipper z = new QatZipper.Builder().setAlgorithm(QatZipper.Algorithm.DEFLATE).setDataFormat(format)
                        .setMode(QatZipper.Mode.AUTO).setLevel(6).setHardwareBufferSize(hb).build();
                    try {
                        byte[] out = new byte[z.maxCompressedLength(size)];
                        int n = z.compress(data, 0, size, out, 0, out.length);
                        byte[] gz = Arrays.copyOf(out, n);
                        if (format == QatZipper.DataFormat.DEFLATE_RAW) gz = GzipFuzz.wrap(gz, data);
                        GzipMembers.assertOneMember(gz, size, "QATzip " + format + ", " + hb + ", " + size + " B");
                        System.out.printf("[qat-gzip] QATzip %s, hardware buffer %d B, %d B: one member (%d B)%n", format,
                            hb.getValue(), size, n);
                    } finally {
                        z.end();
                    }
                }
            }
        }
    }

    @Test
    void corpusGetsTheBuiltInReadersVerdicts() throws IOException {
        requireAvailable();
        GzipFuzz fuzz = new GzipFuzz(service, "qat-gzip", json, 0);
        List<byte[]> corpus = GzipFuzz.corpus(Path.of(System.getProperty("kc.corpus.dir",
            System.getenv().getOrDefault("KC_CORPUS_DIR", "../testkit/corpus"))));
        for (byte[] input : corpus) assertNull(fuzz.mismatch(input), GzipFuzz.hex(input));
        System.out.println("[qat-gzip] corpus: " + corpus.size() + " reproducers, all read as the built-in reader does");
    }

    @Test
    void fuzzAgainstTheBuiltInReader() {
        requireAvailable();
        long seed = GzipFuzz.seed();
        long seconds = GzipFuzz.seconds(30);
        long inputs = GzipFuzz.inputs();
        System.out.println("[qat-gzip] fuzz seed " + seed + " (rerun: -Dkc.fuzz.seed=" + seed
            + (inputs > 0 ? " -Dkc.fuzz.inputs=" + inputs : " -Dkc.fuzz.seconds=" + seconds) + ")");
        long tried = new GzipFuzz(service, "qat-gzip", json, seed).run(seed, seconds);
        assertTrue(tried >= inputs, "the fuzz run stopped after " + tried + " of " + inputs + " inputs");
    }

    @Test
    void roundTripsEverySizeAndLevel() throws IOException {
        requireAvailable();
        int[] sizes = {0, 1, 100, 16 * 1024, 65536 + 3, 1 << 20};
        for (int level = 1; level <= 9; level++) {
            for (int size : sizes) {
                for (byte[] data : List.of(real(size), random(size, size + level))) {
                    byte[] mine = compress(data, level);
                    assertArrayEquals(data, builtInDecompress(mine), "QAT -> built-in, level " + level + ", " + size);
                    assertArrayEquals(data, decompress(mine), "QAT -> QAT, level " + level + ", " + size);
                    assertArrayEquals(data, decompress(builtInCompress(data, level)), "built-in -> QAT, level " + level + ", " + size);
                }
            }
        }
        byte[] big = real(16 << 20);
        assertArrayEquals(big, builtInDecompress(compress(big, 6)));
        assertArrayEquals(big, decompress(builtInCompress(big, 6)));
    }

    @Test
    void corruptInputGivesTheBuiltInCodecsOutcome() throws IOException {
        requireAvailable();
        byte[] member = builtInCompress(real(2_000), 6);
        for (int bit = 0; bit < member.length * 8; bit++) {
            byte[] flipped = member.clone();
            flipped[bit / 8] ^= (byte) (1 << (bit % 8));
            assertEquals(outcome(false, flipped), outcome(true, flipped), "bit " + bit);
        }
        for (int len = 0; len < member.length; len++) {
            assertEquals("failed", outcome(true, Arrays.copyOf(member, len)), "truncated to " + len);
        }
        Random r = new Random(5);
        for (int n : new int[] {1, 8, 18, 19, 30, 1000}) {
            byte[] g = new byte[n];
            r.nextBytes(g);
            byte[] x = Arrays.copyOf(member, member.length + n);
            System.arraycopy(g, 0, x, member.length, n);
            assertEquals(outcome(false, x), outcome(true, x), "garbage " + n);
        }
        byte[] two = Arrays.copyOf(member, member.length * 2);
        System.arraycopy(member, 0, two, member.length, member.length);
        assertEquals(outcome(false, two), outcome(true, two));
        assertTrue(outcome(true, two).startsWith("ok:"));
    }

    @Test
    void manyThreadsAtOnce() throws Exception {
        requireAvailable();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> results = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                final int seed = t;
                results.add(pool.submit(() -> {
                    Random r = new Random(seed);
                    for (int i = 0; i < 100; i++) {
                        int level = 1 + r.nextInt(9);
                        byte[] data = real(r.nextInt(300_000));
                        byte[] gz = compress(data, level);
                        assertArrayEquals(data, builtInDecompress(gz));
                        assertArrayEquals(data, decompress(gz));
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
    void sessionsAreReusedAndNativeMemoryStaysFlat() throws IOException {
        requireAvailable();
        byte[] batch = real(16 * 1024);
        int cycles = Integer.getInteger("kc.qat.cycles", 100_000);
        for (int i = 0; i < 2_000; i++) assertEquals(batch.length, decompress(compress(batch, 1 + i % 9)).length);
        System.gc();
        long before = rssKiB();
        for (int i = 0; i < cycles; i++) {
            byte[] gz = compress(batch, 1 + i % 9);
            if (decompress(gz).length != batch.length) throw new AssertionError();
        }
        System.gc();
        long after = rssKiB();
        System.out.printf("[qat-gzip] %,d cycles: VmRSS %d KiB -> %d KiB (%+d KiB)%n", cycles, before, after, after - before);
        assertTrue(after - before < 48 * 1024, "RSS grew by " + (after - before) + " KiB");
    }

    // ------------------------------------------------------------------ lifecycle and bounds (issue 29)

    static QatGzipCompressionService newAvailableService() {
        QatGzipCompressionService s = new QatGzipCompressionService();
        s.configure(Map.of(QatGzipCompressionService.MODE_CONFIG, "software"));
        s.checkAvailable();
        return s;
    }

    @Test
    void closeEndsTheServicesQatzipSessions() throws IOException {
        requireAvailable();
        QatGzipCompressionService s = newAvailableService();
        byte[] batch = real(100_000);
        for (int level = 1; level <= 9; level++)
            assertArrayEquals(batch, builtInDecompress(compress(s, batch, level)));
        int live = s.liveSessions();
        System.out.println("[qat-gzip] live QATzip sessions before close: " + live);
        assertTrue(live >= 9, "a session per level is pooled, got " + live);
        s.close();
        assertEquals(0, s.liveSessions(), "close() ends every idle QATzip session");
    }

    @Test
    void callsAfterCloseFailCleanlySoThatTheFrameworkFallsBack() throws IOException {
        requireAvailable();
        QatGzipCompressionService s = newAvailableService();
        byte[] batch = real(100_000);
        s.close();
        IOException e = assertThrows(IOException.class, () -> s.compress(ByteBuffer.wrap(batch), ByteBuffer.allocate(200_000), Optional.empty()));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        Compression framework = ProviderSet.of(Map.of(CompressionType.GZIP, s)).sharedCompression(Compression.gzip().level(6).build());
        ByteBufferOutputStream buf = new ByteBufferOutputStream(1024);
        try (OutputStream out = framework.wrapForOutput(buf, RecordBatch.CURRENT_MAGIC_VALUE)) {
            out.write(batch);
        }
        ByteBuffer written = buf.buffer();
        written.flip();
        byte[] gz = new byte[written.remaining()];
        written.get(gz);
        assertArrayEquals(batch, builtInDecompress(gz));
        try (InputStream in = framework.wrapForInput(ByteBuffer.wrap(gz), RecordBatch.CURRENT_MAGIC_VALUE, BufferSupplier.create())) {
            assertArrayEquals(batch, in.readAllBytes());
        }
        assertEquals(0, s.liveSessions());
    }

    @Test
    void trailersClaimingSixtyFourMebibytesAllocateNothingOfThatSize() throws IOException {
        requireAvailable();
        long bound = 8L * 1024 * 1024;
        // the built-in codec decompresses for this provider: nothing sized by the trailer
        Allocations.assertBounded(service, Allocations.lyingTrailer(), bound, "100 KB member, trailer claiming 64 MiB");
        Allocations.assertBounded(service, Allocations.bomb(), bound, "64 MiB of zeros in one member");
    }

    @Test
    void decompressionIsTheBuiltInCodecsWithNoWholeBatchCallOrStream() throws IOException {
        requireAvailable();
        byte[] batch = real(1024 * 1024);
        byte[] gz = compress(batch, 6);
        assertEquals(-1, service.maxDecompressedSize(ByteBuffer.wrap(gz)), "no whole-batch decompression call");
        assertNull(service.decompressedInputStream(ByteBuffer.wrap(gz), null), "no stream");
        Compression framework = ProviderSet.of(Map.of(CompressionType.GZIP, service)).sharedCompression(Compression.gzip().build());
        try (InputStream in = framework.wrapForInput(ByteBuffer.wrap(gz), RecordBatch.CURRENT_MAGIC_VALUE, BufferSupplier.create())) {
            assertArrayEquals(batch, in.readAllBytes());
        }
    }

    // ------------------------------------------------------------------ the whole-batch call (patch 0016)

    /** A batch's records in an array with data before and after them, as a batch buffer has. */
    static ByteBuffer inputOf(byte[] data) {
        byte[] in = new byte[data.length + 9];
        System.arraycopy(data, 0, in, 5, data.length);
        ByteBuffer input = ByteBuffer.wrap(in, 3, data.length + 4).slice();
        input.position(2);
        input.limit(2 + data.length);
        return input;
    }

    static final byte CANARY = (byte) 0xA5;

    /**
     * service.compress into exactly {@code room} bytes of an array that has canary bytes before the output's position
     * and after its limit; returns the member, after checking the positions and that no canary was touched.
     */
    static byte[] wholeBatch(QatGzipCompressionService s, byte[] data, Integer level, int room) throws IOException {
        ByteBuffer input = inputOf(data);
        byte[] out = new byte[room + 64];
        Arrays.fill(out, CANARY);
        ByteBuffer output = ByteBuffer.wrap(out, 16, room + 16).slice();   // array offset 16
        output.position(11);
        output.limit(11 + room);
        s.compress(input, output, Optional.ofNullable(level));
        assertEquals(input.limit(), input.position(), "the whole input is consumed");
        int start = 16 + 11;
        int end = 16 + output.position();
        assertTrue(end > start, "a member was written");
        for (int i = 0; i < start; i++) assertEquals(CANARY, out[i], "byte " + i + " before the output's position");
        for (int i = 16 + output.limit(); i < out.length; i++) assertEquals(CANARY, out[i], "byte " + i + " after the output's limit");
        return Arrays.copyOfRange(out, start, end);
    }

    static byte[] jdkGunzip(byte[] gz) throws IOException {
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
            return in.readAllBytes();
        }
    }

    /**
     * The whole-batch call: one member, read back by the JDK's GZIPInputStream and by the built-in codec, written
     * within the room of maxCompressedSize from arrays with offsets, for 0 B to 8 MiB of random and compressible data.
     */
    @Test
    void wholeBatchCallWritesOneMemberTheJdkReads() throws IOException {
        requireAvailable();
        long notOneMember = service.notOneMember;
        for (int size : new int[] {0, 1, 16 * 1024, 1 << 20, service.maxWholeBatchBytes()}) {
            for (boolean incompressible : new boolean[] {false, true}) {
                byte[] data = incompressible ? random(size, size + 7) : real(size);
                for (Integer level : size < (1 << 20) ? new Integer[] {null, 1, 6, 9} : new Integer[] {1, 6}) {
                    String what = size + " B" + (incompressible ? " random" : " json") + ", level " + level;
                    int bound = service.maxCompressedSize(size);
                    assertTrue(bound >= size + 18, what + ": bound " + bound);
                    byte[] member = wholeBatch(service, data, level, bound);
                    assertTrue(member.length <= bound, what);
                    GzipMembers.assertOneMember(member, size, what);
                    assertArrayEquals(data, jdkGunzip(member), what + ": GZIPInputStream");
                    assertArrayEquals(data, builtInDecompress(member), what + ": built-in codec");
                    // the same member as the stream writes
                    assertArrayEquals(compress(data, level), member, what + ": the stream's member");
                }
            }
        }
        assertEquals(notOneMember, service.notOneMember, "QATzip's software path writes one member");
        assertEquals(-1, service.maxCompressedSize(service.maxWholeBatchBytes() + 1), "bigger batches are streamed");
        System.out.println("[qat-gzip] whole-batch call: one member the JDK reads, 0 B to 8 MiB, random and json");
    }

    /**
     * maxCompressedSize is a true upper bound on the software path: random (incompressible) input of many sizes, and
     * random input with short matches (literal-heavy blocks), fit in exactly the bound at every level. Prints the
     * largest overhead measured against the bound's.
     */
    @Test
    void wholeBatchBoundHoldsForIncompressibleInput() throws IOException {
        requireAvailable();
        Assumptions.assumeFalse(service.usesHardware(), "on a device the bound is QATzip's own");
        Random r = new Random(Long.getLong("kc.bound.seed", 20261126L));
        List<Integer> sizes = new ArrayList<>(List.of(0, 1, 2, 17, 18, 100, 1000, 4095, 4096, 16383, 16384, 32767, 32768,
            65535, 65536, 65537, 131071, 131072, 131073, 1 << 20, (1 << 20) + 1, 4 << 20, (8 << 20) - 1, 8 << 20));
        for (int i = 0; i < 120; i++) sizes.add(r.nextInt(i < 100 ? 300_000 : 8 << 20));
        long worst = Long.MIN_VALUE;
        String worstWhat = "";
        int calls = 0;
        for (int size : sizes) {
            for (int kind = 0; kind < 2; kind++) {
                byte[] data = random(size, r.nextLong());
                if (kind == 1) {   // short matches among random literals
                    for (int p = 4096; p + 8 < size; p += 7 + r.nextInt(40)) System.arraycopy(data, p - 1 - r.nextInt(4000), data, p, 3 + r.nextInt(3));
                }
                int level = 1 + r.nextInt(9);
                if (size >= (1 << 20) && size % 2 == 0) level = 9;
                int bound = service.maxCompressedSize(size);
                assertEquals(QatGzipCompressionService.softwareBound(size), bound);
                byte[] member = wholeBatch(service, data, level, bound);
                calls++;
                if (size > 0) assertArrayEquals(data, jdkGunzip(member), size + " B");
                long overhead = member.length - (long) size;
                // how close to the bound, per 64 KiB, relative to the bound's own allowance
                if (overhead > worst) {
                    worst = overhead;
                    worstWhat = size + " B" + (kind == 1 ? " with matches" : " random") + ", level " + level + ": "
                        + member.length + " B, bound " + bound;
                }
                assertTrue(member.length <= bound, size + " B: " + member.length + " > " + bound);
            }
        }
        // QATzip's own bound, for comparison: the formula the device path uses
        QatZipper z = new QatZipper.Builder().setAlgorithm(QatZipper.Algorithm.DEFLATE)
            .setDataFormat(QatZipper.DataFormat.DEFLATE_GZIP).setMode(QatZipper.Mode.AUTO).setLevel(6).build();
        try {
            for (int size : sizes) {
                if (size == 0) continue;
                assertEquals(z.maxCompressedLength(size), QatGzipCompressionService.qatzipBound(size), "qzMaxCompressedLength(" + size + ")");
                if (size >= 1024)   // the software bound's constant is above QATzip's below ~550 B
                    assertTrue(QatGzipCompressionService.softwareBound(size) < QatGzipCompressionService.qatzipBound(size), size + " B");
            }
        } finally {
            z.end();
        }
        System.out.printf("[qat-gzip] whole-batch bound: %d incompressible batches (0 B to 8 MiB) within it; largest overhead %s%n",
            calls, worstWhat);
    }

    /** Too little room, a closed service: IOException (the framework falls back), nothing written past the room. */
    @Test
    void wholeBatchCallFailsAsAnIOExceptionWithinItsRoom() throws IOException {
        requireAvailable();
        byte[] data = random(100_000, 3);
        int sessions = service.liveSessions();
        IOException e = assertThrows(IOException.class, () -> wholeBatch(service, data, 6, 1000));
        System.out.println("[qat-gzip] whole-batch call into 1,000 B for 100,000 random B: " + e.getMessage());
        // the room check: the canaries after the limit are checked by wholeBatch only on success, so check here too
        byte[] out = new byte[1000 + 64];
        Arrays.fill(out, CANARY);
        ByteBuffer output = ByteBuffer.wrap(out, 0, 1000);
        assertThrows(IOException.class, () -> service.compress(inputOf(data), output, Optional.of(6)));
        for (int i = 1000; i < out.length; i++) assertEquals(CANARY, out[i], "byte " + i + " past the room");
        assertTrue(service.liveSessions() <= sessions + 1, "a session that failed is ended, not leaked");
        // still works afterwards
        assertArrayEquals(data, jdkGunzip(wholeBatch(service, data, 6, service.maxCompressedSize(data.length))));

        QatGzipCompressionService s = newAvailableService();
        s.close();
        IOException closed = assertThrows(IOException.class,
            () -> s.compress(ByteBuffer.wrap(data), ByteBuffer.allocate(200_000), Optional.empty()));
        assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
        assertEquals(0, s.liveSessions());
    }

    /** Once the pool is warm, a batch costs no allocation: no copy of the input, no output array, no CRC object. */
    @Test
    void wholeBatchCallAllocatesNothingPerBatch() throws IOException {
        requireAvailable();
        byte[] data = real(1 << 20);
        ByteBuffer input = ByteBuffer.wrap(data);
        ByteBuffer output = ByteBuffer.allocate(service.maxCompressedSize(data.length));
        Optional<Integer> level = Optional.of(6);
        for (int i = 0; i < 20; i++) {
            input.clear();
            output.clear();
            service.compress(input, output, level);
        }
        int batches = 50;
        long allocated = Allocations.allocatedBy(() -> {
            for (int i = 0; i < batches; i++) {
                input.clear();
                output.clear();
                service.compress(input, output, level);
            }
        });
        // for comparison, the built-in codec (zlib, streaming)
        Compression builtIn = Compression.gzip().level(6).build();
        ByteBufferOutputStream sink = new ByteBufferOutputStream(data.length);
        long streamed = Allocations.allocatedBy(() -> {
            for (int i = 0; i < batches; i++) {
                sink.position(0);
                try (OutputStream out = builtIn.wrapForOutput(sink, RecordBatch.CURRENT_MAGIC_VALUE)) {
                    out.write(data);
                }
            }
        });
        System.out.printf("[qat-gzip] whole-batch call: %d batches of 1 MiB allocated %,d B in all (the built-in codec: %,d B a batch)%n",
            batches, allocated, streamed / batches);
        assertTrue(allocated < 64 * 1024, "allocated " + allocated + " B for " + batches + " batches");
        output.flip();
        byte[] member = new byte[output.remaining()];
        output.get(member);
        assertArrayEquals(data, jdkGunzip(member));
    }

    /**
     * Through the framework: a batch buffer with room for the bound (the member is written into it) and one without
     * (into a lent array, or the built-in codec), both one member; and the in-process speed of the whole-batch call
     * against the built-in codec (zlib).
     */
    @Test
    void wholeBatchCallThroughTheFrameworkAndItsSpeed() throws IOException {
        requireAvailable();
        for (int size : new int[] {0, 100, 300_000, 1 << 20, 5 << 20}) {
            byte[] batch = real(size);
            for (int initial : new int[] {64, service.maxCompressedSize(size) + 1024}) {
                Compression framework = ProviderSet.of(Map.of(CompressionType.GZIP, service)).sharedCompression(Compression.gzip().level(6).build());
                ByteBufferOutputStream buf = new ByteBufferOutputStream(initial);
                try (OutputStream out = framework.wrapForOutput(buf, RecordBatch.CURRENT_MAGIC_VALUE)) {
                    out.write(batch);
                }
                ByteBuffer b = buf.buffer().flip();
                byte[] gz = new byte[b.remaining()];
                b.get(gz);
                GzipMembers.assertOneMember(gz, size, "framework, " + size + " B, buffer of " + initial + " B");
                assertArrayEquals(batch, jdkGunzip(gz));
            }
        }
        int size = 1 << 20;
        byte[] batch = real(size);
        ByteBuffer input = ByteBuffer.wrap(batch);
        ByteBuffer output = ByteBuffer.allocate(service.maxCompressedSize(size));
        ByteBufferOutputStream sink = new ByteBufferOutputStream(size);
        Compression builtIn = Compression.gzip().level(6).build();
        int rounds = Integer.getInteger("kc.qat.speed.rounds", 100);
        // alternated batch by batch, so that other work on the machine weighs on both alike
        long wholeNanos = 0;
        long streamNanos = 0;
        for (int i = -10; i < rounds; i++) {
            long t0 = System.nanoTime();
            input.clear();
            output.clear();
            service.compress(input, output, Optional.of(6));
            long t1 = System.nanoTime();
            sink.position(0);
            try (OutputStream out = builtIn.wrapForOutput(sink, RecordBatch.CURRENT_MAGIC_VALUE)) {
                out.write(batch);
            }
            long t2 = System.nanoTime();
            if (i >= 0) {   // the first 10 pairs warm up
                wholeNanos += t1 - t0;
                streamNanos += t2 - t1;
            }
        }
        double wholeMBs = rounds * (double) size / wholeNanos * 1e3;
        double streamMBs = rounds * (double) size / streamNanos * 1e3;
        System.out.printf("[qat-gzip] in-process speed, 1 MiB json batches, level 6, %d alternating pairs: whole-batch call %.1f MB/s, built-in codec %.1f MB/s (%.2fx)%n",
            rounds, wholeMBs, streamMBs, wholeMBs / streamMBs);
    }

    static long rssKiB() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
        throw new IOException("no VmRSS");
    }
}
