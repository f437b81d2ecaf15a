#!/usr/bin/env bash
# The producer of two commits of this repository side by side in one run (compare.py): each commit's distribution
# built by its own ./build.sh in a worktree under build/compare/, then whole kafka-producer-perf-test.sh runs of
# each with the gzip provider, interleaved with stock 4.3.1's producer (run twice a round: the calibration).
# Standalone (needs ./build.sh build done for the stock jars); not part of ./build.sh bench. Report:
# build/compare/report.md. Keep the machine otherwise quiet while it runs.
#
#   bench/compare/run.sh [options] REV_A REV_B      (REV: a commit, or . for the checkout's own build)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTHONPATH="$ROOT/bench" exec python3 "$ROOT/bench/compare/compare.py" "$@"
