/*
 * Licensed to the Apache Software Foundation (ASF) under one or more
 * contributor license agreements. Licensed under the Apache License, Version 2.0.
 */

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.DefaultRecord;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.ByteBufferOutputStream;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.zip.GZIPOutputStream;

/**
 * In-process pieces of the benchmark suite (bench/bench.py drives them).
 *
 * <pre>
 * gzipstream LEVEL SECONDS_PER_CELL REPEATS SIZES PROVIDERS FILE...
 *     KAFKA-6430 table: gzip compression throughput of record batches (about 1 MiB of
 *     records of each size, record framing written by Kafka's DefaultRecord.writeTo, which
 *     issues per-byte writes for the varint header fields), "direct" (every write goes
 *     straight into the gzip stream, as before KAFKA-6430) vs "buffered" (through a
 *     16 KiB BufferedOutputStream, as Kafka 4.3.1 does). PROVIDERS is a comma list of
 *     "builtin" and CompressionService class names (called by reflection, so this file
 *     compiles against stock jars). Prints one CSV line per cell.
 * throughput BOOTSTRAP TOPIC PROPS FILE WARMUP_SECONDS SECONDS [RATE]
 *     Tables 1 and 4 and the calibration row: one producer sends FILE's lines one after another,
 *     cycling, unthrottled, as ProducerPerformance does (one send per record with a callback);
 *     with RATE (records/s, table 3's fixed-rate pairs) paced at that rate, warm-up included.
 *     For WARMUP_SECONDS it warms up; those records are flushed, "steady,records,bytes,seconds"
 *     is printed and the producer pauses 300 ms so the driver can read the CPU counters of this
 *     JVM and of the broker in /proc at a quiet moment; then it sends for SECONDS, flushes and
 *     prints "done,records,bytes,seconds,records_s,p50_ms,p99_ms,avg_ms" (latency send to ack,
 *     measured records only), followed by another 300 ms pause before the producer closes.
 * sla BOOTSTRAP TOPIC PROPS FILE STOP_P99_MS STEP_SECONDS REPEATS STEP_FACTOR [FIXED_RATE]
 *     KIP-1121 table: one producer (one JVM for all steps), fixed-rate sends of FILE's lines;
 *     5 s unthrottled warm-up, then 5 s unthrottled give the saturation rate P; then rates from
 *     0.2 P up by STEP_FACTOR, REPEATS x STEP_SECONDS each, latency send-to-ack per record; stops
 *     when the median p99 exceeds STOP_P99_MS or the producer falls 10% behind (a failing step is
 *     measured once more and only a second failure stops; the first is printed as "retry,..."),
 *     or the rate passes 3 P.
 *     Prints "peak,..." then "step,target,achieved,p50_ms,p99_ms,avg_ms,raw_bytes".
 *     FIXED_RATE (optional, records/s; negative: that fraction of P) first measures REPEATS x
 *     STEP_SECONDS at that one rate, printed as "fixed,...", the same for every implementation.
 * threads BOOTSTRAP TOPIC PROPS FILE THREADS WARMUP_SECONDS SECONDS
 *     Table 6: one KafkaProducer shared by THREADS application threads, each calling send()
 *     unthrottled with FILE's lines (each thread starts at its own offset in the file, cycling).
 *     Marks as in throughput: "steady,..." after the flushed warm-up (then a 300 ms pause),
 *     "done,records,bytes,seconds,records_s,p50_ms,p99_ms,avg_ms" after the measured window,
 *     then "metric,GROUP,NAME,VALUE" for the producer's record-queue-time-avg and
 *     request-latency-avg and every counter of producer-compression-provider-metrics, read from
 *     producer.metrics() right after the measured records are acknowledged.
 * check CLASS
 *     prints "available" if the provider instantiates and its checkAvailable() passes, else the reason.
 * keyed BOOTSTRAP TOPIC RECORDS KEYS PROPS FILE
 *     produces RECORDS records with keys k0..k(KEYS-1), values from FILE's lines, with
 *     producer properties PROPS (k=v,k=v); prints records/s.
 * </pre>
 */
public final class KcBench {

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "gzipstream":
                gzipStream(args);
                break;
            case "keyed":
                keyed(args);
                break;
            case "sla":
                sla(args);
                break;
            case "throughput":
                throughput(args);
                break;
            case "threads":
                threads(args);
                break;
            case "check":
                try {
                    providerFactory(args[1], false);
                    System.out.println("available");
                } catch (Throwable t) {
                    Throwable c = t instanceof java.lang.reflect.InvocationTargetException ? t.getCause() : t;
                    System.out.println("unavailable: " + c);
                }
                break;
            default:
                throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }

    // ------------------------------------------------------------------ KAFKA-6430

    interface StreamFactory {
        OutputStream open(ByteBufferOutputStream out, int level) throws Exception;
    }

    static final class LevelGzipOutputStream extends GZIPOutputStream {
        LevelGzipOutputStream(OutputStream out, int size, int level) throws IOException {
            super(out, size);
            def.setLevel(level);
        }
    }

    static byte[] corpus(String[] files, int from) throws IOException {
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (int i = from; i < files.length; i++) {
            for (String line : Files.readAllLines(Paths.get(files[i]), StandardCharsets.UTF_8)) {
                all.write(line.getBytes(StandardCharsets.UTF_8));
            }
        }
        return all.toByteArray();
    }

    /** Records of exactly {@code size} bytes, cut one after another from the corpus, about 1 MiB in all. */
    static List<ByteBuffer> records(byte[] corpus, int size) {
        int count = Math.max(4, (1 << 20) / size);
        List<ByteBuffer> out = new ArrayList<>(count);
        int pos = 0;
        for (int i = 0; i < count; i++) {
            byte[] r = new byte[size];
            for (int n = 0; n < size; ) {
                if (pos >= corpus.length) pos = 0;
                int take = Math.min(size - n, corpus.length - pos);
                System.arraycopy(corpus, pos, r, n, take);
                n += take;
                pos += take;
            }
            out.add(ByteBuffer.wrap(r));
        }
        return out;
    }

    static long writeBatch(StreamFactory factory, int level, List<ByteBuffer> records, long[] compressedOut) throws Exception {
        ByteBufferOutputStream buffer = new ByteBufferOutputStream(1 << 20);
        long raw = 0;
        try (DataOutputStream out = new DataOutputStream(factory.open(buffer, level))) {
            int delta = 0;
            for (ByteBuffer value : records) {
                raw += DefaultRecord.writeTo(out, delta++, 0L, null, value.duplicate(), new Header[0]);
            }
        }
        compressedOut[0] = buffer.position();
        return raw;
    }

    static StreamFactory providerFactory(String className, boolean buffered) throws Exception {
        Class<?> cls = Class.forName(className);
        Object service = cls.getDeclaredConstructor().newInstance();
        try {
            Method configure = cls.getMethod("configure", java.util.Map.class);
            configure.invoke(service, new java.util.HashMap<String, Object>());
        } catch (NoSuchMethodException e) {
            // not Configurable
        }
        cls.getMethod("checkAvailable").invoke(service);
        // through the KIP-1121 framework, as a producer with the provider compresses a batch (the provider's
        // whole-batch call, or the built-in codec for what it does not take); by reflection, as this class compiles
        // against stock jars
        Class<?> providerSet = Class.forName("org.apache.kafka.common.compress.ProviderSet");
        Object providers = providerSet.getMethod("of", java.util.Map.class).invoke(null, java.util.Map.of(CompressionType.GZIP, service));
        Method shared = providerSet.getMethod("sharedCompression", Compression.class);
        return (out, level) -> {
            Compression compression = (Compression) shared.invoke(providers, Compression.gzip().level(level).build());
            OutputStream s = compression.wrapForOutput(out, RecordBatch.MAGIC_VALUE_V2);
            return buffered ? new BufferedOutputStream(s, 16 * 1024) : s;
        };
    }

    static void gzipStream(String[] args) throws Exception {
        int level = Integer.parseInt(args[1]);
        double seconds = Double.parseDouble(args[2]);
        int repeats = Integer.parseInt(args[3]);
        int[] sizes = Arrays.stream(args[4].split(",")).mapToInt(Integer::parseInt).toArray();
        String[] providers = args[5].split(",");
        byte[] corpus = corpus(args, 6);
        System.out.println("impl,mode,record_bytes,level,mb_per_s,ratio,repeats");
        for (String provider : providers) {
            for (String mode : new String[] {"direct", "buffered"}) {
                StreamFactory factory;
                try {
                    if (provider.equals("builtin")) {
                        factory = mode.equals("buffered")
                            ? (out, l) -> Compression.gzip().level(l).build().wrapForOutput(out, RecordBatch.MAGIC_VALUE_V2)
                            : (out, l) -> new LevelGzipOutputStream(out, 512, l);
                    } else {
                        factory = providerFactory(provider, mode.equals("buffered"));
                    }
                } catch (Throwable t) {
                    Throwable c = t instanceof java.lang.reflect.InvocationTargetException ? t.getCause() : t;
                    System.out.println("# " + provider + " unavailable: " + c);
                    continue;
                }
                for (int size : sizes) {
                    List<ByteBuffer> recs = records(corpus, size);
                    long[] compressed = new long[1];
                    // warm-up: at least 1 s or 20 batches
                    long until = System.nanoTime() + 1_000_000_000L;
                    for (int i = 0; i < 20 || System.nanoTime() < until; i++) writeBatch(factory, level, recs, compressed);
                    double[] mbps = new double[repeats];
                    long raw = 0;
                    for (int r = 0; r < repeats; r++) {
                        long bytes = 0;
                        long start = System.nanoTime();
                        long end = start + (long) (seconds * 1e9);
                        long now;
                        do {
                            raw = writeBatch(factory, level, recs, compressed);
                            bytes += raw;
                            now = System.nanoTime();
                        } while (now < end);
                        mbps[r] = bytes / 1e6 / ((now - start) / 1e9);
                    }
                    Arrays.sort(mbps);
                    System.out.printf("%s,%s,%d,%d,%.1f,%.4f,%d%n", provider, mode, size, level,
                        mbps[repeats / 2], (double) compressed[0] / raw, repeats);
                    System.out.flush();
                }
            }
        }
    }

    // ------------------------------------------------------------------ keyed load for the log cleaner

    static void keyed(String[] args) throws Exception {
        String bootstrap = args[1];
        String topic = args[2];
        long count = Long.parseLong(args[3]);
        int keys = Integer.parseInt(args[4]);
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        props.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        if (!args[5].isEmpty()) {
            for (String kv : args[5].split(",")) {
                int eq = kv.indexOf('=');
                props.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        List<byte[]> values = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(args[6]), StandardCharsets.UTF_8)) {
            if (!line.isEmpty()) values.add(line.getBytes(StandardCharsets.UTF_8));
        }
        long start = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (long i = 0; i < count; i++) {
                byte[] key = ("k" + (i % keys)).getBytes(StandardCharsets.UTF_8);
                producer.send(new ProducerRecord<>(topic, key, values.get((int) (i % values.size()))));
            }
            producer.flush();
        }
        double secs = (System.nanoTime() - start) / 1e9;
        System.out.printf("keyed %d records in %.2f s = %.0f records/s%n", count, secs, count / secs);
    }

    // ------------------------------------------------------------------ KIP-1121 fixed-rate producer

    static Properties producerProps(String bootstrap, String kvs) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        props.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        if (!kvs.isEmpty()) {
            for (String kv : kvs.split(",")) {
                int eq = kv.indexOf('=');
                props.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        return props;
    }

    /** Sends at {@code rate} records/s for {@code seconds} (rate <= 0: as fast as possible); returns {achieved, p50, p99, avg} (ms). */
    static double[] window(KafkaProducer<byte[], byte[]> producer, String topic, List<byte[]> values, double rate,
                           double seconds, long[] rawBytes) throws Exception {
        int cap = rate > 0 ? (int) (rate * seconds * 1.2) + 1000 : 5_000_000;
        final long[] lat = new long[cap];
        final java.util.concurrent.atomic.AtomicInteger acked = new java.util.concurrent.atomic.AtomicInteger();
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        int sent = 0;
        long now;
        while ((now = System.nanoTime()) < end && sent < cap) {
            if (rate > 0) {
                long due = (long) ((now - start) / 1e9 * rate);
                if (sent >= due) {
                    java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                    continue;
                }
            }
            final int idx = sent++;
            final long t = System.nanoTime();
            byte[] v = values.get(idx % values.size());
            rawBytes[0] += v.length;
            producer.send(new ProducerRecord<>(topic, v), (md, e) -> {
                lat[idx] = System.nanoTime() - t;
                acked.incrementAndGet();
            });
        }
        producer.flush();
        double elapsed = (System.nanoTime() - start) / 1e9;
        long[] l = Arrays.copyOf(lat, sent);
        Arrays.sort(l);
        double sum = 0;
        for (long x : l) sum += x;
        return new double[] {sent / elapsed, l[(int) (sent * 0.5)] / 1e6, l[Math.min(sent - 1, (int) (sent * 0.99))] / 1e6,
            sum / Math.max(sent, 1) / 1e6};
    }

    /** With rate > 0: waits until record number {@code sent} is due, {@code rate} records/s after {@code start}. */
    static void pace(long start, long sent, double rate) {
        while (rate > 0 && (System.nanoTime() - start) / 1e9 * rate < sent) {
            java.util.concurrent.locks.LockSupport.parkNanos(100_000);
        }
    }

    static List<byte[]> values(String file) throws IOException {
        List<byte[]> values = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(file), StandardCharsets.UTF_8)) {
            if (!line.isEmpty()) values.add(line.getBytes(StandardCharsets.UTF_8));
        }
        return values;
    }

    static void throughput(String[] args) throws Exception {
        String topic = args[2];
        Properties props = producerProps(args[1], args[3]);
        List<byte[]> values = values(args[4]);
        double warmupSeconds = Double.parseDouble(args[5]);
        double seconds = Double.parseDouble(args[6]);
        double rate = args.length > 7 ? Double.parseDouble(args[7]) : 0;
        final int cap = 8_000_000;          // latency samples (microseconds); the window ends early when full
        final int[] lat = new int[cap];
        final java.util.concurrent.atomic.AtomicReference<Exception> error = new java.util.concurrent.atomic.AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            int next = 0;
            long warmRecords = 0;
            long warmBytes = 0;
            long t0 = System.nanoTime();
            long end = t0 + (long) (warmupSeconds * 1e9);
            while ((warmRecords & 255) != 0 || System.nanoTime() < end) {
                pace(t0, warmRecords, rate);
                byte[] v = values.get(next);
                next = (next + 1) % values.size();
                producer.send(new ProducerRecord<>(topic, v), (md, e) -> {
                    if (e != null) error.compareAndSet(null, e);
                });
                warmRecords++;
                warmBytes += v.length;
            }
            producer.flush();
            System.out.printf("steady,%d,%d,%.3f%n", warmRecords, warmBytes, (System.nanoTime() - t0) / 1e9);
            System.out.flush();
            Thread.sleep(300);
            long bytes = 0;
            int n = 0;
            long start = System.nanoTime();
            end = start + (long) (seconds * 1e9);
            while (n < cap && ((n & 255) != 0 || System.nanoTime() < end)) {
                pace(start, n, rate);
                byte[] v = values.get(next);
                next = (next + 1) % values.size();
                bytes += v.length;
                final int idx = n++;
                final long t = System.nanoTime();
                producer.send(new ProducerRecord<>(topic, v), (md, e) -> {
                    lat[idx] = (int) Math.min(Integer.MAX_VALUE, (System.nanoTime() - t) / 1000);
                    if (e != null) error.compareAndSet(null, e);
                });
            }
            producer.flush();
            double secs = (System.nanoTime() - start) / 1e9;
            if (error.get() != null) throw error.get();
            int[] l = Arrays.copyOf(lat, n);
            Arrays.sort(l);
            double sum = 0;
            for (int x : l) sum += x;
            System.out.printf("done,%d,%d,%.3f,%.1f,%.2f,%.2f,%.2f%n", n, bytes, secs, n / secs, l[n / 2] / 1e3,
                l[Math.min(n - 1, (int) (n * 0.99))] / 1e3, sum / n / 1e3);
            providerCounters();
            System.out.flush();
            Thread.sleep(300);
        }
    }

    /** Sends from {@code threads} threads at once through one producer until {@code end} (nanoTime), records at
     * a multiple of 256 records per thread; returns {records, bytes}. lat (microseconds) is filled when not null. */
    static long[] sendFromThreads(KafkaProducer<byte[], byte[]> producer, String topic, List<byte[]> values, int threads,
                                  long end, int[] lat,
                                  java.util.concurrent.atomic.AtomicReference<Exception> error) throws Exception {
        final java.util.concurrent.atomic.AtomicInteger index = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicLong records = new java.util.concurrent.atomic.AtomicLong();
        final java.util.concurrent.atomic.AtomicLong bytes = new java.util.concurrent.atomic.AtomicLong();
        Thread[] workers = new Thread[threads];
        for (int w = 0; w < threads; w++) {
            final int offset = (int) ((long) values.size() * w / threads);
            workers[w] = new Thread(() -> {
                int next = offset;
                long n = 0;
                long b = 0;
                while ((n & 255) != 0 || System.nanoTime() < end) {
                    final int idx = lat != null ? index.getAndIncrement() : 0;
                    if (lat != null && idx >= lat.length) break;     // latency samples full: the window ends early
                    byte[] v = values.get(next);
                    next = (next + 1) % values.size();
                    b += v.length;
                    n++;
                    if (lat != null) {
                        final long t = System.nanoTime();
                        producer.send(new ProducerRecord<>(topic, v), (md, e) -> {
                            lat[idx] = (int) Math.min(Integer.MAX_VALUE, (System.nanoTime() - t) / 1000);
                            if (e != null) error.compareAndSet(null, e);
                        });
                    } else {
                        producer.send(new ProducerRecord<>(topic, v), (md, e) -> {
                            if (e != null) error.compareAndSet(null, e);
                        });
                    }
                }
                records.addAndGet(n);
                bytes.addAndGet(b);
            }, "app-" + w);
            workers[w].start();
        }
        for (Thread t : workers) t.join();
        return new long[] {records.get(), bytes.get()};
    }

    static void threads(String[] args) throws Exception {
        String topic = args[2];
        Properties props = producerProps(args[1], args[3]);
        List<byte[]> values = values(args[4]);
        int threads = Integer.parseInt(args[5]);
        double warmupSeconds = Double.parseDouble(args[6]);
        double seconds = Double.parseDouble(args[7]);
        final int[] lat = new int[8_000_000];
        final java.util.concurrent.atomic.AtomicReference<Exception> error = new java.util.concurrent.atomic.AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            long t0 = System.nanoTime();
            long[] warm = sendFromThreads(producer, topic, values, threads, t0 + (long) (warmupSeconds * 1e9), null, error);
            producer.flush();
            System.out.printf("steady,%d,%d,%.3f%n", warm[0], warm[1], (System.nanoTime() - t0) / 1e9);
            System.out.flush();
            Thread.sleep(300);
            long start = System.nanoTime();
            long[] done = sendFromThreads(producer, topic, values, threads, start + (long) (seconds * 1e9), lat, error);
            producer.flush();
            double secs = (System.nanoTime() - start) / 1e9;
            if (error.get() != null) throw error.get();
            int n = (int) Math.min(done[0], lat.length);
            int[] l = Arrays.copyOf(lat, n);
            Arrays.sort(l);
            double sum = 0;
            for (int x : l) sum += x;
            System.out.printf("done,%d,%d,%.3f,%.1f,%.2f,%.2f,%.2f%n", done[0], done[1], secs, done[0] / secs,
                l[n / 2] / 1e3, l[Math.min(n - 1, (int) (n * 0.99))] / 1e3, sum / n / 1e3);
            for (java.util.Map.Entry<org.apache.kafka.common.MetricName, ? extends org.apache.kafka.common.Metric> m
                    : producer.metrics().entrySet()) {
                String group = m.getKey().group();
                String name = m.getKey().name();
                boolean wanted = group.equals("producer-metrics")
                    && (name.equals("record-queue-time-avg") || name.equals("request-latency-avg"))
                    || group.equals("producer-compression-provider-metrics") && name.startsWith("compression-");
                Object v = m.getValue().metricValue();
                if (wanted && v instanceof Number) {
                    System.out.printf("metric,%s,%s,%.3f%n", group, name, ((Number) v).doubleValue());
                }
            }
            System.out.flush();
            Thread.sleep(300);
        }
    }

    /** With a KIP-1121 provider configured: "provider,codec,batches,fallbacks" from its JMX counters (this JVM). */
    static void providerCounters() {
        try {
            javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
            for (javax.management.ObjectName name : server.queryNames(
                    new javax.management.ObjectName("kafka.producer:type=producer-compression-provider-metrics,*"), null)) {
                System.out.printf("provider,%s,%.0f,%.0f%n", name.getKeyProperty("codec"),
                    ((Number) server.getAttribute(name, "compression-batches-total")).doubleValue(),
                    ((Number) server.getAttribute(name, "compression-fallbacks-total")).doubleValue());
            }
        } catch (Exception e) {
            System.out.println("provider,error," + e);
        }
    }

    static void sla(String[] args) throws Exception {
        String bootstrap = args[1];
        String topic = args[2];
        Properties props = producerProps(bootstrap, args[3]);
        List<byte[]> values = values(args[4]);
        double stopMs = Double.parseDouble(args[5]);
        double seconds = Double.parseDouble(args[6]);
        int repeats = Integer.parseInt(args[7]);
        double factor = Double.parseDouble(args[8]);
        long[] raw = new long[1];
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            window(producer, topic, values, -1, 5, raw);   // warm-up (JIT, connections, metadata)
            double[] peak = window(producer, topic, values, -1, 5, raw);
            System.out.printf("peak,%.0f,%.2f%n", peak[0], peak[2]);
            System.out.flush();
            double fixed = args.length > 9 ? Double.parseDouble(args[9]) : 0;
            if (fixed != 0) {
                double fixedRate = fixed < 0 ? -fixed * peak[0] : fixed;
                double[][] reps = new double[repeats][];
                for (int r = 0; r < repeats; r++) reps[r] = window(producer, topic, values, fixedRate, seconds, raw);
                double[] med = medians(reps);
                System.out.printf("fixed,%.0f,%.0f,%.2f,%.2f,%.2f,%d%n", fixedRate, med[0], med[1], med[2], med[3], raw[0]);
                System.out.flush();
            }
            double rate = 0.2 * peak[0];
            boolean retried = false;
            while (rate <= 3 * peak[0]) {
                double[][] reps = new double[repeats][];
                for (int r = 0; r < repeats; r++) reps[r] = window(producer, topic, values, rate, seconds, raw);
                double[] med = medians(reps);
                boolean failed = med[2] > stopMs || med[0] < 0.9 * rate;
                // one latency spike (a GC, a page-cache flush on the broker) must not end the run: re-measure once
                String kind = failed && !retried ? "retry" : "step";
                System.out.printf("%s,%.0f,%.0f,%.2f,%.2f,%.2f,%d%n", kind, rate, med[0], med[1], med[2], med[3], raw[0]);
                System.out.flush();
                if (failed && retried) break;
                retried = failed;
                if (!failed) rate *= factor;
            }
        }
    }

    static double[] medians(double[][] reps) {
        double[] med = new double[4];
        for (int k = 0; k < 4; k++) {
            double[] col = new double[reps.length];
            for (int r = 0; r < reps.length; r++) col[r] = reps[r][k];
            Arrays.sort(col);
            med[k] = col[reps.length / 2];
        }
        return med;
    }
}
