"""8. Rolling upgrade from stock Apache Kafka 4.3.1 to this distribution and back, under load.

KRaft with a controller-only node and three broker-only nodes, all starting on stock 4.3.1 (upstream's jars,
mounted at /opt/kafka-stock/libs). Two idempotent acks=all producers (Java, librdkafka) write a delete-policy
topic, a third (Java, keys) a compacted topic, the whole time. The roll:

  1. stock: our topic settings are refused by the stock controller (the message is recorded);
  2. controller to ours, then our topic setting on the compacted topic while the brokers are still stock;
  3. brokers to ours one at a time, each restarted with the native-gzip provider in server.properties;
  4. our features on: gzip level 9 as the topic codec, cold recompression to zstd, compaction recompression,
     the provider on the Java producer and on the verifying consumer; a checkpoint verifies every record;
  5. (full) brokers back to stock one at a time with every setting left in place, a reassignment of the compacted
     topic's replicas while stock and our brokers are mixed, then the controller; a checkpoint with stock
     4.3.1's client; (short) one broker back to stock, the reassignment, that broker forward again;
  6. (full) forward again, controller first;
  7. every acknowledged record read back exactly once at its partition and offset (so in order per partition) by
     our Java client, stock 4.3.1's and librdkafka; the compacted topic's latest value per key.

mode=ci, the case CI runs, is the same roll cut to four restarts: the controller and one broker forward (that
broker with the provider), our features on while two brokers are still stock (the stock Java producer's load runs
throughout), the reassignment while mixed, then that broker and the controller back to stock with every setting left
in place, and step 7. The short and full cases run only when KC_SYSTEST_FULL=1 (./build.sh test --full, or
KC_SYSTEST_FULL=1 ./build.sh systest upgrade): CI's time limit does not hold them, see docs/testing.md.

Each rule docs/upgrading.md says the test shows is asserted where the roll reaches it: the stock controller's refusals
and their messages; stock brokers applying the topic's other settings and naming ours nowhere in their output, and
starting with the provider keys in server.properties without a line about them; a stock controller over our settings
accepting another setting's --alter and answering --delete-config of ours as done while --describe (stock brokers)
lists none of ours, and keeping them all, the deleted one included (its metadata log, read with kafka-dump-log.sh
--cluster-metadata-decoder, still holds them); (full) our brokers applying every setting again once forward again.
What the nodes said is also returned in the report.

Each of those assertions can be seen to fail: KC_SYSTEST_MUTATE=<name> changes what the cluster is asked to do so
that one rule no longer holds (MUTATIONS below; docs/testing.md lists the runs), and mode=ci (delete-before-forward:
mode=full) must then fail with that rule's assertion.

The newest upstream releases (docs/upgrading.md, "Moving on to Apache Kafka 4.3.2 or 4.4.0"), on the same cluster,
load and verification, stock nodes on that release's jars (/opt/kafka-stock-<release>/libs):
test_roll_onto_newest_upstream rolls a cluster of ours with our features on onto stock 4.3.2 (CI) or 4.4.0
(KC_SYSTEST_FULL=1), brokers first; test_newest_upstream_to_ours_and_back (KC_SYSTEST_FULL=1) a stock 4.3.2 cluster
onto ours and back. Merging stays on through every roll: no follower, stock or ours, may log
UnexpectedAppendOffsetException (a batch merged around its log end)."""

import json
import os
import re
import time

from ducktape.mark import parametrize
from ducktape.mark.resource import cluster
from ducktape.tests.test import Test
from ducktape.utils.util import wait_until

from ..services.clients import ProducerService, VerifyingConsumer
from ..services.kafka import CONTROLLER_PORT, KafkaService, release
from .common import assert_no_stalled_follower, full_only, has_provider_framework, table, timed

TOPIC = "rolling"        # delete policy, 3 partitions, RF 3, min.insync.replicas 2: Java + librdkafka producers
KEYED = "keyed"          # compacted, 2 partitions, RF 2: Java producer with keys; reassigned while mixed
RATE = 600               # records/s of each of the two producers on TOPIC
KEYED_RATE = 100
PROVIDER = {"compression.gzip.provider": "io.kafkacompress.nativegzip.NativeGzipCompressionService",
            "compression.gzip.provider.required": "true"}
TOPIC_CONFIGS = {"min.insync.replicas": 2, "segment.ms": 8000, "compression.type": "producer"}
KEYED_CONFIGS = {"cleanup.policy": "compact", "min.insync.replicas": 1, "segment.ms": 8000,
                 "min.cleanable.dirty.ratio": 0.01, "min.compaction.lag.ms": 0}
# our features on TOPIC once the controller runs ours: the broker recompresses what producers send to gzip level 9
# (KIP-390, upstream) and rewrites closed segments in zstd (recompression.lag.ms, ours); the bound on a record's
# decompressed size (upstream's next patch releases, not 4.3.1) far above the test's records
TOPIC_FEATURES = {"compression.type": "gzip", "compression.gzip.level": 9, "compaction.compression.type": "zstd",
                  "recompression.lag.ms": 0, "max.decompressed.message.bytes": 1000000}
KEYED_FEATURES = {"compaction.compression.type": "zstd"}
OUR_KEYS = ("compression.gzip.provider", "compaction.compression.type", "recompression.lag.ms",
            "max.decompressed.message.bytes")
# what a node logs about a setting it does not know, and the version line of its start
NOTICE = re.compile(r"compression\.gzip\.provider|compaction\.compression\.type|recompression\.lag\.ms|"
                    r"max\.decompressed\.message\.bytes|"
                    r"[Uu]nknown (topic )?config|were supplied but|not a known config")
VERSION = re.compile(r"Kafka version: (\S+)")
# the newest upstream releases users who leave us go to (docs/upgrading.md): the version a node runs them as
NEWEST = {"4.3.2": "stock-4.3.2", "4.4.0": "stock-4.4.0"}
# of our topic settings, those 4.3.2 and 4.4.0 do not know (max.decompressed.message.bytes they define themselves,
# as ours does, and log among their own settings)
NEWEST_UNKNOWN = ("compaction.compression.type", "recompression.lag.ms", "recompression.batch.bytes")
# KC_SYSTEST_MUTATE=<name>: what test_rolling_upgrade_and_downgrade changes so that one rule of docs/upgrading.md no
# longer holds (the assertion that must then fail, in mode=ci)
MUTATIONS = {
    "lose-record": "one acknowledged record deleted before the roll (the verification)",
    "stock-knows-alter": "the stock controller asked to alter a setting 4.3.1 knows, compression.zstd.level, "
                         "instead of ours (its refusal of our topic settings on alter)",
    "stock-knows-create": "the stock controller asked to create a topic with retention.ms instead of "
                          "recompression.lag.ms (its refusal on create)",
    "broker-knows": "the broker of ours rolled forward before our setting is set on the compacted topic, so that a "
                    "broker hosting it knows the setting (stock brokers leave it out and name it nowhere)",
    "provider-dynamic": "compression.gzip.provider also set as a dynamic cluster-wide broker setting before the "
                        "broker of ours goes back to stock (a stock broker with the provider keys names them nowhere)",
    "delete-before-rollback": "our settings of the delete-policy topic deleted while the controller runs ours, "
                              "before the roll back (the stock controller keeps our settings)",
    "delete-while-ours": "the --delete-config of compaction.compression.type sent before the controller goes back "
                         "to stock (a stock controller answers it as done and keeps the setting)",
    "describe-on-ours": "the broker of ours left on ours and asked for --describe (stock brokers' --describe lists "
                        "none of our settings)",
    "alter-ours-with-other": "the stock controller over our settings asked to alter retention.ms together with "
                             "recompression.lag.ms (it accepts an --alter of the topic's other settings)",
    "delete-before-forward": "(mode=full) compaction.compression.type of the delete-policy topic deleted once the "
                             "controller is forward again, before the brokers follow (our brokers apply every setting "
                             "the stock controller kept)",
}
MUTATE = os.environ.get("KC_SYSTEST_MUTATE", "")
assert not MUTATE or MUTATE in MUTATIONS, "KC_SYSTEST_MUTATE=%s: not one of %s" % (MUTATE, sorted(MUTATIONS))
# a ConfigRecord of a topic as kafka-dump-log.sh --cluster-metadata-decoder prints it
CONFIG_RECORD = re.compile(r'payload: (\{"type":"CONFIG_RECORD".*\})\s*$')
NOTICE_NEWEST = re.compile(r"compression\.gzip\.provider|compaction\.compression\.type|recompression\.lag\.ms|"
                           r"recompression\.batch\.bytes|"
                           r"[Uu]nknown (topic )?config|were supplied but|not a known config")


class UpgradeTest(Test):

    def setup_run(self):
        self.t0 = time.time()
        self.events, self.messages, self.times = [], {}, {}

    def note(self, msg):
        self.events.append("%6.1fs %s" % (time.time() - self.t0, msg))
        self.logger.info(msg)

    def mutated(self, name):
        """True when KC_SYSTEST_MUTATE names this mutation (noted in the report)."""
        if MUTATE != name:
            return False
        self.note("MUTATION %s: %s" % (name, MUTATIONS[name]))
        return True

    @staticmethod
    def metadata_configs(kafka, controller):
        """The topic settings a controller holds, as its metadata log says: every ConfigRecord of a topic in its
        snapshots and log segments (kafka-dump-log.sh --cluster-metadata-decoder), replayed in order;
        {topic: {name: value}}. What a stock controller keeps, whatever its --describe (answered by brokers) says."""
        d = "%s/__cluster_metadata-0" % kafka.DATA
        files = kafka.ssh_out(controller, "ls %s/*.checkpoint %s/*.log 2>/dev/null | paste -sd, -" % (d, d)).strip()
        assert files, "no metadata log on controller %d" % kafka.idx(controller)
        out = kafka.run_tool(controller, "kafka-dump-log.sh --cluster-metadata-decoder --files %s" % files)
        configs = {}
        for line in out.splitlines():
            m = CONFIG_RECORD.search(line)
            if not m:
                continue
            data = json.loads(m.group(1))["data"]
            if data.get("resourceType") != 2:      # topics
                continue
            topic = configs.setdefault(data["resourceName"], {})
            if data.get("value") is None:
                topic.pop(data["name"], None)
            else:
                topic[data["name"]] = data["value"]
        assert configs.get(TOPIC), "no ConfigRecord of %s in controller %d's metadata log: %s" % (
            TOPIC, kafka.idx(controller), out[-1000:])
        return configs

    # ---------------------------------------------------------------- roll
    def roll(self, kafka, node, version, props=None):
        """Restarts one node on a version (cleanly, as an operator would), with its own extra properties, waits
        until it runs that version and, for a broker, until no partition is under-replicated; records what the
        node logged about our settings at that start."""
        if props is not None:
            kafka.node_props[kafka.idx(node)] = props
        role = "controller" if kafka.is_controller(node) else "broker"
        with timed(self.times, "node restarts"):
            kafka.restart_node(node, version=version)
            out = kafka.output_since_last_start(node)
            m = VERSION.search(out)
            want = release(version)
            assert m and (m.group(1) == want if want else m.group(1).startswith("4.3.1-")), \
                "%s %d: not running %s: %s" % (role, kafka.idx(node), version, m and m.group(0))
            if kafka.is_broker(node):
                kafka.wait_in_sync(timeout=180)
            else:
                wait_until(lambda: kafka.controller_leader() is not None, timeout_sec=120, backoff_sec=2,
                           err_msg="no controller leader after the restart")
                kafka.wait_for_cluster(timeout=120)
        self.note("%s %d on %s (%s)%s" % (role, kafka.idx(node), version, m.group(1),
                                          " with the provider" if props and PROVIDER.items() <= props.items() else ""))
        if version != "ours" and kafka.is_broker(node) and "compression.gzip.provider" in kafka.node_props.get(
                kafka.idx(node), {}):
            # our broker setting left in server.properties: the stock broker starts and serves (checked by the
            # caller's verifications); whatever it logs about the key is collected below
            # grep exits 1 when the node has no provider key; the report then records an empty setting
            cfg = kafka.ssh_out(node, "grep '^compression.gzip.provider' %s || true" % kafka.CONFIG)
            assert "compression.gzip.provider=" in cfg, cfg
            assert "Compression provider for gzip" not in out, "a stock broker loaded a provider?"
            mentions = [l for l in out.splitlines() if "compression.gzip.provider" in l]
            self.messages.setdefault("%s broker: server.properties with compression.gzip.provider" % version, [
                "started; %d lines of its output name the key%s" % (
                    len(mentions), (": " + mentions[0].strip()[:300]) if mentions else "")])
            # docs/upgrading.md: ignored, silently; no line of its output names the keys
            assert not mentions, "stock broker %d names the provider key: %s" % (kafka.idx(node), mentions[0][:300])
        notices = []
        notice = NOTICE if version == "stock" else NOTICE_NEWEST
        for line in out.splitlines() if version != "ours" else []:
            if notice.search(line) and "Kafka version" not in line:
                key = "%s %s" % (version, role)
                msg = re.sub(r"^\[[^\]]*\]\s*", "", line.strip())[:400]
                notices.append(msg)
                self.messages.setdefault(key, [])
                if msg not in self.messages[key] and len(self.messages[key]) < 8:
                    self.messages[key].append(msg)
        # docs/upgrading.md: a stock broker starts on our settings (server.properties, topics) without a warning
        assert not (notices and kafka.is_broker(node)), "stock broker %d at start: %s" % (kafka.idx(node), notices)

    def try_config(self, kafka, topic, configs, what):
        """kafka-configs.sh --alter; returns (accepted, the tool's last lines)."""
        out = kafka.alter_topic_config(topic, add=configs, allow_fail=True) if not isinstance(configs, list) else \
            kafka.alter_topic_config(topic, delete=configs, allow_fail=True)
        ok = "Completed updating config" in out
        lines = [l for l in out.splitlines() if l.strip()]
        msg = next((l for l in lines if "Exception:" in l), None) or \
            next((l for l in lines if "Error" in l), lines[-1] if lines else "")
        self.note("%s: %s (%s)" % (what, "accepted" if ok else "refused", msg.strip()[:300]))
        return ok, msg.strip()

    # ---------------------------------------------------------------- load
    def start_load(self, kafka, node, run, java_client, java_configs):
        for p, changes in ((self.java, {"client": java_client, "configs": java_configs}), (self.rdkafka, {}),
                           (self.keyed, {"client": java_client})):
            for k, v in changes.items():
                setattr(p, k, v)
            p.start_node(node)
        self.load_started = time.time()
        self.note("load %d: Java (%s client%s) and librdkafka on %s at %d records/s each, Java with keys on %s" % (
            run, java_client, ", provider" if "compression.gzip.provider" in java_configs else "", TOPIC, RATE, KEYED))

    def stop_load(self, min_seconds=15):
        """Stops the three producers, each after min_seconds of load at least (JVM start included)."""
        time.sleep(max(0, self.load_started + min_seconds - time.time()))
        results = {}
        for p in (self.java, self.rdkafka, self.keyed):
            res = p.finish(timeout_sec=300)
            assert res["failed"] == 0, "%s: records failed: %s" % (p.name, res)
            assert res["acked"] == res["sent"] and res["acked"] > 0, "%s: not every record acknowledged: %s" % (
                p.name, res)
            results[p.name] = res
            self.acked[p.name] = self.acked.get(p.name, 0) + res["acked"]
        self.note("load stopped: %s" % ", ".join("%s %d acked" % (n, r["acked"]) for n, r in sorted(results.items())))
        return results

    def verify(self, consumer, client, configs=None, what=""):
        with timed(self.times, "verify"):
            v = consumer.assert_verified(TOPIC, [self.java, self.rdkafka], client=client, configs=configs)
            assert v["unacked_read"] == 0, "records read that no producer had acknowledged: %s" % v
            assert v["matched"] == self.acked["java"] + self.acked["rdkafka"], (v, self.acked)
            k = consumer.assert_verified(KEYED, [self.keyed], compacted=True, client=client, configs=configs)
        self.note("verified%s with %s: %s %d records exactly once at their offsets (%d duplicates, %d missing), "
                  "%s latest value of %d keys" % (what, client, TOPIC, v["matched"], v["duplicates"], v["missing"],
                                                  KEYED, k["matched"]))
        return v

    # ---------------------------------------------------------------- the test
    @cluster(num_nodes=5)
    @parametrize(mode="ci")
    @parametrize(mode="short")
    @parametrize(mode="full")
    def test_rolling_upgrade_and_downgrade(self, mode):
        self.setup_run()
        skipped = mode != "ci" and full_only("the rolling upgrade's %s case" % mode, {"short": 8, "full": 26}.get(mode),
                                             "CI's time limit does not hold it; CI runs mode=ci")
        if skipped:
            return skipped
        with timed(self.times, "start cluster"):
            kafka = KafkaService(self.test_context, 4, controllers=1, version="stock")
            controller, brokers = kafka.controllers[0], kafka.brokers
            if not has_provider_framework(controller):
                return {"skipped": "provider framework (KIP-1121) not in this build"}
            kafka.start()
        for n in kafka.nodes:
            m = VERSION.search(kafka.output_since_last_start(n))
            assert m and m.group(1) == "4.3.1", "%s: not stock 4.3.1: %s" % (n.account.hostname, m and m.group(0))
        self.note("stock 4.3.1 cluster: controller %d, brokers %s" % (
            kafka.idx(controller), [kafka.idx(b) for b in brokers]))
        kafka.create_topics([(TOPIC, 3, 3, TOPIC_CONFIGS), (KEYED, 2, 2, KEYED_CONFIGS)])

        # 1. a stock controller refuses our topic settings (on alter and on create)
        asked = {"compression.zstd.level": 3} if self.mutated("stock-knows-alter") else KEYED_FEATURES
        ok, refused_alter = self.try_config(kafka, KEYED, asked, "stock controller, alter %s" % KEYED)
        assert not ok, "a stock controller accepted %s" % asked
        assert "Unknown topic config name: compaction.compression.type" in refused_alter, refused_alter
        self.messages["stock controller: kafka-configs.sh --alter"] = [refused_alter]
        try:
            asked = {"retention.ms": 86400000} if self.mutated("stock-knows-create") else {"recompression.lag.ms": 0}
            kafka.create_topic("refused", configs=asked)
            raise AssertionError("a stock controller created a topic with %s" % asked)
        except RuntimeError as e:
            self.messages["stock controller: create topic"] = [str(e).splitlines()[-1][-300:]]
            self.note("stock controller, create topic with recompression.lag.ms: refused (%s)" % str(e)[-200:])
            assert "Unknown topic config name: recompression.lag.ms" in str(e), str(e)[-600:]

        self.java = ProducerService(self.test_context, kafka, TOPIC, max_records=10 ** 7, throughput=RATE,
                                    name="java", until_file=True)
        node = self.java.nodes[0]
        self.rdkafka = ProducerService(self.test_context, kafka, TOPIC, max_records=10 ** 7, throughput=RATE,
                                       name="rdkafka", until_file=True, node=node, client="confluent-kafka",
                                       configs={"enable.idempotence": "true", "compression.type": "lz4",
                                                "linger.ms": 20})
        self.keyed = ProducerService(self.test_context, kafka, KEYED, max_records=10 ** 7, throughput=KEYED_RATE,
                                     name="keyed", until_file=True, node=node, keys=300,
                                     configs={"enable.idempotence": "true", "compression.type": "zstd",
                                              "linger.ms": 20})
        consumer = VerifyingConsumer(self.test_context, kafka, node=node)
        consumer.start_node(node)
        self.acked = {}
        java_stock = {"enable.idempotence": "true", "compression.type": "gzip", "linger.ms": 20,
                      "retries": 2147483647}
        self.start_load(kafka, node, 1, "stock", java_stock)
        time.sleep(5)
        if os.environ.get("KC_SYSTEST_MUTATE") == "lose-record":
            # the mutation check of this test (quick: before the roll): lose one acknowledged record, the first of
            # partition 0, with kafka-delete-records.sh; the verification must then fail
            self.stop_load()
            kafka.ssh_out(node, "echo '{\"version\":1,\"partitions\":[{\"topic\":\"%s\",\"partition\":0,"
                                "\"offset\":1}]}' > /tmp/lose.json" % TOPIC)
            self.note("MUTATION: %s" % kafka.run_tool(node, "kafka-delete-records.sh --bootstrap-server %s "
                                                       "--offset-json-file /tmp/lose.json" % kafka.bootstrap_servers(),
                                                       allow_fail=True).strip()[-200:])
            self.verify(consumer, "stock", what=" after the mutation")

        # 2. controllers first: with the controller on ours, brokers still stock, our topic setting is accepted
        with timed(self.times, "roll forward"):
            self.roll(kafka, controller, "ours")
            early = self.mutated("broker-knows")
            if early:
                self.roll(kafka, brokers[-1], "ours", props=dict(PROVIDER))
            ok, msg = self.try_config(kafka, KEYED, KEYED_FEATURES, "our controller, stock brokers, alter %s" % KEYED)
            assert ok, "our controller refused compaction.compression.type: %s" % msg
            time.sleep(3)
            for b in brokers:
                assert kafka.alive(b), "stock broker %d stopped after compaction.compression.type" % kafka.idx(b)
                # a stock broker applies the topic's other settings and drops the one it does not know
                line = (kafka.server_log_grep(b, "Updating topic %s with new configuration" % KEYED).strip()
                        .splitlines() or [""])[-1]
                assert "cleanup.policy -> compact" in line and "compaction.compression.type" not in line, \
                    "stock broker %d: %s" % (kafka.idx(b), line)
                # ... without a warning: no line of its output names the setting
                said = kafka.server_log_grep(b, r"compaction\.compression\.type").strip()
                assert not said, "stock broker %d: %s" % (kafka.idx(b), said[:400])
            self.messages["stock broker: topic config it does not know"] = [re.sub(r"^\[[^\]]*\]\s*", "", line)[:400]]
            # 3. brokers, each with the provider in server.properties (ci: one of them)
            for b in (brokers[-1:] if mode == "ci" else brokers):
                self.roll(kafka, b, "ours", props=dict(PROVIDER))
                line = [l for l in kafka.output_since_last_start(b).splitlines()
                        if "Compression provider for gzip" in l]
                assert line, "broker %d does not name the gzip provider" % kafka.idx(b)

        # 4. our features on (ci: with two brokers still stock), the provider on the Java producer (ci: the stock
        # producer's load goes on)
        ours = [b for b in brokers if kafka.version(b) == "ours"]
        ok, msg = self.try_config(kafka, TOPIC, TOPIC_FEATURES, "our controller, alter %s" % TOPIC)
        assert ok, msg
        java_ours = dict(java_stock, **PROVIDER)
        time.sleep(3)
        for b in brokers:
            if b in ours:
                continue
            # ci: a stock broker takes the topic's new codec and level and leaves out the settings it does not know
            line = (kafka.server_log_grep(b, "Updating topic %s with new configuration" % TOPIC).strip()
                    .splitlines() or [""])[-1]
            assert "compression.gzip.level -> 9" in line and not any(k in line for k in OUR_KEYS), \
                "stock broker %d: %s" % (kafka.idx(b), line)
            said = kafka.server_log_grep(b, "|".join(re.escape(k) for k in OUR_KEYS)).strip()
            assert not said, "stock broker %d: %s" % (kafka.idx(b), said[:400])
            self.messages.setdefault("stock broker: topic configs it does not know, beside KIP-390's level", [
                re.sub(r"^\[[^\]]*\]\s*", "", line)[:400]])
        if mode != "ci":
            self.stop_load()
            self.start_load(kafka, node, 2, "ours", java_ours)
        with timed(self.times, "features on"):
            def recompressed():
                # grep -c prints 0 and exits 1 when nothing matched yet: a count, not a failure
                return [b for b in ours if kafka.ssh_out(b, "cat %s/log-cleaner.log* %s/server.log* 2>/dev/null | "
                                                         "grep -c 'Recompressed segment .* of log %s-' || true"
                                                         % (kafka.LOGS, kafka.LOGS, TOPIC)).strip() not in ("", "0")]
            wait_until(lambda: len(recompressed()) == len(ours), timeout_sec=120, backoff_sec=4,
                       err_msg=lambda: "cold recompression did not run on every broker of ours: %s" % recompressed())
        self.note("cold recompression to zstd ran on brokers %s" % [kafka.idx(b) for b in recompressed()])
        if mode != "ci":
            self.stop_load()
            self.verify(consumer, "ours", configs=PROVIDER, what=" on our cluster")
            self.start_load(kafka, node, 3, "ours", java_ours)

        # 5. back to stock, brokers first, every setting left in place; a reassignment while mixed (ci: before the
        # broker of ours goes back, so that it runs between two stock brokers and one of ours)
        back = brokers[::-1] if mode == "full" else brokers[-1:]
        if self.mutated("delete-before-rollback"):
            ok, msg = self.try_config(kafka, TOPIC, ["compaction.compression.type", "recompression.lag.ms"],
                                      "our controller, delete-config of our settings of %s" % TOPIC)
            assert ok, msg
        deleted_early = self.mutated("delete-while-ours")
        if deleted_early:
            ok, msg = self.try_config(kafka, KEYED, ["compaction.compression.type"],
                                      "our controller, delete-config compaction.compression.type")
            assert ok, msg
        if self.mutated("provider-dynamic"):
            self.note("our controller, dynamic cluster-wide compression.gzip.provider: %s" % kafka.run_tool(
                controller, "kafka-configs.sh --bootstrap-controller %s:%d --alter --entity-type brokers "
                "--entity-default --add-config compression.gzip.provider=%s" % (
                    controller.account.hostname, CONTROLLER_PORT, PROVIDER["compression.gzip.provider"])).strip()[-300:])
        describe_on_ours = self.mutated("describe-on-ours")
        if describe_on_ours:
            back = [b for b in back if b not in brokers[-1:]]
        with timed(self.times, "roll back"):
            if mode == "ci":
                with timed(self.times, "reassign"):
                    self.reassign_keyed(kafka)
            for i, b in enumerate(back):
                self.roll(kafka, b, "stock")
                if i == 0 and mode != "ci":
                    with timed(self.times, "reassign"):
                        self.reassign_keyed(kafka)
            if mode in ("full", "ci"):
                self.roll(kafka, controller, "stock")
                # a stock controller over metadata that holds our settings
                asked = {"retention.ms": 86400000}
                if self.mutated("alter-ours-with-other"):
                    asked["recompression.lag.ms"] = 0
                ok, msg = self.try_config(kafka, TOPIC, asked,
                                          "stock controller, our settings present, alter %s" % ", ".join(asked))
                self.messages["stock controller: alter retention.ms with our settings present"] = [
                    "accepted" if ok else msg]
                assert ok, "a stock controller over our settings refused %s: %s" % (asked, msg)
                if not deleted_early:
                    ok, msg = self.try_config(kafka, KEYED, ["compaction.compression.type"],
                                              "stock controller, delete-config compaction.compression.type")
                    self.messages["stock controller: --delete-config compaction.compression.type"] = [
                        "accepted" if ok else msg]
                    # answered as done, and the setting stays (below; full: our brokers apply it again)
                    assert ok, "a stock controller refused --delete-config compaction.compression.type: %s" % msg
                # the stock controller keeps our settings: its metadata log still holds them, the retention.ms it
                # accepted beside them, and the compaction.compression.type it answered --delete-config for
                held = self.metadata_configs(kafka, controller)
                want = dict((k, str(v)) for k, v in TOPIC_FEATURES.items())
                want["retention.ms"] = "86400000"
                lost = sorted(k for k, v in want.items() if held.get(TOPIC, {}).get(k) != v)
                self.note("stock controller's metadata: %s %s, %s %s" % (TOPIC, held.get(TOPIC), KEYED,
                                                                          held.get(KEYED)))
                self.messages["stock controller: metadata log after --alter and --delete-config"] = [
                    "%s: %s" % (t, ",".join("%s=%s" % kv for kv in sorted(held.get(t, {}).items())))
                    for t in (TOPIC, KEYED)]
                assert not lost, "the stock controller did not keep our settings of %s: %s missing or changed; " \
                    "its metadata holds %s" % (TOPIC, lost, held.get(TOPIC))
                assert held.get(KEYED, {}).get("compaction.compression.type") == "zstd", \
                    "--delete-config compaction.compression.type, answered as done by a stock controller, removed " \
                    "it: its metadata holds %s %s" % (KEYED, held.get(KEYED))
                if describe_on_ours:
                    # the broker of ours the only one to answer --describe
                    for b in brokers[:-1]:
                        kafka.stop_node(b)
                desc = kafka.describe_topic_config(TOPIC)
                kept = [k for k in OUR_KEYS[1:] if k + "=" in desc]
                self.note("stock controller: kafka-configs.sh --describe %s lists %s" % (TOPIC, kept))
                self.messages["stock controller: describe %s" % TOPIC] = ["lists %s" % kept]
                assert not kept, "kafka-configs.sh --describe against stock brokers lists %s: %s" % (kept, desc)
        self.stop_load()

        # 6. forward again, controller first (ci: the roll ends on stock 4.3.1; step 7 reads it there)
        if mode != "ci":
            self.verify(consumer, "stock", what=" after the roll back" if mode == "full" else " with a stock broker")
            with timed(self.times, "roll forward again"):
                self.start_load(kafka, node, 4, "ours", java_ours)
                if mode == "full":
                    self.roll(kafka, controller, "ours")
                    if self.mutated("delete-before-forward"):
                        ok, msg = self.try_config(kafka, TOPIC, ["compaction.compression.type"],
                                                  "our controller, delete-config compaction.compression.type")
                        assert ok, msg
                for b in back[::-1]:
                    self.roll(kafka, b, "ours", props=dict(PROVIDER))
                self.stop_load()
            if mode == "full":
                # the stock controller kept our settings, the one it answered --delete-config for included, and
                # the retention.ms it accepted beside them: our brokers apply them all again
                for b in brokers:
                    for topic, want in ((TOPIC, ("compaction.compression.type -> zstd", "recompression.lag.ms -> 0",
                                                 "retention.ms -> 86400000")),
                                        (KEYED, ("compaction.compression.type -> zstd",))):
                        line = (kafka.server_log_grep(b, "Updating topic %s with new configuration" % topic)
                                .strip().splitlines() or [""])[-1]
                        assert all(w in line for w in want), "broker %d, forward again: %s" % (kafka.idx(b), line)

        # 7. every record, three clients
        for c, cfg in (("ours", PROVIDER), ("stock", None), ("confluent-kafka", None)):
            self.verify(consumer, c, configs=cfg, what=" at the end")
        rows = [[k, m] for k, ms in sorted(self.messages.items()) for m in ms]
        t = table(["who", "what it said"], rows or [["-", "-"]])
        t += "\n\nacknowledged: %s\n" % self.acked + "\n".join(self.events)
        self.logger.info("\n%s", t)
        return {"table": t, "times": self.times, "acked": self.acked, "messages": self.messages}

    def reassign_keyed(self, kafka):
        """Moves each partition of KEYED to the broker that does not hold it (RF 2 on 3 brokers), while stock
        and our brokers are mixed, under load."""
        desc = kafka.describe_topic(KEYED)
        ids = set(kafka.idx(b) for b in kafka.brokers)
        plan = {}
        for p, reps in re.findall(r"Partition: (\d+)\s+Leader: \S+\s+Replicas: ([0-9,]+)", desc):
            reps = [int(r) for r in reps.split(",")]
            missing = sorted(ids - set(reps))[0]
            plan[(KEYED, int(p))] = [missing, reps[0]]
        assert len(plan) == 2, desc
        kafka.reassign(plan)
        kafka.wait_in_sync(timeout=180)
        after = kafka.describe_topic(KEYED)
        self.note("reassigned %s while mixed (%s): %s" % (
            KEYED, ", ".join("%d %s" % (kafka.idx(b), kafka.version(b)) for b in kafka.brokers),
            ", ".join("p%d -> %s" % (p, r) for (_, p), r in sorted(plan.items()))))
        for (_, p), r in plan.items():
            assert re.search(r"Partition: %d\s+Leader: \S+\s+Replicas: %s\b" % (p, ",".join(map(str, r))), after), after

    # ---------------------------------------------------------------- the newest upstream releases
    def make_load(self, kafka):
        """The three producers of the roll (TOPIC: Java and librdkafka; KEYED: Java with keys) and the verifying
        consumer, all on one node of their own."""
        self.java = ProducerService(self.test_context, kafka, TOPIC, max_records=10 ** 7, throughput=RATE,
                                    name="java", until_file=True)
        node = self.java.nodes[0]
        self.rdkafka = ProducerService(self.test_context, kafka, TOPIC, max_records=10 ** 7, throughput=RATE,
                                       name="rdkafka", until_file=True, node=node, client="confluent-kafka",
                                       configs={"enable.idempotence": "true", "compression.type": "lz4",
                                                "linger.ms": 20})
        self.keyed = ProducerService(self.test_context, kafka, KEYED, max_records=10 ** 7, throughput=KEYED_RATE,
                                     name="keyed", until_file=True, node=node, keys=300,
                                     configs={"enable.idempotence": "true", "compression.type": "zstd",
                                              "linger.ms": 20})
        consumer = VerifyingConsumer(self.test_context, kafka, node=node)
        consumer.start_node(node)
        self.acked = {}
        return node, consumer

    def wait_recompressed(self, kafka, brokers):
        """Until cold recompression has rewritten a segment of TOPIC on each of the brokers (ours)."""
        def recompressed():
            # grep -c prints 0 and exits 1 when nothing matched yet: a count, not a failure
            return [b for b in brokers if kafka.ssh_out(b, "cat %s/log-cleaner.log* %s/server.log* 2>/dev/null | "
                                                        "grep -c 'Recompressed segment .* of log %s-' || true"
                                                        % (kafka.LOGS, kafka.LOGS, TOPIC)).strip() not in ("", "0")]
        with timed(self.times, "features on"):
            wait_until(lambda: len(recompressed()) == len(brokers), timeout_sec=120, backoff_sec=4,
                       err_msg=lambda: "cold recompression did not run on every broker of ours: %s" % recompressed())
        self.note("cold recompression to zstd ran on brokers %s" % [kafka.idx(b) for b in brokers])

    def roll_off_ours(self, kafka, stock):
        """Every node from ours onto a stock release, brokers first, then the controller (as a roll back: our
        topic settings stay in the metadata, the provider keys in the brokers' server.properties); then what a
        cluster of that release does with our settings, asserted: a stock controller refuses ours, accepts the
        settings the release defines (max.decompressed.message.bytes among them) beside ours, and its brokers
        apply those and name ours nowhere."""
        rel = release(stock)
        # merging stays on: a leader of ours merges only below every replica's log end, a follower of ours only below
        # the high watermark while every replica is in sync, so a stock follower that comes back finds its log end
        # at a batch boundary (each restart waits for no partition under-replicated)
        for b in kafka.brokers[::-1]:
            self.roll(kafka, b, stock)
        self.roll(kafka, kafka.controllers[0], stock)
        assert_no_stalled_follower(kafka, kafka.brokers)
        ok, msg = self.try_config(kafka, KEYED, {"compaction.compression.type": "lz4"},
                                  "stock %s controller, alter %s" % (rel, KEYED))
        self.messages["%s controller: kafka-configs.sh --alter compaction.compression.type" % stock] = [msg]
        assert not ok, "a stock %s controller accepted compaction.compression.type" % rel
        assert "Unknown topic config name: compaction.compression.type" in msg, msg
        # the release's own settings beside ours in the metadata: accepted, and applied by its brokers
        new = {"max.decompressed.message.bytes": 2000000, "retention.ms": 86400000}
        ok, msg = self.try_config(kafka, TOPIC, new, "stock %s controller, our settings present, alter %s" % (
            rel, ", ".join(sorted(new))))
        self.messages["%s controller: alter max.decompressed.message.bytes, retention.ms with ours present" % stock] = [
            "accepted" if ok else msg]
        assert ok, "a stock %s controller refused max.decompressed.message.bytes or retention.ms: %s" % (rel, msg)

        def updated(b):
            return ([l for l in kafka.output_since_last_start(b).splitlines()
                     if "Updating topic %s with new configuration" % TOPIC in l] or [""])[-1]
        wait_until(lambda: all("max.decompressed.message.bytes -> 2000000" in updated(b) for b in kafka.brokers),
                   timeout_sec=30, backoff_sec=2,
                   err_msg=lambda: "stock %s brokers did not apply the bound: %s" % (rel, updated(kafka.brokers[0])))
        for b in kafka.brokers:
            line = updated(b)
            assert "retention.ms -> 86400000" in line and "compression.gzip.level -> 9" in line and \
                "compression.type -> gzip" in line and not any(k in line for k in NEWEST_UNKNOWN), \
                "stock %s broker %d: %s" % (rel, kafka.idx(b), line)
            said = [l for l in kafka.output_since_last_start(b).splitlines()
                    if any(k in l for k in NEWEST_UNKNOWN + ("compression.gzip.provider",))]
            assert not said, "stock %s broker %d names our settings: %s" % (rel, kafka.idx(b), said[0][:400])
        self.messages["%s broker: topic configs, ours among them" % stock] = [
            re.sub(r"^\[[^\]]*\]\s*", "", updated(kafka.brokers[0]))[:400]]
        desc = kafka.describe_topic_config(TOPIC)
        listed = [k for k in OUR_KEYS[1:] if k + "=" in desc]
        self.note("stock %s: kafka-configs.sh --describe %s lists %s" % (rel, TOPIC, listed))
        self.messages["%s: describe %s" % (stock, TOPIC)] = ["lists %s" % listed]
        assert listed == ["max.decompressed.message.bytes"], "stock %s --describe lists %s: %s" % (rel, listed, desc)

    def verify_all(self, consumer, stock):
        """Step 7: every acknowledged record once, at its offset, read by our client (with the provider), the stock
        release's Java client and librdkafka."""
        for c, cfg in (("ours", PROVIDER), (stock, None), ("confluent-kafka", None)):
            self.verify(consumer, c, configs=cfg, what=" at the end")

    def report(self):
        rows = [[k, m] for k, ms in sorted(self.messages.items()) for m in ms]
        t = table(["who", "what it said"], rows or [["-", "-"]])
        t += "\n\nacknowledged: %s\n" % self.acked + "\n".join(self.events)
        self.logger.info("\n%s", t)
        return {"table": t, "times": self.times, "acked": self.acked, "messages": self.messages}

    @cluster(num_nodes=5)
    @parametrize(target="4.3.2")
    @parametrize(target="4.4.0")
    def test_roll_onto_newest_upstream(self, target):
        """A cluster of ours (one controller, three brokers with the native-gzip provider) with our features on
        (gzip level 9, cold recompression and compaction recompression to zstd, the bound), under the load of our
        Java producer with the provider, librdkafka and a keyed producer, rolled node by node onto stock TARGET
        (brokers first, then the controller; four restarts), then every acknowledged record read back by three
        clients. 4.3.2 runs in CI; 4.4.0 only with KC_SYSTEST_FULL=1."""
        self.setup_run()
        stock = NEWEST[target]
        skipped = target != "4.3.2" and full_only("the roll of ours onto stock %s" % target, 4,
                                                  "CI runs the same roll onto 4.3.2")
        if skipped:
            return skipped
        with timed(self.times, "start cluster"):
            kafka = KafkaService(self.test_context, 4, controllers=1, version="ours")
            controller = kafka.controllers[0]
            if not has_provider_framework(controller):
                return {"skipped": "provider framework (KIP-1121) not in this build"}
            for b in kafka.brokers:
                kafka.node_props[kafka.idx(b)] = dict(PROVIDER)
            kafka.start()
        for n in kafka.nodes:
            m = VERSION.search(kafka.output_since_last_start(n))
            assert m and m.group(1).startswith("4.3.1-"), "%s: not ours: %s" % (n.account.hostname, m and m.group(0))
            if kafka.is_broker(n):
                assert "Compression provider for gzip" in kafka.output_since_last_start(n), \
                    "broker %d does not name the gzip provider" % kafka.idx(n)
        self.note("cluster of ours: controller %d, brokers %s with the provider" % (
            kafka.idx(controller), [kafka.idx(b) for b in kafka.brokers]))
        kafka.create_topics([(TOPIC, 3, 3, dict(TOPIC_CONFIGS, **TOPIC_FEATURES)),
                             (KEYED, 2, 2, dict(KEYED_CONFIGS, **KEYED_FEATURES))])
        node, consumer = self.make_load(kafka)
        java_ours = {"enable.idempotence": "true", "compression.type": "gzip", "linger.ms": 20,
                     "retries": 2147483647}
        java_ours.update(PROVIDER)
        self.start_load(kafka, node, 1, "ours", java_ours)
        self.wait_recompressed(kafka, kafka.brokers)
        with timed(self.times, "roll onto %s" % target):
            self.roll_off_ours(kafka, stock)
        self.stop_load()
        self.verify_all(consumer, stock)
        return self.report()

    @cluster(num_nodes=5)
    def test_newest_upstream_to_ours_and_back(self):
        """A stock 4.3.2 cluster (one controller, three brokers) under the load of 4.3.2's Java producer,
        librdkafka and a keyed producer, rolled onto ours (controller first, each broker with the provider), our
        features on, our Java producer with the provider; then back onto 4.3.2, brokers first, every setting left
        in place (eight restarts); every acknowledged record read back by three clients. KC_SYSTEST_FULL=1 only."""
        self.setup_run()
        stock = NEWEST["4.3.2"]
        skipped = full_only("the roll of a stock 4.3.2 cluster onto ours and back", 7,
                            "CI runs the roll of ours onto 4.3.2")
        if skipped:
            return skipped
        with timed(self.times, "start cluster"):
            kafka = KafkaService(self.test_context, 4, controllers=1, version=stock)
            controller, brokers = kafka.controllers[0], kafka.brokers
            if not has_provider_framework(controller):
                return {"skipped": "provider framework (KIP-1121) not in this build"}
            kafka.start()
        for n in kafka.nodes:
            m = VERSION.search(kafka.output_since_last_start(n))
            assert m and m.group(1) == "4.3.2", "%s: not stock 4.3.2: %s" % (n.account.hostname, m and m.group(0))
        self.note("stock 4.3.2 cluster: controller %d, brokers %s" % (
            kafka.idx(controller), [kafka.idx(b) for b in brokers]))
        # 4.3.2 defines the bound: its controller takes it on create; ours it refuses
        kafka.create_topics([(TOPIC, 3, 3, dict(TOPIC_CONFIGS, **{"max.decompressed.message.bytes": 1000000})),
                             (KEYED, 2, 2, KEYED_CONFIGS)])
        self.note("stock 4.3.2 controller: %s created with max.decompressed.message.bytes=1000000" % TOPIC)
        ok, refused = self.try_config(kafka, KEYED, KEYED_FEATURES, "stock 4.3.2 controller, alter %s" % KEYED)
        assert not ok, "a stock 4.3.2 controller accepted compaction.compression.type"
        assert "Unknown topic config name: compaction.compression.type" in refused, refused
        self.messages["%s controller: kafka-configs.sh --alter" % stock] = [refused]
        node, consumer = self.make_load(kafka)
        java_stock = {"enable.idempotence": "true", "compression.type": "gzip", "linger.ms": 20,
                      "retries": 2147483647}
        self.start_load(kafka, node, 1, stock, java_stock)
        time.sleep(5)
        with timed(self.times, "roll forward"):
            self.roll(kafka, controller, "ours")
            ok, msg = self.try_config(kafka, KEYED, KEYED_FEATURES, "our controller, 4.3.2 brokers, alter %s" % KEYED)
            assert ok, "our controller refused compaction.compression.type: %s" % msg
            time.sleep(3)
            for b in brokers:
                line = ([l for l in kafka.output_since_last_start(b).splitlines()
                         if "Updating topic %s with new configuration" % KEYED in l] or [""])[-1]
                assert "cleanup.policy -> compact" in line and "compaction.compression.type" not in line, \
                    "stock 4.3.2 broker %d: %s" % (kafka.idx(b), line)
            self.messages["%s broker: topic config it does not know" % stock] = [
                re.sub(r"^\[[^\]]*\]\s*", "", line)[:400]]
            for b in brokers:
                self.roll(kafka, b, "ours", props=dict(PROVIDER))
                assert "Compression provider for gzip" in kafka.output_since_last_start(b), \
                    "broker %d does not name the gzip provider" % kafka.idx(b)
        ok, msg = self.try_config(kafka, TOPIC, TOPIC_FEATURES, "our controller, alter %s" % TOPIC)
        assert ok, msg
        self.stop_load()
        java_ours = dict(java_stock, **PROVIDER)
        self.start_load(kafka, node, 2, "ours", java_ours)
        self.wait_recompressed(kafka, brokers)
        self.stop_load()
        self.verify(consumer, "ours", configs=PROVIDER, what=" on our cluster")
        self.start_load(kafka, node, 3, "ours", java_ours)
        with timed(self.times, "roll back onto 4.3.2"):
            self.roll_off_ours(kafka, stock)
        self.stop_load()
        self.verify_all(consumer, stock)
        return self.report()
