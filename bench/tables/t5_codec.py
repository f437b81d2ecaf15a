"""Table 5, the providers' codec micro-benchmark (bench/codec/run.sh, run by bench.sh before this driver), and the
engine limits that follow from it: each provider's compression speed over the built-in codec (zlib) per level on
this CPU, and, with the share of producer CPU the built-in codec spends compressing (from the JFR profile), the
Amdahl bound on what the provider can save end to end."""

import csv
import math
import os

from benchlib.common import CODEC_BENCH_NAMES, md_table


def _csv(ctx, columns):
    """{(impl name, level, batch bytes): tuple of those columns as floats} from bench/codec's CSV of this run
    (build/bench/codec/results.csv)."""
    out = {}
    path = os.path.join(ctx.paths.out, "codec", "results.csv")
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for r in csv.DictReader(f):
            try:
                out[(CODEC_BENCH_NAMES.get(r["provider"], r["provider"]), int(r["level"]), int(r["batch_bytes"]))] = \
                    tuple(float(r[c]) for c in columns)
            except (KeyError, ValueError):
                continue
    return out


def speedups(ctx):
    """{(impl name, level, batch bytes): compress speed over the built-in codec} from bench/codec's CSV of this run."""
    return {k: v[0] for k, v in _csv(ctx, ("compress_speedup",)).items()}


def speedup(ctx, impl, level, batch=1048576):
    s = speedups(ctx)
    return s.get((impl, level, batch)) or s.get((impl, level, max((k[2] for k in s if k[:2] == (impl, level)),
                                                                   default=0)))


def decompress_speeds(ctx):
    """{(impl name, level, batch bytes): (decompress speed over the built-in codec, built-in MB/s)} from bench/codec's
    CSV of this run (MB of uncompressed bytes per second, in process)."""
    return _csv(ctx, ("decompress_speedup", "builtin_decompress_mbps"))


def decompress_bound(ctx, impl, level, stock_ms_per_mb, batch=1048576):
    """The best a provider can do on a process that decompresses gzip (consumer, broker validating): the built-in
    codec's decompression costs 1000 / (its MB/s) CPU ms per MB (table 5, in process), its share of the stock
    process's measured CPU per MB is what a faster inflate can cut, and Amdahl gives the bound on CPU per MB vs
    stock. None when table 5 has no row for this provider and level."""
    return _bound(decompress_speeds(ctx), impl, level, stock_ms_per_mb, batch, "decompression", "inflate")


def compress_bound(ctx, impl, level, stock_ms_per_mb, batch=1048576):
    """The same for a broker that recompresses into gzip (lz4 batches into a gzip topic): what a faster deflate can
    cut is the built-in codec's compression, 1000 / (its MB/s in table 5) CPU ms per MB."""
    return _bound(_csv(ctx, ("compress_speedup", "builtin_compress_mbps")), impl, level, stock_ms_per_mb, batch,
                  "compression", "deflate")


def _bound(speeds, impl, level, stock_ms_per_mb, batch, what, engine):
    """Amdahl on table 5's (speed over the built-in codec, built-in MB/s) for impl and level at the batch size it
    measured nearest to batch (it measures 16 KiB and 1 MiB)."""
    sizes = [k[2] for k in speeds if k[:2] == (impl, level)]
    if not sizes or not stock_ms_per_mb:
        return None
    near = min(sizes, key=lambda b: abs(math.log(b / batch)))
    speed, builtin_mbps = speeds[(impl, level, near)]
    if builtin_mbps <= 0:
        return None
    share = min(1.0, (1000.0 / builtin_mbps) / stock_ms_per_mb)
    return {"impl": impl, "level": level, "batch": near, "speed": speed, "builtin_mbps": builtin_mbps, "share": share,
            "bound": amdahl(share, speed), "what": what, "engine": engine}


def fmt_engine_bound(b):
    """An engine bound (decompress_bound or compress_bound) as the targets table prints it."""
    if not b:
        return "not computed (no bench/codec decompression row for this provider and level)"
    size = f"{b['batch'] >> 20} MiB" if b["batch"] >= 1 << 20 else f"{b['batch'] >> 10} KiB"
    txt = (f">= {b['bound']:.2f}x ({b['what']} {b['speed']:.2f}x the built-in codec's {b['builtin_mbps']:.0f} MB/s "
           f"at {size} in table 5, which is {b['share'] * 100:.0f}% of stock's CPU/MB here; "
           f"{1 - b['share']:.2f}x with an infinitely fast {b['engine']})")
    if b["share"] >= 1.0:
        txt += (" **not reliable**: the built-in codec's table 5 speed would cost more than stock's whole CPU/MB "
                "here, so table 5 or this row was slowed by noise")
    return txt


def amdahl(share, speed):
    """Producer CPU per MB with the provider / without, at best: the compressing share runs `speed` times faster,
    the rest (record building, batching, network) is unchanged."""
    return (1 - share) + share / speed


def markdown(codec_text):
    return "## 5. Codec micro-benchmarks (bench/codec/)\n\n" + codec_text + "\n"


def limits_markdown(limits):
    """limits: list of dicts from the driver (impl, level, share, share_source, speed, bound)."""
    if not limits:
        return ("Engine limits: not computed (needs bench/codec's CSV of this run and a profile or the stock `none` "
                "and gzip rows of table 1).\n")
    trs = []
    for l in limits:
        m = l.get("measured_ratio")
        note = (" **below the bound**: this run's codec speed or compressing share is off (noise), so the bound is "
                "not reliable here" if m is not None and m < 0.95 * l["bound"] else "")
        trs.append([l["impl"], f"gzip-{l['level']}", f"{l['speed']:.2f}x", f"{l['share'] * 100:.0f}% ({l['share_source']})",
                    f"{l['bound']:.2f}x", f"{1 / l['bound']:.2f}x", l.get("measured", "") + note])
    return ("Engine limits on this CPU: **speed** = the provider's compression MB/s over the built-in codec's at that "
            "level for 1 MiB batches (bench/codec, table 5); **share** = the part of the stock producer's CPU that "
            "compresses (from the JFR profile when there is one: samples with `Deflater` or `CRC32` in the stack; "
            "else 1 - CPU/MB of `none` / CPU/MB of that gzip level, both stock, table 1). Amdahl: producer CPU per "
            "MB cannot fall below (1 - share) + share / speed of stock's, so records/s of a producer-bound run "
            "cannot rise above its inverse.\n\n"
            + md_table(["provider", "level", "speed over built-in", "compressing share of stock producer CPU",
                        "bound: producer CPU/MB vs stock >=", "bound: records/s vs stock <=", "measured (table 1)"],
                       trs) + "\n")
