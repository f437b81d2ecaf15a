"""Where the time goes: JFR recordings of the broker and the producer during one run, CPU per thread from /proc,
and the share of producer CPU spent compressing (the Amdahl input for the engine limits)."""

import glob
import os
import re
import subprocess
import threading
import time

from benchlib.common import clk_tck, java_tool, md_table
from benchlib.runs import produce


COMPRESSING = "gzip compression (Deflater or CRC32)"
CATEGORIES = [
    (COMPRESSING, r"java\.util\.zip\.Deflater|java\.util\.zip\.CRC32"),
    ("gzip deflate (java.util.zip.Deflater)", r"java\.util\.zip\.Deflater"),
    ("gzip inflate (java.util.zip.Inflater)", r"java\.util\.zip\.Inflater"),
    ("CRC32", r"java\.util\.zip\.CRC32"),
    ("provider code (io.kafkacompress)", r"io\.kafkacompress\."),
    ("zstd / lz4 / snappy", r"com\.github\.luben|net\.jpountz|org\.xerial"),
    ("record building (MemoryRecordsBuilder / DefaultRecord.writeTo)", r"MemoryRecordsBuilder|DefaultRecord\.writeTo"),
    ("broker validation (LogValidator)", r"LogValidator"),
    ("log append (UnifiedLog / LogSegment)", r"UnifiedLog\.append|LogSegment\.append"),
    ("network (SocketChannel / Selector)", r"sun\.nio\.ch|org\.apache\.kafka\.common\.network"),
]


# Native frames where a thread waits rather than works (JFR's native samples include blocked threads).
NATIVE_WAITS = re.compile(r"EPoll\.wait|Net\.accept|Net\.poll|Object\.wait|Unsafe\.park|Thread\.sleep|"
                          r"ReferenceQueue|socketAccept|FileDispatcherImpl\.read0|SocketDispatcher\.read0|"
                          r"IOUtil\.drain|EventFD\.|Net\.connect0")
# sampling periods of JFR's "profile" settings (JDK 17-25): Java code every 10 ms, native code every 20 ms
JFR_PERIOD_MS = {"jdk.ExecutionSample": 10, "jdk.NativeMethodSample": 20}


def jfr_events(jfr, fn, events, depth=64):
    """Events of a JFR recording as dicts: name, thread, ms (duration, if any), frames (top first)."""
    p = subprocess.run([jfr, "print", "--events", ",".join(events), "--stack-depth", str(depth), fn],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = []
    for block in re.split(r"\n(?=jdk\.\w+ \{)", "\n" + p.stdout):
        m = re.match(r"\s*(jdk\.\w+) \{", block)
        if not m:
            continue
        thread = re.search(r"(?:sampledThread|eventThread) = \"([^\"]*)\"", block)
        dur = re.search(r"duration = ([\d.]+) (ms|s|us)", block)
        ms = 0.0
        if dur:
            ms = float(dur.group(1)) * {"ms": 1, "s": 1000, "us": 0.001}[dur.group(2)]
        frames = []
        if "stackTrace = [" in block:
            frames = [re.sub(r"\s+line:.*", "", x.strip())
                      for x in block.split("stackTrace = [", 1)[1].split("\n  ]", 1)[0].splitlines()]
            frames = [f for f in frames if f and f != "..."]
        out.append({"name": m.group(1), "thread": thread.group(1) if thread else "?", "ms": ms, "frames": frames})
    return out


def thread_group(name):
    """Kafka's thread names without their numbers / client ids."""
    name = re.sub(r" \| .*", "", name)
    return re.sub(r"[-_#]?\d+$", "", name) or name


def analyze_jfr(jfr, fn):
    """Where a process spent its time: categories and top frames of the samples that ran code (Java samples plus
    native samples that were not waiting, each weighted by its sampling period), time per thread, and time threads
    spent blocked entering monitors (JFR records those of 20 ms or more)."""
    evs = jfr_events(jfr, fn, ["jdk.ExecutionSample", "jdk.NativeMethodSample", "jdk.JavaMonitorEnter"])
    counts, blocked = {}, {}
    total_ms, samples = 0.0, 0
    for ev in evs:
        if ev["name"] == "jdk.JavaMonitorEnter":
            key = (thread_group(ev["thread"]), next((f for f in ev["frames"] if "org.apache.kafka" in f),
                                                   ev["frames"][0] if ev["frames"] else "?"))
            blocked[key] = blocked.get(key, 0.0) + ev["ms"]
            continue
        frames = ev["frames"]
        if not frames or (ev["name"] == "jdk.NativeMethodSample" and NATIVE_WAITS.search(frames[0])):
            continue
        w = JFR_PERIOD_MS[ev["name"]]
        samples += 1
        total_ms += w
        keys = {"top frame: " + frames[0] + (" (native)" if ev["name"] == "jdk.NativeMethodSample" else "")}
        for cat, pat in CATEGORIES:
            if any(re.search(pat, f) for f in frames):
                keys.add("in stack: " + cat)
        for k in keys:
            counts[k] = counts.get(k, 0.0) + w
    cats = sorted([kv for kv in counts.items() if kv[0].startswith("in stack")], key=lambda kv: -kv[1])
    tops = sorted([kv for kv in counts.items() if kv[0].startswith("top")], key=lambda kv: -kv[1])[:10]
    return {"samples": samples, "total_ms": total_ms, "rows": cats + tops,
            "blocked": sorted([kv for kv in blocked.items() if kv[1] >= 50], key=lambda kv: -kv[1])[:5]}


# /proc shows thread names cut to 15 characters
COMM_NAMES = {"java": "main", "kafka-producer-": "kafka-producer-network-thread (sender)",
              "data-plane-kafk": "data-plane-kafka-* (request handlers, network)",
              "C2 CompilerThre": "JIT compiler (C2)", "C1 CompilerThre": "JIT compiler (C1)"}


def thread_cpu(pid):
    """CPU seconds (user + system) per thread group of a process, from /proc."""
    tick = clk_tck()
    out = {}
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(os.path.join(task, "comm")) as f:
                name = f.read().strip()
            with open(os.path.join(task, "stat")) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = COMM_NAMES.get(name, thread_group(name))
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


class ThreadCpuWatch:
    """Per-thread CPU of the producer (found by its topic on the command line) and of the broker while a run lasts:
    share of one core per thread group between the first snapshot, taken once the producer has run for
    SKIP_S seconds (start-up and JIT warm-up), and the last one."""

    SKIP_S = 3

    def __init__(self, broker_pid, marker):
        self.broker_pid, self.marker = broker_pid, marker
        self.first, self.last = {}, {}
        self.stop = False
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def producer_pid(self):
        for d in glob.glob("/proc/[0-9]*"):
            try:
                with open(os.path.join(d, "cmdline"), "rb") as f:
                    cmd = f.read()
            except OSError:
                continue
            if b"KcBench" in cmd and self.marker.encode() in cmd:
                return int(os.path.basename(d))
        return None

    def loop(self):
        pid = None
        seen = None
        while not self.stop:
            pid = pid or self.producer_pid()
            seen = seen or (pid and time.time())
            if pid and time.time() - seen >= self.SKIP_S:
                snap = (time.time(), {"producer": thread_cpu(pid), "broker": thread_cpu(self.broker_pid)})
                if snap[1]["producer"]:
                    self.first = self.first or snap
                    self.last = snap
            time.sleep(0.5)

    def result(self):
        self.stop = True
        self.thread.join(timeout=5)
        if not self.first or self.last[0] - self.first[0] < 1:
            return {}
        wall = self.last[0] - self.first[0]
        res = {}
        for who in ("producer", "broker"):
            a, b = self.first[1][who], self.last[1][who]
            shares = {t: (b[t] - a.get(t, 0.0)) / wall for t in b}
            res[who] = {"wall_s": wall, "total": sum(shares.values()),
                        "threads": sorted([kv for kv in shares.items() if kv[1] >= 0.02], key=lambda kv: -kv[1])[:6]}
        return res


def jfr_profile(broker, payload, warmup_s, seconds, props, tag):
    """JFR recordings of the broker and of the producer during one run, analysed by analyze_jfr."""
    jfr_dir = os.path.join(broker.ctx.paths.out, "profile")
    os.makedirs(jfr_dir, exist_ok=True)
    bfile = os.path.join(jfr_dir, f"{tag}-broker.jfr")
    pfile = os.path.join(jfr_dir, f"{tag}-producer.jfr")
    jcmd, jfr = java_tool("jcmd"), java_tool("jfr")
    subprocess.run([jcmd, str(broker.proc.pid), "JFR.start", "name=bench", "settings=profile"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    topic = f"prof_{tag}".replace("-", "_").replace("+", "_")
    watch = ThreadCpuWatch(broker.proc.pid, topic)
    try:
        result = produce(broker, topic, warmup_s, seconds, props, payload,
                         extra_jvm=f"-XX:StartFlightRecording=filename={pfile},settings=profile")
    finally:
        cpu = watch.result()
        subprocess.run([jcmd, str(broker.proc.pid), "JFR.stop", "name=bench", f"filename={bfile}"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data = {who: analyze_jfr(jfr, fn) for who, fn in (("broker", bfile), ("producer", pfile)) if os.path.exists(fn)}
    for who in data:
        data[who]["cpu"] = cpu.get(who)
    data["perf"] = result
    return data


def compressing_share(profile_data, who="producer"):
    """Share of a process's sampled CPU with the built-in gzip codec (Deflater or CRC32) in the stack."""
    a = (profile_data or {}).get(who)
    if not a or not a["total_ms"]:
        return None
    return dict(a["rows"]).get("in stack: " + COMPRESSING, 0.0) / a["total_ms"]


def profile_markdown(profile):
    """The report's "Where the time goes" section."""
    data = dict(profile["data"])
    run = data.pop("perf", None)
    L = [f"### Where the time goes: {profile['label']}\n",
         f"One `{profile['label']}` run with JFR (`settings=profile`) in the producer and the broker"
         + (f" ({run['records_s']:,.0f} records/s, p99 {run['p99_ms']:.0f} ms, producer {run['producer_ms_per_mb']:.1f} / "
            f"broker {run['broker_ms_per_mb']:.1f} CPU ms/MB)" if run else "")
         + "; recordings in `build/bench/profile/`. CPU per thread is read from `/proc` during the run after "
         "its first 3 s (share of one core; 2 cores = 200%); in the producer, `main` is the harness's only "
         "sending thread (it serializes and appends records, and closes batches as they fill). The sample tables "
         "weight Java samples (every 10 ms) and native samples (every 20 ms: JNI code such as the providers' "
         "engines, which Java samples never see; JFR takes one native sample per period across all threads, so "
         "native code is under-counted) of threads that ran code; "
         "a sample counts once per line it matches, so shares overlap.\n"]
    for who, a in data.items():
        cpu = a.get("cpu")
        L.append(f"**{who}**" + (f": {cpu['total'] * 100:.0f}% CPU over {cpu['wall_s']:.0f} s, by thread: "
                                  + ", ".join(f"`{t}` {v * 100:.0f}%" for t, v in cpu["threads"]) if cpu else "")
                 + f" ({a['samples']} samples):\n")
        L.append(md_table(["share of samples", "where"],
                          [[f"{c / max(a['total_ms'], 1) * 100:.1f}%", f"`{f}`"] for f, c in a["rows"]]))
        L.append("")
        if a["blocked"]:
            L.append("Blocked entering a monitor (JFR records waits of 20 ms or more): " + "; ".join(
                f"`{t}` {ms / 1000:.1f} s in `{f}`" for (t, f), ms in a["blocked"]) + ".\n")
    return "\n".join(L)
