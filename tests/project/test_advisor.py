"""bin/kafka-compression-advisor.sh: its measured size ratios are what a broker stores for the same records
at the same setting; its JSON and CSV outputs parse; the goals' recommendations keep their order; it
samples a topic (on a stock 4.3.1 broker) without creating a consumer group or committing offsets; the
topic's own batches it reports are the ones kafka-dump-log.sh shows in the segment."""
import csv
import io
import json
import statistics

import pytest

from conftest import DATA, DIST, dump_deep, require_dist, run, tool

RECORDS = DATA / "json-records.ndjson"
# settings compared with a broker: every codec, the default levels and the ends of the ranges
COMPARED = ["none", "gzip:1", "gzip:6", "lz4:1", "lz4:9", "zstd:3", "zstd:9", "snappy"]
# The producer's compression ratio estimate starts at 1.0 and improves by 0.005 per batch: the broker
# comparison uses the copies of the file from SETTLED on, of COPIES produced, when the estimate has settled
# (about 30 batches a copy at 16 KiB; how full a batch is swings with the estimate, hence several copies).
COPIES = 12
SETTLED = 6


def advisor(*args, timeout=600):
    require_dist()
    p = run([str(DIST / "bin" / "kafka-compression-advisor.sh")] + [str(a) for a in args], timeout=timeout)
    return p


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One full run on the JSON test records (tests/data): every codec and level, every provider available here."""
    plot = tmp_path_factory.mktemp("advisor") / "pareto.png"
    p = advisor("--input", RECORDS, "--format", "json", "--goal", "disk", "--warmup-bytes", 1 << 20,
                "--messages-per-day", 10_000_000, "--retention-days", 7, "--replication-factor", 3, "--plot", plot)
    return json.loads(p.stdout), plot, p.stderr


def key(row):
    return "%s:%s" % (row["codec"], row["level"]) if row["level"] is not None else row["codec"]


def test_json_output_covers_every_codec_and_level(measured):
    out, plot, _ = measured
    rows = out["results"]
    built_in = {key(r) for r in rows if r["provider"] == "built-in"}
    expected = {"none", "snappy"} | {"gzip:%d" % l for l in range(1, 10)} | {"lz4:%d" % l for l in (1, 9, 17)} \
        | {"zstd:%d" % l for l in (-5, 1, 3, 6, 9, 12, 19)}
    assert built_in == expected
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    for r in rows:
        assert r["records"] == 2452
        assert 0 < r["size_ratio"] <= 1.01, r
        assert r["compress_mb_per_s"] > 0 and r["decompress_mb_per_s"] > 0
        # the IBM formula: bytes per record x messages/day x retention x replication
        assert r["disk_gb"] == pytest.approx(r["bytes_per_record"] * 10_000_000 * 7 * 3 / 1e9, rel=1e-9)
    assert sum(r["recommended"] for r in rows) == 1
    assert out["goal"] == "disk" and out["recommendation"] == out["recommendations"]["disk"]
    assert out["recommendation"]["kafka_configs_command"].startswith(
        "bin/kafka-configs.sh --bootstrap-server localhost:9092 --entity-type topics --entity-name <topic> --alter --add-config compression.type=")
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000
    # providers: each one on the classpath is either measured or listed as unavailable with its reason
    providers = {r["provider_class"] for r in rows if r["provider_class"]}
    skipped = " ".join(out["providers_skipped"])
    for cls in ("io.kafkacompress.nativegzip.NativeGzipCompressionService", "io.kafkacompress.qat.QatGzipCompressionService"):
        assert cls in providers or cls in skipped, (cls, out["providers_skipped"])


def cold_plan_checks(out, messages_per_day, replication):
    """Recomputes every figure of the JSON's cold_recompression from the values it says it used, and checks those
    against the results rows: the source (lz4 at its default level 9: --input has no topic setting, the largest
    --batch-size) and the targets chosen from the results rows at the source's batches, the (at most eight smallest)
    built-in settings that store at most 0.95 of its bytes, listed by the bytes they store, the smallest first.
    Returns the plan and the results rows at the source's batches."""
    cold = out["cold_recompression"]
    rows = [r for r in out["results"] if r["batch_basis"] == "batch.size" and r["provider"] == "built-in"]
    source = max((r for r in rows if r["codec"] == "lz4" and r["level"] == 9), key=lambda r: r["batch_size"])
    assert cold["source"] == "lz4 %d" % source["level"] and cold["source_batch"] == str(source["batch_size"])
    assert cold["source_size_ratio"] == pytest.approx(source["size_ratio"], rel=1e-9)
    assert cold["source_decompress_mb_per_s"] == pytest.approx(source["decompress_mb_per_s"], rel=1e-9)
    assert cold["source_uncompressed_bytes_per_batch"] == pytest.approx(source["uncompressed_bytes_per_batch"], rel=1e-9)
    assert cold["source_uncompressed_bytes"] == source["uncompressed_bytes"]
    assert cold["source_records"] == source["records"]
    same_batch = {key(r): r for r in rows if r["batch_size"] == source["batch_size"] and r["codec"] != "none"}
    smaller = sorted((r for r in same_batch.values() if r["size_ratio"] <= 0.95 * source["size_ratio"]),
                     key=lambda r: r["size_ratio"])
    # chosen at the source's batches, listed by the bytes they store at the batches the cleaner writes
    assert sorted(key(t) for t in cold["targets"]) == sorted(key(r) for r in smaller[:8])
    assert [t["size_ratio"] for t in cold["targets"]] == sorted(t["size_ratio"] for t in cold["targets"])
    assert cold["targets"], "nothing stores less than lz4"
    # the cleaner merges when recompression.batch.bytes is above what the source's batches hold
    merged = cold["recompression_batch_bytes"] if cold["recompression_batch_bytes"] > source["uncompressed_bytes_per_batch"] \
        else None
    assert cold["merged_batch_bytes"] == merged
    for t in cold["targets"]:
        r = same_batch[key(t)]
        assert t["size_ratio_at_source_batches"] == pytest.approx(r["size_ratio"], rel=1e-9)
        if merged is None:
            # batch by batch: the target's figures are its results row at the source's batches
            assert t["batch"] == str(source["batch_size"])
            for k in ("uncompressed_bytes_per_batch", "uncompressed_bytes", "compressed_bytes", "size_ratio", "compress_mb_per_s"):
                assert t[k] == pytest.approx(r[k], rel=1e-9), k
        else:
            # measured again at the merged batch size, over the source's uncompressed bytes (the same records)
            assert t["batch"] == "merged:%d" % merged
            assert t["uncompressed_bytes"] == source["uncompressed_bytes"]
            assert t["uncompressed_bytes_per_batch"] <= merged
            assert t["size_ratio"] == pytest.approx(t["compressed_bytes"] / t["uncompressed_bytes"], rel=1e-9)
        # one thread's time per uncompressed byte: the source's decompression plus the target's compression
        per_thread = 1 / (1 / source["decompress_mb_per_s"] + 1 / t["compress_mb_per_s"])
        assert t["uncompressed_mb_per_sec_per_thread"] == pytest.approx(per_thread, rel=1e-6)
        assert t["segment_mb_per_sec_per_thread"] == pytest.approx(per_thread * source["size_ratio"], rel=1e-6)
        assert t["stored_fraction_of_source"] == pytest.approx(t["size_ratio"] / source["size_ratio"], rel=1e-9)
        # messages_per_day records a day of the sample's average uncompressed size, on all replicas
        rate = source["uncompressed_bytes"] / source["records"] * messages_per_day / 86_400 / 1e6
        assert t["cleaner_threads_all_replicas"] == pytest.approx(rate * replication / per_thread, rel=1e-6)
    return cold, same_batch


def test_cold_recompression_capacity_plan(measured):
    """The cleaner threads cold recompression needs, with the cleaner's default recompression.batch.bytes (1 MiB):
    per target, one thread's time per uncompressed byte is the source codec's decompression at its own batches plus
    the target's compression at the merged batches, whose size ratio gives the bytes stored."""
    out, _, _ = measured
    cold, same_batch = cold_plan_checks(out, 10_000_000, 3)
    assert cold["recompression_batch_bytes"] == 1 << 20 and cold["merged_batch_bytes"] == 1 << 20
    for t in cold["targets"]:
        # merged batches hold several of the source's (the sample is 1.4 MiB: one of 1 MiB and the rest)
        assert t["uncompressed_bytes_per_batch"] > 4 * cold["source_uncompressed_bytes_per_batch"], t
        # every target codec stores the merged batches smaller than the source's own
        assert t["size_ratio"] < t["size_ratio_at_source_batches"], t
    zstd19 = [t for t in cold["targets"] if key(t) == "zstd:19"]
    assert zstd19, cold["targets"]
    # zstd 19 sets up its large context once per merged batch rather than once per 16 KiB batch
    assert zstd19[0]["compress_mb_per_s"] > 1.5 * same_batch["zstd:19"]["compress_mb_per_s"], zstd19


@pytest.mark.parametrize("batch_bytes", [0, 16384])
def test_cold_recompression_batch_by_batch(batch_bytes):
    """recompression.batch.bytes=0, or not above what the source's batches hold (an lz4 batch of batch.size=16384
    holds more than 16384 bytes of records), plans the cleaner rewriting batch by batch: the targets' figures are
    their results rows'. A small slice of the records and four settings keep it short."""
    args = ["--input", RECORDS, "--codecs", "none,lz4:9,zstd:3,zstd:19", "--providers", "none", "--max-records", 600,
            "--warmup-bytes", 1 << 18, "--no-progress", "--messages-per-day", 1_000_000, "--recompression-batch-bytes", batch_bytes]
    out = json.loads(advisor(*args, "--format", "json").stdout)
    cold, _ = cold_plan_checks(out, 1_000_000, 1)
    assert cold["recompression_batch_bytes"] == batch_bytes and cold["merged_batch_bytes"] is None
    assert [key(t) for t in cold["targets"]] == ["zstd:19", "zstd:3"]
    text = advisor(*args).stdout
    line = next(l for l in text.splitlines() if l.startswith("Cold recompression"))
    if batch_bytes == 0:
        assert "batch by batch (recompression.batch.bytes=0)" in line, line
    else:
        assert "recompression.batch.bytes=%d merges none" % batch_bytes in line, line


def test_cold_recompression_text_names_the_merged_batch_size():
    p = advisor("--input", RECORDS, "--codecs", "none,lz4:9,zstd:3", "--providers", "none", "--max-records", 300,
                "--warmup-bytes", 1 << 18, "--no-progress", "--recompression-batch-bytes", 100_000)
    line = next(l for l in p.stdout.splitlines() if l.startswith("Cold recompression"))
    assert "merging batches up to 100000 B (recompression.batch.bytes)" in line, line


def test_goals_keep_their_order(measured):
    out, _, _ = measured
    disk, balanced, cpu = (out["recommendations"][g] for g in ("disk", "balanced", "cpu"))
    assert disk["size_ratio"] == min(r["size_ratio"] for r in out["results"])
    # the disk recommendation is never larger on disk than the balanced one, which never compresses slower
    assert disk["bytes_per_record"] <= balanced["bytes_per_record"]
    assert balanced["compress_mb_per_s"] >= disk["compress_mb_per_s"]
    assert balanced["pareto"] and disk["pareto"]
    assert cpu["size_ratio"] <= 0.9
    # the Pareto flags are right: no row is both smaller and cheaper to compress than a front row
    for f in (r for r in out["results"] if r["pareto"]):
        for r in out["results"]:
            assert not (r["size_ratio"] < f["size_ratio"] and r["compress_cpu_s_per_gb"] < f["compress_cpu_s_per_gb"]), (f, r)


def test_csv_output_parses():
    p = advisor("--input", RECORDS, "--format", "csv", "--goal", "balanced", "--codecs", "none,lz4:1,zstd:3",
                "--providers", "none", "--batch-size", "16384,65536", "--warmup-bytes", 1 << 20, "--no-progress")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert len(rows) == 6
    assert {(r["codec"], r["level"], r["batch_size"]) for r in rows} == \
        {(c, l, b) for c, l in [("none", ""), ("lz4", "1"), ("zstd", "3")] for b in ("16384", "65536")}
    assert sum(r["recommended"] == "true" for r in rows) == 1
    for r in rows:
        assert 0 < float(r["size_ratio"]) <= 1.01 and float(r["compress_mb_per_s"]) > 0
    big = {r["codec"] + r["level"]: float(r["size_ratio"]) for r in rows if r["batch_size"] == "65536"}
    small = {r["codec"] + r["level"]: float(r["size_ratio"]) for r in rows if r["batch_size"] == "16384"}
    assert big["zstd3"] < small["zstd3"], "bigger batches compress better"


def dump_batches(segments):
    """{segment: [(baseOffset, lastOffset, size, codec)]} of every batch kafka-dump-log.sh lists."""
    out = tool("kafka-dump-log.sh", "--files", ",".join(str(s) for s in segments)).stdout
    batches = {}
    current = None
    for line in out.splitlines():
        if line.startswith("Dumping "):
            current = batches.setdefault(line.split()[1], [])
        elif line.startswith("baseOffset:"):
            f = line.split()
            kv = {f[i].rstrip(":"): f[i + 1] for i in range(0, len(f) - 1) if f[i].endswith(":")}
            current.append((int(kv["baseOffset"]), int(kv["lastOffset"]), int(kv["size"]), kv["compresscodec"]))
    return batches


def test_ratios_match_what_the_broker_stores(measured, broker_factory, tmp_path):
    """Each setting produced by a real producer (kafka-console-producer.sh, batch.size 16384): the bytes per record
    of the batches kafka-dump-log.sh lists (which add up to the segment's size) over the bytes per record of
    uncompressed batches match the advisor's size ratio within a few percent."""
    out, _, _ = measured
    by_key = {key(r): r for r in out["results"] if r["provider"] == "built-in"}
    b = broker_factory()
    lines = RECORDS.read_text().splitlines()
    n = len(lines)
    text = "\n".join(lines) + "\n"
    stored = {}
    segments = {}
    for setting in COMPARED:
        codec, _, level = setting.partition(":")
        topic = "advisor-" + setting.replace(":", "-")
        props = tmp_path / (topic + ".properties")
        # buffer.memory of two batches: the producer thread waits for the sender, which closes each batch (and
        # updates the ratio estimate) before the next but one is started. With the default 32 MiB the thread
        # runs hundreds of batches ahead at a stale estimate, and can settle in a regime of small batches.
        p = {"compression.type": codec, "batch.size": "16384", "linger.ms": "5000", "acks": "1",
             "buffer.memory": "32768"}
        if level:
            p["compression.%s.level" % codec] = level
        props.write_text("".join("%s=%s\n" % kv for kv in p.items()))
        copies = 1 if codec == "none" else COPIES
        # created first: a producer that finds no leader yet piles up batches built at the initial estimate
        tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", topic, "--partitions", "1")
        tool("kafka-console-producer.sh", "--bootstrap-server", b.bootstrap, "--topic", topic, "--command-config", str(props),
             "--compression-codec", codec,
             input=text * copies, timeout=300)
        [segments[setting]] = b.segments(topic)
    dumped = dump_batches(segments.values())
    for setting in COMPARED:
        codec = setting.partition(":")[0]
        copies = 1 if codec == "none" else COPIES
        segment = segments[setting]
        batches = dumped[str(segment)]
        assert sum(x[2] for x in batches) == segment.stat().st_size, "kafka-dump-log.sh accounts for the whole segment"
        assert batches[-1][1] == copies * n - 1, "every record stored"
        assert {x[3] for x in batches} == {codec}
        last = [x for x in batches if x[0] >= min(SETTLED, copies - 1) * n]
        records = last[-1][1] - last[0][0] + 1
        stored[setting] = sum(x[2] for x in last) / records
    report = []
    for setting in COMPARED:
        broker_ratio = stored[setting] / stored["none"]
        advisor_ratio = by_key[setting]["size_ratio"]
        report.append("%-8s broker %.4f advisor %.4f (%+.1f%%)" % (setting, broker_ratio, advisor_ratio,
                                                                  100 * (advisor_ratio / broker_ratio - 1)))
    print("\n".join(report))
    for setting, line in zip(COMPARED, report):
        broker_ratio = stored[setting] / stored["none"]
        assert by_key[setting]["size_ratio"] == pytest.approx(broker_ratio, rel=0.05), "\n".join(report)


def test_samples_a_topic_without_a_group_on_a_stock_broker(broker_factory, tmp_path):
    b = broker_factory("stock", stock=True)
    lines = RECORDS.read_text().splitlines()
    tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", "events", "--partitions", "2",
         "--config", "retention.ms=259200000", stock=True)
    # partitions as uneven as a topic written without keys can be (the sticky partitioner fills one batch at a time):
    # 100 records in partition 0, the rest in partition 1; the sample still takes the 1000 asked for
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 100})
    for i, line in enumerate(lines):
        producer.produce("events", line.encode(), partition=0 if i < 100 else 1)
    assert producer.flush(60) == 0
    config = tmp_path / "client.properties"
    config.write_text("client.id=advisor-test\n")
    p = advisor("--bootstrap-server", b.bootstrap, "--topic", "events", "--command-config", config,
                "--max-records", 1000, "--codecs", "none,lz4:1,zstd:3", "--providers", "none", "--format", "json",
                "--messages-per-day", 1_000_000, "--warmup-bytes", 1 << 18, "--no-progress")
    out = json.loads(p.stdout)
    assert out["sample"]["records"] == 1000, out["sample"]
    assert "2 of 2 partitions" in out["sample"]["source"]
    # defaults read from the topic: retention.ms = 3 days, replication factor 1
    assert out["sizing"]["retention_days"] == pytest.approx(3.0)
    assert out["sizing"]["replication_factor"] == 1
    # the batches were fetched raw as well (two partitions, the sampled offsets)
    assert out["topic_batches"]["records"] >= 1000 and out["topic_batches"]["codec"] == "none"
    assert "--entity-name events" in out["recommendation"]["kafka_configs_command"]
    assert ("--bootstrap-server %s" % b.bootstrap) in out["recommendation"]["kafka_configs_command"]
    # no consumer group, no committed offsets (not even the offsets topic)
    groups = tool("kafka-consumer-groups.sh", "--bootstrap-server", b.bootstrap, "--list").stdout
    assert groups.strip() == "", groups
    described = tool("kafka-consumer-groups.sh", "--bootstrap-server", b.bootstrap, "--describe", "--all-groups",
                     check=False)
    assert "events" not in described.stdout, described.stdout
    topics = tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--list").stdout.split()
    assert "__consumer_offsets" not in topics, topics
    # and the records are still there for real consumers from offset 0
    offsets = tool("kafka-get-offsets.sh", "--bootstrap-server", b.bootstrap, "--topic", "events").stdout
    assert sum(int(l.split(":")[2]) for l in offsets.split()) == len(lines)


# producers with a known batch setting: small batches sent at once, and full ones given time to fill
BATCHING = {
    "small": {"codec": "none", "batch.size": "4096", "linger.ms": "0"},
    "full": {"codec": "zstd", "batch.size": "65536", "linger.ms": "50"},
}


def test_reports_the_topics_real_batches_as_the_segment_has_them(broker_factory):
    """The advisor's figures of the topic's batches (fetched raw) are the batches kafka-dump-log.sh shows in the
    segment; it measures every setting at their size too, its measurement of the topic's setting there gives
    the bytes per record the segment has, and it says what fuller batches would gain."""
    b = broker_factory()
    lines = RECORDS.read_text().splitlines()
    text = "\n".join(lines) + "\n"
    reported = {}
    for topic, p in BATCHING.items():
        tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", topic, "--partitions", "1")
        tool("kafka-console-producer.sh", "--bootstrap-server", b.bootstrap, "--topic", topic, "--compression-codec", p["codec"],
             "--command-property", "batch.size=" + p["batch.size"], "--command-property", "linger.ms=" + p["linger.ms"],
             input=text)
        out = advisor("--bootstrap-server", b.bootstrap, "--topic", topic, "--codecs", "none,lz4:1,zstd:3",
                      "--providers", "none", "--format", "json", "--warmup-bytes", 1 << 18, "--no-progress").stdout
        reported[topic] = json.loads(out)
    for topic, p in BATCHING.items():
        out = reported[topic]
        real = out["topic_batches"]
        [segment] = b.segments(topic)
        dumped = dump_deep(segment)
        print("%-5s advisor: %d batches, median %.0f B uncompressed (p90 %.0f), %.0f records (p90 %.0f), %.1f B/record; "
              "kafka-dump-log.sh: %d batches, median %.0f B uncompressed, %.0f records, %.1f B/record; "
              "today's setting (%s) measured at real:%d: %.1f B/record" % (
                  topic, real["batches"], real["median_uncompressed_bytes"], real["p90_uncompressed_bytes"],
                  real["median_records"], real["p90_records"], real["bytes_per_record"], len(dumped),
                  statistics.median_low(d[1] for d in dumped), statistics.median_low(d[0] for d in dumped),
                  segment.stat().st_size / len(lines), key(out["today"]), real["measured_batch_size"],
                  out["today"]["bytes_per_record"]))
        # the sample covers the whole topic here, so the fetched batches are the segment's
        assert real["batches"] == len(dumped)
        assert real["records"] == len(lines) == sum(d[0] for d in dumped)
        assert real["codec"] == p["codec"] and {d[3] for d in dumped} == {p["codec"]}
        assert real["median_uncompressed_bytes"] == pytest.approx(statistics.median_low(d[1] for d in dumped), rel=0.03)
        assert real["median_records"] == pytest.approx(statistics.median_low(d[0] for d in dumped), rel=0.03)
        assert real["median_stored_bytes"] == pytest.approx(statistics.median_low(d[2] for d in dumped), rel=0.03)
        assert real["stored_bytes"] == segment.stat().st_size
        assert real["bytes_per_record"] == pytest.approx(segment.stat().st_size / len(lines))
        # batches that fit batch.size (a single record may exceed it), and that differ between the producers
        if p["codec"] == "none":
            assert sorted(d[1] for d in dumped)[len(dumped) // 2] <= int(p["batch.size"])
        # measured at the topic's batch size too (it is not within 10% of --batch-size 16384)
        assert real["measured"] and real["measured_batch_size"] > 0
        at_real = [r for r in out["results"] if r["batch_basis"] == "topic"]
        assert {key(r) for r in at_real} == {"none", "lz4:1", "zstd:3"}
        assert {r["batch_size"] for r in at_real} == {real["measured_batch_size"]}
        assert {r["batch_size"] for r in out["results"] if r["batch_basis"] == "batch.size"} == {16384}
        # today's setting (none; zstd at its default level 3), measured at the topic's batch size, stores what
        # the segment stores per record
        today = out["today"]
        assert key(today) == ("zstd:3" if p["codec"] == "zstd" else "none")
        assert today["bytes_per_record"] == pytest.approx(real["bytes_per_record"], rel=0.05), (today, real)
        assert today["recommendation_bytes_per_record"] == out["recommendation"]["bytes_per_record"]
    small, full = reported["small"]["topic_batches"], reported["full"]["topic_batches"]
    assert full["median_uncompressed_bytes"] > 8 * small["median_uncompressed_bytes"]
    # small batches: at batch.size 16384 zstd 3 fills its batches with far more, and compresses them better
    gains = {g["setting"]: g for g in reported["small"]["batch_gains"]}
    assert gains["zstd 3"]["batches_underfilled"], gains
    assert gains["zstd 3"]["size_ratio_at_batch_size"] < gains["zstd 3"]["size_ratio_at_topic_batches"]
    # the CSV carries the topic's batches on every row
    p = advisor("--bootstrap-server", b.bootstrap, "--topic", "small", "--codecs", "none,zstd:3", "--providers", "none",
                "--format", "csv", "--warmup-bytes", 1 << 18, "--no-progress")
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert {r["batch_basis"] for r in rows} == {"batch.size", "topic"}
    assert {float(r["topic_batch_median_uncompressed_bytes"]) for r in rows} == {small["median_uncompressed_bytes"]}
    assert {r["topic_codec"] for r in rows} == {"none"}


def test_help_and_bad_arguments():
    p = advisor("--help")
    for flag in ("--bootstrap-server", "--topic", "--command-config", "--input", "--goal", "--format", "--plot",
                 "--messages-per-day", "--retention-days", "--replication-factor", "--batch-size", "--max-records",
                 "--recompression-batch-bytes"):
        assert flag in p.stdout, flag
    p = run([str(DIST / "bin" / "kafka-compression-advisor.sh"), "--topic", "t"], check=False)
    assert p.returncode != 0 and "--bootstrap-server" in p.stderr
    p = run([str(DIST / "bin" / "kafka-compression-advisor.sh"), "--input", str(RECORDS), "--codecs", "brotli"], check=False)
    assert p.returncode != 0 and "unknown codec 'brotli'" in p.stderr


def test_plot_without_fonts_fails_at_once_in_one_line():
    """A host whose java.awt cannot draw text (a minimal container without fonts) gets one line naming the
    packages, before any measurement, not a stack trace after it. Simulated by hiding the fonts in a
    private mount namespace (needs root, as CI runs)."""
    require_dist()
    hide = "mount -t tmpfs none /usr/share/fonts && exec \"$@\""
    probe = run(["unshare", "-m", "sh", "-c", hide, "sh", "true"], check=False)
    if probe.returncode != 0:
        pytest.skip("cannot hide the fonts here (needs root and unshare): " + probe.stderr.strip())
    p = run(["unshare", "-m", "sh", "-c", hide, "sh", str(DIST / "bin" / "kafka-compression-advisor.sh"),
             "--input", str(RECORDS), "--plot", "/tmp/advisor-nofonts.png"], check=False, timeout=60)
    assert p.returncode == 1
    assert p.stdout == ""    # nothing measured or reported
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ERROR: cannot draw --plot"), p.stderr
    assert "fonts-dejavu-core" in lines[0]
