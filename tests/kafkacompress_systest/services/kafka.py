"""A KRaft Kafka cluster: N combined (broker+controller) nodes of our distribution (the default), or, with
controllers=C, C controller-only nodes and N-C broker-only nodes; each node on our distribution ("ours") or on
stock Apache Kafka 4.3.1 ("stock": upstream's jars, mounted at /opt/kafka-stock/libs, with the same bin/ scripts
and config/), or on stock 4.3.2 or 4.4.0 ("stock-4.3.2", "stock-4.4.0": their jars mounted at
/opt/kafka-stock-<release>/libs, the same way), and restartable on another."""

import base64
import re
import time
import uuid

from ducktape.services.service import Service
from ducktape.utils.util import wait_until

from .paths import KAFKA_HOME, NEWEST_STOCK_LIBS, STOCK_LIBS, WORK

PORT = 9092
CONTROLLER_PORT = 9093
JMX_PORT = 9999
VERSIONS = ("ours", "stock", "stock-4.3.2", "stock-4.4.0")
# each stock version: the Apache Kafka release it runs (its "Kafka version:" line) and where its jars are mounted
STOCK_RELEASES = {"stock": ("4.3.1", STOCK_LIBS),
                  "stock-4.3.2": ("4.3.2", NEWEST_STOCK_LIBS["4.3.2"]),
                  "stock-4.4.0": ("4.4.0", NEWEST_STOCK_LIBS["4.4.0"])}


def release(version):
    """The Apache Kafka release a stock version runs ("4.3.1", "4.3.2", "4.4.0"); None for ours."""
    return STOCK_RELEASES[version][0] if version != "ours" else None


class KafkaService(Service):
    DATA = WORK + "/data"
    LOGS = WORK + "/logs"
    CONFIG = WORK + "/server.properties"
    STDOUT = WORK + "/stdout.log"
    STOCK_HOME = WORK + "/stock-home"     # bin/ and config/ copied from /opt/kafka, libs/ -> the stock jars
    # the same for 4.3.2 and 4.4.0: one home each, libs/ -> that release's jars
    STOCK_HOMES = {"stock": STOCK_HOME, "stock-4.3.2": WORK + "/stock-4.3.2-home",
                   "stock-4.4.0": WORK + "/stock-4.4.0-home"}

    logs = {
        "kafka_server_log": {"path": LOGS + "/server.log", "collect_default": True},
        "kafka_stdout": {"path": STDOUT, "collect_default": True},
        "kafka_controller_log": {"path": LOGS + "/controller.log", "collect_default": False},
    }

    def __init__(self, context, num_nodes=3, server_props=None, heap_mb=320, start_timeout=90, controllers=0,
                 version="ours"):
        """controllers=0: every node is broker and controller; controllers=C: nodes 1..C are controllers only, the
        others brokers only. version: what every node runs at first, one of VERSIONS (set_version changes a node's)."""
        super(KafkaService, self).__init__(context, num_nodes)
        assert 0 <= controllers < num_nodes or (controllers == 0 and num_nodes > 0), "need a broker"
        assert version in VERSIONS, version
        self.server_props = dict(server_props or {})
        self.node_props = {}          # node idx (1-based) -> extra properties for that node only
        self.heap_mb = heap_mb
        self.start_timeout = start_timeout
        self.num_controllers = controllers
        self.versions = dict((i, version) for i in range(1, num_nodes + 1))   # node idx -> "ours" / "stock"
        self.cluster_id = self.random_cluster_id()

    # ---------------------------------------------------------------- roles and versions
    def is_controller(self, node):
        return self.num_controllers == 0 or self.idx(node) <= self.num_controllers

    def is_broker(self, node):
        return self.num_controllers == 0 or self.idx(node) > self.num_controllers

    @property
    def controllers(self):
        return [n for n in self.nodes if self.is_controller(n)]

    @property
    def brokers(self):
        return [n for n in self.nodes if self.is_broker(n)]

    def version(self, node):
        return self.versions[self.idx(node)]

    def set_version(self, node, version):
        """The version the node runs from its next start on."""
        assert version in VERSIONS, version
        self.versions[self.idx(node)] = version

    def home(self, node):
        return KAFKA_HOME if self.version(node) == "ours" else self.STOCK_HOMES[self.version(node)]

    @staticmethod
    def random_cluster_id():
        """A random cluster id as kafka-storage.sh random-uuid makes them: base64url of a random UUID, never starting
        with '-' (Kafka's Uuid.randomUuid rule: kafka-storage.sh format -t would read such an id as an option)."""
        while True:
            cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            if not cluster_id.startswith("-"):
                return cluster_id

    # ---------------------------------------------------------------- config
    def bootstrap_servers(self, exclude=()):
        return ",".join("%s:%d" % (n.account.hostname, PORT) for n in self.brokers if n not in exclude)

    def voters(self):
        return ",".join("%d@%s:%d" % (self.idx(n), n.account.hostname, CONTROLLER_PORT) for n in self.controllers)

    def properties(self, node):
        rf = min(3, len(self.brokers))
        if self.num_controllers == 0:
            roles, listeners = "broker,controller", "PLAINTEXT://:%d,CONTROLLER://:%d" % (PORT, CONTROLLER_PORT)
        elif self.is_controller(node):
            roles, listeners = "controller", "CONTROLLER://:%d" % CONTROLLER_PORT
        else:
            roles, listeners = "broker", "PLAINTEXT://:%d" % PORT
        props = {
            "process.roles": roles,
            "node.id": self.idx(node),
            "controller.quorum.voters": self.voters(),
            "listeners": listeners,
            "advertised.listeners": "PLAINTEXT://%s:%d" % (node.account.hostname, PORT) if self.is_broker(node) else None,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT" if self.is_broker(node) else None,
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": self.DATA,
            "num.partitions": 1,
            "num.network.threads": 2,
            "num.io.threads": 2,
            "num.recovery.threads.per.data.dir": 1,
            "offsets.topic.replication.factor": rf,
            "offsets.topic.num.partitions": 3,
            "transaction.state.log.replication.factor": rf,
            "transaction.state.log.min.isr": min(2, rf),
            "share.coordinator.state.topic.replication.factor": rf,
            "share.coordinator.state.topic.min.isr": min(2, rf),
            "group.initial.rebalance.delay.ms": 0,
            "log.cleaner.backoff.ms": 1000,
            "log.cleaner.dedupe.buffer.size": 8 * 1024 * 1024,
            "log.cleaner.threads": 1,
        }
        props.update(self.server_props)
        props.update(self.node_props.get(self.idx(node), {}))
        return "".join("%s=%s\n" % (k, v) for k, v in props.items() if v is not None)

    # ---------------------------------------------------------------- lifecycle
    def start(self, **kwargs):
        # a KRaft quorum needs a majority of its voters up: start every node, then wait for all
        super(KafkaService, self).start(wait=False, **kwargs)
        for node in self.nodes:
            wait_until(lambda: self._started(node), timeout_sec=self.start_timeout, backoff_sec=1,
                       err_msg=lambda: self.start_failure(node))
        self.wait_for_cluster()

    def start_node(self, node, wait=True, expect_failure=False):
        node.account.ssh("mkdir -p %s %s" % (self.DATA, self.LOGS))
        if self.version(node) != "ours":
            # stock Apache Kafka 4.3.1 (4.3.2, 4.4.0): upstream's jars (checked against upstream/artifacts.sha256,
            # upstream/newest-upstream-libs.sha256 by build.sh) with the same scripts and log4j configuration;
            # kafka-run-class.sh takes its classpath from $base_dir/libs
            rel, libs = STOCK_RELEASES[self.version(node)]
            node.account.ssh("rm -rf {h} && mkdir -p {h} && cp -r {k}/bin {k}/config {h}/ && ln -s {s} {h}/libs && "
                             "test -f {s}/kafka_2.13-{r}.jar".format(h=self.home(node), k=KAFKA_HOME, s=libs, r=rel))
        home = self.home(node)
        node.account.create_file(self.CONFIG, self.properties(node))
        # format (first start only) and start in the background, so that nodes start in parallel
        # the storage tool gets no JMX_PORT (kafka-run-class.sh would bind it for the tool's JVM too), and a
        # failed format shows in stdout.log, where start_failure looks
        fmt = ("test -f %s/meta.properties || %s/bin/kafka-storage.sh format --ignore-formatted -t %s -c %s "
               "> %s/format.log 2>&1 || { echo 'ERROR kafka-storage.sh format failed:'; cat %s/format.log; }"
               % (self.DATA, home, self.cluster_id, self.CONFIG, WORK, WORK))
        cmd = ("echo '=== start %s %s' >> %s; export LOG_DIR=%s KAFKA_HEAP_OPTS='-Xms%dm -Xmx%dm' "
               "KAFKA_JVM_PERFORMANCE_OPTS='-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k'; "
               "nohup sh -c \"%s; JMX_PORT=%d exec %s/bin/kafka-server-start.sh %s\" >> %s 2>&1 &"
               % (time.strftime("%H:%M:%S"), self.version(node), self.STDOUT, self.LOGS, self.heap_mb, self.heap_mb,
                  fmt, JMX_PORT, home, self.CONFIG, self.STDOUT))
        self.logger.info("starting kafka (%s) on %s", self.version(node), node.account.hostname)
        node.account.ssh(cmd)
        if wait and not expect_failure:
            wait_until(lambda: self._started(node), timeout_sec=self.start_timeout, backoff_sec=1,
                       err_msg=lambda: self.start_failure(node))

    def start_failure(self, node):
        """Why a broker did not start: the first ERROR/exception lines of its output since the start."""
        lines = self.output_since_last_start(node).splitlines()
        why = [l for l in lines if "ERROR" in l or "Exception" in l or l.startswith("Error")][:3]
        return "kafka did not start on %s%s: %s" % (node.account.hostname, "" if self.pids(node) else " (exited)",
                                                     " | ".join(w[:300] for w in why) or "no error in its output")

    def _started(self, node):
        """Started since its last start (a broker that refused to start before does not count)."""
        return "Kafka Server started" in self.output_since_last_start(node) and bool(self.pids(node))

    def wait_for_cluster(self, timeout=90):
        """All live brokers registered and unfenced (kafka-metadata-quorum / broker api versions)."""
        live = [n for n in self.brokers if self.pids(n)]
        wait_until(lambda: self.registered_brokers(live[0]) >= len(live), timeout_sec=timeout, backoff_sec=2,
                   err_msg="not all brokers registered")

    def registered_brokers(self, node):
        out = self.ssh_out(node, "KAFKA_HEAP_OPTS=-Xmx128m %s/bin/kafka-run-class.sh org.apache.kafka.tools.BrokerApiVersionsCommand --bootstrap-server %s:%d 2>/dev/null "
                                 "| grep -c '(id:' || true" % (KAFKA_HOME, node.account.hostname, PORT))
        try:
            return int(out.strip() or 0)
        except ValueError:
            return 0

    def stop(self, clean_shutdown=False, **kwargs):
        """Test teardown: kill -9 every broker at once (a clean shutdown of a whole KRaft cluster waits for
        controllers that are going away); tests call stop_node/restart_node for clean stops."""
        if clean_shutdown:
            return super(KafkaService, self).stop(**kwargs)
        for node in self.nodes:
            for pid in self.pids(node):
                node.account.signal(pid, 9, allow_fail=True)

    def pids(self, node):
        out = self.ssh_out(node, "ps -eo pid,args | grep '[k]afka\\.Kafka' | awk '{print $1}'")
        return [int(p) for p in out.split()]

    def alive(self, node):
        return bool(self.pids(node))

    def stop_node(self, node, clean_shutdown=True, timeout=60):
        sig = 15 if clean_shutdown else 9
        for pid in self.pids(node):
            node.account.signal(pid, sig, allow_fail=True)
        wait_until(lambda: not self.pids(node), timeout_sec=timeout, backoff_sec=0.5,
                   err_msg="kafka on %s did not stop" % node.account.hostname)

    def kill_node(self, node):
        self.stop_node(node, clean_shutdown=False)

    def restart_node(self, node, clean_shutdown=True, version=None):
        """Stops the node and starts it again, on another version if one is given."""
        self.stop_node(node, clean_shutdown=clean_shutdown)
        if version:
            self.set_version(node, version)
        self.start_node(node)

    def clean_node(self, node):
        # gone before the files go: a broker still exiting holds its ports (the next start's JMX port) and files
        self.stop_node(node, clean_shutdown=False)
        node.account.ssh("rm -rf %s" % WORK, allow_fail=True)

    # ---------------------------------------------------------------- helpers
    def ssh_out(self, node, cmd, allow_fail=True):
        return node.account.ssh_output(cmd, allow_fail=allow_fail).decode("utf-8", "replace")

    def run_tool(self, node, cmd, allow_fail=False):
        """Runs a bin/ tool on a broker node; returns its output."""
        full = "KAFKA_HEAP_OPTS='-Xmx128m' KAFKA_JVM_PERFORMANCE_OPTS='-XX:TieredStopAtLevel=1' %s/bin/%s 2>&1" % (KAFKA_HOME, cmd)
        return self.ssh_out(node, full, allow_fail=allow_fail)

    def any_live_node(self):
        for n in self.brokers + self.controllers:
            if self.pids(n):
                return n
        raise RuntimeError("no live broker")

    def create_topic(self, topic, partitions=1, replication_factor=3, configs=None):
        """Creates a topic and waits for its full ISR; raises if the broker refuses it."""
        return self.create_topics([(topic, partitions, replication_factor, configs)])

    def create_topics(self, specs):
        """Creates topics [(name, partitions, rf, {config: value})] with one admin client (one JVM) and
        waits until each has its full ISR; raises with the brokers' error if one is refused."""
        from .clients import java_cmd
        arg = "|".join("%s:%d:%d:%s" % (t, p, rf, ",".join("%s=%s" % kv for kv in (cfg or {}).items()))
                       for t, p, rf, cfg in specs)
        node = self.any_live_node()
        out = self.ssh_out(node, java_cmd("ours", "topics --bootstrap %s --create %s"
                                          % (self.bootstrap_servers(), quote(arg)), heap_mb=128) + " 2>&1",
                           allow_fail=True)
        self.logger.info("create topics: %s", out.strip())
        for t, _, _, _ in specs:
            if "created %s\n" % t not in out + "\n":
                raise RuntimeError("topic %s not created: %s" % (t, out.strip()[-1000:]))
        return out

    def describe_topic(self, topic):
        return self.run_tool(self.any_live_node(), "kafka-topics.sh --bootstrap-server %s --describe --topic %s"
                             % (self.bootstrap_servers(), topic), allow_fail=True)

    def isr_size(self, topic):
        sizes = [len(m.split(",")) for m in re.findall(r"Isr: ([0-9,]+)", self.describe_topic(topic))]
        return min(sizes) if sizes else 0

    def under_replicated(self):
        """kafka-topics.sh --describe --under-replicated-partitions over every topic: the lines it prints."""
        out = self.run_tool(self.any_live_node(), "kafka-topics.sh --bootstrap-server %s --describe "
                            "--under-replicated-partitions" % self.bootstrap_servers(), allow_fail=True)
        return [l for l in out.splitlines() if "Partition:" in l]

    def wait_in_sync(self, timeout=120):
        """Every live broker registered and no partition under-replicated (what an operator waits for before
        restarting the next broker of a roll)."""
        self.wait_for_cluster(timeout)
        wait_until(lambda: not self.under_replicated(), timeout_sec=timeout, backoff_sec=2,
                   err_msg=lambda: "partitions still under-replicated: %s" % self.under_replicated()[:5])

    def reassign(self, assignment, timeout=180):
        """kafka-reassign-partitions.sh --execute, then --verify until done; assignment {(topic, partition): [ids]}.
        Returns the tool's output."""
        import json
        plan = {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r}
                                             for (t, p), r in sorted(assignment.items())]}
        node = self.any_live_node()
        path = WORK + "/reassign.json"
        node.account.create_file(path, json.dumps(plan))
        base = "kafka-reassign-partitions.sh --bootstrap-server %s --reassignment-json-file %s" % (
            self.bootstrap_servers(), path)
        out = self.run_tool(node, base + " --execute")
        assert "Successfully started partition reassignment" in out, out
        outs = [out]

        def done():
            v = self.run_tool(node, base + " --verify", allow_fail=True)
            outs.append(v)
            return "is still in progress" not in v and "completed" in v
        wait_until(done, timeout_sec=timeout, backoff_sec=2, err_msg=lambda: "reassignment not done: %s" % outs[-1])
        return out + outs[-1]

    def alter_topic_config(self, topic, add=None, delete=None, allow_fail=False):
        args = ""
        if add:
            args += " --add-config " + ",".join("%s=%s" % kv for kv in add.items())
        if delete:
            args += " --delete-config " + ",".join(delete)
        return self.run_tool(self.any_live_node(), "kafka-configs.sh --bootstrap-server %s --alter --entity-type topics "
                             "--entity-name %s%s" % (self.bootstrap_servers(), topic, args), allow_fail=allow_fail)

    def describe_topic_config(self, topic):
        return self.run_tool(self.any_live_node(), "kafka-configs.sh --bootstrap-server %s --describe --entity-type "
                             "topics --entity-name %s" % (self.bootstrap_servers(), topic))

    def controller_leader(self):
        out = self.run_tool(self.any_live_node(), "kafka-metadata-quorum.sh --bootstrap-server %s describe --status"
                            % self.bootstrap_servers(), allow_fail=True)
        m = re.search(r"LeaderId:\s+(\d+)", out)
        return self.get_node(int(m.group(1))) if m else None

    def partition_dir(self, topic, partition=0):
        return "%s/%s-%d" % (self.DATA, topic, partition)

    def bytes_on_disk(self, node, topic, partition=0):
        out = self.ssh_out(node, "cat %s/*.log 2>/dev/null | wc -c" % self.partition_dir(topic, partition))
        return int(out.strip() or 0)

    def server_log_grep(self, node, pattern):
        return self.ssh_out(node, "grep -h -E %s %s %s/server.log 2>/dev/null || true"
                            % (quote(pattern), self.STDOUT, self.LOGS))

    def output_since_last_start(self, node):
        """The broker's console output (stdout/stderr, log4j console appender) since its last start."""
        return self.ssh_out(node, "tac %s | sed '/^=== start/q' | tac" % self.STDOUT)

    def jmx_dump(self, node, object_name="kafka.server:*"):
        """One-shot JMX read with upstream's JmxTool (tools jar in the dist)."""
        return self.run_tool(node, "kafka-run-class.sh org.apache.kafka.tools.JmxTool --one-time true "
                             "--report-format properties --jmx-url service:jmx:rmi:///jndi/rmi://%s:%d/jmxrmi "
                             "--object-name %s" % (node.account.hostname, JMX_PORT, quote(object_name)),
                             allow_fail=True)

    def dist_has(self, node, glob):
        return self.ssh_out(node, "ls %s/libs/%s 2>/dev/null || true" % (KAFKA_HOME, glob)).strip() != ""


def quote(s):
    return "'" + s.replace("'", "'\\''") + "'"
