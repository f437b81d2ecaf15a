#!/usr/bin/env bash
# Each patch of the series on its own: the tree after patch N compiles, and upstream's tests of what patch N
# touches pass on it (gate.sh with the packages of the Java files it adds or changes, and the Scala test classes
# of the Scala files it changes). A reviewer or `git bisect` meets every one of these trees.
#
# Usage: tests/upstream/each-patch.sh [FIRST [LAST]]   (patch numbers in patches/series; default: all)
#
# Works in a copy of this checkout (build/each-patch/repo: the tracked files, a clone of kafka/, the verified
# upstream artifacts linked), so the checkout's own build is untouched. For each patch: kafka/ checked out at
# the patch's commit, the five patched modules compiled by Maven (not the providers and tools: they build on the
# framework, which the early patches do not have yet), then gate.sh. One line per patch is appended to
# build/each-patch/results.tsv (patch, result, tests passed, minutes, what was gated); the run fails if a patch
# does not compile or its gate fails. Needs ./build.sh build first (kafka/ holding the series).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$ROOT/build/each-patch"
COPY="$OUT/repo"
MODULES=kafka-modules/clients,kafka-modules/server-common,kafka-modules/storage,kafka-modules/server,kafka-modules/core
log() { printf '[each-patch] %s\n' "$*" >&2; }
die() { printf '[each-patch] ERROR: %s\n' "$*" >&2; exit 1; }

mapfile -t SERIES < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$ROOT/patches/series" | grep -v '^$')
FIRST="${1:-1}"
LAST="${2:-${#SERIES[@]}}"
[[ "$FIRST" =~ ^[0-9]+$ && "$LAST" =~ ^[0-9]+$ && $FIRST -ge 1 && $FIRST -le $LAST && $LAST -le ${#SERIES[@]} ]] \
    || die "usage: $0 [FIRST [LAST]], patch numbers from 1 to ${#SERIES[@]}"
[[ -d "$ROOT/kafka/.git" && -d "$ROOT/build/upstream/testlibs" ]] || die "run ./build.sh build first"
mapfile -t COMMITS < <(git -C "$ROOT/kafka" rev-list --reverse upstream..HEAD)
[[ ${#COMMITS[@]} == "${#SERIES[@]}" ]] \
    || die "kafka/ holds ${#COMMITS[@]} commits on upstream, patches/series lists ${#SERIES[@]}: run ./build.sh build"

# the copy: tracked files as they are in the checkout, kafka/ cloned, build/upstream linked (not copied)
rm -rf "$COPY"
mkdir -p "$COPY/build"
(cd "$ROOT" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$COPY"
git clone -q --no-checkout "$ROOT/kafka" "$COPY/kafka"
cp -al "$ROOT/build/upstream" "$COPY/build/upstream" 2>/dev/null || cp -a "$ROOT/build/upstream" "$COPY/build/upstream"

# what patch N touches: packages of its Java files, test classes of its Scala files (FooTest beside Foo)
gate_args() {
    local commit="$1" f p c tests
    tests="$(unzip -Z1 "$COPY/build/upstream/testlibs/kafka_2.13-"*-test.jar)"   # fails the run when it is missing
    git -C "$COPY/kafka" diff --name-only "$commit~1" "$commit" -- '*.java' '*.scala' | while read -r f; do
        case "$f" in
            */src/main/java/*.java|*/src/test/java/*.java)
                p="$(dirname "${f#*/src/*/java/}")"; echo "--package ${p//\//.}" ;;
            */src/test/scala/*.scala)
                # upstream's Scala tests are not laid out by package (core/src/test/scala/unit/kafka/...)
                p="$(git -C "$COPY/kafka" show "$commit:$f" | sed -n 's/^package \([A-Za-z0-9_.]*\).*/\1/p' | head -1)"
                c="${f##*/}"; echo "--class $p.${c%.scala}" ;;
            */src/main/scala/*.scala)
                c="${f#*/src/main/scala/}"; c="${c%.scala}Test"
                # upstream has no test class for some Scala files (BrokerServer): said, not silently skipped
                if grep -qx "$c.class" <<<"$tests"; then echo "--class $(tr / . <<<"$c")"
                else log "$f: upstream has no ${c##*/} to run"; fi ;;
        esac
    done | sort -u
}

status=0
for ((n = FIRST; n <= LAST; n++)); do
    patch="${SERIES[$((n - 1))]}" commit="${COMMITS[$((n - 1))]}" t0=$SECONDS
    [[ "$(git -C "$ROOT/kafka" log -1 --format=%s "$commit")" == "$(sed -n 's/^Subject: \[PATCH[^]]*\] //p' "$ROOT/patches/$patch" | head -1 | cut -c1-40)"* ]] \
        || die "commit $n of kafka/ is not $patch: run ./build.sh build"
    git -C "$COPY/kafka" checkout -q --detach "$commit"
    # from scratch from the lowest module the patch touches on (clients < server-common < storage < server < core):
    # no class of an earlier tree left behind, and every module above recompiled against the changed one
    lowest="$(git -C "$COPY/kafka" diff --name-only "$commit~1" "$commit" | cut -d/ -f1 | sort -u | tr '\n' ' ')"
    wipe=""
    for m in clients server-common storage server core; do
        [[ -n "$wipe" || " $lowest " == *" $m "* ]] && wipe+=" $m"
    done
    for m in $wipe; do rm -rf "$COPY/build/kafka-modules/$m"; done
    mapfile -t args < <(gate_args "$commit")
    log "patch $n/${#SERIES[@]} $patch: compiling; gate: ${args[*]:-nothing (no Java or Scala file)}"
    result=passed passed=0
    if ! (cd "$COPY" && mvn -q -B -Dstyle.color=never package -DskipTests -pl "$MODULES" -am) \
            > "$OUT/$n.build.log" 2>&1; then
        result="did not compile ($OUT/$n.build.log)"
    elif [[ ${#args[@]} -gt 0 ]]; then
        # shellcheck disable=SC2068 (each line is an option and its value)
        if bash "$COPY/tests/upstream/gate.sh" ${args[@]} > "$OUT/$n.gate.log" 2>&1; then
            passed="$(sed -n 's/^\[gate\] passed: \([0-9]*\) tests.*/\1/p' "$OUT/$n.gate.log" | tail -1)"
        else
            result="gate failed ($OUT/$n.gate.log)"
        fi
    fi
    [[ $result == passed ]] || status=1
    printf '%s\t%s\t%s\t%.1f\t%s\n' "$patch" "$result" "${passed:-0}" "$(( (SECONDS - t0) * 10 / 60 ))e-1" \
        "$(echo "${args[*]:-}" | sed 's/--package //g; s/--class //g')" | tee -a "$OUT/results.tsv" >&2
done
exit $status
