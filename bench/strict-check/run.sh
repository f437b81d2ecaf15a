#!/usr/bin/env bash
# The measurement behind providers/native-gzip/README.md "Cost of strictness": CPU time (perf's task-clock, not
# wall time, as the machine is shared) of checking vs decoding 100 MB of output, 16 KiB and 1 MiB batches of
# json-records.ndjson, best of 5, setup time subtracted. Needs gcc, perf, zlib1g-dev, libdeflate-dev.
#   bench/strict-check/run.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
data="${KC_BENCH_DATA:-$here/../../tests/data}/json-records.ndjson"   # tests/data/README.md
bin="$(mktemp -d)/harness"
gcc -O2 -Wall -Werror -o "$bin" "$here/harness.c" "$here/deflatecheck.c" -lz -ldeflate -lpthread
cpu_ms() { # best of 5
    local best=""
    for _ in 1 2 3 4 5; do
        t=$(perf stat -x, -e task-clock "$bin" "$data" "$1" "$2" 2>&1 >/dev/null | awk -F, '/task-clock/{print $1}')
        best=$(awk -v a="$t" -v b="${best:-$t}" 'BEGIN{print (a<b)?a:b}')
    done
    echo "$best"
}
for bs in 16384 1048576; do
    setup=$(cpu_ms 3 "$bs")
    for m in 0 1 2; do
        name=$(case $m in 0) echo "zlib-rules check";; 1) echo "libdeflate decode";; 2) echo "zlib decode";; esac)
        t=$(cpu_ms "$m" "$bs")
        awk -v n="$name" -v bs="$bs" -v t="$t" -v s="$setup" 'BEGIN{printf "%8d B batches  %-18s %6.0f MB/s\n", bs, n, 100000/(t-s)}'
    done
done
