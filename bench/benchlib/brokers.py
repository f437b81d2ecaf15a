"""The implementations compared (stock release jars, this distribution with or without a provider), their
single-node KRaft brokers and their command-line tools."""

import glob
import os
import re
import shutil
import signal
import subprocess
import time
import uuid

from benchlib.common import BROKER_HEAP, JVM_PERF, TOOL_HEAP, clk_tck, free_port, java_tool


def proc_cpu_seconds(pid):
    """utime + stime of a process, from /proc/<pid>/stat (fields 14 and 15), in seconds; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / clk_tck()


class Impl:
    def __init__(self, paths, name, patched, provider=None):
        self.paths = paths              # the run's Paths (context.py): the distribution, the stock jars, the harness
        self.name = name
        self.patched = patched
        self.provider = provider        # provider class or None
        self.status = "ok"
        self.evidence = None

    def provider_props(self):
        if not self.provider:
            return {}
        return {"compression.gzip.provider": self.provider, "compression.gzip.provider.required": "true"}

    def env(self, heap, log_dir):
        env = dict(os.environ)
        env["KAFKA_HEAP_OPTS"] = heap
        env["KAFKA_JVM_PERFORMANCE_OPTS"] = JVM_PERF
        env["LOG_DIR"] = log_dir
        env.pop("CLASSPATH", None)
        env.pop("KAFKA_OPTS", None)
        return env

    def cmd(self, kind, args, heap=TOOL_HEAP, log_dir=None, extra_jvm=""):
        """Command line for a tool/broker: the dist's bin/ scripts, or the same JVM flags on the stock jars."""
        paths = self.paths
        log_dir = log_dir or paths.logs
        scripts = {"broker": "kafka-server-start.sh", "storage": "kafka-storage.sh",
                   "perf": "kafka-producer-perf-test.sh", "consumer-perf": "kafka-consumer-perf-test.sh",
                   "topics": "kafka-topics.sh",
                   "configs": "kafka-configs.sh", "run": "kafka-run-class.sh"}
        classes = {"broker": "kafka.Kafka", "storage": "kafka.tools.StorageTool",
                   "perf": "org.apache.kafka.tools.ProducerPerformance",
                   "consumer-perf": "org.apache.kafka.tools.ConsumerPerformance",
                   "topics": "org.apache.kafka.tools.TopicCommand", "configs": "kafka.admin.ConfigCommand"}
        env = self.env(heap, log_dir)
        log4j = os.path.join(paths.dist, "config", "log4j2.yaml" if kind == "broker" else "tools-log4j2.yaml")
        env["KAFKA_LOG4J_OPTS"] = f"-Dlog4j2.configurationFile={log4j}"
        if extra_jvm:
            env["KAFKA_OPTS"] = extra_jvm
        if self.patched:
            if kind == "run":
                env["CLASSPATH"] = paths.classes
            return [os.path.join(paths.dist, "bin", scripts[kind])] + args, env
        cls = classes.get(kind)
        cp = os.path.join(paths.upstream, "libs", "*")
        if kind == "run":
            cp = paths.classes + ":" + cp
            cls = args[0]
            args = args[1:]
        java = java_tool("java")
        jmx = ("-Dcom.sun.management.jmxremote=true -Dcom.sun.management.jmxremote.authenticate=false "
               "-Dcom.sun.management.jmxremote.ssl=false")
        cmd = [java] + heap.split() + JVM_PERF.split() + jmx.split() + [
            f"-Dkafka.logs.dir={log_dir}", f"-Dlog4j2.configurationFile={log4j}", "-cp", cp]
        cmd += extra_jvm.split() + [cls] + args
        return cmd, env


def log_mark(path):
    """Where the broker log file PATH (server.log, log-cleaner.log) stands now, for log_text: its size and the files
    log4j2 has rolled it into so far."""
    return os.path.getsize(path) if os.path.exists(path) else 0, frozenset(glob.glob(path + ".*"))


def log_text(path, mark=(0, frozenset())):
    """The text of the broker log file PATH written since MARK (log_mark), oldest first; without MARK all of it.
    Kafka's log4j2.yaml rolls its log files every hour (PATH.yyyy-MM-dd-HH): text written since the mark may be in a
    file rolled since, the first of which starts with the text that was there at the mark."""
    offset, rolled = mark
    text = ""
    for part in sorted(set(glob.glob(path + ".*")) - rolled) + [path]:
        if os.path.exists(part):
            with open(part, "rb") as f:
                f.seek(offset)
                text += f.read().decode("utf-8", "replace")
        offset = 0
    return text


def run(cmd, env, log, timeout=900, check=True):
    with open(log, "a") as f:
        f.write("\n$ " + " ".join(cmd) + "\n")
        f.flush()
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        f.write(p.stdout)
    if check and p.returncode != 0:
        raise RuntimeError(f"command failed ({p.returncode}), see {log}: {' '.join(cmd[:3])} ...\n" + p.stdout[-2000:])
    return p.stdout


def run_stream(cmd, env, log, on_line, timeout=3600, on_start=None):
    """Like run(), but hands each output line to on_line as it comes (progress during long runs, CPU samples at the
    tool's own marks); on_start gets the Popen (its pid is the JVM's: the bin/ scripts exec java)."""
    out = []
    deadline = time.time() + timeout
    with open(log, "a") as f:
        f.write("\n$ " + " ".join(cmd) + "\n")
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            if on_start:
                on_start(p)
            for line in p.stdout:
                f.write(line)
                out.append(line)
                on_line(line.rstrip("\n"))
                if time.time() > deadline:
                    p.kill()
        except BaseException:
            p.kill()    # the bench was interrupted: no producer left running behind it
            raise
        rc = p.wait()
    if rc != 0:
        raise RuntimeError(f"command failed ({rc}), see {log}\n" + "".join(out[-20:]))
    return "".join(out)


class Broker:
    def __init__(self, ctx, impl, tag, extra=None, jvm=""):
        self.ctx = ctx                  # the run's Context (context.py): its paths, memory settler, noise log
        self.impl = impl
        self.tag = tag
        self.jvm = jvm                  # extra JVM options of the broker (KAFKA_OPTS)
        self.dir = os.path.join(ctx.paths.work, tag)
        self.port = free_port()
        self.cport = free_port()
        self.extra = dict(extra or {})
        self.proc = None
        self.log = os.path.join(ctx.paths.logs, f"broker-{tag}.out")

    @property
    def bootstrap(self):
        return f"127.0.0.1:{self.port}"

    def start(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.logdir = os.path.join(self.dir, "logs")
        self.datadir = os.path.join(self.ctx.paths.data_root, self.tag, "data")
        shutil.rmtree(self.datadir, ignore_errors=True)
        props = {
            "process.roles": "broker,controller", "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.cport}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.cport}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER", "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": self.datadir, "num.partitions": "1",
            "num.network.threads": "3", "num.io.threads": "8",
            "offsets.topic.replication.factor": "1", "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1", "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1", "group.initial.rebalance.delay.ms": "0",
            "log.segment.bytes": "1073741824", "log.cleaner.backoff.ms": "500",
            # a measured run's topic is deleted once its size is read (delete_topic): files go a second later
            # (the broker-level name of the topic config file.delete.delay.ms; the default is 60 s)
            "log.segment.delete.delay.ms": "1000",
            "auto.create.topics.enable": "true",
        }
        props.update(self.impl.provider_props())
        props.update(self.extra)
        self.props_file = os.path.join(self.dir, "server.properties")
        with open(self.props_file, "w") as f:
            for k, v in props.items():
                f.write(f"{k}={v}\n")
        cmd, env = self.impl.cmd("storage", ["format", "-t", str(uuid.uuid4()), "-c", self.props_file],
                                 log_dir=self.logdir)
        run(cmd, env, self.log, timeout=180)
        return self.launch()

    def restart(self):
        """A clean shutdown (SIGTERM) and a start on the same data and settings; returns the seconds the start took,
        from the launch to the broker's "started" line."""
        self.stop(keep_data=True)
        t0 = time.time()
        self.launch()
        return time.time() - t0

    def launch(self):
        """Starts the broker on its formatted data directory and waits for its "started" line."""
        start = os.path.getsize(self.log) if os.path.exists(self.log) else 0
        server_log = os.path.join(self.logdir, "server.log")
        server_mark = log_mark(server_log)
        cmd, env = self.impl.cmd("broker", [self.props_file], heap=BROKER_HEAP, log_dir=self.logdir,
                                 extra_jvm=self.jvm)
        out = open(self.log, "a")
        self.proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 180
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker {self.tag} exited ({self.proc.returncode}); see {self.log}")
            text = log_text(server_log, server_mark)
            with open(self.log, errors="replace") as f:     # the broker's stdout, ours: appended to, never rolled
                f.seek(start)
                text += f.read()
            if "Kafka Server started" in text or "started (kafka.server.KafkaRaftServer)" in text:
                m = re.search(r"Compression provider for gzip: ([^\n]*?) \(class ", text)
                if m:
                    self.impl.evidence = m.group(1)   # the broker's own start-up line: the provider really is in use
                return self
            time.sleep(0.25)
        raise RuntimeError(f"broker {self.tag} did not start in 180 s; see {self.log}")

    def stop(self, keep_data=False):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if not keep_data and self.ctx.paths.data_root != self.ctx.paths.work and getattr(self, "datadir", None):
            shutil.rmtree(self.datadir, ignore_errors=True)     # tmpfs is memory: give it back

    def prepare_run(self, need=4 * 1024 ** 3, timeout=30):
        """Before a run: the deleted topics' files go log.segment.delete.delay.ms after the delete (the broker's first
        deletion pass runs 30 s after it starts). Wait until they are gone, so that the memory they free is not
        handed to the measured run, and on tmpfs until the run has the room it needs; then fill free memory with
        page cache (memory.py)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            st = os.statvfs(self.datadir)
            if st.f_bavail * st.f_frsize >= need and not glob.glob(os.path.join(self.datadir, "*-delete")):
                break
            time.sleep(0.5)
        self.ctx.memory.settle()

    def cpu_seconds(self):
        return proc_cpu_seconds(self.proc.pid)

    def topic_bytes(self, topic):
        total = 0
        for fn in glob.glob(os.path.join(self.datadir, f"{topic}-*", "*.log")):
            total += os.path.getsize(fn)
        return total

    def tool(self, kind, args, timeout=300):
        cmd, env = self.impl.cmd(kind, args)
        return run(cmd, env, os.path.join(self.ctx.paths.logs, f"tools-{self.tag}.log"), timeout=timeout)

    def create_topic(self, topic, configs):
        args = ["--bootstrap-server", self.bootstrap, "--create", "--topic", topic,
                "--partitions", "1", "--replication-factor", "1"]
        for k, v in configs.items():
            args += ["--config", f"{k}={v}"]
        self.tool("topics", args)

    def delete_topic(self, topic):
        """A quick run writes tens of GB (compression.type=none at 300 MB/s): each measured topic is deleted once its
        bytes on disk are read, so that the run fits on the disk and the page cache holds the current run."""
        try:
            self.tool("topics", ["--bootstrap-server", self.bootstrap, "--delete", "--topic", topic])
        except Exception as e:  # noqa: BLE001 - the run's figures stand; only the room is not given back
            self.ctx.progress(f"could not delete topic {topic} after its run: {str(e).splitlines()[0]}")

    def alter_topic(self, topic, configs):
        self.tool("configs", ["--bootstrap-server", self.bootstrap, "--alter", "--entity-type", "topics",
                              "--entity-name", topic, "--add-config",
                              ",".join(f"{k}={v}" for k, v in configs.items())])
