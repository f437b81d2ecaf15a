#!/usr/bin/env python3
"""Benchmarks: stock Apache Kafka beside this distribution, same run, same data.

Driven by bench/bench.sh (which `./build.sh bench [--quick] [--only N]` calls with KC_* set). This file is only the
driver: settings, which implementations exist, brokers up and down, the order of the tables. Each table is a module
in bench/tables/ (calibration, t1_codecs, t2_gzip_stream, t3_sla, t4_broker, t5_codec, t6_threads, t7_perftest,
t8_consumer);
shared helpers are in bench/benchlib/ (context, common, brokers, runs, memory, noise, jfr, targets, charts, report).
main() builds the run's Context (benchlib/context.py) and hands it to every table, broker and report function.
Writes build/bench/: report.md, README-section.md, table*.csv, *.png, results.json, logs/. bench/README.md says what
each table measures.
"""

import argparse
import datetime
import json
import os
import shutil
import signal

from benchlib import charts, report
from benchlib.brokers import Broker, Impl, run
from benchlib.common import PROVIDERS, SPI_CLASS, data_info, first_line, jar_has, machine_info, make_sliced_payload
from benchlib.context import Context, Paths
from benchlib.jfr import compressing_share, jfr_profile
from benchlib.runs import produce
from tables import (calibration, t1_codecs, t2_gzip_stream, t3_sla, t4_broker, t5_codec, t6_threads, t7_perftest,
                    t8_consumer)

GZIP6 = {"batch.size": "1048576", "linger.ms": "100", "acks": "1", "compression.type": "gzip"}


def settings(cfg):
    """How much of everything a run measures: --quick is a smoke check that still has enough pairs for a band."""
    if cfg.quick:
        cfg.pairs, cfg.cal_pairs = 3, 6
        cfg.warmup_s, cfg.measure_s, cfg.broker_warmup_s = 4, 6, 8
        cfg.codecs = [("gzip", 1), ("gzip", 6), ("lz4", None), ("zstd", 3)]
        cfg.large_codecs = []
        cfg.repeats = 1
        cfg.t2_levels, cfg.t2_seconds = [6], 0.5
        cfg.sla_seconds, cfg.sla_step, cfg.sla_runs = 3, 1.5, 1
        cfg.clean_records = 40_000
        cfg.t7_seconds, cfg.t7_pairs = 6, 3
        cfg.t8_records = 500_000
    else:
        cfg.pairs, cfg.cal_pairs = 5, 8
        cfg.warmup_s, cfg.measure_s, cfg.broker_warmup_s = 5, 10, 15
        cfg.codecs = [("gzip", 1), ("gzip", 6), ("gzip", 9), ("lz4", 1), ("lz4", None), ("lz4", 17),
                      ("zstd", -5), ("zstd", 1), ("zstd", 3), ("zstd", 12), ("zstd", 18), ("snappy", None)]
        cfg.large_codecs = [("gzip", 6), ("zstd", 3)]
        cfg.repeats = 3
        cfg.t2_levels, cfg.t2_seconds = [1, 6], 1.0
        cfg.sla_seconds, cfg.sla_step, cfg.sla_runs = 3, 1.3, 3
        cfg.clean_records = 150_000
        cfg.t7_seconds, cfg.t7_pairs = 20, 4
        cfg.t8_records = 1_500_000
    cfg.t7_seconds = cfg.t7_seconds_arg or cfg.t7_seconds
    cfg.t7_pairs = cfg.t7_pairs_arg or cfg.t7_pairs
    # KC_BENCH_T8_RECORDS: fewer records per consumer run (a smoke test of table 8, not a figure to publish)
    cfg.t8_records = int(os.environ.get("KC_BENCH_T8_RECORDS", cfg.t8_records))
    cfg.sla_linger = 5
    cfg.sla_auto = cfg.sla_ms is None
    cfg.sla_ms = cfg.sla_ms or 20
    cfg.sla_note = ("stock gzip met it at the lowest rate here, so it is kept" if cfg.sla_auto
                    else "set with --sla-ms")


def implementations(ctx):
    """stock, patched, and patched+<provider> for each provider built into the distribution and usable here."""
    paths = ctx.paths
    impls = [Impl(paths, "stock", False), Impl(paths, "patched", True)]
    spi = jar_has(os.path.join(paths.dist, "libs", "kafka-clients-*.jar"), SPI_CLASS)
    for name, cls in PROVIDERS.items():
        impl = Impl(paths, f"patched+{name}", True, cls)
        jar = jar_has(os.path.join(paths.dist, "libs", "*.jar"), cls.replace(".", "/") + ".class")
        if not jar:
            impl.status = "not built"
        elif not spi:
            impl.status = "not built (no KIP-1121 CompressionService in the patched kafka-clients)"
        if impl.status == "ok":
            cmd, env = impl.cmd("run", ["KcBench", "check", cls])
            try:
                res = run(cmd, env, os.path.join(paths.logs, "provider-check.log"), timeout=120).strip().splitlines()
                res = res[-1] if res else "no output"
            except Exception as e:  # noqa: BLE001
                res = f"unavailable: check failed ({first_line(e)})"
            if res != "available":
                impl.status = "unavailable on this host (" + res.replace("unavailable: ", "")[:200] + ")"
        impls.append(impl)
        ctx.progress(f"provider {name}: "
                     f"{impl.status if impl.status != 'ok' else 'available, in ' + os.path.basename(jar)}")
    return impls


def start_brokers(ctx, impls):
    cfg = ctx.cfg
    brokers = {}
    for impl in impls:
        if impl.status != "ok":
            continue
        ctx.progress(f"starting broker {impl.name}")
        try:
            brokers[impl.name] = Broker(ctx, impl, impl.name.replace("+", "_")).start()
        except Exception as e:  # noqa: BLE001
            impl.status = f"broker failed to start ({first_line(e)})"
            ctx.progress(impl.status)
    for impl in impls:
        if impl.name in brokers:
            ctx.progress(f"warm-up {impl.name} ({cfg.broker_warmup_s} s of gzip records, not measured)")
            try:
                produce(brokers[impl.name], "warmup", cfg.broker_warmup_s / 2, cfg.broker_warmup_s / 2, GZIP6,
                        ctx.paths.json)
            except Exception as e:  # noqa: BLE001
                impl.status = f"failed at warm-up ({first_line(e)[:200]})"
                ctx.progress(f"{impl.name}: {impl.status}")
    return brokers


def profiles_and_limits(ctx, brokers, impls, t1, profile_provider):
    """JFR profiles of stock gzip-1 and gzip-6 (the share of producer CPU spent compressing), of the provider's
    gzip-6 too when a target was missed; the Amdahl bounds from them and bench/codec's speeds."""
    cfg = ctx.cfg
    profiles, shares = [], {}
    runs = [("stock", 6), ("stock", 1)] + ([(profile_provider.name, 6)] if profile_provider else [])
    for name, level in runs:
        if name not in brokers:
            continue
        ctx.progress(f"profile: {name} gzip-{level} with JFR and /proc")
        try:
            data = jfr_profile(brokers[name], ctx.paths.json, cfg.warmup_s, cfg.measure_s,
                               dict(GZIP6, **{"compression.gzip.level": str(level)}), f"{name}-gzip{level}")
            profiles.append({"label": f"{name} gzip-{level}", "data": data})
            if name == "stock":
                shares[level] = compressing_share(data)
        except Exception as e:  # noqa: BLE001
            ctx.progress(f"profile failed: {first_line(e)}")
    limits = []
    none = next((r for r in calibration.rows(ctx) if r["impl"] == "stock"), None)
    for impl in [i for i in impls if i.provider and i.status == "ok"]:
        for level in (1, 6):
            speed = t5_codec.speedup(ctx, impl.name, level)
            share, source = shares.get(level), "JFR profile"
            stock = report.t1_row(t1, "stock", "gzip", level)
            if share is None and none and stock:
                share, source = max(0.0, 1 - none["producer_ms_per_mb"] / stock["producer_ms_per_mb"]), "CPU/MB vs none"
            if not speed or share is None:
                continue
            mine = report.t1_row(t1, impl.name, "gzip", level)
            c = mine and mine.get("cmp_producer_ms_per_mb")
            limits.append({"impl": impl.name, "level": level, "speed": speed, "share": share, "share_source": source,
                           "bound": t5_codec.amdahl(share, speed),
                           "measured": f"producer CPU/MB {c['median']:.2f}x" if c else "",
                           "measured_ratio": c["median"] if c else None})
    return profiles, limits


def guarded(ctx, label, fn):
    """fn()'s rows for a table whose failure the report explains (ctx.skipped[label]) instead of ending the run."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the report says why the table is missing
        ctx.progress(f"{label}: FAILED {first_line(e)}")
        ctx.skipped[label] = f"failed: {first_line(e)[:200]}"
        return []


def _terminate(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main():
    # stop the brokers on SIGTERM/SIGINT too (the finally below), also when started in the background
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGINT, _terminate)
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="1,2,3,4,5,6,7,8", help="tables to run, e.g. 1,3 (the calibration row runs "
                                                              "whenever 1, 3, 4, 6 or 8 does)")
    ap.add_argument("--sla-ms", type=int, default=None)
    ap.add_argument("--codec-text", default=None, help="file with bench/codec output (from bench.sh)")
    ap.add_argument("--t7-seconds", dest="t7_seconds_arg", metavar="N", type=int, default=None, help="table 7: seconds of records a run (25,000 a second)")
    ap.add_argument("--t7-pairs", dest="t7_pairs_arg", metavar="N", type=int, default=None, help="table 7: interleaved pairs of each broker kind")
    ap.add_argument("--t7-broker-provider", action="store_true",
                    help="table 7: a provider's fresh-broker runs on brokers that load the provider too")
    cfg = ap.parse_args()
    cfg.sla_arg = cfg.sla_ms   # as given; cfg.sla_ms may be raised by T3's calibration
    only = set(cfg.only.split(","))
    settings(cfg)
    ctx = Context(cfg, Paths(os.environ))
    paths = ctx.paths

    for d in (paths.work, paths.logs, paths.data_root):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    info = machine_info()
    datasets = [data_info(paths.json), data_info(paths.json_large)]
    ctx.progress(f"machine: {info['cores']} cores, {info['cpu']}, {info['jdk'].split(' / ')[0]}, "
             f"load {info['load_at_start']}")
    impls = implementations(ctx)
    n_prov = len([i for i in impls if i.status == "ok" and i.provider])
    # tables 6 and 7 run only with a provider: the built-in codec's side once, each provider's beside it
    new = (3 + 3 * n_prov if cfg.quick else 8 + 7 * n_prov) if n_prov else 0
    # table 4's validation rows (2 rows of stock, patched and each provider) and table 8 (2 topic fills,
    # then 2 levels of stock, patched and each provider); quick: 10.5 minutes with native-gzip (6.5 + 4) in
    # `./build.sh bench --quick --only 4,8` on 2026-11-25 at a load average of 9-12 (docs/benchmarks.md, "Runs so
    # far"); full: scaled by pairs and records (`--only 4,8` at full size took 44 minutes on 2026-11-30, broker
    # start and calibration included)
    new += 7 + 3 * n_prov if cfg.quick else 18 + 8 * n_prov
    whole = (28 + 6 * n_prov if cfg.quick else 115 + 30 * n_prov) + new
    # the estimate is of every table; a part (--only) takes less, by how much is not modelled per table
    expected = (f"expected about {whole} minutes" if only >= set("12345678")
                else f"tables {','.join(sorted(only))} only: expected less than the whole run's {whole} minutes")
    if cfg.quick:
        ctx.progress(f"quick run: {cfg.pairs} pairs per row, runs of {cfg.warmup_s} s warm-up + {cfg.measure_s} s "
                     f"measured; {expected} on 2 quiet cores")
    else:
        ctx.progress(f"full run: {cfg.pairs} pairs per row, runs of {cfg.warmup_s} s warm-up + {cfg.measure_s} s "
                     f"measured, 3 SLA runs; {expected} on 2 quiet cores, plus bench/codec/run.sh")

    brokers = {}
    t1, t2, t3, t4, t6, t7, t8, profiles, limits = [], [], [], [], [], [], [], [], []
    codec_text = "_bench/codec/run.sh not present in this checkout: the providers' codec micro-benchmark is missing._"
    if cfg.codec_text and os.path.exists(cfg.codec_text):
        with open(cfg.codec_text) as f:
            codec_text = f.read()
    try:
        if {"1", "3", "4", "6", "8"} & only:
            brokers = start_brokers(ctx, impls)
            calibration.run(ctx, brokers, impls)          # first half of the calibration pairs
        if "1" in only:
            t1_codecs.run(ctx, brokers, impls)
        if "3" in only:
            cfg.payload_1k = make_sliced_payload(paths.json, os.path.join(paths.work, "json-1k.ndjson"), 1024)
            t3, _ = t3_sla.run(ctx, brokers, impls)
            try:
                t3_sla.fixed_pairs(ctx, brokers, impls, t1_codecs.samples(ctx, ("json-records", "gzip", 6, "1m")))
            except Exception as e:  # noqa: BLE001 - the report says the pairs are missing
                ctx.progress(f"T3 fixed-rate pairs: FAILED {first_line(e)}")
        if "4" in only:
            t4 = t4_broker.run(ctx, brokers, impls)
        if "6" in only:
            t6 = guarded(ctx, "T6", lambda: t6_threads.run(ctx, brokers, impls))
        if "8" in only:
            t8 = guarded(ctx, "T8", lambda: t8_consumer.run(ctx, brokers, impls))
        if brokers:
            calibration.run(ctx, brokers, impls)          # second half, after the tables
        calibration.evaluate(ctx)
        if "1" in only:
            t1 = t1_codecs.results(ctx, impls)            # size ratios use the calibration's `none` bytes
            t1_codecs.write(ctx, t1)
            missed = [t for t in report.evaluate_targets(ctx, t1, t3, t1_codecs.extra_comparisons(ctx), [])
                      if t[1] == "miss"]
            prov = next((i for i in impls if i.provider and i.name in brokers and i.status == "ok"), None)
            profiles, limits = profiles_and_limits(ctx, brokers, impls, t1, prov if missed else None)
    finally:
        for b in brokers.values():
            b.stop()
        ctx.memory.close()
    if "7" in only:
        # its own brokers (fresh ones and a warm one), after the tables' brokers are down
        try:
            t7 = guarded(ctx, "T7", lambda: t7_perftest.run(ctx, impls))
        finally:
            ctx.memory.close()
    if "2" in only:
        t2 = t2_gzip_stream.run(ctx, impls)
    files = charts.charts(ctx, t1, t3, t2)
    targets = (report.evaluate_targets(ctx, t1, t3, t1_codecs.extra_comparisons(ctx), limits)
               + (t4_broker.targets(ctx) if "4" in only else [])
               + (t6_threads.targets(ctx) if "6" in only else []) + (t7_perftest.targets(ctx) if "7" in only else [])
               + (t8_consumer.targets(ctx) if "8" in only else []))
    report.write(ctx, info, datasets, impls, t1, t2, t3, t4, codec_text, files, targets, limits, profiles, started,
                 t6=t6 if "6" in only else None, t7=t7 if "7" in only else None, t8=t8 if "8" in only else None)
    with open(os.path.join(paths.out, "results.json"), "w") as f:
        json.dump({"t1": t1, "t2": t2, "t3": t3, "t4": t4, "t6": t6, "t7": t7, "t8": t8,
                   "t7_runs": t7_perftest.state(ctx)["samples"], "calibration": calibration.state(ctx),
                   "noise": ctx.noise.windows, "limits": limits, "targets": targets, "machine": info}, f, indent=1,
                  default=str)
    ctx.progress(f"done: {os.path.join(paths.out, 'report.md')}")


if __name__ == "__main__":
    main()
