#!/usr/bin/env bash
# Cold recompression of small batches (cold.py): records sent in small lz4 batches (linger.ms=0, batch.size=16384)
# rewritten to zstd by recompression.lag.ms, with the cleaner merging batches (recompression.batch.bytes, default
# 1 MiB) and without (0), in interleaved pairs, beside the zstd CLI's own speed on the same records
# (zstd -b<level> -B1M). Standalone (needs ./build.sh done); not part of ./build.sh bench. Report:
# build/bench/cold/report.md.
#
#   bench/cold/run.sh [--records N] [--rate R] [--level L] [--pairs N]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTHONPATH="$ROOT/bench" exec python3 "$ROOT/bench/cold/cold.py" "$@"
