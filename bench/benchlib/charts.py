"""PNG charts of the report (matplotlib from bench/requirements.txt; without it the report has no charts)."""

import os

from benchlib.common import level_label


def charts(ctx, t1, t3, t2):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        ctx.progress("matplotlib missing: no charts")
        return []
    made = []
    ok = [r for r in t1 if r.get("status") == "ok" and r["dataset"] == "json-records" and r.get("size_ratio")
          and r["batch"] == "1m"]
    for key, fname, ylabel in (("producer_ms_per_mb", "cpu_vs_ratio.png",
                                "producer CPU ms per MB of records (median of the pairs; lower = cheaper)"),
                               ("records_s", "throughput_vs_ratio.png", "producer records/s (median of the pairs)")):
        if not ok:
            break
        fig, ax = plt.subplots(figsize=(9, 6))
        markers = {"stock": "o", "patched": "s", "native-gzip": "^", "qat-gzip": "D"}
        colors = {"none": "grey", "gzip": "tab:blue", "lz4": "tab:green", "zstd": "tab:red", "snappy": "tab:orange"}
        for r in ok:
            impl = r["impl"].replace("patched+", "")
            ax.scatter(r["size_ratio"], r[key], marker=markers.get(impl, "x"), color=colors.get(r["codec"], "black"),
                       s=50)
            lab = level_label(r["codec"], r["level"])
            if r["impl"] != "stock":
                lab += f" ({impl})"
            ax.annotate(lab, (r["size_ratio"], r[key]), fontsize=7, xytext=(3, 3), textcoords="offset points")
        present = {r["impl"].replace("patched+", "") for r in ok}
        for impl, mk in markers.items():
            if impl in present:
                ax.scatter([], [], marker=mk, color="black", label=impl)
        ax.set_xlabel("bytes on disk / bytes on disk uncompressed (lower = smaller)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"KIP-390 codec x level, json-records, batch.size=1 MiB linger.ms=100 (Kafka {ctx.paths.version})")
        ax.legend(title="implementation")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(ctx.paths.out, fname), dpi=110)
        plt.close(fig)
        made.append(fname)
    ok3 = [r for r in t3 if r.get("status") == "ok" and r.get("met_in_runs")]
    if ok3:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        labels = [f"{r['impl']}\n{r['codec']}" for r in ok3]
        vals = [r["records_s_at_sla"] for r in ok3]
        bars = ax.bar(labels, vals, color=["tab:red" if r["codec"] == "zstd" else "tab:blue" for r in ok3])
        for bar, r in zip(bars, ok3):
            ax.annotate(f"{r['vs_stock_gzip']:.2f}x" if r.get("vs_stock_gzip") else "", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=8)
        ax.set_ylabel(f"records/s at p99 <= {ok3[0]['sla_ms']} ms (1 KiB records)")
        ax.set_title("KIP-1121: throughput at the p99 SLA (ratio vs stock gzip)")
        ax.grid(axis="y", alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(ctx.paths.out, "throughput_at_sla.png"), dpi=110)
        plt.close(fig)
        made.append("throughput_at_sla.png")
    if t2:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        series = sorted({(r["jars"], r["codec"], r["mode"], r["level"]) for r in t2})
        for key in series:
            pts = sorted([r for r in t2 if (r["jars"], r["codec"], r["mode"], r["level"]) == key],
                         key=lambda r: r["record_bytes"])
            name = key[1] if key[1] == key[0] else f"{key[0]} jars, {key[1]}"
            ax.plot([p["record_bytes"] for p in pts], [p["mb_s"] for p in pts],
                    marker="o", linestyle="-" if key[2] == "buffered" else "--", label=f"{name} {key[2]} gzip-{key[3]}")
        ax.set_xscale("log")
        ax.set_xlabel("record size (bytes)")
        ax.set_ylabel("MB/s into the gzip stream (uncompressed)")
        ax.set_title("KAFKA-6430: gzip stream throughput by record size")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(ctx.paths.out, "gzip_stream_by_record_size.png"), dpi=110)
        plt.close(fig)
        made.append("gzip_stream_by_record_size.png")
    return made
