#!/usr/bin/env bash
# Upstream's own tests as our regression gate: runs the test classes that
# Apache Kafka publishes in its -test jars, against the patched jars, for every
# package the patch series touches plus a fixed list. Test files the series adds
# or changes (kafka/*/src/test/java) are compiled here and replace their
# published counterparts. Exclusions, each with its reason: exclusions.txt.
#
# Usage: tests/upstream/gate.sh [--package P]...   (default: the set above)
#        GATE_STOCK=1 tests/upstream/gate.sh ...   (same tests against stock 4.3.1,
#                                                   to check that an exclusion also fails there)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="$ROOT/build"
TREE="$ROOT/kafka"
UP="$BUILD/upstream"
OUT="$BUILD/gate${GATE_STOCK:+-stock}"
VERSION="$(sed -n 's:.*<revision>\(.*\)</revision>.*:\1:p' "$ROOT/pom.xml" | head -1)"
SUFFIX="$(sed -n 's:.*<changelist>\(.*\)</changelist>.*:\1:p' "$ROOT/pom.xml" | head -1)"
log() { printf '[gate] %s\n' "$*" >&2; }

# Always gated, whatever the series touches (issue: foundation).
# Packages are exact (a package's sub-packages are listed when they are meant).
PACKAGES=(
    org.apache.kafka.common.compress
    org.apache.kafka.common.record
    org.apache.kafka.common.record.internal
    org.apache.kafka.storage.internals.log
    org.apache.kafka.clients.producer
    org.apache.kafka.clients.producer.internals
)
# Test classes of the code the series changes that upstream keeps in another
# module's package (the Scala log cleaner tests exercise storage's Cleaner).
CLASSES=(
    kafka.log.LogCleanerTest
    kafka.log.LogCleanerParameterizedIntegrationTest
)
if [[ $# -gt 0 ]]; then
    PACKAGES=()
    CLASSES=()
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --package) PACKAGES+=("$2"); shift 2 ;;
            --class) CLASSES+=("$2"); shift 2 ;;
            *) echo "usage: $0 [--package P]... [--class C]..." >&2; exit 2 ;;
        esac
    done
else
    # plus the package of every source file the series adds or changes
    while read -r f; do
        [[ -n "$f" ]] || continue
        p="$(dirname "${f#*/src/*/java/}")"
        PACKAGES+=("${p//\//.}")
    done < <(git -C "$TREE" diff --name-only upstream -- '*/src/main/java/*.java' '*/src/test/java/*.java')
    mapfile -t PACKAGES < <(printf '%s\n' "${PACKAGES[@]}" | sort -u)
fi

rm -rf "$OUT"
mkdir -p "$OUT/classes" "$OUT/jars"

# --- classpath: upstream's test classpath with the patched jars in place of theirs
CP=()
for j in "$UP"/testlibs/*.jar; do
    name="${j##*/}"
    case "$name" in
        kafka-clients-$VERSION.jar|kafka-server-common-$VERSION.jar|kafka-storage-$VERSION.jar|kafka-server-$VERSION.jar)
            if [[ -z "${GATE_STOCK:-}" ]]; then
                art="${name%-$VERSION.jar}"; mod="${art#kafka-}"
                CP+=("$BUILD/patched/$mod/$art-$VERSION$SUFFIX.jar")
                continue
            fi ;;
    esac
    CP+=("$j")
done

# --- test files the series adds or changes: compile them, shadow the published ones
mapfile -t CHANGED < <(git -C "$TREE" diff --name-only --diff-filter=AMR upstream -- '*/src/test/java/*.java' | sort)
if [[ -z "${GATE_STOCK:-}" && ${#CHANGED[@]} -gt 0 ]]; then
    log "compiling ${#CHANGED[@]} test file(s) the series adds or changes"
    SRCS=("${CHANGED[@]/#/$TREE/}")
    IFS=:; javac -nowarn -proc:none --release 17 -d "$OUT/classes" -cp "${CP[*]}" \
        "${SRCS[@]}" 2>&1 | grep -v '^Note:' >&2 || true; unset IFS
    for f in "${CHANGED[@]}"; do
        c="${f#*/src/test/java/}"; c="${c%.java}.class"
        [[ -f "$OUT/classes/$c" ]] || { log "ERROR: $f did not compile"; exit 1; }
    done
    # test resources the series adds or changes (e.g. META-INF/services of a test provider)
    while read -r r; do
        [[ -n "$r" ]] || continue
        dst="$OUT/classes/${r#*/src/test/resources/}"
        mkdir -p "$(dirname "$dst")"; cp "$TREE/$r" "$dst"
    done < <(git -C "$TREE" diff --name-only --diff-filter=AMR upstream -- '*/src/test/resources/*')
    # published test jars without the classes compiled above (no class twice on the classpath)
    (cd "$OUT/classes" && find . -name '*.class' | sed 's:^\./::') > "$OUT/shadowed.txt"
    for i in "${!CP[@]}"; do
        j="${CP[$i]}"
        if [[ "$j" == *-test.jar ]]; then
            copy="$OUT/jars/${j##*/}"
            cp "$j" "$copy"
            grep -Fxf <(unzip -Z1 "$copy") "$OUT/shadowed.txt" | xargs -r zip -q -d "$copy" >/dev/null || true
            CP[$i]="$copy"
        fi
    done
    CP=("$OUT/classes" "${CP[@]}")
fi

# --- exclusions: "Class" or "Class#method" per line, then " # reason"
EXCLUDE_ARGS=()
while read -r line; do
    entry="${line%%#*}"; entry="$(echo "$entry" | xargs)"
    [[ -n "$entry" ]] || continue
    [[ "$line" == *"#"* ]] || { log "ERROR: exclusion without a reason: $line"; exit 1; }
    EXCLUDE_ARGS+=("-Dkafka.gate.exclude=$entry")
done < <(grep -v '^[[:space:]]*#' "$HERE/exclusions.txt" | grep -v '^[[:space:]]*$' || true)

SELECT=()
for p in "${PACKAGES[@]}"; do SELECT+=(--select-package "$p"); done
# whole-class exclusions also by class name, before the class is loaded: a class that cannot load
# (JUnit 4 "initializationError") never reaches the PostDiscoveryFilter
for e in "${EXCLUDE_ARGS[@]#-Dkafka.gate.exclude=}"; do
    [[ "$e" == *"#"* ]] || SELECT+=(--exclude-classname "^${e//./\\.}\$")
done
# --select-package also takes sub-packages: keep test classes of exactly these packages
INCLUDE="^(($(printf '%s\n' "${PACKAGES[@]}" | sed 's/\./\\./g' | paste -sd'|'))\.[^.]*Tests?([$][^.]*)?"
for c in "${CLASSES[@]}"; do
    SELECT+=(--select-class "$c")
    INCLUDE+="|${c//./\\.}([$][^.]*)?"
done
INCLUDE+=")$"
SELECT+=(--include-classname "$INCLUDE")
log "packages: ${PACKAGES[*]}${CLASSES[*]:+; classes: ${CLASSES[*]}}"
log "against: $([[ -n "${GATE_STOCK:-}" ]] && echo "stock $VERSION jars" || echo "patched $VERSION$SUFFIX jars")"

# the exclusion filter (a JUnit PostDiscoveryFilter, registered by ServiceLoader)
mkdir -p "$OUT/filter/META-INF/services"
javac -nowarn --release 17 -d "$OUT/filter" -cp "$UP/testlibs/junit-platform-console-standalone-1.13.4.jar" "$HERE/GateExclusions.java"
echo "GateExclusions" > "$OUT/filter/META-INF/services/org.junit.platform.launcher.PostDiscoveryFilter"
printf '%s\n' "${EXCLUDE_ARGS[@]#-Dkafka.gate.exclude=}" > "$OUT/exclusions.list"

# upstream runs each module's tests from its folder, where ../config is the
# distribution's config/ (ProducerConfigTest validates config/producer.properties)
mkdir -p "$OUT/cwd"
ln -sfn "$ROOT/config" "$OUT/config"
cd "$OUT/cwd"
IFS=:
set +e
java -Xmx2g -Dkafka.gate.exclusions="$OUT/exclusions.list" \
    -cp "$UP/testlibs/junit-platform-console-standalone-1.13.4.jar:$OUT/filter" \
    org.junit.platform.console.ConsoleLauncher execute \
    --disable-banner --details=summary --disable-ansi-colors \
    --config=junit.jupiter.execution.timeout.default=120s \
    --config=junit.jupiter.extensions.autodetection.enabled=true \
    --reports-dir="$OUT/reports" \
    --class-path="${CP[*]}" "${SELECT[@]}" > "$OUT/output.txt" 2>&1
rc=$?
set -e
unset IFS
# failures with their cause, then JUnit's totals
sed -n '/^Failures (/,/^Test run finished/p' "$OUT/output.txt" | grep -E '^Failures|^  [A-Za-z]|=>' | head -60 >&2 || true
sed -n '/Test run finished/,$p' "$OUT/output.txt" >&2
excluded=$(grep -c . "$OUT/exclusions.list" || true)
log "excluded by tests/upstream/exclusions.txt: $excluded entr$( [[ $excluded == 1 ]] && echo y || echo ies); full output: $OUT/output.txt, XML reports: $OUT/reports"
exit $rc
