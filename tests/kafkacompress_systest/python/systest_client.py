#!/usr/bin/env python3
"""Producer and verifying consumer of the tests, with the non-Java Kafka clients: librdkafka through
confluent-kafka, and kafka-python. The Python twin of java/SysTestClient.java, with the same
arguments, the same ack-file format and the same JSON summary, so that the system tests and the
project tests run either client wherever they run the Java one.

    systest_client.py produce --client confluent-kafka|kafka-python --bootstrap B --topic T --input FILE
        [--max N] [--throughput R] [--until-file F] [--id ID] [--acked FILE] [--keys K] [--tombstone-every M]
        [--config k=v ...]
    systest_client.py consume --client confluent-kafka|kafka-python --bootstrap B --topic T --acked F1,F2
        [--compacted true] [--timeout-ms MS] [--idle-ms MS] [--config k=v ...]

produce: values are the lines of FILE, cycled; the key is ID-seq or, with --keys K, "k" + seq % K; every
M-th record a tombstone. acks=all. --throughput: records/s at most (-1: unthrottled); --until-file: stop
sending (then flush) as soon as F exists, --max records at most. One line per acknowledged record: key, partition, offset, crc32 of the
value ("-" for a tombstone), value length.

consume: reads every partition from the beginning and checks the acknowledged records of the ack files:
each read back exactly once at its partition/offset with the same crc32 and length, or (--compacted true)
the last value read per key is the last acknowledged one. It stops when every partition's position has
reached the end offset seen at the start, after --idle-ms without a record (librdkafka, given a batch it
cannot decode, re-fetches the same offset forever without telling the application: this is how that
shows), or at --timeout-ms. The summary then says how many records were read and where each partition
stopped.

--config: the client's own property names. librdkafka takes Kafka's names for most settings
(compression.type, linger.ms, batch.size, fetch.max.bytes, ...). For kafka-python, Kafka's dotted names
are turned into its keyword arguments (linger.ms -> linger_ms; integers stay integers).
"""
import json
import os
import sys
import time
import zlib

CLIENTS = ("confluent-kafka", "kafka-python")


def parse(argv):
    opts, configs = {}, {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--config":
            k, v = argv[i + 1].split("=", 1)
            configs[k] = v
        elif a.startswith("--"):
            opts[a[2:]] = argv[i + 1]
        else:
            raise SystemExit("unexpected argument %s" % a)
        i += 2
    return opts, configs


def crc(value):
    return "-" if value is None else str(zlib.crc32(value) & 0xFFFFFFFF)


def py_configs(configs):
    """Kafka's dotted names -> kafka-python keyword arguments."""
    out = {}
    for k, v in configs.items():
        key = k.replace(".", "_")
        try:
            out[key] = int(v)
        except ValueError:
            out[key] = v
    return out


def client_version(client):
    if client == "confluent-kafka":
        import confluent_kafka
        v = confluent_kafka.version()
        return "confluent-kafka %s (librdkafka %s)" % (v if isinstance(v, str) else v[0], confluent_kafka.libversion()[0])
    import kafka
    return "kafka-python %s" % kafka.__version__


# ------------------------------------------------------------------------------------------------ produce

def produce(o, configs):
    client = o["client"]
    payloads = [l.rstrip(b"\n") for l in open(o["input"], "rb") if l.strip()]
    max_records = int(o.get("max", "1000"))
    keys = int(o.get("keys", "0"))
    tombstone_every = int(o.get("tombstone-every", "0"))
    rid = o.get("id", "p")
    topic = o["topic"]
    throughput = float(o.get("throughput", "-1"))
    until_file = o.get("until-file")
    acked = {"n": 0, "bytes": 0}
    failed = {"n": 0, "last": None}
    out = open(o["acked"], "w")

    def record(seq):
        key = ("k%d" % (seq % keys)) if keys > 0 else "%s-%d" % (rid, seq)
        value = None if tombstone_every > 0 and seq % tombstone_every == tombstone_every - 1 \
            else payloads[seq % len(payloads)]
        return key, value

    def on_ack(key, value, partition, offset):
        acked["n"] += 1
        acked["bytes"] += len(value or b"")
        out.write("%s\t%d\t%d\t%s\t%d\n" % (key, partition, offset, crc(value), len(value or b"")))

    def on_fail(err):
        failed["n"] += 1
        failed["last"] = str(err)

    start = time.time()

    def sequence():
        """The record numbers to send: paced at --throughput, stopping at --max or when --until-file exists."""
        for seq in range(max_records):
            if until_file and seq % 50 == 0 and os.path.exists(until_file):
                return
            if throughput > 0:
                wait = start + seq / throughput - time.time()
                if wait > 0:
                    time.sleep(wait)
            sent["n"] = seq + 1
            yield seq

    sent = {"n": 0}
    if client == "confluent-kafka":
        from confluent_kafka import Producer
        conf = {"bootstrap.servers": o["bootstrap"], "acks": "all", "message.timeout.ms": 120000}
        conf.update(configs)
        p = Producer(conf)
        for seq in sequence():
            key, value = record(seq)

            def cb(err, msg, key=key, value=value):
                if err is None:
                    on_ack(key, value, msg.partition(), msg.offset())
                else:
                    on_fail(err)
            while True:
                try:
                    p.produce(topic, value=value, key=key.encode(), on_delivery=cb)
                    break
                except BufferError:
                    p.poll(0.1)
            p.poll(0)
        left = p.flush(180)
        if left:
            on_fail("%d records not delivered after flush(180)" % left)
            failed["n"] += left - 1
    else:
        from kafka import KafkaProducer
        conf = {"bootstrap_servers": o["bootstrap"], "acks": "all"}
        conf.update(py_configs(configs))
        p = KafkaProducer(**conf)
        futures = []
        for seq in sequence():
            key, value = record(seq)
            futures.append((key, value, p.send(topic, key=key.encode(), value=value)))
        p.flush(180)
        for key, value, f in futures:
            try:
                md = f.get(timeout=60)
                on_ack(key, value, md.partition, md.offset)
            except Exception as e:  # noqa: every failure is counted and reported
                on_fail(e)
        p.close(30)
    out.close()
    secs = time.time() - start
    print(json.dumps({"client": client_version(client), "sent": sent["n"], "acked": acked["n"],
                      "failed": failed["n"], "bytes": acked["bytes"], "seconds": secs,
                      "records_per_sec": acked["n"] / secs, "mb_per_sec": acked["bytes"] / secs / 1e6,
                      "last_error": failed["last"]}))


# ------------------------------------------------------------------------------------------------ consume

class Expect(object):
    __slots__ = ("partition", "offset", "crc", "length", "seen", "matched")


def load_acked(files, compacted):
    expect, total = {}, 0
    for f in files.split(","):
        for line in open(f):
            line = line.rstrip("\n")
            if not line:
                continue
            k, part, off, c, length = line.split("\t")
            total += 1
            e = Expect()
            e.partition, e.offset, e.crc, e.length, e.seen, e.matched = int(part), int(off), c, int(length), 0, False
            prev = expect.get(k)
            if prev is not None and not compacted:
                raise SystemExit("duplicate key in ack files: " + k)
            if prev is None or prev.offset < e.offset:
                expect[k] = e
    return expect, total


class ConfluentReader(object):
    def __init__(self, bootstrap, topic, configs):
        from confluent_kafka import Consumer, TopicPartition
        conf = {"bootstrap.servers": bootstrap, "group.id": "systest-verify-%d" % int(time.time() * 1000),
                "enable.auto.commit": False, "auto.offset.reset": "earliest", "enable.partition.eof": False}
        conf.update(configs)
        self.c = Consumer(conf)
        md = self.c.list_topics(topic, timeout=60)
        parts = sorted(md.topics[topic].partitions)
        self.tps = [TopicPartition(topic, p, -2) for p in parts]     # -2: OFFSET_BEGINNING
        self.end = {p: self.c.get_watermark_offsets(TopicPartition(topic, p), timeout=60)[1] for p in parts}
        self.c.assign(self.tps)
        self.errors = []

    def poll(self):
        out = []
        for m in self.c.consume(num_messages=10000, timeout=0.5):
            if m.error():
                self.errors.append(str(m.error()))
                continue
            out.append((m.partition(), m.offset(), m.key(), m.value()))
        return out

    def positions(self):
        # after consumed messages, position() is the next offset; before any, it is negative (invalid)
        return {tp.partition: tp.offset for tp in self.c.position(self.tps)}

    def close(self):
        self.c.close()


class KafkaPythonReader(object):
    def __init__(self, bootstrap, topic, configs):
        from kafka import KafkaConsumer, TopicPartition
        conf = {"bootstrap_servers": bootstrap, "enable_auto_commit": False, "auto_offset_reset": "earliest",
                "group_id": None}
        conf.update(py_configs(configs))
        self.c = KafkaConsumer(**conf)
        deadline = time.time() + 60
        parts = None
        while not parts and time.time() < deadline:
            parts = self.c.partitions_for_topic(topic)
            if not parts:
                time.sleep(0.5)
        if not parts:
            raise SystemExit("kafka-python: topic %s has no partitions after 60 s" % topic)
        self.tps = [TopicPartition(topic, p) for p in sorted(parts)]
        self.c.assign(self.tps)
        self.c.seek_to_beginning(*self.tps)
        self.end = {tp.partition: off for tp, off in self.c.end_offsets(self.tps).items()}
        self.errors = []

    def poll(self):
        out = []
        for recs in self.c.poll(timeout_ms=500, max_records=10000).values():
            out.extend((r.partition, r.offset, r.key, r.value) for r in recs)
        return out

    def positions(self):
        return {tp.partition: self.c.position(tp) for tp in self.tps}

    def close(self):
        self.c.close()


def consume(o, configs):
    client = o["client"]
    compacted = o.get("compacted", "false") == "true"
    idle_ms = int(o.get("idle-ms", "15000"))
    timeout_ms = int(o.get("timeout-ms", "120000"))
    expect, acked_total = load_acked(o["acked"], compacted)
    reader = (ConfluentReader if client == "confluent-kafka" else KafkaPythonReader)(o["bootstrap"], o["topic"], configs)
    read = duplicates = mismatched = unexpected = 0
    examples, last_value = [], {}
    next_offset = {p: 0 for p in reader.end}
    start = last_progress = time.time()
    stop = "end offsets reached"
    while True:
        if all(next_offset[p] >= end for p, end in reader.end.items()):
            break
        now = time.time()
        if now - last_progress > idle_ms / 1000.0:
            stop = "no record for %d ms" % idle_ms
            break
        if now - start > timeout_ms / 1000.0:
            stop = "timeout %d ms" % timeout_ms
            break
        for partition, offset, k, value in reader.poll():
            last_progress = time.time()
            read += 1
            next_offset[partition] = max(next_offset[partition], offset + 1)
            key = "" if k is None else k.decode("utf-8")
            c = crc(value)
            if compacted:
                last_value[key] = c
                continue
            e = expect.get(key)
            if e is None:
                unexpected += 1
                continue
            e.seen += 1
            if e.seen > 1:
                duplicates += 1
                if len(examples) < 10:
                    examples.append("duplicate %s at %d/%d" % (key, partition, offset))
            if e.crc != c or e.partition != partition or e.offset != offset or e.length != len(value or b""):
                mismatched += 1
                if len(examples) < 10:
                    examples.append("mismatch %s acked %d/%d crc %s, read %d/%d crc %s"
                                    % (key, e.partition, e.offset, e.crc, partition, offset, c))
            else:
                e.matched = True
        # compaction and control batches leave holes in the offsets: the position says how far the client got
        for p, pos in reader.positions().items():
            if pos is not None and pos >= 0:
                next_offset[p] = max(next_offset[p], pos)
    reader.close()
    missing = matched = 0
    for key, e in expect.items():
        if compacted:
            got = last_value.get(key)
            ok = (got is None or got == "-") if e.crc == "-" else e.crc == got
            if ok:
                matched += 1
                continue
            if got is None:
                missing += 1
            else:
                mismatched += 1
            if len(examples) < 10:
                examples.append("key %s latest acked crc %s, read %s" % (key, e.crc, got))
        elif e.seen == 0:
            missing += 1
            if len(examples) < 10:
                examples.append("missing %s acked at %d/%d" % (key, e.partition, e.offset))
        elif e.matched:
            matched += 1
    ok = missing == 0 and duplicates == 0 and mismatched == 0
    print(json.dumps({"client": client_version(client), "ok": ok, "acked": acked_total, "expected_keys": len(expect),
                      "matched": matched, "missing": missing, "duplicates": duplicates, "mismatched": mismatched,
                      "unacked_read": unexpected, "read": read, "distinct_keys_read": len(last_value),
                      "stopped": stop, "seconds": round(time.time() - start, 1),
                      "next_offset": {str(p): n for p, n in next_offset.items()},
                      "end_offset": {str(p): n for p, n in reader.end.items()},
                      "client_errors": reader.errors[:5], "examples": "; ".join(examples)}))


def main(argv):
    if len(argv) < 2 or argv[1] not in ("produce", "consume"):
        raise SystemExit(__doc__)
    o, configs = parse(argv[2:])
    if o.get("client") not in CLIENTS:
        raise SystemExit("--client must be one of %s" % ", ".join(CLIENTS))
    (produce if argv[1] == "produce" else consume)(o, configs)


if __name__ == "__main__":
    main(sys.argv)
