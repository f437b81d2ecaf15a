"""kafka-dump-log.sh on a broker node: batches with codec, count and size."""

import re
from collections import Counter

from .paths import KAFKA_HOME

BATCH = re.compile(r"baseOffset: (\d+) lastOffset: (\d+) count: (\d+).*?isControl: (\w+).*?size: (\d+).*?"
                   r"compresscodec: (\w+)", re.I)
DUMPING = re.compile(r"^Dumping (\S+)\s*$", re.M)


class DumpLog(object):
    def __init__(self, kafka):
        self.kafka = kafka

    def batches(self, node, topic, partition=0, segments="*.log"):
        d = self.kafka.partition_dir(topic, partition)
        out = node.account.ssh_output(
            "KAFKA_HEAP_OPTS=-Xmx128m %s/bin/kafka-dump-log.sh --files $(ls %s/%s | paste -sd, -) 2>&1"
            % (KAFKA_HOME, d, segments), allow_fail=True).decode("utf-8", "replace")
        res = []
        for m in BATCH.finditer(out):
            res.append({"base": int(m.group(1)), "last": int(m.group(2)), "count": int(m.group(3)),
                        "control": m.group(4).lower() == "true", "size": int(m.group(5)),
                        "codec": m.group(6).lower()})
        if not res:
            self.kafka.logger.warning("dump-log found no batches in %s: %s", d, out[-2000:])
        return res

    def summary(self, node, topic, partition=0, from_offset=0, segments="*.log"):
        """codec -> number of data batches, plus records and bytes per record of data batches >= from_offset."""
        b = [x for x in self.batches(node, topic, partition, segments) if not x["control"] and x["base"] >= from_offset]
        codecs = Counter(x["codec"] for x in b)
        records = sum(x["count"] for x in b)
        size = sum(x["size"] for x in b)
        return {"codecs": dict(codecs), "batches": len(b), "records": records, "bytes": size,
                "bytes_per_record": (size / records) if records else 0}

    def segment_batches(self, node, topic, partitions, closed_only=True):
        """{(partition, segment base offset): [batch]} with one kafka-dump-log.sh run for all the partitions;
        closed_only leaves out each partition's active segment (the last)."""
        ls = "; ".join("ls %s/*.log 2>/dev/null | sort%s" % (self.kafka.partition_dir(topic, p),
                                                             " | head -n -1" if closed_only else "")
                       for p in partitions)
        out = node.account.ssh_output(
            "f=$( (%s) | paste -sd, -); [ -z \"$f\" ] || KAFKA_HEAP_OPTS=-Xmx128m %s/bin/kafka-dump-log.sh --files $f 2>&1"
            % (ls, KAFKA_HOME), allow_fail=True).decode("utf-8", "replace")
        res = {}
        heads = list(DUMPING.finditer(out))
        for i, h in enumerate(heads):
            path = h.group(1)
            part = int(path.rsplit("/", 2)[-2].rsplit("-", 1)[1])
            base = int(path.rsplit("/", 1)[1].split(".")[0])
            text = out[h.end():heads[i + 1].start() if i + 1 < len(heads) else len(out)]
            res[(part, base)] = [{"base": int(m.group(1)), "last": int(m.group(2)), "count": int(m.group(3)),
                                  "control": m.group(4).lower() == "true", "size": int(m.group(5)),
                                  "codec": m.group(6).lower()} for m in BATCH.finditer(text)]
        return res
