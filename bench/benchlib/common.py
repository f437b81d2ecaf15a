"""Paths, constants and small helpers shared by the driver and the tables."""

import csv
import glob
import os
import platform
import socket
import statistics
import subprocess
import time
import zipfile

ROOT = os.environ.get("KC_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("KC_BUILD") or os.path.join(ROOT, "build")
# the distribution's directory, not its .tgz beside it
DIST = os.environ.get("KC_DIST") or (sorted(d for d in glob.glob(os.path.join(BUILD, "dist", "kafka_*"))
                                            if os.path.isdir(d)) or [os.path.join(BUILD, "dist", "missing")])[0]
UPSTREAM = os.environ.get("KC_UPSTREAM") or os.path.join(BUILD, "upstream")
VERSION = os.environ.get("KC_KAFKA_VERSION", "4.3.1")
DIST_VERSION = os.environ.get("KC_DIST_VERSION", VERSION + "-compress.1")
OUT = os.path.join(BUILD, "bench")
WORK = os.path.join(OUT, "work")
LOGS = os.path.join(OUT, "logs")
# The brokers' log dirs: on tmpfs when there is room (no figure depends on the disk), else under WORK.
# KC_BENCH_LOG_DIRS=<dir> chooses. Each measured topic is deleted once its size is read, so tmpfs holds about two runs.
TMPFS_MIN_FREE = 12 * 1024 ** 3


def data_root():
    if os.environ.get("KC_BENCH_LOG_DIRS"):
        return os.environ["KC_BENCH_LOG_DIRS"]
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize >= TMPFS_MIN_FREE:
            return "/dev/shm/kc-bench"
    except OSError:
        pass
    return WORK


DATA_ROOT = data_root()
CLASSES = os.path.join(OUT, "classes")
# the JSON records (tests/data/README.md); KC_BENCH_DATA names another folder holding files of the same names
DATA_DIR = os.path.normpath(os.environ.get("KC_BENCH_DATA", os.path.join(ROOT, "tests", "data")))
JSON = os.path.join(DATA_DIR, "json-records.ndjson")
JSON_LARGE = os.path.join(DATA_DIR, "json-large-records.ndjson")

PROVIDERS = {
    # implementation name -> provider class (KIP-1121 CompressionService)
    "native-gzip": "io.kafkacompress.nativegzip.NativeGzipCompressionService",
    "qat-gzip": "io.kafkacompress.qat.QatGzipCompressionService",
}
# provider names as bench/codec/run.sh writes them in its CSV
CODEC_BENCH_NAMES = {"native": "patched+native-gzip", "qat": "patched+qat-gzip"}
SPI_CLASS = "org/apache/kafka/common/compress/CompressionService.class"

JVM_PERF = ("-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 "
            "-XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true")
BROKER_HEAP = "-Xmx1G -Xms1G"
TOOL_HEAP = "-Xmx512M"
CLK_TCK = os.sysconf("SC_CLK_TCK")

T0 = time.time()


def progress(msg):
    el = int(time.time() - T0)
    print(f"[bench {el // 60:3d}:{el % 60:02d}] {msg}", flush=True)


def first_line(e):
    return (str(e).splitlines() or [repr(e)])[0]


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jar_has(path_glob, entry):
    for jar in glob.glob(path_glob):
        try:
            with zipfile.ZipFile(jar) as z:
                if entry in z.namelist():
                    return jar
        except zipfile.BadZipFile:
            pass
    return None


def java_tool(name):
    return os.path.join(os.environ["JAVA_HOME"], "bin", name) if os.environ.get("JAVA_HOME") else name


def machine_info():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    jv = subprocess.run([java_tool("java"), "-version"], stderr=subprocess.PIPE, text=True).stderr.strip().splitlines()
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) // 1024
    load = os.getloadavg()
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_mb": mem, "kernel": platform.release(),
            "os": platform.platform(), "jdk": " / ".join(jv[:2]), "load_at_start": "%.2f %.2f %.2f" % load}


def data_info(path):
    n, size = 0, 0
    with open(path, "rb") as f:
        for line in f:
            line = line.rstrip(b"\n")
            if line:
                n += 1
                size += len(line)
    return {"file": os.path.basename(path), "records": n, "avg_bytes": size / max(n, 1), "bytes": size}


def make_sliced_payload(dst, size):
    """Records of `size` bytes cut one after another from json-records.ndjson (newlines removed)."""
    with open(JSON, "rb") as f:
        data = b"".join(line.rstrip(b"\n") for line in f)
    data = data.replace(b"\n", b" ")
    with open(dst, "wb") as f:
        for i in range(0, len(data) - size, size):
            f.write(data[i:i + size] + b"\n")
    return dst


def write_csv(name, rows):
    if not rows:
        return
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def md_table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join("" if v is None else str(v) for v in r) + " |")
    return "\n".join(out)


def fmt_int(v):
    return f"{v:,.0f}" if isinstance(v, (int, float)) else (v or "")


def fmt_x(v):
    return f"{v:.2f}x" if isinstance(v, (int, float)) else ""


def level_label(codec, level):
    return codec + (f"-{level}" if level not in (None, "") else "")
