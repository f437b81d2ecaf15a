/*
 * Licensed to the Apache Software Foundation (ASF) under one or more
 * contributor license agreements. See the NOTICE file distributed with
 * this work for additional information regarding copyright ownership.
 * The ASF licenses this file to You under the Apache License, Version 2.0
 * (the "License"); you may not use this file except in compliance with
 * the License. You may obtain a copy of the License at
 *
 *    http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */
package io.kafkacompress.tools.advisor;

import io.kafkacompress.tools.advisor.Measurement.Result;
import io.kafkacompress.tools.advisor.Measurement.Setting;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.compress.CompressionService;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.common.utils.Utils;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import net.sourceforge.argparse4j.ArgumentParsers;
import net.sourceforge.argparse4j.inf.ArgumentParser;
import net.sourceforge.argparse4j.inf.ArgumentParserException;
import net.sourceforge.argparse4j.inf.Namespace;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;

import static net.sourceforge.argparse4j.impl.Arguments.store;
import static net.sourceforge.argparse4j.impl.Arguments.storeTrue;

/**
 * kafka-compression-advisor.sh: measures every codec, level and compression provider on a topic's own records (or a
 * file of records) with Kafka's record-batch code, and says which compression settings to use.
 */
public final class CompressionAdvisor {

    static final int[] GZIP_LEVELS = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    static final int[] LZ4_LEVELS = {1, 9, 17};
    static final int[] ZSTD_LEVELS = {-5, 1, 3, 6, 9, 12, 19};

    private CompressionAdvisor() {
    }

    public static void main(String[] args) {
        try {
            Exit.exit(run(args, System.out, System.err));
        } catch (Throwable e) {
            System.err.println("ERROR: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            if (!(e instanceof IllegalArgumentException))
                e.printStackTrace(System.err);
            Exit.exit(1);
        }
    }

    static ArgumentParser parser() {
        ArgumentParser parser = ArgumentParsers.newArgumentParser("kafka-compression-advisor")
            .defaultHelp(true)
            .description("Measures every compression codec, level and compression provider available here on a sample of a " +
                "topic's records (read without a consumer group and without committing offsets) or on a file of records, " +
                "with Kafka's own record-batch code, and recommends the topic and producer settings for a goal.");
        parser.addArgument("--bootstrap-server").action(store()).type(String.class).metavar("HOST:PORT").dest("bootstrapServer")
            .help("The Kafka server(s) to connect to, to sample --topic.");
        parser.addArgument("--topic").action(store()).type(String.class).metavar("TOPIC")
            .help("The topic whose records are sampled (with --bootstrap-server); also named in the kafka-configs.sh line.");
        parser.addArgument("--command-config").action(store()).type(String.class).metavar("CONFIG_FILE").dest("commandConfig")
            .help("Client properties (security settings and the like) for the consumer and admin client.");
        parser.addArgument("--jmx-url").action(store()).type(String.class).metavar("URL[,URL...]").dest("jmxUrl")
            .help("With --topic: the JMX service URL of each broker leading the topic's partitions (e.g. "
                + "service:jmx:rmi:///jndi/rmi://HOST:PORT/jmxrmi for a broker started with JMX_PORT), to show the topic's "
                + "live compression ratio from the brokers' BrokerTopicMetrics beside the measurements, and what the log "
                + "cleaner recompressed (CleanerRecompression*, counted on every replica: summed over the brokers given).");
        parser.addArgument("--input").action(store()).type(String.class).metavar("FILE")
            .help("Measure the records of this file, one record (value) per line, as kafka-producer-perf-test.sh --payload-file, " +
                "instead of sampling a topic.");
        parser.addArgument("--max-records").action(store()).type(Integer.class).setDefault(100_000).metavar("N").dest("maxRecords")
            .help("Sample at most this many records.");
        parser.addArgument("--max-bytes").action(store()).type(Long.class).setDefault(16L << 20).metavar("BYTES").dest("maxBytes")
            .help("Sample at most this many bytes of keys, values and headers (they are held in memory).");
        parser.addArgument("--partitions").action(store()).type(String.class).metavar("P1,P2,...")
            .help("Sample only these partitions (default: all).");
        parser.addArgument("--offset").action(store()).type(String.class).setDefault("latest").metavar("latest|earliest|N")
            .help("Where each partition's sample starts: latest (the most recent records, --max-records spread over the " +
                "partitions), earliest, or an offset.");
        parser.addArgument("--timeout-ms").action(store()).type(Long.class).setDefault(30_000L).metavar("MS").dest("timeoutMs")
            .help("How long sampling the topic may take.");
        parser.addArgument("--batch-size").action(store()).type(String.class).setDefault("16384").metavar("BYTES[,BYTES...]").dest("batchSize")
            .help("The producer's batch.size to cut the records into batches with (several: each is measured).");
        parser.addArgument("--codecs").action(store()).type(String.class).setDefault("all").metavar("SPEC[,SPEC...]")
            .help("Codecs and levels to measure: all, or a list of codec (every level) and codec:level, e.g. " +
                "none,gzip:6,lz4,zstd:3. Levels measured by default: gzip 1-9, lz4 1, 9, 17, zstd -5, 1, 3, 6, 9, 12, 19.");
        parser.addArgument("--providers").action(store()).type(String.class).setDefault("all").metavar("all|none|CLASS[,CLASS...]")
            .help("KIP-1121 compression providers to measure beside the built-in codecs: all available on the classpath, " +
                "none, or these classes. A provider that is not available here is listed with its reason and skipped.");
        parser.addArgument("--recompression-batch-bytes").action(store()).type(Integer.class).setDefault(1 << 20).metavar("BYTES")
            .dest("recompressionBatchBytes")
            .help("For the capacity plan of cold recompression: the topic's recompression.batch.bytes (the broker's default " +
                "log.cleaner.recompression.batch.bytes is 1048576): the log cleaner merges consecutive batches into batches of " +
                "up to this many bytes of records (never above the topic's max.message.bytes) before it compresses them, so " +
                "the targets are measured at that batch size; 0: it rewrites batch by batch.");
        parser.addArgument("--goal").action(store()).type(String.class).choices("disk", "cpu", "balanced").setDefault("balanced")
            .help("What the ranking and the recommendation optimise: disk (smallest size), cpu (least CPU among settings " +
                "that save at least 10%), balanced (the knee of the size/speed Pareto front).");
        parser.addArgument("--messages-per-day").action(store()).type(Double.class).metavar("N").dest("messagesPerDay")
            .help("Records produced per day, for the disk and CPU each setting needs (default: estimated from the sampled " +
                "records' timestamps).");
        parser.addArgument("--retention-days").action(store()).type(Double.class).metavar("DAYS").dest("retentionDays")
            .help("Days of data kept (default: the topic's retention.ms).");
        parser.addArgument("--replication-factor").action(store()).type(Integer.class).metavar("N").dest("replicationFactor")
            .help("Copies of each partition (default: the topic's; 1 with --input).");
        parser.addArgument("--repeats").action(store()).type(Integer.class).setDefault(1).metavar("N")
            .help("Timed passes over the sample per setting (the median is reported).");
        parser.addArgument("--warmup-bytes").action(store()).type(Long.class).setDefault(2L << 20).metavar("BYTES").dest("warmupBytes")
            .help("Bytes of the sample each setting compresses and decompresses before it is timed.");
        parser.addArgument("--format").action(store()).type(String.class).choices("table", "json", "csv").setDefault("table")
            .help("Output format.");
        parser.addArgument("--plot").action(store()).type(String.class).metavar("FILE.png")
            .help("Also draw size ratio against compression speed, with the Pareto front, into this PNG file.");
        parser.addArgument("--no-progress").action(storeTrue()).dest("noProgress")
            .help("No progress bar on standard error.");
        parser.addArgument("--version").action(storeTrue())
            .help("Display Kafka version.");
        return parser;
    }

    static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        ArgumentParser parser = parser();
        Namespace ns;
        try {
            ns = parser.parseArgs(args);
        } catch (net.sourceforge.argparse4j.internal.HelpScreenException e) {
            return 0;    // --help: argparse4j printed it
        } catch (ArgumentParserException e) {
            if (args.length == 0) {
                parser.printHelp(new java.io.PrintWriter(err, true));
                return 1;
            }
            parser.handleError(e);
            return 1;
        }
        if (ns.getString("plot") != null) {
            // before measuring: a host whose java.awt cannot draw text fails here in one line, not after minutes
            String unavailable = ParetoPlot.unavailable();
            if (unavailable != null) {
                err.println("ERROR: cannot draw --plot " + ns.getString("plot") + ": " + unavailable);
                return 1;
            }
        }
        if (ns.getBoolean("version")) {
            out.println(AppInfoParser.getVersion() + " (Commit:" + AppInfoParser.getCommitId() + ")");
            return 0;
        }
        String bootstrap = ns.getString("bootstrapServer");
        String topic = ns.getString("topic");
        String input = ns.getString("input");
        if (input == null && (bootstrap == null || topic == null)) {
            err.println("Either --input FILE, or --bootstrap-server and --topic, is required.");
            parser.printUsage(new java.io.PrintWriter(err, true));
            return 1;
        }
        if (input != null && bootstrap != null) {
            err.println("--input and --bootstrap-server are mutually exclusive (a file, or a topic's records).");
            return 1;
        }
        Properties clientProps = new Properties();
        if (ns.getString("commandConfig") != null)
            clientProps.putAll(Utils.loadProps(ns.getString("commandConfig")));
        if (bootstrap != null)
            clientProps.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap);

        List<Integer> batchSizes = new ArrayList<>();
        for (String s : ns.getString("batchSize").split(","))
            batchSizes.add(positive("--batch-size", Integer.parseInt(s.trim())));
        int repeats = positive("--repeats", ns.getInt("repeats"));
        int recompressionBatchBytes = ns.getInt("recompressionBatchBytes");
        if (recompressionBatchBytes < 0)
            throw new IllegalArgumentException("--recompression-batch-bytes must be 0 or more, got " + recompressionBatchBytes);
        List<Setting> builtIn = builtInSettings(ns.getString("codecs"));
        List<String> skippedProviders = new ArrayList<>();
        List<Setting> provided = providerSettings(ns.getString("providers"), builtIn, skippedProviders);

        boolean progressOn = !ns.getBoolean("noProgress");
        Progress progressBar = new Progress(err, progressOn);

        // input
        Sample sample;
        Map<String, String> topicConfig = Collections.emptyMap();
        Integer topicReplication = null;
        RealBatches real = null;
        if (input != null) {
            sample = Sample.fromFile(Path.of(input), ns.getInt("maxRecords"), ns.getLong("maxBytes"));
        } else {
            List<Integer> partitions = null;
            if (ns.getString("partitions") != null) {
                partitions = new ArrayList<>();
                for (String p : ns.getString("partitions").split(","))
                    partitions.add(Integer.parseInt(p.trim()));
            }
            String offset = ns.getString("offset");
            Long start = "latest".equals(offset) ? null : "earliest".equals(offset) ? -2L : Long.valueOf(Long.parseLong(offset));
            TopicDescription description;
            try (Admin admin = Admin.create(clientProps)) {
                description = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(ns.getLong("timeoutMs"), TimeUnit.MILLISECONDS).get(topic);
                topicReplication = description.partitions().get(0).replicas().size();
                ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
                Config config = admin.describeConfigs(List.of(resource)).all().get(ns.getLong("timeoutMs"), TimeUnit.MILLISECONDS).get(resource);
                topicConfig = new LinkedHashMap<>();
                for (ConfigEntry e : config.entries())
                    topicConfig.put(e.name(), e.value());
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalArgumentException("cannot describe topic " + topic + ": " + e.getCause().getMessage());
            }
            err.println("[advisor] sampling " + topic + " (no consumer group, nothing committed)");
            sample = Sample.fromTopic(clientProps, topic, partitions, start, ns.getInt("maxRecords"), ns.getLong("maxBytes"),
                ns.getLong("timeoutMs"));
            // the same offsets again, raw: the batches as they are stored (a consumer does not show them)
            Map<Integer, Node> leaders = new LinkedHashMap<>();
            for (TopicPartitionInfo p : description.partitions())
                leaders.put(p.partition(), p.leader());
            try {
                real = RealBatches.fetch(clientProps, topic, description.topicId(), leaders, sample.offsets, ns.getLong("maxBytes"),
                    ns.getLong("timeoutMs"));
            } catch (IOException | KafkaException e) {
                err.println("[advisor] WARN: cannot fetch the topic's batches (" + e.getMessage() + "): measuring at --batch-size only");
            }
            if (real == null || real.batches == 0)
                real = null;
            else
                err.printf(Locale.ROOT, "[advisor] the topic's batches: %d, median %.0f B uncompressed, %.0f records, codec %s%n",
                    real.batches, real.uncompressedPercentile(50), real.recordsPercentile(50), real.codec());
        }
        err.printf(Locale.ROOT, "[advisor] %d records, %s, from %s%n", sample.size(), bytes(sample.bytes), sample.source);
        BrokerMetrics live = null;
        if (ns.getString("jmxUrl") != null && topic != null) {
            try {
                live = BrokerMetrics.read(List.of(ns.getString("jmxUrl").split(",")), topic);
            } catch (IOException | javax.management.JMException | RuntimeException e) {
                err.println("[advisor] WARN: cannot read the topic's metrics over JMX (" + e + "): no live ratio");
            }
        }

        // measure: at each --batch-size as a producer cuts batches, and at the size the topic's own batches have
        Measurement measurement = new Measurement(sample, repeats, ns.getLong("warmupBytes"), progressBar::advance);
        if (real != null)
            measurement.realMaxRecords = (int) Math.max(1, real.recordsPercentile(90));
        List<Setting> settings = new ArrayList<>(builtIn);
        settings.addAll(provided);
        Today today = real == null ? null : Today.of(topicConfig, real);
        Integer realBatchSize = real == null ? null : real.measuredBatchSize();
        String realSkipped = null;
        if (realBatchSize != null) {
            for (int b : batchSizes) {
                if (Math.abs(realBatchSize - b) <= 0.1 * b) {
                    realSkipped = String.format(Locale.ROOT, "within 10%% of --batch-size %d", b);
                    break;
                }
            }
        }
        boolean measureReal = realBatchSize != null && realSkipped == null;
        List<Setting> realSettings = new ArrayList<>();
        if (realBatchSize != null) {
            if (measureReal)
                realSettings.addAll(settings);
            if (settings.stream().noneMatch(s -> s.sameAs(today.setting)))
                realSettings.add(today.setting);
            else if (!measureReal)
                realSettings.add(today.setting);
        }
        boolean noneListed = settings.stream().anyMatch(s -> s.type == CompressionType.NONE);
        long units = (long) batchSizes.size() * (settings.size() + (noneListed ? 0 : 1));
        if (!realSettings.isEmpty())
            units += realSettings.size() + (realSettings.stream().anyMatch(s -> s.type == CompressionType.NONE) ? 0 : 1);
        progressBar.start(units * measurement.workPerSetting());
        List<Result> results = new ArrayList<>();
        for (int batchSize : batchSizes)
            results.addAll(measureAll(measurement, progressBar, settings, batchSize, false,
                batchSizes.size() > 1 || !realSettings.isEmpty() ? " @" + batchSize : ""));
        Result todayResult = null;
        if (!realSettings.isEmpty()) {
            List<Result> atReal = measureAll(measurement, progressBar, realSettings, realBatchSize, true, " @real:" + realBatchSize);
            for (Result r : atReal) {
                if (r.setting.sameAs(today.setting))
                    todayResult = r;
            }
            // the topic's own setting, measured only for the comparison, stays out of the ranking when its batch size
            // is not (or when it is not among --codecs)
            for (Result r : atReal) {
                if (measureReal && (r != todayResult || settings.stream().anyMatch(s -> s.sameAs(r.setting))))
                    results.add(r);
            }
        }
        if (today != null)
            today.result = todayResult;

        // cold recompression: the candidate targets again, at the batch size the cleaner merges the source's batches into
        Result coldSource = ColdCapacity.source(today, results);
        List<Result> coldTargets = ColdCapacity.targets(coldSource, results);
        String maxMessageBytes = topicConfig.get("max.message.bytes");
        if (maxMessageBytes != null)    // the cleaner's BatchMerger: a merged batch, header included, within max.message.bytes
            recompressionBatchBytes = Math.min(recompressionBatchBytes,
                Integer.parseInt(maxMessageBytes) - DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
        int mergedBatchBytes = coldTargets.isEmpty() ? 0 : ColdCapacity.mergedBatchBytes(coldSource, recompressionBatchBytes);
        if (mergedBatchBytes > 0)
            progressBar.extend(coldTargets.size() * measurement.workPerSetting());
        List<ColdCapacity> cold = ColdCapacity.plan(coldSource, coldTargets, mergedBatchBytes, s -> {
            progressBar.label(s.label() + " @merged:" + mergedBatchBytes);
            int maxRecords = measurement.realMaxRecords;
            measurement.realMaxRecords = Integer.MAX_VALUE;     // a merged batch holds as many records as fit
            try {
                // over the source's uncompressed bytes, as the source's ratio and rates are
                return measurement.measure(s, mergedBatchBytes, coldSource.uncompressedBytes, true);
            } finally {
                measurement.realMaxRecords = maxRecords;
            }
        });
        progressBar.finish();

        // sizing inputs
        Double messagesPerDay = ns.get("messagesPerDay");
        String messagesPerDaySource = "--messages-per-day";
        if (messagesPerDay == null && input == null && sample.messagesPerDayFromTimestamps() > 0) {
            messagesPerDay = sample.messagesPerDayFromTimestamps();
            messagesPerDaySource = "estimated from the sampled records' timestamps";
        }
        Double retentionDays = ns.get("retentionDays");
        String retentionSource = "--retention-days";
        if (retentionDays == null && topicConfig.get("retention.ms") != null) {
            long ms = Long.parseLong(topicConfig.get("retention.ms"));
            if (ms > 0) {
                retentionDays = ms / 86_400_000.0;
                retentionSource = "the topic's retention.ms";
            }
        }
        Integer replication = ns.getInt("replicationFactor");
        String replicationSource = "--replication-factor";
        if (replication == null) {
            replication = topicReplication != null ? topicReplication : 1;
            replicationSource = topicReplication != null ? "the topic's replication factor" : "assumed (no topic)";
        }
        Sizing sizing = new Sizing(messagesPerDay, messagesPerDaySource, retentionDays, retentionSource, replication, replicationSource);

        Advice advice = new Advice(results, ns.getString("goal"));
        Report report = new Report(sample, advice, sizing, bootstrap, topic, topicConfig, skippedProviders, provided,
            real, today, realSkipped, batchSizes, live, cold, recompressionBatchBytes, mergedBatchBytes);
        switch (ns.getString("format")) {
            case "json": report.json(out); break;
            case "csv": report.csv(out); break;
            default: report.table(out); break;
        }
        if (ns.getString("plot") != null) {
            ParetoPlot.write(Path.of(ns.getString("plot")), results, advice.recommendation(), sample.source);
            err.println("[advisor] wrote " + ns.getString("plot"));
        }
        out.flush();
        return 0;
    }

    /** Each setting at one batch size (codec none first: the base of every size ratio). */
    private static List<Result> measureAll(Measurement measurement, Progress progressBar, List<Setting> settings, int batchSize,
                                           boolean real, String suffix) {
        List<Result> results = new ArrayList<>();
        progressBar.label("none" + suffix);
        Result none = measurement.measure(new Setting(CompressionType.NONE, null, null, null), batchSize, 0, real);
        for (Setting s : settings) {
            progressBar.label(s.label() + suffix);
            Result r;
            if (s.type == CompressionType.NONE) {
                r = none;
            } else {
                r = measurement.measure(s, batchSize, none.compressedBytes, real);
            }
            results.add(r);
        }
        return results;
    }

    /**
     * The topic's compression today: its compression.type and level, or for compression.type=producer the codec its
     * batches have, at Kafka's default level for it (the producers' level is not stored in a batch).
     */
    static final class Today {
        final Setting setting;
        final String source;
        Result result;

        Today(Setting setting, String source) {
            this.setting = setting;
            this.source = source;
        }

        static Today of(Map<String, String> topicConfig, RealBatches real) {
            String type = topicConfig.getOrDefault("compression.type", "producer");
            String source;
            CompressionType codec;
            Integer level;
            if ("producer".equals(type)) {
                codec = CompressionType.forName(real.codec());
                level = defaultLevel(codec);
                source = "compression.type=producer: the codec of the topic's batches" +
                    (level == null ? "" : ", at Kafka's default level (a batch does not record its level)");
            } else {
                codec = CompressionType.forName("uncompressed".equals(type) ? "none" : type);
                String configured = topicConfig.get("compression." + codec.name + ".level");
                level = defaultLevel(codec);
                if (configured != null && level != null) {
                    int l = Integer.parseInt(configured);
                    level = codec == CompressionType.GZIP && l == -1 ? 6 : l;   // -1: Deflater's default, 6
                }
                source = "the topic's compression.type=" + type + (level == null ? "" : ", compression." + codec.name + ".level="
                    + (configured != null ? configured : level + " (default)"));
            }
            return new Today(new Setting(codec, level, null, null), source);
        }

        static Integer defaultLevel(CompressionType codec) {
            switch (codec) {
                case GZIP: return 6;    // GzipCompression's default, Deflater.DEFAULT_COMPRESSION
                case LZ4: return 9;
                case ZSTD: return 3;
                default: return null;
            }
        }
    }

    static int positive(String name, int v) {
        if (v <= 0)
            throw new IllegalArgumentException(name + " must be positive, got " + v);
        return v;
    }

    static String bytes(long b) {
        if (b >= 1 << 20)
            return String.format(Locale.ROOT, "%.1f MiB", b / 1048576.0);
        if (b >= 1 << 10)
            return String.format(Locale.ROOT, "%.1f KiB", b / 1024.0);
        return b + " B";
    }

    static int[] levels(CompressionType type) {
        switch (type) {
            case GZIP: return GZIP_LEVELS;
            case LZ4: return LZ4_LEVELS;
            case ZSTD: return ZSTD_LEVELS;
            default: return null;
        }
    }

    /** The built-in settings --codecs asks for, in the order none, gzip, lz4, zstd, snappy. */
    static List<Setting> builtInSettings(String spec) {
        Map<CompressionType, List<Integer>> wanted = new LinkedHashMap<>();
        for (CompressionType t : new CompressionType[] {CompressionType.NONE, CompressionType.GZIP, CompressionType.LZ4,
            CompressionType.ZSTD, CompressionType.SNAPPY})
            wanted.put(t, null);
        Map<CompressionType, List<Integer>> chosen = new LinkedHashMap<>();
        if (spec.trim().equals("all")) {
            chosen.putAll(wanted);
            for (CompressionType t : wanted.keySet())
                chosen.put(t, allLevels(t));
        } else {
            for (String part : spec.split(",")) {
                String[] kv = part.trim().split(":");
                CompressionType type;
                try {
                    type = CompressionType.forName(kv[0].trim().equals("uncompressed") ? "none" : kv[0].trim());
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("--codecs: unknown codec '" + kv[0] + "' (none, gzip, snappy, lz4, zstd)");
                }
                List<Integer> ls = chosen.computeIfAbsent(type, t -> new ArrayList<>());
                if (kv.length == 1) {
                    for (Integer l : allLevels(type))
                        if (!ls.contains(l)) ls.add(l);
                } else {
                    if (levels(type) == null)
                        throw new IllegalArgumentException("--codecs: " + type.name + " has no level");
                    int l = Integer.parseInt(kv[1].trim());
                    if (!ls.contains(l)) ls.add(l);
                }
            }
        }
        List<Setting> out = new ArrayList<>();
        for (CompressionType t : wanted.keySet()) {
            List<Integer> ls = chosen.get(t);
            if (ls == null)
                continue;
            for (Integer l : ls)
                out.add(new Setting(t, l, null, null));
        }
        return out;
    }

    private static List<Integer> allLevels(CompressionType type) {
        List<Integer> ls = new ArrayList<>();
        int[] levels = levels(type);
        if (levels == null)
            ls.add(null);
        else
            for (int l : levels) ls.add(l);
        return ls;
    }

    /**
     * Settings for the providers on the classpath: each provider at the levels measured for its codec. A provider is
     * instantiated only when asked for, and only its own checkAvailable() decides whether it can work here (the
     * providers of this distribution never probe hardware in a way that can crash the JVM).
     */
    static List<Setting> providerSettings(String spec, List<Setting> builtIn, List<String> skipped) {
        List<Setting> out = new ArrayList<>();
        if (spec.trim().equals("none"))
            return out;
        List<String> classes = new ArrayList<>();
        if (spec.trim().equals("all")) {
            for (ServiceLoader.Provider<CompressionService> p : ServiceLoader.load(CompressionService.class).stream().toList())
                classes.add(p.type().getName());
        } else {
            for (String c : spec.split(","))
                classes.add(c.trim());
        }
        for (String cls : classes) {
            CompressionService service;
            try {
                service = (CompressionService) Class.forName(cls).getDeclaredConstructor().newInstance();
                if (service instanceof Configurable)
                    ((Configurable) service).configure(Map.of());
                service.checkAvailable();
            } catch (Throwable e) {
                String why = e.getMessage() != null ? e.getMessage() : e.toString();
                skipped.add(cls + ": " + why);
                continue;
            }
            CompressionType type = CompressionType.forName(service.type());
            String name = shortName(service, cls);
            for (Setting s : builtIn) {
                if (s.type == type)
                    out.add(new Setting(type, s.level, service, name));
            }
        }
        return out;
    }

    static String shortName(CompressionService service, String cls) {
        if (cls.equals("io.kafkacompress.nativegzip.NativeGzipCompressionService"))
            return "native-gzip";
        if (cls.equals("io.kafkacompress.qat.QatGzipCompressionService"))
            return "qat-gzip";
        String s = cls.substring(cls.lastIndexOf('.') + 1);
        return s.replace("CompressionService", "");
    }

    /** Disk and CPU at the production rate, when the rate and retention are known. */
    static final class Sizing {
        final Double messagesPerDay;
        final String messagesPerDaySource;
        final Double retentionDays;
        final String retentionSource;
        final int replicationFactor;
        final String replicationSource;

        Sizing(Double messagesPerDay, String messagesPerDaySource, Double retentionDays, String retentionSource,
               int replicationFactor, String replicationSource) {
            this.messagesPerDay = messagesPerDay;
            this.messagesPerDaySource = messagesPerDaySource;
            this.retentionDays = retentionDays;
            this.retentionSource = retentionSource;
            this.replicationFactor = replicationFactor;
            this.replicationSource = replicationSource;
        }

        boolean disk() {
            return messagesPerDay != null && retentionDays != null;
        }

        boolean cores() {
            return messagesPerDay != null;
        }

        /** avg record size on disk x messages/day x retention x replication, in GB. */
        double diskGB(Result r) {
            return r.bytesPerRecord() * messagesPerDay * retentionDays * replicationFactor / 1e9;
        }

        double uncompressedBytesPerSecond(Result r) {
            return (double) r.uncompressedBytes / r.records * messagesPerDay / 86_400.0;
        }

        double compressCores(Result r) {
            return uncompressedBytesPerSecond(r) * r.compressCpuSeconds / r.uncompressedBytes;
        }

        double decompressCores(Result r) {
            return uncompressedBytesPerSecond(r) * r.decompressCpuSeconds / r.uncompressedBytes;
        }
    }

    /** A progress bar on standard error: redrawn in place on a terminal, a line per 10% otherwise. */
    static final class Progress {
        private final PrintStream err;
        private final boolean on;
        private final boolean tty = System.console() != null;
        private long total;
        private long done;
        private long startNanos;
        private long lastDraw;
        private int lastTenth = -1;
        private String label = "";

        Progress(PrintStream err, boolean on) {
            this.err = err;
            this.on = on;
        }

        void start(long total) {
            this.total = Math.max(1, total);
            this.startNanos = System.nanoTime();
        }

        /** More work than start was told, measured after it. */
        void extend(long more) {
            total += more;
        }

        void label(String label) {
            this.label = label;
            draw(false);
        }

        void advance(long n) {
            done += n;
            draw(false);
        }

        void finish() {
            done = total;
            draw(true);
            if (on && tty)
                err.println();
        }

        private void draw(boolean force) {
            if (!on)
                return;
            long now = System.nanoTime();
            double f = Math.min(1.0, (double) done / total);
            double elapsed = (now - startNanos) / 1e9;
            String eta = f > 0.02 ? String.format(Locale.ROOT, "%.0fs left", elapsed / f - elapsed) : "";
            if (tty) {
                if (!force && now - lastDraw < 200_000_000L)
                    return;
                lastDraw = now;
                int width = 30;
                int full = (int) (f * width);
                String bar = "=".repeat(full) + (full < width ? ">" + " ".repeat(width - full - 1) : "");
                err.printf(Locale.ROOT, "\r[%s] %3.0f%% %-24s %-12s", bar, f * 100, label, eta);
                err.flush();
            } else {
                int tenth = (int) (f * 10);
                if (tenth != lastTenth && elapsed > 0) {
                    lastTenth = tenth;
                    err.printf(Locale.ROOT, "[advisor] %3d%% measured (%s) %s%n", tenth * 10, label, eta);
                }
            }
        }
    }

    static ObjectMapper mapper() {
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }

    static void writeJson(PrintStream out, Object o) throws IOException {
        out.println(mapper().writeValueAsString(o));
    }
}
