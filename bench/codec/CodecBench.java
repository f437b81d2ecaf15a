/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */

import org.apache.kafka.common.Configurable;
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
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * In-process gzip codec benchmark: providers, through the KIP-1121 framework as Kafka uses them, against Kafka's
 * built-in GzipCompression, in the same JVM.
 * Batches are whole records of the data file (16 KiB and 1 MiB), each compressed separately as Kafka does;
 * for each level: warm-up passes, then the median of timed passes over all batches.
 *
 * java CodecBench DATA_FILE OUT_DIR PROVIDERS(native,qat) LEVELS(1-9) BATCH_SIZES(16384,1048576) BYTES_PER_PASS REPEATS
 */
public class CodecBench {

    interface Codec {
        byte[] compress(byte[] batch, int level) throws IOException;

        int decompress(byte[] gz, byte[] sink) throws IOException;
    }

    static final class BuiltIn implements Codec {
        final BufferSupplier supplier = BufferSupplier.create();

        public byte[] compress(byte[] batch, int level) throws IOException {
            ByteBufferOutputStream buf = new ByteBufferOutputStream(batch.length / 2 + 64);
            try (OutputStream out = Compression.gzip().level(level).build().wrapForOutput(buf, RecordBatch.CURRENT_MAGIC_VALUE)) {
                out.write(batch);
            }
            ByteBuffer b = buf.buffer();
            b.flip();
            byte[] r = new byte[b.remaining()];
            b.get(r);
            return r;
        }

        public int decompress(byte[] gz, byte[] sink) throws IOException {
            try (InputStream in = Compression.gzip().build().wrapForInput(ByteBuffer.wrap(gz), RecordBatch.CURRENT_MAGIC_VALUE, supplier)) {
                return drain(in, sink);
            }
        }
    }

    /**
     * A provider the way Kafka uses it: through the KIP-1121 framework, in a ProviderSet as its owner holds it (a
     * producer's shared Compression to compress, a thread's handle to decompress).
     */
    static final class Provider implements Codec {
        final CompressionService service;
        final BufferSupplier supplier = BufferSupplier.create();
        final Compression[] byLevel = new Compression[10];   // as a producer holds its Compression
        final Compression forDecompression;

        Provider(CompressionService service) {
            this.service = service;
            ProviderSet owner = ProviderSet.of(Map.of(CompressionType.GZIP, service));
            for (int level = 1; level <= 9; level++)
                byLevel[level] = owner.sharedCompression(Compression.gzip().level(level).build());
            forDecompression = owner.threadProviders().forDecompression(CompressionType.GZIP);
        }

        public byte[] compress(byte[] batch, int level) throws IOException {
            Compression compression = byLevel[level];
            ByteBufferOutputStream buf = new ByteBufferOutputStream(batch.length / 2 + 64);
            try (OutputStream out = compression.wrapForOutput(buf, RecordBatch.CURRENT_MAGIC_VALUE)) {
                out.write(batch);
            }
            ByteBuffer b = buf.buffer();
            b.flip();
            byte[] r = new byte[b.remaining()];
            b.get(r);
            return r;
        }

        public int decompress(byte[] gz, byte[] sink) throws IOException {
            try (InputStream in = forDecompression.wrapForInput(ByteBuffer.wrap(gz), RecordBatch.CURRENT_MAGIC_VALUE, supplier)) {
                return drain(in, sink);
            }
        }
    }

    static int drain(InputStream in, byte[] sink) throws IOException {
        int total = 0;
        int n;
        while ((n = in.read(sink, 0, sink.length)) > 0) total += n;
        return total;
    }

    static List<byte[]> batches(byte[] data, int batchSize, long bytesPerPass) {
        // whole records (lines), cycling through the file, until each batch reaches batchSize
        List<byte[]> lines = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < data.length; i++) {
            if (data[i] == '\n') {
                lines.add(Arrays.copyOfRange(data, start, i + 1));
                start = i + 1;
            }
        }
        List<byte[]> out = new ArrayList<>();
        int li = 0;
        long total = 0;
        while (total < bytesPerPass || out.isEmpty()) {
            ByteArrayOutputStream b = new ByteArrayOutputStream(batchSize + 4096);
            while (b.size() < batchSize) {
                byte[] l = lines.get(li++ % lines.size());
                if (b.size() > 0 && b.size() + l.length > batchSize) break;
                b.write(l, 0, l.length);
            }
            out.add(b.toByteArray());
            total += b.size();
        }
        return out;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /**
     * Median MB/s of compressing every batch, built-in and provider passes interleaved (so that load from other
     * processes hits both alike); fills the compressed batches of the last pass. Returns {builtIn, provider}.
     */
    static double[] timeCompress(Codec a, Codec b, List<byte[]> batches, int level, int warmup, int repeats,
                                 List<byte[]> outA, List<byte[]> outB) throws IOException {
        long bytes = 0;
        for (byte[] x : batches) bytes += x.length;
        double[] ma = new double[repeats];
        double[] mb = new double[repeats];
        for (int r = -warmup; r < repeats; r++) {
            for (int which = 0; which < 2; which++) {
                Codec c = which == 0 ? a : b;
                List<byte[]> out = which == 0 ? outA : outB;
                long t0 = System.nanoTime();
                for (byte[] x : batches) {
                    byte[] gz = c.compress(x, level);
                    if (r == repeats - 1) out.add(gz);
                }
                long t = System.nanoTime() - t0;
                if (r >= 0) (which == 0 ? ma : mb)[r] = bytes / 1e6 / (t / 1e9);
            }
        }
        return new double[] {median(ma), median(mb)};
    }

    /** The same for decompression, each codec reading its own output. Returns {builtIn, provider}. */
    static double[] timeDecompress(Codec a, Codec b, List<byte[]> ca, List<byte[]> cb, long bytes, int warmup, int repeats) throws IOException {
        byte[] sink = new byte[16 * 1024];
        double[] ma = new double[repeats];
        double[] mb = new double[repeats];
        for (int r = -warmup; r < repeats; r++) {
            for (int which = 0; which < 2; which++) {
                Codec c = which == 0 ? a : b;
                long t0 = System.nanoTime();
                long n = 0;
                for (byte[] gz : which == 0 ? ca : cb) n += c.decompress(gz, sink);
                long t = System.nanoTime() - t0;
                if (n != bytes) throw new IllegalStateException("decompressed " + n + " bytes, expected " + bytes);
                if (r >= 0) (which == 0 ? ma : mb)[r] = bytes / 1e6 / (t / 1e9);
            }
        }
        return new double[] {median(ma), median(mb)};
    }

    static CompressionService load(String name) {
        try {
            String cls = name.equals("native") ? "io.kafkacompress.nativegzip.NativeGzipCompressionService"
                : "io.kafkacompress.qat.QatGzipCompressionService";
            CompressionService s = (CompressionService) Class.forName(cls).getDeclaredConstructor().newInstance();
            if (s instanceof Configurable) ((Configurable) s).configure(Map.of("compression.gzip.qat.mode", "software"));
            s.checkAvailable();
            return s;
        } catch (Throwable e) {
            System.err.println("[codec-bench] provider " + name + " unavailable here, skipped: " + e.getMessage());
            return null;
        }
    }

    public static void main(String[] args) throws Exception {
        byte[] data = Files.readAllBytes(Path.of(args[0]));
        Path outDir = Path.of(args[1]);
        String[] providers = args[2].split(",");
        String[] lv = args[3].split("-");
        int minLevel = Integer.parseInt(lv[0]);
        int maxLevel = Integer.parseInt(lv[lv.length - 1]);
        int[] sizes = Arrays.stream(args[4].split(",")).mapToInt(Integer::parseInt).toArray();
        long bytesPerPass = Long.parseLong(args[5]);
        int repeats = Integer.parseInt(args[6]);
        int warmup = 2;
        Files.createDirectories(outDir);

        BuiltIn builtIn = new BuiltIn();
        List<String> csv = new ArrayList<>();
        csv.add("provider,batch_bytes,level,compress_mbps,builtin_compress_mbps,compress_speedup,decompress_mbps,builtin_decompress_mbps,"
            + "decompress_speedup,compressed_bytes,builtin_compressed_bytes,size_ratio");
        StringBuilder md = new StringBuilder();
        md.append("| provider | batch | level | compress MB/s | built-in | × | decompress MB/s | built-in | × | size vs built-in | compressed B (per pass) |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (String p : providers) {
            CompressionService s = load(p.trim());
            if (s == null) continue;
            System.err.println("[codec-bench] " + s + ", JDK " + System.getProperty("java.version"));
            Provider provider = new Provider(s);
            for (int size : sizes) {
                List<byte[]> batches = batches(data, size, bytesPerPass);
                long bytes = 0;
                for (byte[] b : batches) bytes += b.length;
                for (int level = minLevel; level <= maxLevel; level++) {
                    List<byte[]> gzB = new ArrayList<>();
                    List<byte[]> gzP = new ArrayList<>();
                    double[] c = timeCompress(builtIn, provider, batches, level, warmup, repeats, gzB, gzP);
                    double cB = c[0];
                    double cP = c[1];
                    long sB = gzB.stream().mapToLong(x -> x.length).sum();
                    long sP = gzP.stream().mapToLong(x -> x.length).sum();
                    double[] d = timeDecompress(builtIn, provider, gzB, gzP, bytes, warmup, repeats);
                    double dB = d[0];
                    double dP = d[1];
                    String label = size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " KiB";
                    String row = String.format("| %s | %s | %d | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.4f | %d |", p, label, level, cP, cB, cP / cB,
                        dP, dB, dP / dB, (double) sP / sB, sP);
                    md.append(row).append('\n');
                    System.err.println(row);
                    csv.add(String.format("%s,%d,%d,%.1f,%.1f,%.3f,%.1f,%.1f,%.3f,%d,%d,%.5f", p, size, level, cP, cB, cP / cB, dP, dB, dP / dB, sP, sB,
                        (double) sP / sB));
                }
            }
        }
        String tag = String.join("-", providers);
        Files.writeString(outDir.resolve("results-" + tag + ".csv"), String.join("\n", csv) + "\n", StandardCharsets.UTF_8);
        Files.writeString(outDir.resolve("results-" + tag + ".md"), md.toString(), StandardCharsets.UTF_8);
        PrintStream out = System.out;
        out.print(md);
    }
}
