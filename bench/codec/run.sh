#!/usr/bin/env bash
# Codec micro-benchmark: the gzip providers (native-gzip; QAT gzip in QATzip's software mode) against Kafka's
# built-in GzipCompression, in-process, batches of json-records.ndjson records of 16 KiB and 1 MiB each compressed
# separately, levels 1-9, warm-up + median of repeats. Prints a Markdown table; writes Markdown + CSV under
# build/bench/codec/. Standalone (needs ./build.sh done); `./build.sh bench` can call it.
#
#   bench/codec/run.sh [--quick]
#   env: BENCH_PROVIDERS (native,qat)  BENCH_LEVELS (1-9)  BENCH_SIZES (16384,1048576)
#        BENCH_BYTES (bytes per timed pass, 8388608)  BENCH_REPEATS (5)  BENCH_QAT_CONTAINER (auto|no)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VERSION="$(sed -n 's:.*<revision>\(.*\)</revision>.*:\1:p' "$ROOT/pom.xml" | head -1)$(sed -n 's:.*<changelist>\(.*\)</changelist>.*:\1:p' "$ROOT/pom.xml" | head -1)"
DIST="${KC_DIST:-$ROOT/build/dist/kafka_2.13-$VERSION}"
OUT="$ROOT/build/bench/codec"
DATA="${KC_BENCH_DATA:-$ROOT/tests/data}/json-records.ndjson"   # tests/data/README.md
PROVIDERS="${BENCH_PROVIDERS:-native,qat}"
LEVELS="${BENCH_LEVELS:-1-9}"
SIZES="${BENCH_SIZES:-16384,1048576}"
BYTES="${BENCH_BYTES:-8388608}"
REPEATS="${BENCH_REPEATS:-5}"
if [[ "${1:-}" == "--quick" ]]; then BYTES="${BENCH_BYTES:-2097152}"; REPEATS="${BENCH_REPEATS:-3}"; fi

[[ -d "$DIST/libs" ]] || { echo "[codec-bench] no distribution at $DIST: run ./build.sh first" >&2; exit 1; }
[[ -f "$DATA" ]] || { echo "[codec-bench] no data file $DATA" >&2; exit 1; }
mkdir -p "$OUT/classes"
javac -nowarn -proc:none -d "$OUT/classes" -cp "$DIST/libs/*" "$ROOT/bench/codec/CodecBench.java"
JAVA_OPTS=(-Xms1g -Xmx1g -XX:+UseParallelGC)
echo "[codec-bench] $(date -u +%FT%TZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)" >&2

# native (and QAT if QATzip is installed here) on this host
host_providers="$PROVIDERS"
qat_in_container=no
if [[ ",$PROVIDERS," == *,qat,* ]] && ! ls /usr/lib/x86_64-linux-gnu/libqatzip.so.3 >/dev/null 2>&1; then
    host_providers="$(echo ",$PROVIDERS," | sed 's/,qat,/,/; s/^,//; s/,$//')"
    [[ "${BENCH_QAT_CONTAINER:-auto}" != no ]] && qat_in_container=yes
fi
{
    echo "Codec benchmark, $(date -u +%F), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs)), ${BYTES} B per timed pass, median of ${REPEATS} after 2 warm-up passes."
    echo
} > "$OUT/results.md"
if [[ -n "$host_providers" ]]; then
    java "${JAVA_OPTS[@]}" -cp "$OUT/classes:$DIST/libs/*" CodecBench "$DATA" "$OUT" "$host_providers" "$LEVELS" "$SIZES" "$BYTES" "$REPEATS" \
        | tee -a "$OUT/results.md"
fi

# QAT without QATzip here: in the trixie broker image (QATzip installed, no device: software path)
if [[ "$qat_in_container" == yes ]]; then
    # shellcheck source=docker/engine.sh
    . "$ROOT/docker/engine.sh"
    image="localhost/kafka-compress:$VERSION"
    if engine_available && engine_image_exists "$image"; then
        echo "[codec-bench] QAT (software path) in $image with $KC_ENGINE" >&2
        data_dir="$(cd "$(dirname "$DATA")" && pwd)"
        engine run --rm --user 0 --network none --entrypoint java \
            -v "$DIST:$DIST:ro" -v "$OUT:$OUT" -v "$data_dir:$data_dir:ro" "$image" \
            "${JAVA_OPTS[@]}" -cp "$OUT/classes:$DIST/libs/*" CodecBench "$data_dir/$(basename "$DATA")" "$OUT" qat "$LEVELS" "$SIZES" "$BYTES" "$REPEATS" \
            2> >(grep -v -E 'vfio|qatzip.c|level=error' >&2) | tail -n +3 | tee -a "$OUT/results.md"
    else
        echo "[codec-bench] QAT skipped: no QATzip here and no container image $image (./build.sh image)" >&2
    fi
fi
# one CSV with everything
{ head -1 "$(ls "$OUT"/results-*.csv | head -1)"; for f in "$OUT"/results-*.csv; do tail -n +2 "$f"; done; } > "$OUT/results.csv"
echo "[codec-bench] wrote $OUT/results.md and $OUT/results.csv" >&2
