#!/usr/bin/env bash
# Cold recompression at broker scale (scale.py): one broker with many partitions of closed lz4 segments,
# recompression.lag.ms off and then on, side by side: a probe producer's p99 on another topic, kafka-topics.sh
# --create/--delete times, restart time and mapped time indexes, the time to catch up. Standalone (needs ./build.sh
# done); not part of ./build.sh bench. Report: build/bench/scale/report.md.
#
#   bench/scale/run.sh [--partitions N] [--segments N] [--records N] [--probe-seconds S] [--topic-ops N] [--pairs N]
#                      [--catch-up-seconds S] [--cleaner-io-bytes B]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTHONPATH="$ROOT/bench" exec python3 "$ROOT/bench/scale/scale.py" "$@"
