#!/usr/bin/env bash
# zlib, zlib-ng, libdeflate and ISA-L on the gzip corpus (providers/testkit/corpus: the two reproducers found with strict
# decoding and the entries written by divergences.py): zlib-ng must give zlib's verdict on each (the native-gzip provider
# inflates with it), where libdeflate or ISA-L accept. Needs ./build.sh (zlib-ng under build/), gcc, zlib1g-dev,
# libdeflate-dev, libisal-dev.
#   bench/strict-check/verdicts.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
zng="$root/build/providers/native-gzip/zlib-ng"
[[ -f "$zng/libz-ng.a" ]] || { echo "no $zng/libz-ng.a: run ./build.sh first" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
gcc -O1 -Wall -I"$zng/include" -c -o "$tmp/zng.o" "$here/verdicts-zng.c"
gcc -O1 -Wall -o "$tmp/verdicts" "$here/verdicts.c" "$tmp/zng.o" "$zng/libz-ng.a" -lz -ldeflate -lisal
for f in "$root"/providers/testkit/corpus/*.hex; do
    echo "$(basename "$f" .hex) $(grep -v '^#' "$f" | tr -d ' \n')"
done | "$tmp/verdicts"
