"""The targets' rules, shared by the report's producer targets and the tables' own (4, 6, 7 and 8): a target row is
[target, result, measured, engine bound], pass/miss on the median of the pairs, not judged when the pairs are too few
or the calibration says the run was too noisy for the figure."""

from benchlib.runs import MIN_PAIRS, fmt_band
from tables import calibration


def describe(ctx, c, key=None):
    if not c:
        return "not measured"
    txt = f"{fmt_band(c)}, {c['n']} pair{'s' if c['n'] != 1 else ''}"
    if c["n"] < MIN_PAIRS:
        txt += ", too few to judge"
    elif not c["stable"]:
        txt += ", not yet stable"
    if key and not calibration.trusted(ctx, key):
        txt += ", run too noisy for this figure (calibration)"
    return txt


# The targets' rule: "Where a target is past the engine's bound as the benchmark computes it, the report prints the
# bound, and the figure must come within 10% of it."
BOUND_SLACK = 1.10


def at_most(limit, bound=None):
    """(ok_fn, how) for a lower-is-better ratio target (CPU per MB vs stock): the median at most limit, or, when the
    engine bound (the lowest ratio a provider of its measured engine speed can reach, `t5_codec`'s Amdahl) is above
    the limit, at most the bound plus 10%."""
    if not bound or bound["bound"] <= limit:
        return (lambda c: c["median"] <= limit), ""
    reach = bound["bound"] * BOUND_SLACK
    return (lambda c: c["median"] <= reach), f"target past the engine bound {bound['bound']:.2f}x: at most {reach:.2f}x"


def target(ctx, name, c, ok_fn, key=None, bound="", trusted=True, how=""):
    """[target, result, measured, engine bound]; pass/miss on the median of the pairs, as the targets define them
    (how: the criterion when it is not the target's own, see at_most), marked "(not judged)" when the pairs are too
    few or the calibration says the run was too noisy for the figure."""
    if not c:
        return [name, "not evaluated", "not measured", bound]
    result = ("pass" if ok_fn(c) else "miss") + (f" ({how})" if how else "")
    if c["n"] < MIN_PAIRS or not trusted or (key and not calibration.trusted(ctx, key)):
        result += " (not judged: " + ("too few pairs" if c["n"] < MIN_PAIRS else "run too noisy") + ")"
    return [name, result, describe(ctx, c, key), bound]
