"""Summary table of a ducktape run: tests/systest.sh RUN_DIR  [--status]."""

import glob
import json
import os
import sys


def load(run_dir):
    reports = sorted(glob.glob(os.path.join(run_dir, "results", "*", "report.json")), key=os.path.getmtime)
    if not reports:
        return None
    with open(reports[-1]) as f:
        return json.load(f)


def rows(report):
    for r in report.get("results", []):
        data = r.get("data") or {}
        status = str(r.get("test_status", "?")).upper()
        note = ""
        if isinstance(data, dict) and data.get("skipped"):
            status, note = "SKIP", str(data["skipped"])
        elif isinstance(data, dict) and data.get("partial"):
            note = "partial: " + str(data["partial"])
        elif status == "FAIL":
            note = (r.get("summary") or "").strip().splitlines()[-1:] or [""]
            note = note[0][:100]
        name = r.get("test_id", "?").replace("kafkacompress_systest.tests.", "")
        yield name, status, float(r.get("run_time_seconds", 0)), note, data


def main():
    status_only = "--status" in sys.argv
    run_dir = [a for a in sys.argv[1:] if not a.startswith("--")][0]
    report = load(run_dir)
    if report is None:
        print("fail" if status_only else "no ducktape report under %s/results" % run_dir)
        return 1
    rs = list(rows(report))
    if status_only:
        print("pass" if rs and all(s in ("PASS", "SKIP") for _, s, _, _, _ in rs) else "fail")
        return 0
    w = max([len(n) for n, _, _, _, _ in rs] + [4])
    print("\n%-*s  %-6s  %8s  %s" % (w, "test", "result", "duration", "note"))
    print("-" * (w + 30))
    for n, s, t, note, _ in rs:
        print("%-*s  %-6s  %7.0fs  %s" % (w, n, s, t, note))
    print("-" * (w + 30))
    counts = {}
    for _, s, _, _, _ in rs:
        counts[s] = counts.get(s, 0) + 1
    print("%s; tests took %.0fs" % (", ".join("%d %s" % (v, k.lower()) for k, v in sorted(counts.items())),
                                     sum(t for _, _, t, _, _ in rs)))
    # the numbers tests report (codec matrix table, recompression sizes, ...)
    for n, s, t, note, data in rs:
        if isinstance(data, dict) and data.get("table"):
            print("\n" + n)
            print(data["table"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
