#!/usr/bin/env bash
# The broker's LogValidator alone, in process (ValidatorBench.java): lz4 batches of about 1 MiB recompressed into a
# gzip-6 topic, and gzip-6 batches validated in place, with the built-in codec and with native-gzip, one thread,
# thread CPU per MB of records after a warm-up. Standalone (needs ./build.sh done); not part of ./build.sh bench.
#
#   bench/validator/run.sh [SECONDS [BATCH_BYTES]]   (default 15 s per row, batches of 1 MiB of records)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VERSION="$(sed -n 's:.*<revision>\(.*\)</revision>.*:\1:p' "$ROOT/pom.xml" | head -1)$(sed -n 's:.*<changelist>\(.*\)</changelist>.*:\1:p' "$ROOT/pom.xml" | head -1)"
DIST="${KC_DIST:-$ROOT/build/dist/kafka_2.13-$VERSION}"
OUT="$ROOT/build/bench/validator"
DATA="${KC_BENCH_DATA:-$ROOT/tests/data}/json-records.ndjson"
SECONDS_PER_ROW="${1:-15}"
BATCH_BYTES="${2:-1048576}"
[[ -d "$DIST/libs" ]] || { echo "[validator-bench] no distribution at $DIST: run ./build.sh first" >&2; exit 1; }
mkdir -p "$OUT/classes"
javac -nowarn -proc:none -d "$OUT/classes" -cp "$DIST/libs/*" "$ROOT/bench/validator/ValidatorBench.java"
for source in lz4 gzip; do
    for provider in builtin io.kafkacompress.nativegzip.NativeGzipCompressionService; do
        java -Xms1g -Xmx1g -XX:+UseG1GC -cp "$OUT/classes:$DIST/libs/*" ValidatorBench "$DATA" "$source" "$provider" \
            "$SECONDS_PER_ROW" "$BATCH_BYTES" 2> >(grep -v -E '^SLF4J|WARN' >&2)
    done
done
