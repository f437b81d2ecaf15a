#!/usr/bin/env bash
# ./build.sh bench [--quick] [--only 1,2,3,4,5,6,7,8] [--sla-ms N] [--t7-seconds N] [--t7-pairs N] [--t7-broker-provider]
# Stock Apache Kafka (the release's jars) beside this distribution, same run, same data.
# Writes build/bench/report.md, README-section.md, table*.csv and PNG charts. See bench/README.md.
set -euo pipefail

ROOT="${KC_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
BUILD="${KC_BUILD:-$ROOT/build}"
export KC_ROOT="$ROOT" KC_BUILD="$BUILD"
export KC_UPSTREAM="${KC_UPSTREAM:-$BUILD/upstream}"
export KC_DIST="${KC_DIST:-$(ls -d "$BUILD"/dist/kafka_*/ 2>/dev/null | head -1)}"
KC_DIST="${KC_DIST%/}"
OUT="$BUILD/bench"

QUICK=()
PASS=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) QUICK=(--quick); PASS+=(--quick); shift ;;
        --only|--sla-ms|--t7-seconds|--t7-pairs) PASS+=("$1" "$2"); shift 2 ;;
        --t7-broker-provider) PASS+=("$1"); shift ;;
        -h|--help)
            sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
            echo "Full run: about 141 minutes + 45 per provider on 2 quiet cores; --quick: about 38 + 12 per provider (50 with"
            echo "native-gzip alone). Both print their estimate first."
            echo "Tables: 1 codec x level, 2 gzip stream, 3 p99 SLA, 4 broker side (recompression, gzip-6 validation, cleaner),"
            echo "5 codec micro-benchmark, 6 one producer shared by 4 threads, 7 whole kafka-producer-perf-test.sh runs"
            echo "(fresh and warm broker), 8 consumer: whole kafka-consumer-perf-test.sh runs (gzip-1 and gzip-6)."
            echo "Table 7: --t7-seconds N (records: 25,000 a second), --t7-pairs N, --t7-broker-provider (a provider's runs on"
            echo "fresh brokers that load the provider too; the warm broker, shared by both sides, has none)."
            echo "Primary figure: CPU ms per MB of records (producer, broker, consumer), in interleaved stock/patched pairs,"
            echo "judged against a calibration row (gzip-6, stock vs patched; none printed beside). Methodology: docs/benchmarks.md."
            exit 0 ;;
        *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

log() { printf '[bench] %s\n' "$*" >&2; }
[[ -d "$KC_DIST/libs" ]] || { log "no distribution at $KC_DIST (run ./build.sh first)"; exit 1; }
[[ -d "$KC_UPSTREAM/libs" ]] || { log "no stock jars at $KC_UPSTREAM/libs (run ./build.sh first)"; exit 1; }
mkdir -p "$OUT/logs" "$OUT/classes"

# charts: matplotlib, pinned in requirements.txt; ./build.sh bench runs this in build/venv
python3 -c 'import matplotlib' 2>/dev/null || log "no matplotlib (run through ./build.sh bench, which installs requirements.txt into build/venv): the report will have no charts"

# in-process harness, compiled against the stock jars (it only uses APIs both sides have)
javac -nowarn -d "$OUT/classes" -cp "$KC_UPSTREAM/libs/*" "$ROOT/bench/java/KcBench.java"

# 5. the providers' codec micro-benchmark, if this checkout has it
CODEC_MD="$OUT/codec.md"
if [[ -x "$ROOT/bench/codec/run.sh" || -f "$ROOT/bench/codec/run.sh" ]]; then
    log "running bench/codec/run.sh ${QUICK[*]:-}"
    # --quick: the codec table gets 4 minutes (timeout 240 s; the full run 40), so no QAT container build/run for it
    # (set BENCH_QAT_CONTAINER=auto to force)
    [[ ${#QUICK[@]} -gt 0 ]] && export BENCH_QAT_CONTAINER="${BENCH_QAT_CONTAINER:-no}"
    if timeout "$([[ ${#QUICK[@]} -gt 0 ]] && echo 240 || echo 2400)" \
        bash "$ROOT/bench/codec/run.sh" "${QUICK[@]}" > "$OUT/codec.out" 2> "$OUT/codec.err"; then
        { echo "Output of \`bench/codec/run.sh ${QUICK[*]:-}\` (in process, the providers' harness):"; echo
          cat "$OUT/codec.out"; } > "$CODEC_MD"
    else
        { echo "_bench/codec/run.sh failed or timed out (exit $?); see build/bench/codec.err:_"; echo; echo '```'
          tail -20 "$OUT/codec.err"; echo '```'; } > "$CODEC_MD"
    fi
else
    echo "_bench/codec/run.sh is not in this checkout: the providers' codec micro-benchmark is missing._" > "$CODEC_MD"
fi

exec python3 -u "$ROOT/bench/bench.py" "${PASS[@]}" --codec-text "$CODEC_MD"
