"""Table 6: one producer shared by 4 application threads, unthrottled, gzip-6 with 256 KiB batches;
each provider against the built-in codec of the same patched distribution, in interleaved pairs. Besides records/s
and producer CPU per MB, the producer's own record-queue-time-avg and request-latency-avg and the provider's
counters (batches it compressed, fell back on, bypassed for size or for memory)."""

from benchlib.common import fmt_int, md_table, write_csv
from benchlib.runs import compare, fmt_cmp, produce, ratios, run_pairs, summarize
from benchlib.targets import target
from tables import calibration

THREADS = 4
PROPS = {"compression.type": "gzip", "compression.gzip.level": "6", "batch.size": "262144", "linger.ms": "20",
         "acks": "1"}
BASE = "patched"            # the built-in codec, same distribution, same broker
# producer metrics -> sample keys (the provider group's counters only exist with a provider configured)
METRICS = {"record-queue-time-avg": "record_queue_ms", "request-latency-avg": "request_latency_ms",
           "compression-batches-total": "provider_batches", "compression-fallbacks-total": "provider_fallbacks",
           "compression-bypassed-size-total": "bypassed_size", "compression-bypassed-memory-total": "bypassed_memory"}
KEYS = ("records_s", "producer_ms_per_mb", "p50_ms", "p99_ms", "avg_ms", "window_s", "mb") + tuple(METRICS.values())
# (key, label, higher is better, words, judged against the calibration gate)
FIGURES = [("records_s", "records/s", True, ("faster", "slower"), True),
           ("producer_ms_per_mb", "producer CPU/MB", False, ("less CPU", "more CPU"), True),
           ("record_queue_ms", "record-queue-time-avg", False, ("shorter", "longer"), False),
           ("request_latency_ms", "request-latency-avg", False, ("shorter", "longer"), False)]


def state(ctx):
    """This run's table 6: samples ({impl: [sample or None]}), rows, pairs."""
    return ctx.state.setdefault(__name__, {"samples": {}, "rows": [], "pairs": 0})


def props(cfg):
    # Kafka's -avg metrics average the samples whose last event is within metrics.num.samples x
    # metrics.sample.window.ms of the read: 1 s samples, one fewer than the measured seconds, so the values read at
    # the end cover the measured window's last seconds and none of the warm-up (a sample that straddles the start of
    # the window ends 1 s after it at the latest, and is purged by then)
    return dict(PROPS, **{"metrics.sample.window.ms": "1000",
                          "metrics.num.samples": str(max(2, int(cfg.measure_s) - 1))})


def run(ctx, brokers, impls):
    cfg = ctx.cfg
    ok = [i for i in impls if i.status == "ok" and i.name in brokers and (i.name == BASE or i.provider)]
    if BASE not in [i.name for i in ok] or len(ok) < 2:
        ctx.progress("T6: skipped (needs the patched broker and a provider)")
        ctx.skipped["T6"] = "needs the patched distribution's broker and an available provider"
        return []
    # every side sends to the patched broker (no provider there): only the producer differs
    same = {i.name: brokers[BASE] for i in ok}
    ctx.progress(f"T6: one producer, {THREADS} sending threads, gzip-6 256 KiB / 20 ms, {cfg.pairs} pairs of "
             f"{cfg.warmup_s} s warm-up + {cfg.measure_s} s measured")

    def one(impl, broker, p):
        r = produce(broker, f"t6_threads_{p}", cfg.warmup_s, cfg.measure_s, props(cfg), ctx.paths.json, threads=THREADS,
                    impl=impl)
        for name, key in METRICS.items():
            if name in r["metrics"]:
                r[key] = r["metrics"][name]
        return r
    st = state(ctx)
    st["samples"] = run_pairs(ctx, f"T6 {THREADS} threads", ok, same, cfg.pairs, one)
    st["pairs"] = cfg.pairs
    return results(ctx, impls)


def results(ctx, impls):
    samples = state(ctx)["samples"]
    rows = []
    for impl in impls:
        if not impl.provider and impl.name != BASE:
            continue
        s = summarize(samples.get(impl.name, []), KEYS)
        if not s:
            rows.append({"impl": impl.name, "status": impl.status if impl.status != "ok" else "failed"})
            continue
        row = dict(s, impl=impl.name, status="ok")
        if impl.name != BASE:
            for key, *_ in FIGURES:
                row["cmp_" + key] = compare(ratios(samples.get(BASE, []), samples[impl.name], key))
        rows.append(row)
    state(ctx)["rows"] = rows
    write_csv(ctx.paths.out, "table6_threads.csv", rows)
    return rows


def targets(ctx):
    """Targets: with 4 threads sharing one producer, records/s >= 1.5x the built-in codec's and
    record-queue-time-avg <= 1.5x; [target, result, measured, bound] like report.evaluate_targets."""
    out = []
    rows = state(ctx)["rows"]
    for r in rows:
        if r["impl"] == BASE:
            continue
        if r.get("status") != "ok":
            out.append([f"{r['impl']}: {THREADS} threads, records/s >= 1.5x the built-in codec's",
                        "not evaluated", r["status"], ""])
            continue
        out.append(target(ctx, f"{r['impl']}: {THREADS} threads sharing one producer, records/s >= 1.5x the built-in "
                          f"codec's", r.get("cmp_records_s"), lambda c: c["median"] >= 1.5, "records_s"))
        out.append(target(ctx, f"{r['impl']}: {THREADS} threads sharing one producer, record-queue-time-avg <= 1.5x "
                          f"the built-in codec's", r.get("cmp_record_queue_ms"),
                          lambda c: c["median"] <= 1.5))
    if not rows and ctx.skipped.get("T6"):
        out.append([f"{THREADS} threads sharing one producer", "not evaluated", ctx.skipped["T6"], ""])
    return out


def _num(v, fmt="{:,.0f}"):
    return fmt.format(v) if isinstance(v, (int, float)) else ""


def markdown(ctx, rows):
    cfg, pairs = ctx.cfg, state(ctx)["pairs"]
    L = [f"## 6. One producer shared by {THREADS} application threads\n",
         f"`KcBench threads`: one `KafkaProducer` of the distribution's client jars, {THREADS} threads calling "
         f"`send()` unthrottled with a callback (json-records, each thread from its own offset in the file), "
         f"gzip-6, `batch.size=262144 linger.ms=20 acks=1`; the built-in codec (`{BASE}`) against each provider on "
         f"the producer, all sending to the same `{BASE}` broker (no provider there), {pairs} interleaved "
         f"pairs of fresh producer JVMs, {cfg.warmup_s} s warm-up (discarded) + {cfg.measure_s} s measured. "
         f"records/s and producer CPU per MB (from `/proc/<pid>/stat`) as in table 1, judged against the calibration "
         f"gate. **record-queue-time-avg** (how long a record waits in the accumulator before its batch is sent) and "
         f"**request-latency-avg** are the producer's own metrics, read from `producer.metrics()` once the measured "
         f"records are acknowledged, with `metrics.sample.window.ms=1000` and `metrics.num.samples` one fewer "
         f"than the measured seconds, so that Kafka's sampled average covers the measured window's last seconds, "
         f"not the warm-up; no calibration row exists for them, so their bands "
         f"are judged against 1.00 only. Provider counters (group `producer-compression-provider-metrics`, totals "
         f"for the whole run, warm-up included): batches it compressed, batches it failed on (fallbacks), batches "
         f"it left to the built-in codec because they were too large (bypassed: size) or because the producer's "
         f"open batches already held the most uncompressed bytes allowed (bypassed: memory); a blank cell: this "
         f"client has no such counter. CSV: `table6_threads.csv`. Command: `{ctx.command()}`.\n"]
    if not rows:
        L.append(f"_not run: {ctx.skipped.get('T6', 'table 6 was not selected')}_\n")
        return "\n".join(L)
    trs = []
    for r in rows:
        if r.get("status") != "ok":
            trs.append([r["impl"], r["status"]] + [""] * 13)
            continue
        cells = []
        for key, _, hib, words, gated in FIGURES:
            c = r.get("cmp_" + key)
            cells.append((calibration.judge(ctx, c, key, hib, words) if gated else fmt_cmp(c, hib, words=words))
                         if c else "")
        trs.append([r["impl"], fmt_int(r["records_s"]), cells[0], f"{r['producer_ms_per_mb']:.1f}", cells[1],
                    _num(r.get("record_queue_ms"), "{:.1f}"), cells[2], _num(r.get("request_latency_ms"), "{:.1f}"),
                    cells[3], f"{r['p99_ms']:.0f}", _num(r.get("provider_batches")),
                    _num(r.get("provider_fallbacks")), _num(r.get("bypassed_size")), _num(r.get("bypassed_memory")),
                    f"{r['window_s']:.1f}"])
    L.append(md_table(["impl", "records/s", f"vs {BASE}", "producer CPU ms/MB", f"vs {BASE}",
                       "record-queue-time-avg ms", f"vs {BASE}", "request-latency-avg ms", f"vs {BASE}",
                       "p99 ms (send to ack)", "provider batches", "fallbacks", "bypassed: size", "bypassed: memory",
                       "window s"], trs) + "\n")
    L.append("Targets: records/s at least 1.5x the built-in codec's, record-queue-time-avg at most 1.5x; "
             "pass/miss in the targets table above.\n")
    return "\n".join(L)
