"""Table 1, KIP-390 codec x level: producer and broker CPU per MB of records, records/s and latency, bytes on disk,
stock vs this distribution (and gzip through each provider) in interleaved pairs."""

from benchlib.common import fmt_int, level_label, md_table, write_csv
from benchlib.runs import compare, produce, ratios, run_pairs, summarize
from tables import calibration

# (figure, label, higher is better, words for better/worse)
FIGURES = [("producer_ms_per_mb", "producer CPU", False, ("less CPU", "more CPU")),
           ("broker_ms_per_mb", "broker CPU", False, ("less CPU", "more CPU")),
           ("records_s", "records/s", True, ("faster", "slower")),
           ("p99_ms", "p99", False, ("lower", "higher")),
           ("size_ratio", "bytes on disk", False, ("smaller", "larger"))]
BATCH = {"1m": {"batch.size": "1048576", "linger.ms": "100"}, "256k": {"batch.size": "262144", "linger.ms": "20"}}
BATCH_LABEL = {"1m": "1 MiB / 100 ms", "256k": "256 KiB / 20 ms"}


def state(ctx):
    """This run's table 1: samples, (dataset, codec, level, batch) -> {impl: [sample or None]}."""
    return ctx.state.setdefault(__name__, {"samples": {}})


def samples(ctx, row):
    """One row's samples, {impl: [sample or None]}, or None if the row was not run."""
    return state(ctx)["samples"].get(row)


def row_list(cfg):
    rows = [("json-records", c, lv, "1m") for c, lv in cfg.codecs]
    rows.insert(next(i for i, r in enumerate(rows) if r[1:3] == ("gzip", 6)) + 1, ("json-records", "gzip", 6, "256k"))
    if not cfg.quick:
        rows += [("json-large-records", c, lv, "1m") for c, lv in cfg.large_codecs]
    return rows


def run(ctx, brokers, impls):
    cfg = ctx.cfg
    ok = [i for i in impls if i.status == "ok" and i.name in brokers]
    rows = row_list(cfg)
    total = sum(cfg.pairs * len([i for i in ok if c == "gzip" or not i.provider]) for _, c, _, _ in rows)
    counter = [0, total]
    ctx.progress(f"T1: {len(rows)} rows x {cfg.pairs} interleaved pairs, {total} runs of {cfg.warmup_s} s warm-up "
             f"(not measured) + {cfg.measure_s} s measured")
    for ds, codec, level, batch in rows:
        path = ctx.paths.json if ds == "json-records" else ctx.paths.json_large
        props = dict(BATCH[batch], **{"acks": "1", "compression.type": codec})
        if level is not None:
            props[f"compression.{codec}.level"] = str(level)
        row_impls = [i for i in ok if codec == "gzip" or not i.provider]   # a gzip provider only changes gzip rows

        def one(impl, broker, p):
            topic = f"t1_{ds}_{codec}_{level}_{batch}_{p}".replace("None", "d").replace("-", "_")
            return produce(broker, topic, cfg.warmup_s, cfg.measure_s, props, path)
        state(ctx)["samples"][(ds, codec, level, batch)] = run_pairs(
            ctx, f"T1 {ds} {level_label(codec, level)} {batch}", row_impls, brokers, cfg.pairs, one, counter)
    return results(ctx, impls)


def results(ctx, impls):
    """One row per (dataset, codec, level, batch, impl): medians, and per-pair comparisons against stock."""
    out = []
    for (ds, codec, level, batch), samples in state(ctx)["samples"].items():
        stock = samples.get("stock", [])
        for impl in impls:
            if impl.name not in samples:
                if codec == "gzip" or not impl.provider:
                    out.append({"dataset": ds, "codec": codec, "level": level, "batch": batch, "impl": impl.name,
                                "status": impl.status if impl.status != "ok" else "failed"})
                continue
            s = summarize(samples[impl.name])
            if not s:
                out.append({"dataset": ds, "codec": codec, "level": level, "batch": batch, "impl": impl.name,
                            "status": "failed"})
                continue
            r = {"dataset": ds, "codec": codec, "level": level, "batch": batch, "impl": impl.name, "status": "ok", **s}
            if impl.name != "stock":
                for key, *_ in FIGURES:
                    r["cmp_" + key] = compare(ratios(stock, samples[impl.name], key))
            out.append(r)
    return out


def extra_comparisons(ctx):
    """gzip-1 through a provider against stock lz4 (default level) in the same run, pair by pair."""
    out = {}
    lz4 = next((v for k, v in state(ctx)["samples"].items() if k[0] == "json-records" and k[1] == "lz4"
                and k[2] in (None, 9) and k[3] == "1m"), None)
    g1 = state(ctx)["samples"].get(("json-records", "gzip", 1, "1m"))
    if lz4 and g1:
        for name, s in g1.items():
            if name.startswith("patched+"):
                out[name] = {key: compare(ratios(lz4.get("stock", []), s, key)) for key in ("records_s",
                                                                                           "producer_ms_per_mb")}
    return out


def csv_rows(rows):
    flat = []
    for r in rows:
        f = {k: v for k, v in r.items() if not k.startswith("cmp_")}
        for k, v in r.items():
            if k.startswith("cmp_") and v:
                f[k[4:] + "_vs_stock"] = round(v["median"], 4)
                f[k[4:] + "_vs_stock_min"] = round(v["min"], 4)
                f[k[4:] + "_vs_stock_max"] = round(v["max"], 4)
                f[k[4:] + "_pairs"] = v["n"]
        flat.append(f)
    return flat


def write(ctx, rows):
    write_csv(ctx.paths.out, "table1_kip390.csv", csv_rows(rows))


def markdown(ctx, rows):
    cfg = ctx.cfg
    L = ["## 1. KIP-390: codec x level, CPU per MB\n",
         "One producer (`KcBench throughput`: a `KafkaProducer` of the implementation's own client jars, one send "
         f"with a callback per record, as ProducerPerformance does; records taken in file order so both sides send "
         f"the same bytes) and the broker on the same host. Each run sends unthrottled with `acks=1` for "
         f"{cfg.warmup_s} s of warm-up (JIT, connections, page cache; not measured) and then {cfg.measure_s} s "
         "measured: the warm-up records are flushed, then the CPU counters (utime+stime of `/proc/<pid>/stat`) of the producer JVM and of the "
         "broker JVM are read, and read again once the last record is acknowledged. **CPU ms/MB** = those CPU "
         "milliseconds per 10^6 bytes of records sent in that window: what compression costs an operator, and far "
         "less sensitive to a noisy neighbour than wall-clock throughput. records/s and latency (send to ack) are "
         "from the same window. "
         f"Each row is {cfg.pairs} interleaved pairs (stock and the other implementation adjacent in time, order "
         "reversed every other pair); **vs stock** = median of the per-pair ratios [min-max], and a band that "
         "includes 1.00 is reported as *no difference measured*. *(not yet stable)*: leaving out the last pair "
         "moves the median by more than 3%. Size ratio = bytes on disk / bytes of records sent (batch headers "
         "included, so `none` is a little above 1). `window s` = median measured seconds per run. "
         "A provider row's impl cell carries the provider's own counters in the producer JVM (median per run: "
         "batches it compressed, batches it failed on and the built-in codec served). "
         "CSV: `table1_kip390.csv` (every per-pair band).\n"]
    for ds in sorted({r["dataset"] for r in rows}, key=lambda d: d != "json-records"):
        L.append(f"### {ds}\n")
        trs = []
        for r in [x for x in rows if x["dataset"] == ds]:
            impl = r["impl"]
            if r.get("provider_batches") is not None:
                # the provider's own JMX counters in the producer: it compressed, and how often it fell back
                impl += f" ({r['provider_batches']:,.0f} batches, {r['provider_fallbacks']:,.0f} fallbacks)"
            head = [level_label(r["codec"], r["level"]), BATCH_LABEL[r["batch"]], impl]
            if r.get("status") != "ok":
                trs.append(head + [r["status"]] + [""] * 9)
                continue
            cells = []
            for key, _, hib, words in FIGURES[:3]:
                cmp_ = r.get("cmp_" + key)
                cells.append(calibration.judge(ctx, cmp_, key, hib, words) if cmp_ else "")
            trs.append(head + [f"{r['producer_ms_per_mb']:.1f}", cells[0], f"{r['broker_ms_per_mb']:.1f}", cells[1],
                               fmt_int(r["records_s"]), cells[2], f"{r['p99_ms']:.0f}",
                               f"{r['size_ratio']:.4f}" if r.get("size_ratio") else "",
                               f"{r['window_s']:.1f}"])
        L.append(md_table(["codec", "batch / linger", "impl", "producer CPU ms/MB", "vs stock", "broker CPU ms/MB",
                           "vs stock", "records/s", "vs stock", "p99 ms", "size ratio", "window s"], trs) + "\n")
    ex = extra_comparisons(ctx)
    for name, c in ex.items():
        L.append(f"gzip-1 through {name} against stock lz4 (default level 9), pair by pair in this run: records/s "
                 f"{calibration.judge(ctx, c['records_s'], 'records_s', True, ('faster', 'slower'))}; producer "
                 f"CPU/MB {calibration.judge(ctx, c['producer_ms_per_mb'], 'producer_ms_per_mb', False, ('less CPU', 'more CPU'))}.\n")
    return "\n".join(L)
