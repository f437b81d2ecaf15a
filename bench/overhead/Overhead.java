/*
 * Licensed to the Apache Software Foundation (ASF) under the Apache License 2.0.
 *
 * KIP-1121 no-provider cost check: compress and decompress record batches with the
 * built-in codecs through kafka-clients' Compression / MemoryRecordsBuilder /
 * DefaultRecordBatch, the code paths the patch series touches. Run once with the
 * stock kafka-clients-4.3.1.jar and once with the patched jar on the classpath
 * (run.sh alternates them) and compare. Prints one line per codec:
 *   codec compress_MBps decompress_MBps
 * (MB of uncompressed record bytes per second, median of the timed rounds).
 */
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public class Overhead {
    public static void main(String[] args) throws Exception {
        String data = args[0];
        int batchBytes = Integer.parseInt(args.length > 1 ? args[1] : "65536");
        int rounds = Integer.parseInt(args.length > 2 ? args[2] : "7");
        double seconds = Double.parseDouble(args.length > 3 ? args[3] : "1.0");
        List<byte[]> lines = new ArrayList<>();
        long total = 0;
        for (String line : Files.readAllLines(Paths.get(data), StandardCharsets.UTF_8)) {
            byte[] b = line.getBytes(StandardCharsets.UTF_8);
            lines.add(b);
            total += b.length;
            if (total > 8 << 20) break;   // 8 MiB of records is plenty
        }
        // split the records into batches of ~batchBytes uncompressed
        List<List<byte[]>> batches = new ArrayList<>();
        List<byte[]> cur = new ArrayList<>();
        int curBytes = 0;
        for (byte[] b : lines) {
            cur.add(b);
            curBytes += b.length;
            if (curBytes >= batchBytes) { batches.add(cur); cur = new ArrayList<>(); curBytes = 0; }
        }
        if (!cur.isEmpty()) batches.add(cur);

        for (CompressionType type : new CompressionType[] {CompressionType.GZIP, CompressionType.LZ4, CompressionType.ZSTD}) {
            Compression compression = Compression.of(type).build();
            // warm-up
            MemoryRecords[] built = compressAll(compression, batches);
            for (int i = 0; i < 3; i++) { compressAll(compression, batches); decompressAll(built); }
            double[] c = new double[rounds], d = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                c[r] = rate(() -> compressAll(compression, batches), total, seconds);
                d[r] = rate(() -> decompressAll(built), total, seconds);
            }
            System.out.printf("%s %.1f %.1f%n", type.name, median(c), median(d));
        }
    }

    interface Work { Object run() throws Exception; }

    static double rate(Work w, long bytes, double seconds) throws Exception {
        long start = System.nanoTime(), n = 0;
        do { w.run(); n++; } while (System.nanoTime() - start < seconds * 1e9);
        return bytes * n / ((System.nanoTime() - start) / 1e9) / 1e6;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    static MemoryRecords[] compressAll(Compression compression, List<List<byte[]>> batches) {
        MemoryRecords[] out = new MemoryRecords[batches.size()];
        for (int i = 0; i < out.length; i++) {
            MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(16384), RecordBatch.CURRENT_MAGIC_VALUE,
                compression, TimestampType.CREATE_TIME, 0L);
            long ts = 1_700_000_000_000L;
            for (byte[] v : batches.get(i)) builder.append(ts++, null, v);
            out[i] = builder.build();
        }
        return out;
    }

    static long decompressAll(MemoryRecords[] built) {
        long sum = 0;
        for (MemoryRecords records : built) {
            for (RecordBatch batch : records.batches()) {
                for (Record record : batch) sum += record.valueSize();
            }
        }
        return sum;
    }
}
