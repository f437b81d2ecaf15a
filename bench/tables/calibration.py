"""Calibration rows: stock vs patched with the same code on both sides, so every ratio must show 1.00 within its band.

Two rows. gzip-6 (1 MiB batches, no provider: both sides run the JDK's zlib) is the gate: when one of its figures
does not show 1.00 within +-10%, that figure is too noisy on this machine to judge any row, and the report says so
and why (load average, steal time, CPU used by other processes). `none` is printed beside it as the noise of the
fast, I/O-bound rows: unthrottled, it saturates both cores with the producer and the broker's network and log
threads, and its runs spread by +-20% on a quiet 2-core machine even with memory settled (docs/benchmarks.md), so it
cannot be a gate that a 0.6x target or a 1.2x bound is judged by."""

from benchlib.common import fmt_int, md_table
from benchlib.runs import MIN_PAIRS, compare, fmt_band, fmt_cmp, produce, ratios, run_pairs, summarize

METRICS = [("producer_ms_per_mb", "producer CPU ms/MB", False), ("broker_ms_per_mb", "broker CPU ms/MB", False),
           ("records_s", "records/s", True), ("p99_ms", "p99 ms", False)]
ROWS = {"gzip-6": {"batch.size": "1048576", "linger.ms": "100", "acks": "1", "compression.type": "gzip",
                   "compression.gzip.level": "6"},
        "none": {"batch.size": "1048576", "linger.ms": "100", "acks": "1", "compression.type": "none"}}
GATE = "gzip-6"
# a calibration band wider than this on either side of 1.00 is too wide to judge anything by (0.6x targets, 1.2x
# bounds): the figure is reported as too noisy even though 1.00 is inside
MAX_SPREAD = 0.10


def state(ctx):
    """This run's calibration: samples (row -> impl -> runs), parts run so far, the gate's result once evaluated."""
    return ctx.state.setdefault(__name__, {"samples": {row: {"stock": [], "patched": []} for row in ROWS}, "parts": 0,
                                           "result": None})


def run(ctx, brokers, impls):
    """One part of the calibration pairs (the driver runs half before the tables and half after them)."""
    cfg, st = ctx.cfg, state(ctx)
    pair = [i for i in impls if i.name in ("stock", "patched") and i.status == "ok" and i.name in brokers]
    if len(pair) < 2:
        return
    part = st["parts"]
    st["parts"] += 1
    n = cfg.cal_pairs // 2 if part == 0 else cfg.cal_pairs - cfg.cal_pairs // 2

    for row, props in ROWS.items():
        def one(impl, broker, p, props=props, row=row):
            return produce(broker, f"cal_{row}_{part}_{p}", cfg.warmup_s, cfg.measure_s, props, ctx.paths.json)
        s = run_pairs(ctx, f"calibration {row} ({'start' if part == 0 else 'end'})", pair, brokers, n, one)
        for name in st["samples"][row]:
            st["samples"][row][name] += s.get(name, [])


def compare_row(ctx, row):
    samples = state(ctx)["samples"][row]
    return {key: compare(ratios(samples["stock"], samples["patched"], key))
            for key, _, _ in METRICS}


def evaluate(ctx):
    """{metric: {"cmp": comparison, "ok": bool, "why": str}} of the gate row; ok = at least MIN_PAIRS pairs, 1.00 inside
    the band, and the band within MAX_SPREAD of 1.00."""
    res = {}
    gate = compare_row(ctx, GATE)
    for key, _, _ in METRICS:
        c = gate[key]
        why = ""
        if not c or c["n"] < MIN_PAIRS:
            why = f"{c['n'] if c else 0} pairs, {MIN_PAIRS} needed"
        elif not c["min"] <= 1.0 <= c["max"]:
            why = "1.00 outside the band"
        elif c["min"] < 1 - MAX_SPREAD or c["max"] > 1 + MAX_SPREAD:
            why = f"band wider than +-{MAX_SPREAD * 100:.0f}%"
        res[key] = {"cmp": c, "ok": not why, "why": why}
    state(ctx)["result"] = res
    return res


def result(ctx):
    """The gate's result (evaluate()), evaluated once."""
    return state(ctx)["result"] or evaluate(ctx)


def trusted(ctx, key):
    """Whether verdicts on this figure may be printed (the calibration row showed 1.00 within its band)."""
    res = result(ctx)
    return res.get(key, {}).get("ok", False)


def floor(ctx, key):
    """The calibration band of a figure (identical code on both sides): the noise floor a row must clear."""
    res = result(ctx)
    c = res.get(key, {}).get("cmp")
    return (c["min"], c["max"]) if c else (1.0, 1.0)


def judge(ctx, c, key, higher_is_better, words):
    """A comparison as the report prints it: band, verdict against 1.0 and this run's noise floor, stability."""
    return fmt_cmp(c, higher_is_better, trusted(ctx, key), words, floor(ctx, key))


def rows(ctx, row="none"):
    out = []
    for name in ("stock", "patched"):
        s = summarize(state(ctx)["samples"][row][name])
        if s:
            out.append(dict(s, impl=name, codec=row))
    return out


def _table(ctx, row, res):
    samples = state(ctx)["samples"][row]
    a, b = summarize(samples["stock"]), summarize(samples["patched"])
    cmps = compare_row(ctx, row)
    trs = []
    for key, label, _ in METRICS:
        c = cmps[key]
        if row == GATE:
            verdict = "1.00 inside: can judge" if res[key]["ok"] else f"**too noisy to judge** ({res[key]['why']})"
        else:
            verdict = "1.00 inside" if c and c["min"] <= 1.0 <= c["max"] else "1.00 outside"
        trs.append([label, fmt_int(a[key]) if key == "records_s" else f"{a[key]:.1f}",
                    fmt_int(b[key]) if key == "records_s" else f"{b[key]:.1f}",
                    fmt_band(c),
                    ", ".join(f"{x:.2f}" for x in c["ratios"]) if c else "",
                    verdict])
    return md_table(["figure", "stock (median)", "patched (median)", "patched/stock [band]", "per-pair ratios",
                     "gate" if row == GATE else "(not a gate)"], trs) + "\n"


def markdown(ctx, info):
    res = result(ctx)
    samples = state(ctx)["samples"]
    L = ["## Calibration: stock vs patched, the same code on both sides\n",
         f"Both sides run the same code (the patched client and broker only add a lookup of an unset provider), so "
         f"each ratio must be 1.00 within its min-max band. The pairs are split: half before the tables, half after "
         f"them, so the band covers the whole run's noise. **The gate is `{GATE}`** (1 MiB batches, the JDK's zlib on "
         f"both sides; the codec the targets are about): a figure whose band there excludes 1.00, or is wider than "
         f"+-{MAX_SPREAD * 100:.0f}% (too wide to tell a 0.6x target or a 1.2x bound), is **too noisy to judge on "
         f"this run**, and no row reports a gain or a loss in it. That band is also the run's noise floor: a row is a "
         f"gain or a loss only if its own band clears both 1.00 and this band.\n"]
    a, b = summarize(samples[GATE]["stock"]), summarize(samples[GATE]["patched"])
    if not a or not b:
        L.append("_not run (needs the stock and the patched broker)_\n")
        return "\n".join(L)
    L.append(f"### `{GATE}` (the gate)\n")
    L.append(_table(ctx, GATE, res))
    bad = [label for key, label, _ in METRICS if not res[key]["ok"]]
    noise = ctx.noise.describe(info["cores"])
    if bad:
        L.append(f"**This run was too noisy to judge {', '.join(bad)}**: identical code did not measure 1.00 within "
                 f"+-{MAX_SPREAD * 100:.0f}%. "
                 f"Why: {noise}. Rerun on a quiet machine (no builds or tests beside it) before deciding anything "
                 f"from those figures.\n")
    else:
        L.append(f"All gate ratios show 1.00 inside their bands. Machine while measuring: {noise}.\n")
    if summarize(samples["none"]["stock"]) and summarize(samples["none"]["patched"]):
        L.append("### `none` (not a gate: the noise of the fast rows)\n")
        L.append("Unthrottled `none` keeps both cores busy with the producer and the broker's network and log "
                 "threads; its band is how far apart identical code lands on the I/O-bound rows (lz4, snappy, zstd "
                 "at low levels), whose ratios in table 1 should be read against it.\n")
        L.append(_table(ctx, "none", res))
    return "\n".join(L)
