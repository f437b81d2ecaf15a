/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.testkit;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.compress.ProviderSet;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.ByteBufferOutputStream;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.Deflater;

/**
 * A differential fuzzer of reading through a gzip {@link CompressionService}, as the framework of a producer,
 * consumer or broker with the provider reads (the provider's whole-batch call, else its stream if it has one, else the
 * built-in reader), against Kafka's built-in gzip reader ({@code GzipCompression.wrapForInput}, what consumers and
 * brokers without a provider run): for every input, both must give the same bytes, or both must fail (the exception
 * class may differ). Each input also goes to the provider's whole-batch call alone, whose bytes must be the built-in
 * reader's. It also checks that a read never writes into the caller's array past the bytes it returns.
 * <p>
 * Inputs: members written by the built-in codec and by the provider (JSON records, random bytes, long runs, tiny
 * inputs giving fixed-Huffman blocks, stored blocks), then mutated: bit flips, truncations, header flags and
 * fields, trailing bytes (garbage, zeros, 1-18 bytes of a gzip header, a header then garbage), concatenations,
 * high-ratio members, random deflate data with a consistent trailer, overwritten bytes. Reproducible: the same seed
 * gives the same inputs. A mismatch is minimized and reported as hex, ready for the corpus
 * ({@code providers/testkit/corpus/*.hex}).
 * <p>
 * System properties: {@code kc.fuzz.seed} (default: random, printed), {@code kc.fuzz.seconds} (default: the
 * test's, 30 or 60), {@code kc.fuzz.inputs}: run until that many inputs were tried, however long it takes (the
 * time bound is then ignored; the same seed gives the same first inputs either way, so a seed and an input count
 * reproduce a run exactly).
 */
public final class GzipFuzz {

    private final CompressionService service;
    // the framework with the provider, as its owner holds it, per level (index 0: the default level)
    private final Compression[] framework = new Compression[10];
    private final String name;
    private final byte[] json;
    private final Random r;
    private final List<byte[]> seeds = new ArrayList<>();
    private final Compression builtIn = Compression.gzip().build();
    private boolean lastRejected;
    private long wholeDecoded;

    public GzipFuzz(CompressionService service, String name, byte[] json, long seed) {
        this.service = service;
        ProviderSet providers = ProviderSet.of(Map.of(CompressionType.GZIP, service));
        framework[0] = providers.sharedCompression(Compression.gzip().build());
        for (int level = 1; level <= 9; level++)
            framework[level] = providers.sharedCompression(builtIn(level));
        this.name = name;
        this.json = json;
        this.r = new Random(seed);
    }

    public static long seed() {
        String s = System.getProperty("kc.fuzz.seed", "");
        return s.isEmpty() ? new Random().nextLong() : Long.parseLong(s);
    }

    public static long seconds(long dflt) {
        String s = System.getProperty("kc.fuzz.seconds", "");
        return s.isEmpty() ? dflt : Long.parseLong(s);
    }

    /** {@code kc.fuzz.inputs}: the number of inputs to try, or 0 (the default) for a run bound by time. */
    public static long inputs() {
        String s = System.getProperty("kc.fuzz.inputs", "");
        return s.isEmpty() ? 0 : Long.parseLong(s.replace(",", "").replace("_", ""));
    }

    // ------------------------------------------------------------------ verdicts

    /** The built-in reader's verdict: the bytes read, or null when it fails. */
    public byte[] builtIn(byte[] gz) {
        try (InputStream in = builtIn.wrapForInput(ByteBuffer.wrap(gz), RecordBatch.CURRENT_MAGIC_VALUE, BufferSupplier.NO_CACHING)) {
            return in.readAllBytes();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The verdict of the framework with the provider (its whole-batch call for a batch it takes, else its stream if it
     * has one, else the built-in reader), read in one read into an array with room for the batch or in pieces of
     * random sizes; fails the run when a read writes past the bytes it returns.
     */
    public byte[] provider(byte[] gz, int readPattern) {
        byte[] buf = new byte[readPattern == 0 ? trailerSize(gz) + 64 : 70_000];
        Arrays.fill(buf, (byte) 0x5a);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        Random reads = new Random(gz.length);
        try (InputStream in = framework[0].wrapForInput(ByteBuffer.wrap(gz), RecordBatch.CURRENT_MAGIC_VALUE,
                BufferSupplier.NO_CACHING)) {
            for (;;) {
                int off = readPattern == 0 ? 0 : reads.nextInt(100);
                int len = readPattern == 0 ? buf.length : 1 + reads.nextInt(buf.length - off - 1);
                int n = in.read(buf, off, len);
                for (int i = off + Math.max(n, 0); i < off + len; i++) {
                    if (buf[i] != 0x5a)
                        throw new AssertionError(name + ": a read of " + len + " B at " + off + " returned " + n
                            + " but wrote at " + i + "; input " + hex(gz));
                }
                if (n < 0) break;
                got.write(buf, off, n);
                Arrays.fill(buf, off, off + n, (byte) 0x5a);
                if (got.size() > 64 << 20) throw new AssertionError(name + ": more than 64 MiB from " + hex(gz));
            }
            return got.toByteArray();
        } catch (IOException | KafkaException e) {
            return null;
        }
    }

    /**
     * The provider's whole-batch call, as the framework makes it: null when the provider has none for this input
     * ({@link CompressionService#maxDecompressedSize} is -1) or the call throws (the framework then lets the built-in
     * reader decide), else the bytes it decoded. Fails the run when the provider announces more than
     * {@link CompressionService#maxWholeBatchBytes()}, or the call reports success with output of another size than
     * it announced.
     */
    public byte[] providerWhole(byte[] gz) {
        int size = service.maxDecompressedSize(ByteBuffer.wrap(gz));
        if (size < 0) return null;
        if (size > service.maxWholeBatchBytes())
            throw new AssertionError(name + ": announced " + size + " B, past its whole-batch bound, for " + hex(gz));
        ByteBuffer out = ByteBuffer.allocate(size);
        try {
            service.decompress(ByteBuffer.wrap(gz), out);
        } catch (IOException | RuntimeException e) {
            return null;
        }
        if (out.position() != size)
            throw new AssertionError(name + ": decoded " + out.position() + " B of the " + size + " announced for " + hex(gz));
        return out.array();
    }

    private static int trailerSize(byte[] gz) {
        if (gz.length < 4) return 0;
        long isize = (gz[gz.length - 4] & 0xffL) | (gz[gz.length - 3] & 0xffL) << 8 | (gz[gz.length - 2] & 0xffL) << 16
            | (gz[gz.length - 1] & 0xffL) << 24;
        return isize <= 3 << 20 ? (int) isize : 65536;   // room for any member this fuzzer writes
    }

    /** Null when both readers agree on gz, else what differs. */
    public String mismatch(byte[] gz) {
        byte[] expected = builtIn(gz);
        lastRejected = expected == null;
        for (int pattern = 0; pattern < 2; pattern++) {
            byte[] mine = provider(gz, pattern);
            if (!Arrays.equals(expected, mine)) {
                return (pattern == 0 ? "one big read" : "reads in pieces") + ": built-in "
                    + (expected == null ? "fails" : "gives " + expected.length + " B") + ", " + name + " "
                    + (mine == null ? "fails" : "gives " + mine.length + " B");
            }
        }
        // A whole-batch call may decline or throw (the built-in reader then decides), but what it returns must be
        // exactly what the built-in reader returns.
        byte[] whole = providerWhole(gz);
        if (whole != null) wholeDecoded++;
        if (whole != null && !Arrays.equals(expected, whole)) {
            return "whole-batch call: built-in " + (expected == null ? "fails" : "gives " + expected.length + " B")
                + ", " + name + " gives " + whole.length + " B";
        }
        return null;
    }

    /** How many inputs the provider's whole-batch call decoded (and matched) so far. */
    public long wholeDecoded() {
        return wholeDecoded;
    }

    // ------------------------------------------------------------------ inputs

    private byte[] content() {
        switch (r.nextInt(6)) {
            case 0: {
                int n = r.nextInt(20) == 0 ? r.nextInt(300_000) : r.nextInt(3_000);
                int at = r.nextInt(Math.max(1, json.length - n));
                return Arrays.copyOfRange(json, at, Math.min(json.length, at + n));
            }
            case 1: {
                byte[] b = new byte[r.nextInt(5_000)];
                r.nextBytes(b);
                return b;
            }
            case 2:
                return new byte[r.nextInt(40) == 0 ? r.nextInt(2 << 20) : r.nextInt(70_000)];   // high ratio
            case 3: {
                byte[] b = new byte[r.nextInt(40)];   // tiny: fixed-Huffman blocks
                for (int i = 0; i < b.length; i++) b[i] = (byte) ('a' + r.nextInt(4));
                return b;
            }
            case 4: {
                byte[] b = new byte[r.nextInt(20_000)];
                for (int i = 0; i < b.length; i++) b[i] = (byte) r.nextInt(3);
                return b;
            }
            default:
                return new byte[0];
        }
    }

    /** A valid member: built-in codec, provider, or raw zlib at a random level and strategy (0: stored blocks). */
    private byte[] member(byte[] data) throws IOException {
        int level = 1 + r.nextInt(9);
        switch (r.nextInt(3)) {
            case 0:
                return write(builtIn(level), data);
            case 1:
                return providerWrite(data, level);
            default: {
                Deflater d = new Deflater(r.nextInt(10), true);
                d.setStrategy(r.nextInt(3));   // default, filtered, Huffman only
                d.setInput(data);
                d.finish();
                ByteArrayOutputStream raw = new ByteArrayOutputStream();
                byte[] chunk = new byte[65536];
                while (!d.finished()) raw.write(chunk, 0, d.deflate(chunk));
                d.end();
                return wrap(raw.toByteArray(), data);
            }
        }
    }

    private Compression builtIn(int level) {
        return Compression.gzip().level(level).build();
    }

    private static byte[] write(Compression c, byte[] data) throws IOException {
        ByteBufferOutputStream buffer = new ByteBufferOutputStream(1024);
        try (OutputStream out = c.wrapForOutput(buffer, RecordBatch.CURRENT_MAGIC_VALUE)) {
            out.write(data);
        }
        ByteBuffer b = buffer.buffer().flip();
        byte[] gz = new byte[b.remaining()];
        b.get(gz);
        return gz;
    }

    /** A member the framework writes with the provider: its whole-batch call (its engine) when it takes the batch. */
    private byte[] providerWrite(byte[] data, int level) throws IOException {
        return write(framework[level], data);
    }

    /** A gzip member around raw deflate data, with the CRC-32 and size of content. */
    public static byte[] wrap(byte[] raw, byte[] content) {
        CRC32 crc = new CRC32();
        crc.update(content);
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(new byte[] {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 0xff});
        b.writeBytes(raw);
        int c = (int) crc.getValue();
        int n = content.length;
        b.writeBytes(new byte[] {(byte) c, (byte) (c >> 8), (byte) (c >> 16), (byte) (c >> 24), (byte) n, (byte) (n >> 8),
            (byte) (n >> 16), (byte) (n >> 24)});
        return b.toByteArray();
    }

    private byte[] seedMember() throws IOException {
        if (seeds.size() < 64 || r.nextInt(8) == 0) {
            byte[] m = member(content());
            if (seeds.size() < 64) seeds.add(m);
            else seeds.set(r.nextInt(seeds.size()), m);
            return m;
        }
        return seeds.get(r.nextInt(seeds.size()));
    }

    private byte[] mutate(byte[] m) throws IOException {
        byte[] b = m.clone();
        switch (r.nextInt(9)) {
            case 0: {   // bit flips
                int flips = 1 + r.nextInt(3);
                for (int i = 0; i < flips && b.length > 0; i++) {
                    int bit = r.nextInt(b.length * 8);
                    b[bit / 8] ^= (byte) (1 << (bit % 8));
                }
                return b;
            }
            case 1:   // truncation
                return Arrays.copyOf(b, r.nextInt(b.length + 1));
            case 2: {   // header flags and fields
                int flg = r.nextInt(256);
                ByteArrayOutputStream h = new ByteArrayOutputStream();
                h.writeBytes(Arrays.copyOf(b, 3));
                h.write(flg);
                h.writeBytes(Arrays.copyOfRange(b, 4, 10));
                if ((flg & 4) != 0) {
                    int xlen = r.nextInt(8) == 0 ? r.nextInt(65536) : r.nextInt(20);
                    h.write(xlen);
                    h.write(xlen >> 8);
                    byte[] x = new byte[Math.min(xlen, r.nextInt(30) + (r.nextBoolean() ? xlen : 0))];
                    r.nextBytes(x);
                    h.writeBytes(x);
                }
                if ((flg & 8) != 0) h.writeBytes(r.nextInt(5) == 0 ? "name".getBytes(StandardCharsets.US_ASCII) : "batch.json\0".getBytes(StandardCharsets.US_ASCII));
                if ((flg & 16) != 0) h.writeBytes("comment\0".getBytes(StandardCharsets.US_ASCII));
                if ((flg & 2) != 0) {
                    CRC32 crc = new CRC32();
                    byte[] sofar = h.toByteArray();
                    crc.update(sofar);
                    int c = (int) crc.getValue() ^ (r.nextInt(4) == 0 ? 1 : 0);
                    h.write(c);
                    h.write(c >> 8);
                }
                h.writeBytes(Arrays.copyOfRange(b, Math.min(10, b.length), b.length));
                return h.toByteArray();
            }
            case 3: {   // trailing bytes
                byte[] t;
                switch (r.nextInt(4)) {
                    case 0:
                        t = new byte[1 + r.nextInt(40)];
                        r.nextBytes(t);
                        break;
                    case 1:
                        t = new byte[1 + r.nextInt(40)];
                        break;
                    case 2: {
                        byte[] header = member(new byte[0]);
                        t = Arrays.copyOf(header, 1 + r.nextInt(18));
                        break;
                    }
                    default: {
                        t = Arrays.copyOf(m, Math.min(m.length, 10 + r.nextInt(30)));
                        break;
                    }
                }
                // put the trailer anywhere relative to GZIPInputStream's 8 KiB buffer
                return concat(b, t);
            }
            case 4: {   // concatenations
                byte[] c = concat(b, seedMember());
                if (r.nextBoolean()) c = concat(c, member(new byte[0]));
                if (r.nextBoolean()) c = concat(c, seedMember());
                return c;
            }
            case 5: {   // random deflate data in a member with a consistent-looking trailer
                byte[] raw = new byte[1 + r.nextInt(60)];
                r.nextBytes(raw);
                if (r.nextBoolean()) raw[0] = (byte) ((raw[0] & ~6) | (r.nextBoolean() ? 2 : 4));   // fixed or dynamic block
                byte[] w = wrap(raw, new byte[0]);
                int isize = r.nextInt(1000);
                w[w.length - 4] = (byte) isize;
                w[w.length - 3] = (byte) (isize >> 8);
                return w;
            }
            case 6: {   // overwritten bytes in the deflate data
                int n = 1 + r.nextInt(4);
                for (int i = 0; i < n && b.length > 18; i++) b[10 + r.nextInt(b.length - 18)] = (byte) r.nextInt(256);
                return b;
            }
            case 7: {   // a bit flip, then trailing bytes or a second member
                int bit = r.nextInt(b.length * 8);
                b[bit / 8] ^= (byte) (1 << (bit % 8));
                return r.nextBoolean() ? concat(b, new byte[1 + r.nextInt(20)]) : concat(b, seedMember());
            }
            default:
                return b;   // valid
        }
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /** A smaller input with the same kind of mismatch (bytes cut from the end, then from inside). */
    public byte[] minimize(byte[] gz) {
        byte[] best = gz;
        boolean progress = true;
        while (progress) {
            progress = false;
            for (int cut = Math.max(1, best.length / 2); cut >= 1 && !progress; cut /= 2) {
                for (int at = 0; at + cut <= best.length; at += cut) {
                    byte[] c = concat(Arrays.copyOf(best, at), Arrays.copyOfRange(best, at + cut, best.length));
                    if (mismatch(c) != null) {
                        best = c;
                        progress = true;
                        break;
                    }
                }
            }
        }
        return best;
    }

    public static String hex(byte[] b) {
        return HexFormat.of().formatHex(b);
    }

    /**
     * Runs for the given time, or until {@link #inputs()} inputs were tried when {@code kc.fuzz.inputs} is set;
     * returns the number of inputs tried, or throws with a minimized reproducer.
     */
    public long run(long seed, long seconds) {
        long target = inputs();
        long start = System.nanoTime();
        long end = start + seconds * 1_000_000_000L;
        long cases = 0;
        long failedBoth = 0;
        try {
            while (target > 0 ? cases < target : System.nanoTime() < end) {
                for (int i = 0; i < 20 && (target <= 0 || cases < target); i++) {
                    byte[] input = r.nextInt(10) == 0 ? seedMember() : mutate(seedMember());
                    String why = mismatch(input);
                    if (why != null) {
                        byte[] small = minimize(input);
                        throw new AssertionError(name + ": differs from Kafka's built-in gzip reader (seed " + seed
                            + ", case " + cases + "): " + why + "\n  input: " + hex(input) + "\n  minimized: "
                            + hex(small) + " (" + mismatch(small) + ")");
                    }
                    if (lastRejected) failedBoth++;
                    cases++;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.out.printf("[%s] fuzz: seed %d, %d s, %,d inputs, %,d rejected by both, %,d decoded by the whole-batch call,"
            + " no difference (%s)%n", name, seed, Math.round((System.nanoTime() - start) / 1e9), cases, failedBoth,
            wholeDecoded,
            target > 0 ? "kc.fuzz.inputs=" + target : "time-bound, kc.fuzz.seconds=" + seconds);
        return cases;
    }

    /** The corpus of reproducers: one input per file, as hex (whitespace and #-comment lines ignored). */
    public static List<byte[]> corpus(Path dir) throws IOException {
        List<byte[]> inputs = new ArrayList<>();
        try (var files = Files.list(dir)) {
            for (Path p : files.filter(f -> f.toString().endsWith(".hex")).sorted().toList()) {
                StringBuilder hex = new StringBuilder();
                for (String line : Files.readAllLines(p)) {
                    if (!line.startsWith("#")) hex.append(line.replaceAll("\\s", ""));
                }
                inputs.add(HexFormat.of().parseHex(hex));
            }
        }
        return inputs;
    }
}
