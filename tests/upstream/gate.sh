#!/usr/bin/env bash
# Upstream's own tests as our regression gate: runs the test classes that
# Apache Kafka publishes in its -test jars, against the patched jars, for every
# package the patch series touches plus a fixed list. Test files the series adds
# or changes (kafka/*/src/test/java) are compiled here and replace their
# published counterparts. Exclusions, each with its reason: exclusions.txt.
#
# Each package (and the class list; the two longest packages in halves) runs in its own JVM, three JVMs at a time
# (GATE_FORKS); upstream's @Flaky tests run apart, as upstream's CI quarantines them. As in upstream's CI, a failed test is
# retried in a fresh JVM (once; @Flaky ones up to three times); a test that fails
# every attempt fails the gate, and tests that passed only on retry are listed.
#
# Usage: tests/upstream/gate.sh [--package P]... [--class C]...   (default: the set above)
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
# module's package (the Scala log cleaner tests exercise storage's Cleaner), and
# of the Scala code the series changes in core (the broker's request handlers
# and LogManager, patch 0029; the produce answers and their log line in ReplicaManager and KafkaApis, patch 0004;
# ReplicaManager's compression metrics, patch 0030; the topic configurations in
# LogConfig, patches 0006, 0008 and 0031; the broker's configuration, which defines
# max.decompressed.message.bytes, patch 0006, and the provider keys, patch 0029; the offset every
# replica holds, which Partition and the replica fetcher keep on each log, patch 0039), which
# the package scan of Java files misses.
CLASSES=(
    kafka.server.KafkaConfigTest
    kafka.log.LogConfigTest
    kafka.log.LogCleanerTest
    kafka.log.LogCleanerParameterizedIntegrationTest
    kafka.log.LogManagerTest
    kafka.server.KafkaRequestHandlerTest
    kafka.server.KafkaApisTest
    kafka.server.ReplicaManagerTest
    kafka.metrics.MetricsTest
    kafka.cluster.PartitionTest
    kafka.server.ReplicaFetcherThreadTest
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
        kafka-clients-$VERSION.jar|kafka-server-common-$VERSION.jar|kafka-storage-$VERSION.jar|kafka-server-$VERSION.jar|kafka_2.13-$VERSION.jar)
            if [[ -z "${GATE_STOCK:-}" ]]; then
                art="${name%-$VERSION.jar}"; mod="${art#kafka-}"; [[ $art == kafka_2.13 ]] && mod=core
                CP+=("$BUILD/kafka-modules/$mod/$art-$VERSION$SUFFIX.jar")
                continue
            fi ;;
    esac
    CP+=("$j")
done

# --- test files the series adds or changes: compile them, shadow the published ones
mapfile -t CHANGED < <(git -C "$TREE" diff --name-only --diff-filter=AMR upstream -- '*/src/test/java/*.java' | sort)
mapfile -t CHANGED_SCALA < <(git -C "$TREE" diff --name-only --diff-filter=AMR upstream -- '*/src/test/scala/*.scala' | sort)
if [[ -z "${GATE_STOCK:-}" && $((${#CHANGED[@]} + ${#CHANGED_SCALA[@]})) -gt 0 ]]; then
    log "compiling ${#CHANGED[@]} Java and ${#CHANGED_SCALA[@]} Scala test file(s) the series adds or changes"
    # "|| true": grep -v exits 1 when it filters every line (a clean compile), and a compiler's own status is not
    # what decides: every file's class is checked below, and a missing one fails the gate with its file's name
    if [[ ${#CHANGED[@]} -gt 0 ]]; then
        SRCS=("${CHANGED[@]/#/$TREE/}")
        IFS=:; javac -nowarn -proc:none --release 17 -d "$OUT/classes" -cp "${CP[*]}" \
            "${SRCS[@]}" 2>&1 | grep -v '^Note:' >&2 || true; unset IFS
    fi
    # the Scala ones with the compiler of upstream's Scala release (upstream/pom.xml fetches it into scalac/,
    # checked against upstream/artifacts.sha256 with the rest)
    if [[ ${#CHANGED_SCALA[@]} -gt 0 ]]; then
        SRCS=("${CHANGED_SCALA[@]/#/$TREE/}")
        SCALAC_CP=("$UP"/scalac/scala-compiler-*.jar "$UP"/testlibs/scala-library-*.jar "$UP"/testlibs/scala-reflect-*.jar)
        IFS=:; java -Xmx1g -cp "${SCALAC_CP[*]}" scala.tools.nsc.Main -release 17 -nowarn -d "$OUT/classes" \
            -classpath "$OUT/classes:${CP[*]}" "${SRCS[@]}" >&2 || true; unset IFS
    fi
    for f in "${CHANGED[@]}"; do
        c="${f#*/src/test/java/}"; c="${c%.java}.class"
        [[ -f "$OUT/classes/$c" ]] || { log "ERROR: $f did not compile"; exit 1; }
    done
    for f in "${CHANGED_SCALA[@]}"; do
        # upstream's Scala tests are not laid out by package (core/src/test/scala/unit/kafka/...)
        p="$(sed -n 's/^package \([A-Za-z0-9_.]*\).*/\1/p' "$TREE/$f" | head -1)"; c="${f##*/}"
        [[ -f "$OUT/classes/${p//.//}/${c%.scala}.class" ]] || { log "ERROR: $f did not compile"; exit 1; }
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
    entry="${line%%[[:space:]]#*}"; entry="$(echo "$entry" | xargs)"
    [[ -n "$entry" ]] || continue
    [[ "$line" == *[[:space:]]"#"* ]] || { log "ERROR: exclusion without a reason: $line"; exit 1; }
    EXCLUDE_ARGS+=("-Dkafka.gate.exclude=$entry")
done < <(grep -v '^[[:space:]]*#' "$HERE/exclusions.txt" | grep -v '^[[:space:]]*$' || true)

# whole-class exclusions also by class name, before the class is loaded: a class that cannot load
# (JUnit 4 "initializationError") never reaches the PostDiscoveryFilter
EXCLUDE_CLASSES=()
for e in "${EXCLUDE_ARGS[@]#-Dkafka.gate.exclude=}"; do
    [[ "$e" == *"#"* ]] || EXCLUDE_CLASSES+=(--exclude-classname "^${e//./\\.}\$")
done
log "packages: ${PACKAGES[*]}${CLASSES[*]:+; classes: ${CLASSES[*]}}"
log "against: $([[ -n "${GATE_STOCK:-}" ]] && echo "stock $VERSION jars" || echo "patched $VERSION$SUFFIX jars")"

# the exclusion filter (a JUnit PostDiscoveryFilter, registered by ServiceLoader)
mkdir -p "$OUT/filter/META-INF/services"
javac -nowarn --release 17 -d "$OUT/filter" -cp "$UP/testlibs/junit-platform-console-standalone-1.13.4.jar" "$HERE/GateExclusions.java"
echo "GateExclusions" > "$OUT/filter/META-INF/services/org.junit.platform.launcher.PostDiscoveryFilter"
printf '%s\n' "${EXCLUDE_ARGS[@]#-Dkafka.gate.exclude=}" > "$OUT/exclusions.list"

# upstream runs each module's tests from its folder, where ../config is the
# distribution's config/ (ProducerConfigTest validates config/producer.properties)
mkdir -p "$OUT/cwd" "$OUT/logs" "$OUT/reports"
ln -sfn "$ROOT/config" "$OUT/config"
cd "$OUT/cwd"

# junit RUN [java -D...]... -- [selectors]...: one JVM, reports in $OUT/reports/RUN.
# upstream's KafkaPostDiscoveryFilter (kafka-test-common-util) is on the classpath as in
# upstream's build: @Flaky tests are left out unless -Dkafka.test.run.flaky=true, which runs only them.
junit() {
    local run="$1"; shift
    local props=()
    while [[ "$1" != "--" ]]; do props+=("$1"); shift; done
    shift
    local rc
    IFS=:
    set +e
    java -Xmx2g -Dkafka.gate.exclusions="$OUT/exclusions.list" "${props[@]}" \
        -cp "$UP/testlibs/junit-platform-console-standalone-1.13.4.jar:$OUT/filter" \
        org.junit.platform.console.ConsoleLauncher execute \
        --disable-banner --details=summary --disable-ansi-colors \
        --config=junit.jupiter.execution.timeout.default=120s \
        --config=junit.jupiter.extensions.autodetection.enabled=true \
        --reports-dir="$OUT/reports/$run" \
        --class-path="${CP[*]}" "${EXCLUDE_CLASSES[@]}" "$@" > "$OUT/logs/$run.txt" 2>&1
    rc=$?
    set -e
    unset IFS
    # the forks append whole logs, one at a time
    ( flock 9; cat "$OUT/logs/$run.txt" >> "$OUT/output.txt" ) 9>"$OUT/output.lock"
    # 0: all passed, 1: some failed; anything else (or no report) is the runner failing
    if [[ $rc -gt 1 ]] || ! ls "$OUT/reports/$run"/TEST-*.xml >/dev/null 2>&1; then
        log "ERROR: the JUnit run $run did not complete (exit $rc): see $OUT/logs/$run.txt"
        tail -20 "$OUT/logs/$run.txt" >&2
        return 2
    fi
    return 0
}
report() { python3 "$HERE/reports.py" "$@"; }
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

# selectors of one group: a package's test classes (exactly that package), the classes of a package whose names
# begin with a letter of a range or not ("P:A-K", "P:^A-K": the halves of a long package), or the listed classes
selectors() {
    if [[ "$1" == classes ]]; then
        local c re=""
        for c in "${CLASSES[@]}"; do echo --select-class; echo "$c"; re+="${re:+|}${c//./\\.}"; done
        echo --include-classname; echo "^($re)([\$][^.]*)?\$"
    else
        local p="${1%:*}" first="[^.]"
        [[ "$1" == *:* ]] && first="[${1##*:}]"
        echo --select-package; echo "$p"
        echo --include-classname; echo "^${p//./\\.}\.$first[^.]*Tests?([\$][^.]*)?\$"
    fi
}

# retry RUN FLAKY ATTEMPTS FILE: rerun the test methods in FILE, each round in a fresh JVM, up to
# ATTEMPTS times (upstream's CI: one retry for tests, three for @Flaky ones); FILE keeps what never passed
retry() {
    local run="$1" flaky="$2" attempts="$3" file="$4" i
    for ((i = 1; i <= attempts; i++)); do
        [[ -s "$file" ]] || return 0
        local classes=() sel=() c
        mapfile -t classes < <(sed 's/#.*//' "$file" | sort -u)
        for c in "${classes[@]}"; do sel+=(--select-class "$c"); done
        log "retry $i/$attempts of $(wc -l < "$file") failed test method(s): $(paste -sd' ' "$file")"
        cp "$file" "$OUT/$run-retry$i.only"
        junit "$run-retry$i" -Dkafka.test.run.flaky="$flaky" -Dkafka.gate.only="$OUT/$run-retry$i.only" -- "${sel[@]}" || true
        # still failing: failed again, or did not run at all
        grep -Fxv -f <(report passed "$OUT/reports/$run-retry$i" 2>/dev/null || true) "$OUT/$run-retry$i.only" > "$file" || true
        comm -23 <(sort "$OUT/$run-retry$i.only") <(sort "$file") >> "$OUT/passed-on-retry.txt"
    done
}

rm -f "$OUT/output.txt"
: > "$OUT/failed.txt"
: > "$OUT/passed-on-retry.txt"
runner_failed=0
# the two longest packages run as two JVMs each: the test classes whose names begin with a letter of a range, and
# the rest (the classes' own times in the CI run of 2026-11-29: org.apache.kafka.server A-K 585 s, the rest 711 s;
# org.apache.kafka.clients.consumer A-C 720 s, which is the CooperativeStickyAssignorTest, the rest 560 s)
declare -A HALVES=([org.apache.kafka.server]="A-K ^A-K" [org.apache.kafka.clients.consumer]="A-C ^A-C")
GROUPS_=()
for p in "${PACKAGES[@]}"; do
    if [[ -n "${HALVES[$p]:-}" ]]; then
        for r in ${HALVES[$p]}; do GROUPS_+=("$p:$r"); done
    else
        GROUPS_+=("$p")
    fi
done
[[ ${#CLASSES[@]} -gt 0 ]] && GROUPS_+=(classes)
ALL_SELECTORS=()
for g in "${GROUPS_[@]}"; do
    mapfile -t sel < <(selectors "$g")
    ALL_SELECTORS+=("${sel[@]}")
done

# run_group G: one group's JVM; leaves its test count in $OUT/G.count, what failed in $OUT/G.failed
run_group() {
    local g="$1" t0=$SECONDS sel n f s rc=0
    mapfile -t sel < <(selectors "$g")
    junit "$g" -- "${sel[@]}" || rc=1
    read -r n f s < <(report counts "$OUT/reports/$g" 2>/dev/null || echo "0 0 0")
    echo "$n" > "$OUT/$g.count"
    log "$g: $n tests, $f failed, $s skipped ($(mmss $((SECONDS - t0))))"
    report failed "$OUT/reports/$g" > "$OUT/$g.failed" || rc=1   # unreadable reports must not pass
    return $rc
}

# GATE_FORKS JVMs at a time (default 3), each taking the next group from a queue, longest first. Upstream's Gradle
# build runs maxParallelForks = the number of cores; one JVM more here, because upstream's cluster tests in
# org.apache.kafka.server wait on brokers and controllers more than they compute (a sixth to a third of one core):
# the assignor tests of org.apache.kafka.clients.consumer, which keep one core busy for 20 minutes, start beside the
# two halves of the cluster tests, and the other groups follow. Those assignor tests carry their own timeouts, which
# load can make them miss: what fails is retried once every fork is done, one group at a time, alone on the machine
# (upstream's CI retries a failed test once).
FORKS="${GATE_FORKS:-3}"
LONG_FIRST=(org.apache.kafka.clients.consumer:A-C org.apache.kafka.server:^A-K org.apache.kafka.server:A-K
            org.apache.kafka.clients.consumer:^A-C classes)
{
    for g in "${LONG_FIRST[@]}"; do printf '%s\n' "${GROUPS_[@]}" | grep -Fx -- "$g" || true; done
    printf '%s\n' "${GROUPS_[@]}" | grep -Fxv -f <(printf '%s\n' "${LONG_FIRST[@]}") || true
} > "$OUT/queue"
next_group() { # prints and removes the queue's first group (nothing when it is empty)
    ( flock 9; head -n1 "$OUT/queue"; sed -i 1d "$OUT/queue" ) 9>"$OUT/queue.lock"
}
fork() {
    local g rc=0
    while g="$(next_group)" && [[ -n "$g" ]]; do
        run_group "$g" || rc=1
    done
    return $rc
}
FORK_PIDS=()
for ((i = 1; i <= FORKS; i++)); do
    fork &
    FORK_PIDS+=($!)
done
for p in "${FORK_PIDS[@]}"; do wait "$p" || runner_failed=1; done
for g in "${GROUPS_[@]}"; do
    if [[ -f "$OUT/$g.failed" ]]; then retry "$g" false 1 "$OUT/$g.failed"; fi   # no file: reported below
done
total=0
for g in "${GROUPS_[@]}"; do
    [[ -f "$OUT/$g.count" && -f "$OUT/$g.failed" ]] || { log "ERROR: group $g did not run"; runner_failed=1; continue; }
    total=$((total + $(cat "$OUT/$g.count")))
    cat "$OUT/$g.failed" >> "$OUT/failed.txt"
done
# upstream's quarantine: the @Flaky tests of the same classes, three retries
t0=$SECONDS
junit flaky -Dkafka.test.run.flaky=true -- "${ALL_SELECTORS[@]}" || runner_failed=1
read -r n f s < <(report counts "$OUT/reports/flaky" 2>/dev/null || echo "0 0 0")
total=$((total + n))
log "@Flaky tests (upstream's quarantine): $n tests, $f failed ($(mmss $((SECONDS - t0))))"
report failed "$OUT/reports/flaky" > "$OUT/flaky.failed" || runner_failed=1   # unreadable reports must not pass
retry flaky true 3 "$OUT/flaky.failed"
cat "$OUT/flaky.failed" >> "$OUT/failed.txt"

excluded=$(grep -c . "$OUT/exclusions.list" || true)
if [[ -s "$OUT/passed-on-retry.txt" ]]; then
    log "passed on retry (failed first, as upstream's CI allows): $(paste -sd' ' "$OUT/passed-on-retry.txt")"
fi
log "excluded by tests/upstream/exclusions.txt: $excluded entr$( [[ $excluded == 1 ]] && echo y || echo ies); output: $OUT/output.txt, logs: $OUT/logs, XML reports: $OUT/reports"
if [[ -s "$OUT/failed.txt" ]]; then
    log "FAILED: $(wc -l < "$OUT/failed.txt") test method(s) failed every attempt:"
    while read -r t; do
        echo "  $t" >&2
        c="${t%#*}"; m="${t#*#}"
        # its cause, from the launcher's summary of the last attempt
        grep -h -A1 -F ":${c##*.}:$m(" "$OUT"/logs/*.txt 2>/dev/null | grep -E '^ +=>' | tail -1 >&2 || true
    done < "$OUT/failed.txt"
    exit 1
fi
[[ $runner_failed == 0 ]] || { log "FAILED: a JUnit run did not complete"; exit 1; }
log "passed: $total tests in ${#GROUPS_[@]} group(s) + the @Flaky quarantine"
