"""Calibration row: codec "none", stock vs patched. Both run the same code paths, so every ratio must show 1.00
within its band; when one does not, that figure is too noisy on this machine to judge any row, and the report says
so and why (load average, steal time, CPU used by other processes)."""

from benchlib.common import JSON, fmt_int, md_table
from benchlib.noise import NOISE
from benchlib.runs import MIN_PAIRS, compare, fmt_band, fmt_cmp, produce, ratios, run_pairs, summarize

METRICS = [("producer_ms_per_mb", "producer CPU ms/MB", False), ("broker_ms_per_mb", "broker CPU ms/MB", False),
           ("records_s", "records/s", True), ("p99_ms", "p99 ms", False)]
PROPS = {"batch.size": "1048576", "linger.ms": "100", "acks": "1", "compression.type": "none"}
STATE = {"samples": {"stock": [], "patched": []}, "parts": 0, "result": None}
# a calibration band wider than this on either side of 1.00 is too wide to judge anything by (0.6x targets, 1.2x
# bounds): the figure is reported as too noisy even though 1.00 is inside
MAX_SPREAD = 0.10


def run(cfg, brokers, impls):
    """One part of the calibration pairs (the driver runs half before the tables and half after them)."""
    pair = [i for i in impls if i.name in ("stock", "patched") and i.status == "ok" and i.name in brokers]
    if len(pair) < 2:
        return
    part = STATE["parts"]
    STATE["parts"] += 1
    n = cfg.cal_pairs // 2 if part == 0 else cfg.cal_pairs - cfg.cal_pairs // 2

    def one(impl, broker, p):
        return produce(broker, f"cal_{part}_{p}", cfg.warmup_s, cfg.measure_s, PROPS, JSON)
    s = run_pairs(f"calibration none ({'start' if part == 0 else 'end'})", pair, brokers, n, one)
    for name in STATE["samples"]:
        STATE["samples"][name] += s.get(name, [])


def evaluate():
    """{metric: {"cmp": comparison, "ok": bool, "why": str}}; ok = at least MIN_PAIRS pairs, 1.00 inside the band, and
    the band within MAX_SPREAD of 1.00."""
    a, b = STATE["samples"]["stock"], STATE["samples"]["patched"]
    res = {}
    for key, _, _ in METRICS:
        c = compare(ratios(a, b, key))
        why = ""
        if not c or c["n"] < MIN_PAIRS:
            why = f"{c['n'] if c else 0} pairs, {MIN_PAIRS} needed"
        elif not c["min"] <= 1.0 <= c["max"]:
            why = "1.00 outside the band"
        elif c["min"] < 1 - MAX_SPREAD or c["max"] > 1 + MAX_SPREAD:
            why = f"band wider than +-{MAX_SPREAD * 100:.0f}%"
        res[key] = {"cmp": c, "ok": not why, "why": why}
    STATE["result"] = res
    return res


def trusted(key):
    """Whether verdicts on this figure may be printed (the calibration row showed 1.00 within its band)."""
    res = STATE["result"] or evaluate()
    return res.get(key, {}).get("ok", False)


def floor(key):
    """The calibration band of a figure (identical code on both sides): the noise floor a row must clear."""
    res = STATE["result"] or evaluate()
    c = res.get(key, {}).get("cmp")
    return (c["min"], c["max"]) if c else (1.0, 1.0)


def judge(c, key, higher_is_better, words):
    """A comparison as the report prints it: band, verdict against 1.0 and this run's noise floor, stability."""
    return fmt_cmp(c, higher_is_better, trusted(key), words, floor(key))


def rows():
    out = []
    for name in ("stock", "patched"):
        s = summarize(STATE["samples"][name])
        if s:
            out.append(dict(s, impl=name, codec="none"))
    return out


def markdown(info):
    res = STATE["result"] or evaluate()
    L = ["## Calibration: `none`, stock vs patched\n",
         "The same code runs on both sides with `compression.type=none` (the patched client and broker only add a "
         "lookup of an unset provider), so each ratio must be 1.00 within its min-max band. That band is also this run's noise floor: a row elsewhere is a gain or a loss only if its own band clears both 1.00 and this band. The pairs are split: half "
         "before the tables, half after them, so the band covers the whole run's noise. A figure whose calibration "
         "band excludes 1.00, or is wider than +-10% (too wide to tell a 0.6x target or a 1.2x bound), is **too noisy to "
         "judge on this run**, and no row reports a gain or a loss in it.\n"]
    a, b = summarize(STATE["samples"]["stock"]), summarize(STATE["samples"]["patched"])
    if not a or not b:
        L.append("_not run (needs the stock and the patched broker)_\n")
        return "\n".join(L)
    trs = []
    for key, label, _ in METRICS:
        c = res[key]["cmp"]
        trs.append([label, fmt_int(a[key]) if key == "records_s" else f"{a[key]:.1f}",
                    fmt_int(b[key]) if key == "records_s" else f"{b[key]:.1f}",
                    fmt_band(c),
                    ", ".join(f"{x:.2f}" for x in c["ratios"]) if c else "",
                    "1.00 inside: can judge" if res[key]["ok"] else f"**too noisy to judge** ({res[key]['why']})"])
    L.append(md_table(["figure", "stock (median)", "patched (median)", "patched/stock [band]", "per-pair ratios",
                       "calibration"], trs) + "\n")
    bad = [label for key, label, _ in METRICS if not res[key]["ok"]]
    noise = NOISE.describe(info["cores"])
    if bad:
        L.append(f"**This run was too noisy to judge {', '.join(bad)}**: identical code did not measure 1.00 within "
                 f"+-{MAX_SPREAD * 100:.0f}%. "
                 f"Why: {noise}. Rerun on a quiet machine (no builds or tests beside it) before deciding anything "
                 f"from those figures.\n")
    else:
        L.append(f"All calibration ratios show 1.00 inside their bands. Machine while measuring: {noise}.\n")
    return "\n".join(L)
