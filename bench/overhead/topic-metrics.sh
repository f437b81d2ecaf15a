#!/usr/bin/env bash
# The per-topic compression metrics' cost on a leader append (docs/metrics.md): ns per LogValidator pass over one
# batch beside ns per BrokerTopicStats.updateCompressionStats call, medians of ROUNDS alternating rounds [min-max].
# Usage: bench/overhead/topic-metrics.sh [ROUNDS]   (from the repository root, after ./build.sh)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ROUNDS="${1:-7}"
LIBS="$(ls -d "$ROOT"/build/dist/kafka_*/libs | head -1)"
OUT="$ROOT/build/bench-overhead"; mkdir -p "$OUT/topic-metrics"
javac -nowarn -d "$OUT/topic-metrics" -cp "$LIBS/*" "$ROOT/bench/overhead/TopicMetricsCost.java"
java -Xms1g -Xmx1g -cp "$OUT/topic-metrics:$LIBS/*" TopicMetricsCost "$ROOT/tests/data/json-records.ndjson" "$ROUNDS"
