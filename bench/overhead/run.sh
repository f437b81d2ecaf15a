#!/usr/bin/env bash
# KIP-1121 no-provider cost check: the built-in codecs through kafka-clients, stock
# 4.3.1 jar vs the patched jar, alternating JVMs, same JDK and flags.
# Usage: bench/overhead/run.sh [PAIRS] [BATCH_BYTES]   (from the repository root, after ./build.sh)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PAIRS="${1:-3}"; BATCH="${2:-65536}"
DATA="${KC_BENCH_DATA:-$ROOT/tests/data}/json-records.ndjson"   # tests/data/README.md
LIBS="$ROOT/build/upstream/libs"
PATCHED="$(ls "$ROOT"/build/kafka-modules/clients/kafka-clients-*-compress.*.jar | grep -v original | head -1)"
OUT="$ROOT/build/bench-overhead"; mkdir -p "$OUT/classes"
# the codec libraries libs/ holds (pom.xml pins them), whatever their versions
codec() { ls "$LIBS"/"$1"-[0-9]*.jar | head -1; }
DEPS="$(codec zstd-jni):$(codec lz4-java):$(codec snappy-java):$LIBS/slf4j-api-1.7.36.jar"
javac -nowarn -d "$OUT/classes" -cp "$LIBS/kafka-clients-4.3.1.jar" "$ROOT/bench/overhead/Overhead.java"
JAVA_OPTS=(-Xms1g -Xmx1g -XX:+UseParallelGC)
: > "$OUT/results.txt"
for i in $(seq 1 "$PAIRS"); do
    for side in stock patched; do
        jar="$LIBS/kafka-clients-4.3.1.jar"; [[ $side == patched ]] && jar="$PATCHED"
        java "${JAVA_OPTS[@]}" -cp "$OUT/classes:$jar:$DEPS" Overhead "$DATA" "$BATCH" 5 1.0 \
            | sed "s/^/$side /" | tee -a "$OUT/results.txt"
    done
done
# summary: median over the pairs per side and codec, and patched/stock
python3 - "$OUT/results.txt" <<'PY'
import sys, statistics, collections
r = collections.defaultdict(lambda: ([], []))
for line in open(sys.argv[1]):
    side, codec, c, d = line.split()
    r[(side, codec)][0].append(float(c)); r[(side, codec)][1].append(float(d))
print(f"{'codec':6} {'stock comp':>11} {'patched comp':>13} {'ratio':>6}  {'stock decomp':>13} {'patched decomp':>15} {'ratio':>6}   (MB/s uncompressed)")
for codec in ("gzip", "lz4", "zstd"):
    sc, sd = map(statistics.median, r[("stock", codec)]); pc, pd = map(statistics.median, r[("patched", codec)])
    print(f"{codec:6} {sc:11.1f} {pc:13.1f} {pc/sc:6.3f}  {sd:13.1f} {pd:15.1f} {pd/sd:6.3f}")
PY
