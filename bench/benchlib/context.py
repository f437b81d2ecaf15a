"""One benchmark run's context: where it reads and writes (Paths, from the KC_* variables bench.sh sets) and what it
has measured so far (Context: the settings, the clock of the progress lines, the machine noise log, the memory
settler, each table's state). bench.py's main() builds one Context and hands it to the tables, the brokers and the
report; no module keeps run state of its own, and importing one reads nothing."""

import glob
import os
import time
from types import SimpleNamespace

from benchlib.memory import MemorySettler
from benchlib.noise import NoiseLog

# The brokers' log dirs: on tmpfs when there is room (no figure depends on the disk), else under work/.
# KC_BENCH_LOG_DIRS=<dir> chooses. Each measured topic is deleted once its size is read, so tmpfs holds about two runs.
TMPFS_MIN_FREE = 12 * 1024 ** 3


def data_root(env, work):
    if env.get("KC_BENCH_LOG_DIRS"):
        return env["KC_BENCH_LOG_DIRS"]
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize >= TMPFS_MIN_FREE:
            return "/dev/shm/kc-bench"
    except OSError:
        pass
    return work


class Paths:
    """The directories and files of a run, read once from the environment (bench.sh sets KC_ROOT, KC_BUILD, KC_DIST,
    KC_UPSTREAM; without them, the checkout this file is in)."""

    def __init__(self, env):
        self.root = env.get("KC_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.build = env.get("KC_BUILD") or os.path.join(self.root, "build")
        # the distribution's directory, not its .tgz beside it
        self.dist = env.get("KC_DIST") or (sorted(d for d in glob.glob(os.path.join(self.build, "dist", "kafka_*"))
                                                  if os.path.isdir(d)) or [os.path.join(self.build, "dist", "missing")])[0]
        self.upstream = env.get("KC_UPSTREAM") or os.path.join(self.build, "upstream")
        self.version = env.get("KC_KAFKA_VERSION", "4.3.1")
        self.dist_version = env.get("KC_DIST_VERSION", self.version + "-compress.1")
        self.out = os.path.join(self.build, "bench")
        self.work = os.path.join(self.out, "work")
        self.logs = os.path.join(self.out, "logs")
        self.data_root = data_root(env, self.work)
        self.classes = os.path.join(self.out, "classes")
        # the JSON records (tests/data/README.md); KC_BENCH_DATA names another folder holding files of the same names
        self.data_dir = os.path.normpath(env.get("KC_BENCH_DATA", os.path.join(self.root, "tests", "data")))
        self.json = os.path.join(self.data_dir, "json-records.ndjson")
        self.json_large = os.path.join(self.data_dir, "json-large-records.ndjson")


class Context:
    """What one run passes around: cfg (the settings: bench.py's arguments and settings()), paths, noise (NoiseLog),
    memory (MemorySettler), skipped (table label -> why it has no rows) and state (each table module's own results
    so far, under its module name: the module's state(ctx) creates and returns it)."""

    def __init__(self, cfg, paths):
        self.cfg = cfg
        self.paths = paths
        self.t0 = time.time()
        self.noise = NoiseLog()
        self.memory = MemorySettler(os.path.join(paths.out, "settle-memory.sparse"))
        self.skipped = {}
        self.state = {}

    def progress(self, msg):
        el = int(time.time() - self.t0)
        print(f"[bench {el // 60:3d}:{el % 60:02d}] {msg}", flush=True)

    def command(self):
        """The command line that produced this run's report."""
        cfg = self.cfg
        return ("./build.sh bench" + (" --quick" if cfg.quick else "")
                + (f" --only {cfg.only}" if set(cfg.only.split(",")) != set("12345678") else "")
                + (f" --sla-ms {cfg.sla_arg}" if cfg.sla_arg is not None else "")
                + (f" --t7-seconds {cfg.t7_seconds_arg}" if cfg.t7_seconds_arg else "")
                + (f" --t7-pairs {cfg.t7_pairs_arg}" if cfg.t7_pairs_arg else "")
                + (" --t7-broker-provider" if cfg.t7_broker_provider else ""))


def standalone(env):
    """The Paths and Context of a standalone benchmark script (bench/cold, bench/scale, bench/compare): the
    checkout's paths from ENV, its work and log folders made, and no bench.py settings."""
    paths = Paths(env)
    for d in (paths.work, paths.logs):
        os.makedirs(d, exist_ok=True)
    return paths, Context(SimpleNamespace(quick=False, only="", sla_arg=None), paths)

