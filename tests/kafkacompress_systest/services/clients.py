"""Producer and verifying consumer services: java/SysTestClient.java with our or the stock 4.3.1 client
jars ("ours", "stock"; stock 4.3.2's or 4.4.0's: "stock-4.3.2", "stock-4.4.0"), or its Python twin python/systest_client.py with librdkafka ("confluent-kafka")
or "kafka-python"; same arguments, ack files and JSON summaries."""

import json
import os
import tempfile
import time

from ducktape.cluster.cluster_spec import ClusterSpec
from ducktape.services.service import Service
from ducktape.utils.util import wait_until

from .paths import CLIENT_JAR, KAFKA_HOME, NEWEST_STOCK_LIBS, PAYLOAD, PY_CLIENT, PY_CLIENTS_PYTHON, STOCK_LIBS, WORK

CLIENT_LIBS = {"ours": KAFKA_HOME + "/libs/*", "stock": STOCK_LIBS + "/*"}
CLIENT_LIBS.update(("stock-" + r, libs + "/*") for r, libs in NEWEST_STOCK_LIBS.items())
PY_CLIENTS = ("confluent-kafka", "kafka-python")


def client_cmd(client, args, heap_mb=192):
    """The command line of the test client: Java ("ours", "stock") or Python ("confluent-kafka", "kafka-python")."""
    if client in PY_CLIENTS:
        mode, _, rest = args.partition(" ")
        return "%s %s %s --client %s %s" % (PY_CLIENTS_PYTHON, PY_CLIENT, mode, client, rest)
    return java_cmd(client, args, heap_mb)


def java_cmd(client, args, heap_mb=192):
    return ("java -Xmx%dm -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dlog4j2.level=warn "
            "-Dlog4j2.configurationFile=%s/config/tools-log4j2.yaml -cp '%s:%s' SysTestClient %s"
            % (heap_mb, KAFKA_HOME, CLIENT_LIBS[client], CLIENT_JAR, args))


def config_args(configs):
    return "".join(" --config %s=%s" % (k, v) for k, v in (configs or {}).items())


class SharedNode(object):
    """Lets a client service run on a node another service of the test holds (node=...): ducktape allocates
    nothing for it and frees nothing at the end, so several producers and a verifying consumer fit on one node."""

    def _init_nodes(self, context, node):
        if node is None:
            Service.__init__(self, context, 1)
            self.shared = False
        else:
            Service.__init__(self, context, cluster_spec=ClusterSpec.empty())    # allocates nothing
            self.nodes = [node]
            self.shared = True

    def free(self):
        if self.shared:
            self.nodes = []
        else:
            Service.free(self)


class ProducerService(SharedNode, Service):
    """Sends records with acks=all and records every acknowledged one (key, partition, offset, crc).
    until_file=True: runs until finish() (or max_records), for load that spans a whole scenario."""

    DIR = WORK + "/producer"
    logs = {"producer_output": {"path": DIR, "collect_default": True}}

    def __init__(self, context, kafka, topic, max_records=2000, throughput=-1, configs=None, client="ours",
                 keys=0, tombstone_every=0, name="p", payload=PAYLOAD, node=None, until_file=False):
        self._init_nodes(context, node)
        self.kafka, self.topic, self.max_records, self.throughput = kafka, topic, max_records, throughput
        self.configs, self.client, self.keys, self.tombstone_every = dict(configs or {}), client, keys, tombstone_every
        self.name, self.payload, self.until_file = name, payload, until_file
        self.runs = 0
        self.history = []     # (run, topic)

    def run_once(self, timeout_sec=300, **changes):
        """Runs the producer once more (optionally with another topic/configs/client) and waits for it."""
        for k, v in changes.items():
            setattr(self, k, v)
        self.start_node(self.nodes[0])
        return self.wait_done(timeout_sec)

    @property
    def acked_path(self):
        return "%s/%s-%d.acked" % (self.DIR, self.name, self.runs)

    @property
    def summary_path(self):
        return "%s/%s-%d.json" % (self.DIR, self.name, self.runs)

    @property
    def stop_path(self):
        return "%s/%s-%d.stop" % (self.DIR, self.name, self.runs)

    def finish(self, timeout_sec=300):
        """Stops an until_file producer: it sends no more, flushes, writes its summary; returns the summary.
        Not before its first acknowledged record (a client that starts slowly would otherwise send nothing)."""
        node = self.nodes[0]
        # polled: "no acknowledgement yet" must print nothing rather than fail the ssh command
        wait_until(lambda: node.account.ssh_output("test -s %s && echo y || true" % self.acked_path,
                                                   allow_fail=True).strip() == b"y" or not self.pids(node),
                   timeout_sec=timeout_sec, backoff_sec=1, err_msg="producer %s acknowledged nothing" % self.name)
        node.account.ssh("mkdir -p %s && touch %s" % (self.DIR, self.stop_path))
        return self.wait_done(timeout_sec)

    def start_node(self, node):
        self.runs += 1
        self.history.append((self.runs, self.topic))
        node.account.ssh("mkdir -p %s" % self.DIR)
        args = ("produce --bootstrap %s --topic %s --input %s --max %d --throughput %s --id %s-%d --acked %s "
                "--keys %d --tombstone-every %d%s%s" % (
                    self.kafka.bootstrap_servers(), self.topic, self.payload, self.max_records, self.throughput,
                    self.name, self.runs, self.acked_path, self.keys, self.tombstone_every,
                    " --until-file %s" % self.stop_path if self.until_file else "", config_args(self.configs)))
        node.account.ssh("nohup sh -c \"%s\" > %s 2> %s.err &" % (client_cmd(self.client, args).replace('"', '\\"'),
                                                                   self.summary_path, self.summary_path))
        self.started_at = time.time()

    def done(self):
        node = self.nodes[0]
        return node.account.ssh_output("cat %s" % self.summary_path, allow_fail=True).strip() != b"" \
            and not self.pids(node)

    def wait_done(self, timeout_sec=300):
        wait_until(self.done, timeout_sec=timeout_sec, backoff_sec=1,
                   err_msg="producer %s did not finish in %ds" % (self.name, timeout_sec))
        return self.result()

    def result(self):
        node = self.nodes[0]
        out = node.account.ssh_output("cat %s" % self.summary_path, allow_fail=True).decode()
        try:
            res = json.loads(out)
        except ValueError:
            err = node.account.ssh_output("tail -20 %s.err" % self.summary_path, allow_fail=True).decode()
            raise AssertionError("producer %s produced no summary: %s %s" % (self.name, out, err))
        self.logger.info("producer %s: %s", self.name, res)
        return res

    def acked_files(self, topic=None):
        return ["%s/%s-%d.acked" % (self.DIR, self.name, i) for i, t in self.history if topic in (None, t)]

    def pids(self, node):
        """This producer's processes (by its --id NAME-RUN), not those of other producers on the node."""
        out = node.account.ssh_output("ps -eo pid,args | grep -E '([S]ysTestClient|[s]ystest_client.py) produce .* --id %s-[0-9]+ ' "
                                      "| awk '{print $1}'" % self.name, allow_fail=True).decode()
        return [int(p) for p in out.split()]

    def stop_node(self, node):
        for pid in self.pids(node):
            node.account.signal(pid, 15, allow_fail=True)

    def clean_node(self, node):
        for pid in self.pids(node):
            node.account.signal(pid, 9, allow_fail=True)
        if self.shared:
            node.account.ssh("rm -f %s/%s-*" % (self.DIR, self.name), allow_fail=True)
        else:
            node.account.ssh("rm -rf %s" % self.DIR, allow_fail=True)


class VerifyingConsumer(SharedNode, Service):
    """Reads a topic from the beginning and checks every acknowledged record of given producers:
    read back exactly once with matching content (or, compacted=True, the latest value per key)."""

    DIR = WORK + "/consumer"
    logs = {"consumer_output": {"path": DIR, "collect_default": True}}

    def __init__(self, context, kafka, node=None):
        self._init_nodes(context, node)
        self.kafka = kafka
        self.runs = 0

    def start_node(self, node):
        node.account.ssh("mkdir -p %s" % self.DIR)

    def stop_node(self, node):
        pass

    def clean_node(self, node):
        node.account.ssh("rm -rf %s" % self.DIR, allow_fail=True)

    def verify(self, topic, producers, compacted=False, client="ours", configs=None, timeout_sec=180):
        node = self.nodes[0]
        self.runs += 1
        local = tempfile.mkdtemp(prefix="acked-")
        remote = []
        for p in producers:
            for f in p.acked_files(topic):
                p.nodes[0].account.copy_from(f, local)
                dst = "%s/%s" % (self.DIR, os.path.basename(f))
                node.account.copy_to(os.path.join(local, os.path.basename(f)), dst)
                remote.append(dst)
        out_path = "%s/verify-%d.json" % (self.DIR, self.runs)
        args = ("consume --bootstrap %s --topic %s --acked %s --compacted %s --timeout-ms %d%s"
                % (self.kafka.bootstrap_servers(), topic, ",".join(remote), str(compacted).lower(),
                   timeout_sec * 1000, config_args(configs)))
        node.account.ssh("%s > %s 2> %s.err" % (client_cmd(client, args, heap_mb=256), out_path, out_path),
                         allow_fail=True)
        out = node.account.ssh_output("cat %s" % out_path, allow_fail=True).decode()
        try:
            res = json.loads(out)
        except ValueError:
            err = node.account.ssh_output("tail -20 %s.err" % out_path, allow_fail=True).decode()
            raise AssertionError("verifying consumer printed no summary: %s %s" % (out, err))
        self.logger.info("verify %s: %s", topic, res)
        return res

    def assert_verified(self, topic, producers, **kw):
        res = self.verify(topic, producers, **kw)
        assert res["ok"], "acknowledged records not read back correctly from %s: %s" % (topic, res)
        assert res["matched"] == res["expected_keys"] and res["expected_keys"] > 0, res
        return res
