"""recompression.lag.ms on a topic with tiered storage (patch 0036): the log cleaner rewrites each closed segment
before the remote log manager copies it, so remote storage gets the dense copy. The remote store is upstream's
LocalTieredStorage (kafka-storage 4.3.1's test jar, build/upstream/testlibs, checked against
upstream/artifacts.sha256) in the test's directory. An lz4 topic rewritten into zstd 19 is compared with the same
records in an lz4 topic that is not recompressed; the broker is killed with SIGKILL while the cleaner rewrites a
segment and again once the first segment is in remote storage; after local retention has removed the local copies,
stock 4.3.1's console consumer reads every record from the beginning, each at its offset, once."""
import shutil
import threading
import time

from conftest import DATA, UPSTREAM, full_only, require_dist, tool
from test_cold_recompression import RECORDS_PER_ROUND, closed_bytes, configs, produce, read_stock

TEST_JAR = UPSTREAM / "testlibs" / "kafka-storage-4.3.1-test.jar"


def remote_segments(remote_dir, topic):
    """The .log files LocalTieredStorage holds for the topic's partition 0."""
    return sorted(p for p in remote_dir.rglob("*.log") if p.parent.name.startswith(topic + "-0"))


def wait_for(what, condition, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError("timed out after %d s waiting for %s" % (timeout, what))


def tiered_broker(broker_factory, remote_dir):
    """A broker with upstream's LocalTieredStorage in remote_dir."""
    require_dist()
    assert TEST_JAR.exists(), "%s: ./build.sh build fetches it" % TEST_JAR
    return broker_factory(extra_props={
        "log.cleaner.backoff.ms": "300",
        "log.retention.check.interval.ms": "1000",
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": "org.apache.kafka.server.log.remote.storage.LocalTieredStorage",
        "remote.log.storage.manager.class.path": str(TEST_JAR),
        "remote.log.storage.manager.impl.prefix": "rsm.config.",
        "rsm.config.dir": str(remote_dir),
        "remote.log.metadata.manager.listener.name": "PLAINTEXT",
        "rlmm.config.remote.log.metadata.topic.replication.factor": "1",
        "remote.log.manager.task.interval.ms": "500",
    })


def test_local_disk_bounded_while_the_rewrite_falls_behind(broker_factory, tmp_path):
    """A tiered topic taking 10,000 records/s in small lz4 batches (linger.ms=0, batch.size=16384), rewritten into
    zstd 19 with local.retention.bytes=2097152: the cleaner falls behind, and the copy to remote storage stops waiting
    for it once the segments waiting pass local.retention.bytes, so the partition's local files stay within 16 MB
    throughout; the cleaner logs its WARN about the segments let go, and every record is read back, each at its
    offset, most of them from remote storage."""
    remote_dir = tmp_path / "remote"
    b = tiered_broker(broker_factory, remote_dir)
    started = time.time()
    topic = "busy"
    tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", topic, "--partitions", "1",
         "--replication-factor", "1", "--config", "cleanup.policy=delete", "--config", "segment.bytes=1048576",
         "--config", "remote.storage.enable=true", "--config", "local.retention.bytes=2097152",
         "--config", "compaction.compression.type=zstd", "--config", "compression.zstd.level=19",
         "--config", "recompression.lag.ms=0")
    partition = b.data / (topic + "-0")
    largest, producing = [0], threading.Event()
    producing.set()

    def sample():
        while producing.is_set():
            if partition.exists():
                largest[0] = max(largest[0], sum(f.stat().st_size for f in partition.glob("*.log")
                                                 if f.exists()))
            time.sleep(0.2)
    # the broker's retention task (LogManager) first runs 30 s after start-up, as upstream's does: measure after it
    time.sleep(max(0.0, started + 31 - time.time()))
    sampler = threading.Thread(target=sample)
    sampler.start()
    n = 300000
    try:
        tool("kafka-producer-perf-test.sh", "--topic", topic, "--num-records", str(n), "--throughput", "10000",
             "--payload-file", str(DATA / "json-records.ndjson"), "--producer-props", "bootstrap.servers=" + b.bootstrap,
             "acks=all", "compression.type=lz4", "batch.size=16384", "linger.ms=0")
        time.sleep(10)   # the cleaner still behind, the copy going on
    finally:
        producing.clear()
        sampler.join()
    remote = remote_segments(remote_dir, topic)
    cleaner_log = b.log_text("log-cleaner.log")
    print("%d records at 10,000 records/s: at most %d bytes of segment files on local disk; %d segments in remote "
          "storage; %d segments rewritten by the cleaner" % (n, largest[0], len(remote),
                                                            cleaner_log.count("Recompressed segment")))
    assert largest[0] <= 16 * 1024 * 1024, largest[0]
    assert "copied to remote storage without being recompressed" in cleaner_log
    read = read_stock(b, topic, n)
    offsets = [int(line.split("Offset:")[1].split()[0]) for line in read]
    assert offsets == list(range(n)), (len(offsets), offsets[:3], offsets[-3:])


@full_only
def test_tiered_topic_copied_after_recompression(broker_factory, tmp_path):
    remote_dir = tmp_path / "remote"
    b = tiered_broker(broker_factory, remote_dir)
    plain, tiered = "plain", "tiered"
    tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", plain, "--partitions", "1",
         "--replication-factor", "1", "--config", "cleanup.policy=delete", "--config", "segment.ms=2000")
    tool("kafka-topics.sh", "--bootstrap-server", b.bootstrap, "--create", "--topic", tiered, "--partitions", "1",
         "--replication-factor", "1", "--config", "cleanup.policy=delete", "--config", "segment.ms=2000",
         "--config", "remote.storage.enable=true", "--config", "local.retention.ms=1000",
         "--config", "compaction.compression.type=zstd", "--config", "compression.zstd.level=19",
         "--config", "recompression.lag.ms=0")
    rounds = 2
    for topic in (plain, tiered):
        for _ in range(rounds):
            produce(b, topic, RECORDS_PER_ROUND)
            time.sleep(2.5)
        produce(b, topic, 1)   # rolls the last round's segment
    end = rounds * RECORDS_PER_ROUND + 1
    lz4_bytes = closed_bytes(b, plain)

    # a kill -9 while the cleaner rewrites a segment of the tiered topic (its .cleaned file exists)
    partition = b.data / (tiered + "-0")
    wait_for("a rewrite in progress", lambda: any(partition.glob("*.cleaned")), 120)
    b.restart(kill=True)
    # a kill -9 once the first segment is in remote storage
    wait_for("a segment in remote storage", lambda: remote_segments(remote_dir, tiered), 180)
    b.restart(kill=True)

    # every closed segment copied, then removed locally by local.retention.ms
    def local_copies_gone():
        return all(int(s.stem) >= end - 1 for s in b.segments(tiered))
    wait_for("the local copies to go", local_copies_gone, 300)
    remote = remote_segments(remote_dir, tiered)
    # one copy per segment of the produced rounds (the plain topic's closed segments hold the same offsets); a kill
    # during a copy leaves the interrupted copy beside the one made after the restart, as upstream's remote log
    # manager does: its metadata never reached COPY_SEGMENT_FINISHED, so no reader sees it, and retention deletes it
    by_offset = {}
    for p in remote:
        by_offset.setdefault(int(p.name.split("-")[0]), []).append(p)
    rounds_offsets = sorted(o for o in by_offset if o < end - 1)
    remote_bytes = sum(by_offset[o][0].stat().st_size for o in rounds_offsets)
    dangling = sum(len(by_offset[o]) - 1 for o in by_offset)
    ratio = remote_bytes / lz4_bytes
    print("%s: %d bytes in lz4 (topic %s), %d bytes in %d remote segments after recompression to zstd 19 (%.3fx); "
          "%d interrupted copies beside them" % (tiered, lz4_bytes, plain, remote_bytes, len(rounds_offsets), ratio,
                                                  dangling))
    assert ratio <= 0.6, (lz4_bytes, remote_bytes)
    codecs = set()
    dump = tmp_path / "dump"
    dump.mkdir()
    for p in remote:
        named = dump / (p.name.split("-")[0] + ".log")   # kafka-dump-log.sh reads the base offset from the name
        shutil.copyfile(p, named)
        out = tool("kafka-dump-log.sh", "--files", str(named)).stdout
        codecs |= {line.split("compresscodec: ")[1].split()[0] for line in out.splitlines() if "compresscodec: " in line
                   and "isControl: false" in line and "count: 1 " not in line}
    assert codecs == {"zstd"}, codecs

    read = read_stock(b, tiered, end)
    offsets = [int(line.split("Offset:")[1].split()[0]) for line in read]
    assert offsets == list(range(end)), (len(offsets), offsets[:3], offsets[-3:])
