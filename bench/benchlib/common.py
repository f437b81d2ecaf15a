"""Constants and small helpers shared by the driver and the tables (the run's paths are in context.py)."""

import csv
import glob
import os
import platform
import socket
import statistics
import subprocess
import zipfile

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


def clk_tck():
    """Clock ticks per second of /proc's CPU times."""
    return os.sysconf("SC_CLK_TCK")


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


def make_sliced_payload(src, dst, size):
    """Records of `size` bytes cut one after another from src (json-records.ndjson; newlines removed)."""
    with open(src, "rb") as f:
        data = b"".join(line.rstrip(b"\n") for line in f)
    data = data.replace(b"\n", b" ")
    with open(dst, "wb") as f:
        for i in range(0, len(data) - size, size):
            f.write(data[i:i + size] + b"\n")
    return dst


def write_csv(out_dir, name, rows):
    """rows as out_dir/name, one column per key (the comparisons, cmp_* keys, are left out: the report prints them)."""
    if not rows:
        return
    rows = [{k: v for k, v in r.items() if not k.startswith("cmp_")} for r in rows]
    keys = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(os.path.join(out_dir, name), "w", newline="") as f:
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
