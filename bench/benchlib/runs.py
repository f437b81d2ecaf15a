"""Measured producer runs and the statistics every comparison uses.

produce(): one KcBench throughput run (a KafkaProducer of the implementation's own client jars), with the CPU time
(utime + stime from /proc/<pid>/stat) of the producer JVM and of the broker JVM read when the warm-up records are
flushed and again when the last record is acknowledged, so the figures cover the steady state only.

pairs(): interleaved runs, stock and the other implementations adjacent in time, order reversed every other pair.
compare(): the median of the per-pair ratios with its min-max band, and whether it is stable yet."""

import os
import time

from benchlib.brokers import proc_cpu_seconds, run_stream
from benchlib.common import median

MIN_PAIRS = 3          # fewer pairs than this: no verdict at all
STABLE_WITHIN = 0.03   # leaving out the last pair moves the median by at most this much: "stable"


def produce(broker, topic, warmup_s, seconds, props, payload, extra_jvm="", timeout=900, rate=None, threads=None,
            impl=None):
    """One producer run: warmup_s seconds of warm-up (discarded), then `seconds` measured; returns records/s, latency,
    CPU ms per MB (10^6 B of records) of producer and broker in the measured window, and bytes on disk per byte
    of records sent (warm-up included: the topic holds both). rate: records/s, paced (default: unthrottled).
    threads: one producer shared by that many sending threads (`KcBench threads`, table 6), which also returns the
    producer's own metrics (`metrics`: name -> value). impl: the producer's implementation (default: the broker's)."""
    impl = impl or broker.impl
    ctx = broker.ctx
    props = dict(props)
    props.update(impl.provider_props())
    kvs = ",".join(f"{k}={v}" for k, v in props.items())
    if threads:
        args = ["KcBench", "threads", broker.bootstrap, topic, kvs, payload, str(threads), str(warmup_s), str(seconds)]
    else:
        args = ["KcBench", "throughput", broker.bootstrap, topic, kvs, payload, str(warmup_s),
                str(seconds)] + ([str(rate)] if rate else [])
    cmd, env = impl.cmd("run", args, extra_jvm=extra_jvm)
    st = {}
    broker.prepare_run()

    def sample():
        return time.time(), proc_cpu_seconds(st["pid"]), broker.cpu_seconds()

    def on_start(p):
        st["pid"] = p.pid

    def on_line(line):
        if line.startswith("steady,"):
            st["t0"] = sample()
            f = line.split(",")
            st["warm"] = {"records": int(f[1]), "bytes": int(f[2]), "seconds": float(f[3])}
            st["noise"] = ctx.noise.start()
        elif line.startswith("provider,") and len(line.split(",")) == 4:
            # the provider's own counters in the producer JVM: evidence it compressed, and how often it fell back
            f = line.split(",")
            st["provider"] = {"codec": f[1], "batches": float(f[2]), "fallbacks": float(f[3])}
        elif line.startswith("metric,") and len(line.split(",")) == 4:
            f = line.split(",")
            st.setdefault("metrics", {})[f[2]] = float(f[3])
        elif line.startswith("done,"):
            st["t1"] = sample()
            f = line.split(",")
            st["done"] = {"records": int(f[1]), "bytes": int(f[2]), "seconds": float(f[3]),
                          "records_s": float(f[4]), "p50_ms": float(f[5]), "p99_ms": float(f[6]),
                          "avg_ms": float(f[7])}
    log = os.path.join(ctx.paths.logs, f"produce-{broker.tag}.log")
    run_stream(cmd, env, log, on_line, timeout=timeout, on_start=on_start)
    if "done" not in st or "t0" not in st or st["t0"][1] is None or st["t1"][1] is None:
        raise RuntimeError(f"no steady-state marks from KcBench throughput; see {log}")
    d = st["done"]
    (ta, pa, ba), (tb, pb, bb) = st["t0"], st["t1"]
    mb = d["bytes"] / 1e6
    ctx.noise.stop(st["noise"], (pb - pa) + (bb - ba), tb - ta)
    time.sleep(0.5)
    disk = broker.topic_bytes(topic)
    broker.delete_topic(topic)
    raw = st["warm"]["bytes"] + d["bytes"]
    return dict(d, mb=mb, mb_s=mb / d["seconds"], window_s=tb - ta, warmup_records=st["warm"]["records"],
                warmup_s=st["warm"]["seconds"], producer_cpu_s=pb - pa, broker_cpu_s=bb - ba,
                producer_ms_per_mb=1000 * (pb - pa) / mb, broker_ms_per_mb=1000 * (bb - ba) / mb,
                disk_bytes=disk, size_ratio=disk / raw if raw else None,
                provider_batches=st.get("provider", {}).get("batches"),
                provider_fallbacks=st.get("provider", {}).get("fallbacks"), metrics=st.get("metrics", {}))


def pair_order(impls, pair_index):
    """A B, B A, A B ...: each pair adjacent in time; reversing the order every other pair keeps a drift (or a gain
    from running second) from favouring one side."""
    return list(impls) if pair_index % 2 == 0 else list(reversed(impls))


def ratios(a_samples, b_samples, key):
    """Per-pair ratios b/a (pair i of b against pair i of a)."""
    out = []
    for a, b in zip(a_samples, b_samples):
        if a and b and a.get(key) and b.get(key) is not None:
            out.append(b[key] / a[key])
    return out


def compare(rs):
    """Median of per-pair ratios, its min-max band, and stability."""
    if not rs:
        return None
    med = median(rs)
    stable = len(rs) >= MIN_PAIRS and abs(median(rs[:-1]) / med - 1) <= STABLE_WITHIN
    return {"median": med, "min": min(rs), "max": max(rs), "n": len(rs), "ratios": [round(x, 4) for x in rs],
            "stable": stable}


def verdict(c, higher_is_better, trusted=True, words=("gain", "loss"), floor=(1.0, 1.0)):
    """The word a report prints for a comparison. A band that includes 1.0 is never a gain or a loss, and neither is
    one that overlaps `floor`, the band the calibration row (identical code on both sides) showed for this figure:
    with 3 pairs, pure noise puts all three ratios on one side of 1.0 one time in four."""
    if not c:
        return "not measured"
    if c["n"] < MIN_PAIRS:
        return f"not judged ({c['n']} pair{'s' if c['n'] != 1 else ''}, {MIN_PAIRS} needed)"
    if not trusted:
        return "not judged (run too noisy, see calibration)"
    if c["min"] <= max(1.0, floor[1]) and c["max"] >= min(1.0, floor[0]):
        return "no difference measured"
    better = (c["median"] > 1.0) == higher_is_better
    return words[0] if better else words[1]


def fmt_band(c):
    return f"{c['median']:.2f}x [{c['min']:.2f}-{c['max']:.2f}]" if c else ""


def fmt_cmp(c, higher_is_better, trusted=True, words=("gain", "loss"), floor=(1.0, 1.0)):
    if not c:
        return ""
    txt = f"{fmt_band(c)} {verdict(c, higher_is_better, trusted, words, floor)}"
    if c["n"] >= MIN_PAIRS and not c["stable"]:
        txt += " (not yet stable)"
    return txt


def run_pairs(ctx, label, impls, brokers, n_pairs, one_run, done_counter=None):
    """Runs one_run(impl, broker, pair_index) for n_pairs interleaved pairs; returns {impl name: [sample or None]}."""
    samples = {i.name: [] for i in impls}
    for p in range(n_pairs):
        for impl in pair_order(impls, p):
            try:
                r = one_run(impl, brokers[impl.name], p)
            except Exception as e:  # noqa: BLE001 - recorded in the report as a missing sample
                ctx.progress(f"  {label} {impl.name} pair {p + 1}: FAILED {str(e).splitlines()[0] if str(e) else e!r}")
                r = None
            samples[impl.name].append(r)
            if done_counter is not None:
                done_counter[0] += 1
            if r:
                ctx.progress(f"{label} {impl.name} pair {p + 1}/{n_pairs}"
                         + (f" [{done_counter[0]}/{done_counter[1]}]" if done_counter else "")
                         + f": {r['records_s']:,.0f} rec/s, producer {r['producer_ms_per_mb']:.1f} / broker "
                         f"{r['broker_ms_per_mb']:.1f} CPU ms/MB, p99 {r['p99_ms']:.0f} ms, {r['window_s']:.1f} s"
                         + (f", provider {r['provider_batches']:,.0f} batches / {r['provider_fallbacks']:,.0f} "
                            f"fallbacks" if r.get("provider_batches") is not None else ""))
    return samples


def summarize(samples, keys=("records_s", "producer_ms_per_mb", "broker_ms_per_mb", "p50_ms", "p99_ms", "avg_ms",
                             "disk_bytes", "size_ratio", "window_s", "mb", "records", "provider_batches",
                             "provider_fallbacks")):
    ok = [s for s in samples if s]
    if not ok:
        return None
    out = {"runs": len(ok)}
    for k in keys:
        vals = [s[k] for s in ok if s.get(k) is not None]
        out[k] = median(vals) if vals else None
    return out
