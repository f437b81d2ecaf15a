#!/usr/bin/env bash
# The one entry point of this repository: builds the patched Apache Kafka
# distribution, runs it, tests it, and drives images, system tests and
# benchmarks. `./build.sh --help` lists the subcommands.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$ROOT/build"
TREE="$ROOT/kafka"
PATCHES="$ROOT/patches"
LOCK="$ROOT/upstream/artifacts.sha256"
# third-party artifacts our own modules ship beyond upstream's libs/: qat-java (in libs/), protobuf-java and
# opentelemetry-proto (shaded into our kafka-clients); paths relative to Maven's local repository
EXTRA_LOCK="$ROOT/upstream/extra-artifacts.sha256"
# the Maven plugins the build runs (versions pinned in pom.xml's pluginManagement) and their dependencies, as in
# Maven's local repository; written by ./build.sh lock, checked before any of them compiles or packages anything
PLUGIN_LOCK="$ROOT/upstream/plugin-artifacts.sha256"
UPSTREAM_OUT="$BUILD/upstream"

# The pinned release lives in pom.xml only; everything else reads it from there.
pom_prop() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$ROOT/pom.xml" | head -1; }
KAFKA_VERSION="$(pom_prop revision)"
SCALA_VERSION="$(pom_prop kafka.scala.version)"
COMMIT_ID="$(pom_prop kafka.commitId)"
SUFFIX="$(pom_prop changelist)"            # "-compress.1"
DIST_VERSION="$KAFKA_VERSION$SUFFIX"
DIST_NAME="kafka_${SCALA_VERSION}-${DIST_VERSION}"
DIST="$BUILD/dist/$DIST_NAME"

# upstream artifact -> folder under kafka/ (upstream's repository layout)
MODULES=(kafka-clients:clients kafka-server-common:server-common kafka-storage:storage kafka-server:server kafka_2.13:core)

log() { printf '[build.sh] %s\n' "$*" >&2; }
die() { printf '[build.sh] ERROR: %s\n' "$*" >&2; exit 1; }
# batch mode and no colours: plain text in logs and CI output. Debian's Maven 3.8.7
# prints ESC[0m codes even so, which the filter removes.
mvn_q() {
    (cd "$ROOT" && set -o pipefail && mvn -q -B -Dstyle.color=never "$@" 2>&1 \
        | sed -u -e 's/\x1b\[[0-9;]*m//g' -e '/^$/d' >&2)
}

elapsed() { # seconds since $1 (a $SECONDS value), as "42 s" or "3 min 05 s"
    local s=$((SECONDS - $1))
    if ((s < 60)); then echo "$s s"; else printf '%d min %02d s' $((s / 60)) $((s % 60)); fi
}
# timed WHAT COMMAND...: says what a long step does, runs it, says how long it took
timed() {
    local what="$1" t0=$SECONDS; shift
    log "$what ..."
    "$@"
    log "$what: done in $(elapsed "$t0")"
}

usage() {
    cat <<EOF
Usage: ./build.sh [SUBCOMMAND] [ARGS]

Builds Apache Kafka $KAFKA_VERSION (Scala $SCALA_VERSION, upstream commit $COMMIT_ID)
with the patch series in patches/, as the distribution $DIST_NAME.

Subcommands:
  build            (default) fetch and verify upstream, apply the series to kafka/,
                   compile the patched jars and providers, assemble build/dist/
  run [--dir D]    build if needed, then start a single-node KRaft broker on
                   127.0.0.1:9092 in the foreground (data under build/run/, or D)
  test             build, then checkstyle (below), upstream's test gate and every
                   project test except the fresh-machine test
  test --quick     build, then checkstyle and the project tests that need no container
                   engine (tests/project without the "container" and "fresh" marks; no gate)
  test --full      everything: test, plus the fresh-machine test (tests/project
                   /test_fresh_machine.py: Debian 12 and 13 containers from scratch)
  gate             run only upstream's test gate against the patched jars
  gate --each-patch [FIRST [LAST]]
                   each patch on its own: the tree after it compiles and upstream's tests
                   of what it touches pass (tests/upstream/each-patch.sh; how long a patch
                   takes: docs/testing.md)
  checkstyle [F..] upstream's checkstyle rules, import control and import order on every
                   Java file the series adds or changes (or on the files F); --help for more
  image            build the broker image and the test-node image (docker or podman)
  systest [TEST..] run the ducktape system tests on containers of the test-node image
  bench [--quick]  run the benchmarks, stock Kafka $KAFKA_VERSION beside this distribution
  docs             build if needed, then write docs/configuration.md (every setting the series
                   adds) from the ConfigDefs of the patched jars and the release's
                   (tools/config-docs/ConfigDocs.java)
  docs --check     the same, but only compare: fails when docs/configuration.md differs
  source           only fetch upstream and (re)materialize kafka/ with the series
  lock             re-record upstream/artifacts.sha256 from what Maven fetched, and
                   upstream/plugin-artifacts.sha256 from the build plugins it resolved
                   (maintainers, after changing the pinned release or a plugin)
  lock --python    re-record requirements.txt's hashes (after changing a pin)
  lock --checkstyle  re-record tools/checkstyle/artifacts.sha256 (after changing its version)
  lock --newest    re-record upstream/newest-upstream-libs.sha256: the jars of stock Apache Kafka
                   $NEWEST_RELEASES that the upgrade system test's nodes run (test-only)
  clean            remove build/ (kafka/ is kept; remove it by hand to re-materialize)
  -h, --help       this help; SUBCOMMAND --help: that subcommand's (builds nothing)

Set-up: on Debian 12/13 each subcommand first installs the system packages it
needs (apt-get, as root or with passwordless sudo; otherwise it prints the
apt-get line to run and stops). Python tools (pytest, ducktape, ...) go into
build/venv from requirements.txt.

Environment: JAVA_HOME selects the JDK (17 or newer); MAVEN_OPTS is passed to Maven.
EOF
}

# ---------------------------------------------------------------------------
# system packages: the one list of what the subcommands need from the system
# (Debian 12 bookworm and 13 trixie package names). Each subcommand checks its
# groups first, installs what is missing with apt-get as root or with
# passwordless sudo, and otherwise stops before doing anything else, printing
# the one apt-get line to run.
#
#   group   who needs it
#   build   every subcommand that builds (all but clean and help)
#   python  test, gate, systest, bench: the virtual environment build/venv (and kcat, for the tests)
#   engine  test (without --quick), image, systest: rootful podman, when no Docker engine answers
#   ssh     test (without --quick), systest: per-run keys and logins of the test-node containers
#
# A package counts as present when dpkg has it installed, or when its probe (third
# column) succeeds, e.g. a JDK 17+ that is not Debian's.
system_packages() {
    cat <<'LIST'
# package                 group   probe        what for
default-jdk-headless      build   jdk17        javac, jar, java 17+ (bookworm: 17, trixie: 21)
maven                     build   cmd:mvn      builds the patched modules and the providers
git                       build   cmd:git      kafka/ is a git repository: pristine upstream + git am of the series
unzip                     build   cmd:unzip    unpacks the upstream source artifacts
gcc                       build   cmd:gcc      compiles native-gzip's JNI glue and zlib-ng (and psutil, for ducktape)
make                      build   cmd:make     builds zlib-ng, native-gzip's inflater, from its pinned source
python3-pip               build   pip          fetches that source (`pip download` of zlib-ng's sdist, SHA-256 checked, kept in build/); python3 writes LICENSE and NOTICE
libc6-dev                 build   -            C library headers for that
libisal-dev               build   -            ISA-L headers (native-gzip; pulls in libisal2)
libdeflate-dev            build   -            libdeflate headers (native-gzip; pulls in libdeflate0)
libharfbuzz0b             build   -            java.awt's font manager, which kafka-compression-advisor.sh --plot loads (trixie's headless JDK 21 lacks it)
fontconfig                build   -            finds fonts for java.awt (kafka-compression-advisor.sh --plot draws its labels)
fonts-dejavu-core         build   -            one font for those labels (a minimal Debian has none)
python3-venv              python  venv         python3 and its venv module, for build/venv
python3-dev               python  pyheaders    Python.h: psutil, which ducktape pins, builds from source
kcat                      python  cmd:kcat     a librdkafka reader of the client tests (tests/project/test_client_interop.py)
podman                    engine  -            container engine for the images and their tests (no Docker engine here)
buildah                   engine  -            podman's image builder
runc                      engine  -            the OCI runtime docker/containers.conf selects (crun fails on hybrid cgroups)
mmdebstrap                engine  -            builds the Debian base images offline when no registry answers
uidmap                    engine  -            newuidmap/newgidmap, which podman expects
slirp4netns               engine  -            podman's user-mode networking
containernetworking-plugins                      engine -  podman 4's CNI bridge networks
golang-github-containernetworking-plugin-dnsname engine -  DNS between containers on a project network
iptables                  engine  -            port mapping and NAT of the CNI bridge
openssh-client            ssh     cmd:ssh-keygen  ssh-keygen/ssh: per-run keys and logins of the test-node containers
LIST
}

# probe NAME: true when what the package provides is present some other way
probe() {
    case "$1" in
        -) return 1 ;;
        cmd:*) command -v "${1#cmd:}" >/dev/null 2>&1 ;;
        jdk17)
            local javac="javac"
            [[ -n "${JAVA_HOME:-}" ]] && javac="$JAVA_HOME/bin/javac"
            local v
            v="$("$javac" -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p')" || return 1
            [[ -n "$v" && "$v" -ge 17 ]] && command -v jar >/dev/null 2>&1 ;;
        venv) python3 -c 'import venv, ensurepip' >/dev/null 2>&1 ;;
        pip) python3 -m pip --version >/dev/null 2>&1 ;;
        pyheaders)
            local inc
            inc="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)" \
                && [[ -f "$inc/Python.h" ]] ;;
        *) return 1 ;;
    esac
}

# missing_packages GROUP...: the packages of those groups that are not present
missing_packages() {
    local groups=" $* " pkg group pr _
    while read -r pkg group pr _; do
        [[ -z "$pkg" || "$pkg" == \#* ]] && continue
        [[ "$groups" == *" $group "* ]] || continue
        if command -v dpkg-query >/dev/null 2>&1 && \
           [[ "$(dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null)" == "install ok installed" ]]; then
            continue
        fi
        probe "$pr" && continue
        echo "$pkg"
    done < <(system_packages)
}

# require_system GROUP...: check, install what is missing, or stop with the apt-get line
require_system() {
    local need
    need="$(missing_packages "$@" | tr '\n' ' ')"
    need="${need% }"
    [[ -z "$need" ]] && return 0
    local line="apt-get update && apt-get install -y --no-install-recommends $need"
    local sudo=()
    if [[ $EUID != 0 ]]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            die "missing system packages; as root, run:
    $line
(then run this command again)"
        fi
    fi
    command -v apt-get >/dev/null 2>&1 || die "missing system packages (Debian names): $need; this is not a Debian system: install their equivalents"
    local t0=$SECONDS aptlog
    aptlog="$(mktemp "${TMPDIR:-/tmp}/build.sh-apt.XXXXXX")"
    log "installing missing system packages: ${sudo[*]}${sudo:+ }apt-get install -y --no-install-recommends $need"
    # slim Debian images (Docker's -slim, mmdebstrap minbase with docs excluded) lack
    # /usr/share/man/man1, where the JDK's postinst links its man pages: it fails without it
    [[ -d /usr/share/man/man1 ]] || "${sudo[@]}" mkdir -p /usr/share/man/man1
    if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >"$aptlog" 2>&1 \
       || ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need >>"$aptlog" 2>&1; then
        grep -E '^(E:|dpkg: error|update-alternatives: error)' "$aptlog" | head -10 | sed 's/^/    apt-get: /' >&2
        tail -15 "$aptlog" | sed 's/^/    apt-get: /' >&2
        die "apt-get failed (output above, all of it in $aptlog); run it yourself: ${sudo[*]}${sudo:+ }$line"
    fi
    # apt's own list of what it set up, packages pulled in as dependencies included
    log "installed: $(sed -n 's/^Setting up \([^ ]*\) .*/\1/p' "$aptlog" | sed 's/:[a-z0-9]*$//' | sort | tr '\n' ' ')"
    rm -f "$aptlog"
    log "system packages installed in $(elapsed "$t0")"
    local left
    left="$(missing_packages "$@" | tr '\n' ' ')"
    [[ -z "${left// }" ]] || die "still missing after apt-get: $left"
}

# ---------------------------------------------------------------------------
# Python tools: a virtual environment under build/ from the pinned requirements.txt
# (nothing goes into the system Python). Re-created only when requirements.txt or
# the interpreter changes.

VENV="$BUILD/venv"

venv_stamp() { { cat "$ROOT/requirements.txt"; command -v python3; python3 --version; } 2>&1 | sha256sum | cut -c1-16; }

ensure_venv() {
    local stamp
    stamp="$(venv_stamp)"
    if [[ ! -f "$VENV/.kc-stamp" || "$(cat "$VENV/.kc-stamp")" != "$stamp" ]]; then
        rm -rf "$VENV"
        mkdir -p "$BUILD"
        timed "creating build/venv with $(python3 --version 2>&1) and installing requirements.txt with pip" \
            venv_install
        echo "$stamp" > "$VENV/.kc-stamp"
    fi
    # the venv's python3, pytest and ducktape come first for everything this run starts
    export VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH"
}

venv_install() {
    python3 -m venv "$VENV" || die "python3 -m venv failed"
    local piplog="$BUILD/venv.log"
    if ! "$VENV/bin/python3" -m pip install --disable-pip-version-check --no-input -q --require-hashes \
            -r "$ROOT/requirements.txt" >"$piplog" 2>&1; then
        tail -25 "$piplog" | sed 's/^/    pip: /' >&2
        rm -rf "$VENV"
        die "pip could not install requirements.txt (full output: $piplog)"
    fi
}

# ---------------------------------------------------------------------------
# upstream artifacts

# what the fetched artifacts depend on: the pinned versions (the parent's
# properties), the upstream pom and the lock file
upstream_stamp() {
    { sed -n '/<properties>/,/<\/properties>/p' "$ROOT/pom.xml"; cat "$ROOT/upstream/pom.xml" "$ROOT/upstream/dist/pom.xml" "$LOCK" 2>/dev/null; } \
        | sha256sum | cut -c1-16
}

fetch_upstream() {
    local stamp
    stamp="$(upstream_stamp)"
    if [[ -f "$UPSTREAM_OUT/.stamp" && "$(cat "$UPSTREAM_OUT/.stamp")" == "$stamp" ]]; then
        return 0
    fi
    verify_plugins
    rm -rf "$UPSTREAM_OUT"
    timed "fetching Apache Kafka $KAFKA_VERSION artifacts (sources, tests, runtime closure) with Maven" \
        fetch_upstream_mvn
    verify_upstream
    echo "$stamp" > "$UPSTREAM_OUT/.stamp"
}

# upstream/pom.xml: sources/, testlibs/ and scalac/; upstream/dist/pom.xml: libs/ (upstream's binary distribution)
fetch_upstream_mvn() { mvn_q -N install && mvn_q -f upstream/pom.xml package && mvn_q -f upstream/dist/pom.xml package; }

# lock_lists_same LOCK ACTUAL MESSAGE: the files a lock lists (its second column) must be exactly ACTUAL (sorted, a
# path a line); otherwise prints the difference and dies with MESSAGE
lock_lists_same() {
    local listed
    listed="$(awk '{print $2}' "$1" | sort)"
    if [[ "$listed" != "$2" ]]; then
        # diff exits 1 because the lists differ, which is already known: it only shows how; die is the failure
        diff <(echo "$listed") <(echo "$2") >&2 || true
        die "$3"
    fi
}

verify_upstream() {
    [[ -f "$LOCK" ]] || die "no lock file $LOCK (run ./build.sh lock to record one)"
    lock_lists_same "$LOCK" "$(cd "$UPSTREAM_OUT" && find sources libs testlibs scalac -name '*.jar' | sort)" \
        "the artifacts Maven fetched are not the ones $LOCK lists (see the diff above)"
    if ! (cd "$UPSTREAM_OUT" && sha256sum --quiet -c "$LOCK" >&2); then
        die "SHA-256 mismatch against $LOCK: refusing to build from unverified upstream artifacts"
    fi
    local props
    props="$(unzip -p "$UPSTREAM_OUT/libs/kafka-clients-$KAFKA_VERSION.jar" kafka/kafka-version.properties)"
    grep -qx "commitId=$COMMIT_ID" <<<"$props" \
        || die "kafka-clients-$KAFKA_VERSION.jar is not upstream commit $COMMIT_ID: $props"
    grep -qx "version=$KAFKA_VERSION" <<<"$props" \
        || die "kafka-clients-$KAFKA_VERSION.jar reports another version: $props"
    log "upstream artifacts verified: $(wc -l < "$LOCK") files match $LOCK, commit $COMMIT_ID"
}

# The newest upstream releases as stock test nodes run them (the upgrade test rolls onto them): for each release
# V, upstream/newest/V/pom.xml copies the runtime closure of its broker and tools into build/newest-upstream/V/libs/,
# checked against $NEWEST_LOCK. Test-only: mounted into the system-test nodes, never shipped.
NEWEST_RELEASES="4.3.2 4.4.0"
NEWEST_LOCK="$ROOT/upstream/newest-upstream-libs.sha256"
NEWEST_OUT="$BUILD/newest-upstream"
newest_stamp() {
    { for v in $NEWEST_RELEASES; do cat "$ROOT/upstream/newest/$v/pom.xml"; done; cat "$NEWEST_LOCK" 2>/dev/null; } \
        | sha256sum | cut -c1-16
}
fetch_newest_upstream_mvn() {
    local v
    for v in $NEWEST_RELEASES; do
        rm -rf "${NEWEST_OUT:?}/$v/libs"
        mvn_q -f "upstream/newest/$v/pom.xml" package || die "Maven could not fetch Apache Kafka $v's jars"
    done
}
verify_newest_upstream() {
    [[ -f "$NEWEST_LOCK" ]] || die "no lock file $NEWEST_LOCK (run ./build.sh lock --newest to record one)"
    local v props
    lock_lists_same "$NEWEST_LOCK" "$(cd "$NEWEST_OUT" && for v in $NEWEST_RELEASES; do find "$v/libs" -name '*.jar'; done | sort)" \
        "the newest releases' jars Maven fetched are not the ones $NEWEST_LOCK lists (see the diff above)"
    (cd "$NEWEST_OUT" && sha256sum --quiet -c "$NEWEST_LOCK" >&2) \
        || die "SHA-256 mismatch against $NEWEST_LOCK: refusing to run unverified upstream jars"
    for v in $NEWEST_RELEASES; do
        props="$(unzip -p "$NEWEST_OUT/$v/libs/kafka-clients-$v.jar" kafka/kafka-version.properties)"
        grep -qx "version=$v" <<<"$props" || die "kafka-clients-$v.jar reports another version: $props"
    done
    log "newest upstream releases verified: $(wc -l < "$NEWEST_LOCK") jars of $NEWEST_RELEASES match $NEWEST_LOCK"
}
fetch_newest_upstream() {
    # one at a time: ./build.sh test runs ./build.sh systest beside the project tests, and a project test that starts
    # a stock 4.3.2 broker (tests/project/conftest.py) fetches the same jars; a second waits, then finds them fetched
    mkdir -p "$NEWEST_OUT"
    (flock 9; fetch_newest_upstream_alone) 9>"$NEWEST_OUT/.lock"
}
fetch_newest_upstream_alone() {
    local stamp
    stamp="$(newest_stamp)"
    # fetched when the poms or the lock changed; the jars' SHA-256 are checked every time (a second, before each run)
    if [[ ! -f "$NEWEST_OUT/.libs-stamp" || "$(cat "$NEWEST_OUT/.libs-stamp")" != "$stamp" ]]; then
        verify_plugins
        mkdir -p "$NEWEST_OUT"
        timed "fetching Apache Kafka $NEWEST_RELEASES (test nodes' jars) with Maven" fetch_newest_upstream_mvn
    fi
    verify_newest_upstream
    echo "$stamp" > "$NEWEST_OUT/.libs-stamp"
}
cmd_lock_newest() {
    verify_plugins
    mkdir -p "$NEWEST_OUT"
    fetch_newest_upstream_mvn
    (cd "$NEWEST_OUT" && for v in $NEWEST_RELEASES; do find "$v/libs" -name '*.jar'; done | sort | xargs sha256sum) > "$NEWEST_LOCK"
    log "recorded $(wc -l < "$NEWEST_LOCK") jars in $NEWEST_LOCK"
    verify_newest_upstream
    newest_stamp > "$NEWEST_OUT/.libs-stamp"
}

# maven_local_repo: Maven's local repository (-Dmaven.repo.local in MAVEN_OPTS or .mvn/maven.config,
# <localRepository> of the user's settings.xml, else ~/.m2/repository)
maven_local_repo() {
    local r
    # (grep reads no standard input when it is given a file: both go through the pipe; maven.config wins, as in Maven;
    # grep exits 1 when neither sets the option, the usual case, and settings.xml or ~/.m2 below then apply)
    r="$({ echo "${MAVEN_OPTS:-}"; cat "$ROOT/.mvn/maven.config" 2>/dev/null; } | { grep -o -- '-Dmaven.repo.local=[^ ]*' || true; } \
        | tail -1 | cut -d= -f2-)"
    [[ -z "$r" && -f "$HOME/.m2/settings.xml" ]] && \
        r="$(sed -n 's:.*<localRepository>\(.*\)</localRepository>.*:\1:p' "$HOME/.m2/settings.xml" | head -1)"
    r="${r/#\~/$HOME}"
    echo "${r:-$HOME/.m2/repository}"
}

# check_m2_lock LIST: the files LIST names (paths relative to Maven's local repository), as Maven resolved them,
# against LIST's SHA-256; prints sha256sum's complaints and fails on a mismatch or a missing file
check_m2_lock() {
    local repo
    repo="$(maven_local_repo)"
    (cd "$repo" 2>/dev/null && sha256sum --quiet --strict -c "$1" >&2)
}

# the artifacts of $EXTRA_LOCK, as Maven resolved them for this build, against their pinned SHA-256
verify_extra_artifacts() {
    if ! check_m2_lock "$EXTRA_LOCK"; then
        rm -f "$BUILD/.compiled"
        die "SHA-256 mismatch (or missing file in $(maven_local_repo)) against $EXTRA_LOCK: refusing to ship unverified third-party jars"
    fi
    log "third-party artifacts of our modules verified: $(wc -l < "$EXTRA_LOCK") files match $EXTRA_LOCK"
}

# The build plugins. Maven resolves a plugin and its dependencies when a build first runs it, and runs it at once;
# so the build first has Maven resolve every plugin the poms name (maven-dependency-plugin's resolve-plugins, over
# the reactor and upstream/dist/pom.xml, which is not in it), then checks that set against $PLUGIN_LOCK: the same
# files, with the same SHA-256. Only the resolving plugin itself runs before it is checked (it is in the list).
# Left out: the default lifecycle's deploy and site plugins, which the build never runs (it stops at package and
# install); their versions are Maven's defaults, which change with Maven's version.
PLUGIN_POMS="pom.xml upstream/dist/pom.xml"
PLUGINS_NOT_RUN="maven-site-plugin,maven-deploy-plugin"

# plugin_closure: the jars of the build's plugins with their dependencies, paths relative to the local repository
plugin_closure() {
    local repo out f dep
    repo="$(realpath -m "$(maven_local_repo)")"
    # the resolving plugin at the version pom.xml pins, never a prefix lookup of the latest
    dep="$(sed -n '/<artifactId>maven-dependency-plugin<\/artifactId>/{n;s:.*<version>\(.*\)</version>.*:\1:p;}' \
        "$ROOT/pom.xml" | head -1)"
    [[ -n "$dep" ]] || die "pom.xml's pluginManagement pins no maven-dependency-plugin version"
    out="$(mktemp)"
    for f in $PLUGIN_POMS; do
        if ! mvn_q -f "$f" "org.apache.maven.plugins:maven-dependency-plugin:$dep:resolve-plugins" \
                -DoutputAbsoluteArtifactFilename=true -DappendOutput=true -DoutputFile="$out" \
                -DexcludeArtifactIds="$PLUGINS_NOT_RUN"; then
            rm -f "$out"
            die "Maven could not resolve the build plugins of $f"
        fi
    done
    # "      group:artifact:jar[:classifier]:version:/abs/path.jar" (a plugin's own line is also one of its jars)
    sed -n 's|^ \{6\}[^/]*:\(/.*\.jar\)$|\1|p' "$out" | while read -r f; do
        f="$(realpath -m "$f")"
        [[ "$f" == "$repo/"* ]] || { echo "OUTSIDE $f"; continue; }
        echo "${f#"$repo/"}"
    done | sort -u
    rm -f "$out"
}

# what decides the plugin set: the poms, the lock and Maven's version
plugins_stamp() {
    { cat "$PLUGIN_LOCK"; (cd "$ROOT" && find . -name pom.xml -not -path './build/*' -not -path './kafka/*' | sort | xargs cat)
      mvn -v 2>/dev/null | sed -n 1p; } | sha256sum | cut -c1-16
}

# verify_plugins: every plugin jar the build resolves is listed in $PLUGIN_LOCK and matches its SHA-256. The set
# is computed again when a pom, the lock or Maven changed; the hashes are checked every time.
verify_plugins() {
    [[ -z "${PLUGINS_VERIFIED:-}" ]] || return 0
    [[ -f "$PLUGIN_LOCK" ]] || die "no lock file $PLUGIN_LOCK (run ./build.sh lock to record one)"
    local stamp
    stamp="$(plugins_stamp)"
    if [[ ! -f "$BUILD/.plugins" || "$(cat "$BUILD/.plugins")" != "$stamp" ]]; then
        rm -f "$BUILD/.plugins"
        lock_lists_same "$PLUGIN_LOCK" "$(plugin_closure)" \
            "the build plugins Maven resolves are not the ones $PLUGIN_LOCK lists (see the diff above; after changing a plugin in a pom, run ./build.sh lock)"
    fi
    check_m2_lock "$PLUGIN_LOCK" \
        || die "SHA-256 mismatch (or missing file in $(maven_local_repo)) against $PLUGIN_LOCK: refusing to run unverified build plugins"
    mkdir -p "$BUILD"
    echo "$stamp" > "$BUILD/.plugins"
    PLUGINS_VERIFIED=1
    log "build plugins verified: $(wc -l < "$PLUGIN_LOCK") jars match $PLUGIN_LOCK"
}

# requirements.txt's hashes (--require-hashes): every pin's files for the Pythons build/venv and the test nodes use
# (Debian 12: CPython 3.11, Debian 13 and the node image: 3.13; Linux x86_64), fetched with pip download (pip's own
# index settings) and hashed; the pins themselves are edited by hand.
LOCK_PYTHONS="3.11 3.13"
cmd_lock_python() {
    local tmp py req="$ROOT/requirements.txt"
    tmp="$(mktemp -d)"
    sed -e 's/#.*//' -e 's/\\$//' -e '/^[[:space:]]*--hash/d' -e 's/[[:space:]]*$//' "$req" | grep -v '^$' > "$tmp/pins.txt"
    for py in $LOCK_PYTHONS; do
        log "pip download of requirements.txt's pins for CPython $py ..."
        python3 -m pip download -q --disable-pip-version-check --no-deps -d "$tmp/$py" -r "$tmp/pins.txt" \
            --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
            --platform linux_x86_64 --python-version "$py" --implementation cp \
            || { rm -rf "$tmp"; die "pip download failed for CPython $py"; }
    done
    python3 - "$req" "$tmp" <<'PY' || { rm -rf "$tmp"; die "could not hash requirements.txt"; }
import hashlib, pathlib, re, sys
req, tmp = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
canon = lambda n: re.sub(r"[-_.]+", "-", n).lower()
files = {}
for f in tmp.glob("*/*"):
    if f.suffix == ".whl":
        name, ver = f.name.split("-")[:2]
    elif f.name.endswith((".tar.gz", ".zip")):
        name, ver = re.sub(r"\.(tar\.gz|zip)$", "", f.name).rsplit("-", 1)
    else:
        continue
    files.setdefault((canon(name), ver), set()).add(hashlib.sha256(f.read_bytes()).hexdigest())
out, missing = [], []
for line in req.read_text().splitlines():
    if re.match(r"\s*--hash", line):
        continue
    m = re.match(r"([A-Za-z0-9_.-]+)==([^\s\\#]+)", line)
    if not m:
        out.append(line)
        continue
    hashes = sorted(files.get((canon(m.group(1)), m.group(2)), ()))
    if "#" in line:      # a pin's own comment goes above it (none may follow a line continuation)
        out.append("# " + line.split("#", 1)[1].strip())
    if not hashes:
        missing.append(m.group(0))
    out.append("%s==%s \\" % (m.group(1), m.group(2)))
    out += ["    --hash=sha256:%s%s" % (h, " \\" if i < len(hashes) - 1 else "") for i, h in enumerate(hashes)]
if missing:
    sys.exit("no files downloaded for: " + ", ".join(missing))
req.write_text("\n".join(out) + "\n")
PY
    rm -rf "$tmp"
    log "requirements.txt: $(grep -c -- '--hash=' "$req") hashes for $(grep -cE '^[A-Za-z0-9_.-]+==' "$req") pins"
}

cmd_lock() {
    local repo
    repo="$(maven_local_repo)"
    mkdir -p "$BUILD"
    plugin_closure > "$BUILD/.plugin-closure" || die "could not list the build plugins"
    ! grep '^OUTSIDE ' "$BUILD/.plugin-closure" >&2 || die "build plugin jars outside $repo (listed above)"
    (cd "$repo" && xargs sha256sum < "$BUILD/.plugin-closure") > "$PLUGIN_LOCK"
    rm -f "$BUILD/.plugin-closure"
    log "recorded $(wc -l < "$PLUGIN_LOCK") build plugin jars in $PLUGIN_LOCK"
    plugins_stamp > "$BUILD/.plugins"       # the set was just computed: verify_plugins checks the hashes only
    verify_plugins
    rm -rf "$UPSTREAM_OUT"
    fetch_upstream_mvn
    (cd "$UPSTREAM_OUT" && find sources libs testlibs scalac -name '*.jar' | sort | xargs sha256sum) > "$LOCK"
    log "recorded $(wc -l < "$LOCK") artifacts in $LOCK"
    verify_upstream
    upstream_stamp > "$UPSTREAM_OUT/.stamp"
}

# ---------------------------------------------------------------------------
# kafka/: pristine upstream as one commit, then one commit per patch

series_patches() {
    [[ -f "$PATCHES/series" ]] || return 0
    sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$PATCHES/series" | grep -v '^$' || true
}

series_stamp() {
    {
        upstream_tree_stamp
        local p
        for p in $(series_patches); do
            [[ -f "$PATCHES/$p" ]] || die "patches/series names $p, which is not in patches/"
            echo "$p"; cat "$PATCHES/$p"
        done
    } | sha256sum | cut -c1-16
}

# patch ids of the commits on top of pristine upstream, and of the series' files
tree_patch_ids() { git -C "$TREE" log --reverse -p upstream..HEAD | git patch-id --stable | awk '{print $1}'; }
series_patch_ids() {
    local p
    for p in $(series_patches); do git patch-id --stable < "$PATCHES/$p" | awk '{print $1}'; done
}

# what the pristine commit is made of: the verified artifacts and the modules unpacked from them
upstream_tree_stamp() { { cat "$LOCK"; echo "${MODULES[*]}"; } | sha256sum | cut -c1-16; }

materialize() {
    local stamp
    stamp="$(series_stamp)"
    if [[ -d "$TREE/.git" ]]; then
        [[ -f "$TREE/.git/kc-stamp" && "$(cat "$TREE/.git/kc-stamp")" == "$stamp" ]] && return 0
        # kafka/ is out of date with patches/. Rebuild it, unless that would lose work.
        if [[ -z "$(git -C "$TREE" status --porcelain)" ]] && [[ "$(tree_patch_ids)" == "$(series_patch_ids)" ]] \
                && [[ "$(cat "$TREE/.git/kc-upstream" 2>/dev/null)" == "$(upstream_tree_stamp)" ]]; then
            # the maintainer exported kafka/'s commits with git format-patch: nothing to do
            echo "$stamp" > "$TREE/.git/kc-stamp"
            git -C "$TREE" rev-parse HEAD > "$TREE/.git/kc-head"
            log "kafka/ already holds the series (patch ids match)"
            return 0
        fi
        # (a tree whose work is all in patches/ is rebuilt when the pristine commit changes)
        if [[ -n "$(git -C "$TREE" status --porcelain)" ]] || { [[ "$(tree_patch_ids)" != "$(series_patch_ids)" ]] && \
           [[ "$(git -C "$TREE" rev-parse HEAD)" != "$(cat "$TREE/.git/kc-head" 2>/dev/null)" ]]; }; then
            die "kafka/ has changes or commits that are not in patches/. Export them first
    (cd kafka && git format-patch -o ../patches upstream..HEAD, then list them in patches/series),
    or discard them with: rm -rf kafka"
        fi
    fi
    log "materializing kafka/ from the $KAFKA_VERSION source artifacts"
    local t0=$SECONDS
    local tmp="$ROOT/.kafka.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    local m art dir
    for m in "${MODULES[@]}"; do
        art="${m%%:*}"; dir="${m##*:}"
        unpack_sources "$UPSTREAM_OUT/sources/$art-$KAFKA_VERSION-sources.jar" "$tmp/$dir" main
        unpack_sources "$UPSTREAM_OUT/sources/$art-$KAFKA_VERSION-test-sources.jar" "$tmp/$dir" test
    done
    unzip -q -o "$UPSTREAM_OUT/sources/kafka-clients-$KAFKA_VERSION-sources.jar" LICENSE NOTICE -d "$tmp"
    (
        cd "$tmp"
        git init -q -b trunk
        git config user.name "Kafka compression distribution build"
        git config user.email "build@localhost"
        git add -A
        GIT_AUTHOR_NAME="Apache Kafka" GIT_AUTHOR_EMAIL="dev@kafka.apache.org" \
        GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
            git commit -q -m "Apache Kafka $KAFKA_VERSION (upstream commit $COMMIT_ID)" \
                -m "Unpacked from the release's published -sources and -test-sources artifacts
(verified against upstream/artifacts.sha256), at upstream's paths."
        git tag upstream
    )
    rm -rf "$TREE"
    mv "$tmp" "$TREE"
    git -C "$TREE" rev-parse HEAD > "$TREE/.git/kc-head"
    upstream_tree_stamp > "$TREE/.git/kc-upstream"
    apply_series
    echo "$stamp" > "$TREE/.git/kc-stamp"
    log "kafka/ materialized with $(series_patches | wc -l) patches in $(elapsed "$t0")"
}

# unpack_sources JAR MODULE_DIR main|test: .java files to src/<kind>/java (generated
# message classes to src/generated/java, where upstream's build writes them), .scala
# files and their package.html to src/<kind>/scala (core), the rest to src/<kind>/resources.
unpack_sources() {
    local jar="$1" dir="$2" kind="$3" x="$2/.x" gen
    gen="$dir/src/$kind/java"
    [[ $kind == main ]] && gen="$dir/src/generated/java"
    mkdir -p "$x" "$dir/src/$kind/java" "$gen"
    unzip -q -o "$jar" -d "$x" -x 'META-INF/MANIFEST.MF' LICENSE NOTICE
    (
        cd "$x"
        find . -name '*.java' -print0 | xargs -0 -r grep -L -Z 'THIS CODE IS AUTOMATICALLY GENERATED' \
            | xargs -0 -r cp --parents -t "$dir/src/$kind/java" || true
        find . -name '*.java' -print0 | xargs -0 -r grep -l -Z 'THIS CODE IS AUTOMATICALLY GENERATED' \
            | xargs -0 -r cp --parents -t "$gen" || true
        if [[ -n "$(find . -name '*.scala' -print -quit)" ]]; then
            mkdir -p "$dir/src/$kind/scala"
            find . \( -name '*.scala' -o -name package.html \) -print0 | xargs -0 -r cp --parents -t "$dir/src/$kind/scala"
            find . \( -name '*.scala' -o -name package.html \) -delete
        fi
        if [[ -n "$(find . -type f ! -name '*.java' -print -quit)" ]]; then
            mkdir -p "$dir/src/$kind/resources"
            find . -type f ! -name '*.java' -print0 | xargs -0 -r cp --parents -t "$dir/src/$kind/resources"
        fi
    )
    rm -rf "$x"
}

apply_series() {
    local p n=0 out
    for p in $(series_patches); do
        n=$((n + 1))
        if ! out="$(git -C "$TREE" am --3way --committer-date-is-author-date "$PATCHES/$p" 2>&1)"; then
            git -C "$TREE" am --abort >/dev/null 2>&1 || true
            git -C "$TREE" rev-parse HEAD > "$TREE/.git/kc-head"
            local where check
            # git apply names the file and the hunk that failed
            check="$(git -C "$TREE" apply --check --verbose "$PATCHES/$p" 2>&1 || true)"
            where="$(grep -E '^error: patch failed: ' <<<"$check" | sed -E 's/^error: patch failed: (.*):([0-9]+)$/    file \1, hunk at line \2/' || true)"
            where+="$(grep -E '^error: .*(does not exist in index|No such file|already exists)' <<<"$check" | sed 's/^error: /\n    /' || true)"
            [[ -n "$where" ]] || where="$(grep -E 'error|CONFLICT' <<<"$out" | head -3 | sed 's/^/    /' || true)"
            printf '%s\n' "$out" | sed 's/^/    git am: /' >&2
            die "patch $p (#$n in patches/series) does not apply to kafka/:
$where
kafka/ is left at the last patch that applied: $(git -C "$TREE" log -1 --format='%h %s')"
        fi
        log "applied $p"
    done
    git -C "$TREE" rev-parse HEAD > "$TREE/.git/kc-head"
}

# ---------------------------------------------------------------------------
# compile, assemble

tree_state() {
    # what the compiled jars depend on: kafka/ (committed and uncommitted) and our poms/sources
    {
        git -C "$TREE" rev-parse HEAD
        git -C "$TREE" status --porcelain --untracked-files=all | while read -r _ f; do
            [[ -f "$TREE/$f" ]] && sha256sum "$TREE/$f" || echo "gone $f"
        done
        cd "$ROOT" && find pom.xml kafka-modules $( [[ -d providers ]] && echo providers ) $( [[ -d tools ]] && echo tools ) -type f \
            \( -name pom.xml -o -path '*/src/*' -o -path 'kafka-modules/version/*' -o -name '*.c' \) | sort | xargs sha256sum
    } | sha256sum | cut -c1-16
}

# native_gzip_problem: why native-gzip's JNI glue cannot be compiled here (empty: it can)
native_gzip_problem() {
    [[ -f "$ROOT/providers/native-gzip/pom.xml" ]] || return 0
    if [[ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]]; then
        echo "it is built for Linux x86_64 only, this is $(uname -s) $(uname -m)"
    elif ! command -v gcc >/dev/null 2>&1; then
        echo "no C compiler (apt-get install gcc libc6-dev)"
    elif ! command -v make >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
        echo "make or pip is missing, to fetch and build zlib-ng (apt-get install make python3-pip)"
    elif ! printf '#include <isa-l/igzip_lib.h>\n#include <libdeflate.h>\n' \
            | gcc -fsyntax-only -x c - >/dev/null 2>&1; then
        echo "the ISA-L or libdeflate headers are missing (apt-get install libisal-dev libdeflate-dev)"
    fi
}

NATIVE_LEFT_OUT="$BUILD/native-gzip.left-out"

compile() {
    local state native poms
    native="$(native_gzip_problem)"
    state="$(tree_state)"
    [[ -z "$native" ]] || state="$(echo "$state $native" | sha256sum | cut -c1-16)"
    if [[ -f "$BUILD/.compiled" && "$(cat "$BUILD/.compiled")" == "$state" ]]; then
        return 0
    fi
    if [[ -n "$native" ]]; then
        echo "$native" > "$NATIVE_LEFT_OUT"
        rm -rf "$BUILD/providers/native-gzip"        # no stale jar in the distribution
    else
        rm -f "$NATIVE_LEFT_OUT"
    fi
    # The Java targets (--release) are pom settings, and Maven's incremental build does not recompile a module
    # whose settings changed: a changed pom recompiles every module from scratch.
    poms="$(cd "$ROOT" && find . -name pom.xml -not -path './build/*' -not -path './kafka/*' | sort | xargs sha256sum \
        | sha256sum | cut -c1-16)"
    if [[ "$(cat "$BUILD/.compiled-poms" 2>/dev/null)" != "$poms" ]]; then
        rm -rf "$BUILD"/kafka-modules/*/classes "$BUILD"/providers/*/target/classes "$BUILD"/tools/*/target/classes
    fi
    verify_plugins
    timed "compiling the patched modules and the providers with Maven (Java 11 for kafka-clients and the providers, as upstream's clients; 17 for the broker modules and the tools)" \
        mvn_q package -DskipTests -pl "$(reactor_modules)" -am
    verify_extra_artifacts
    echo "$poms" > "$BUILD/.compiled-poms"
    echo "$state" > "$BUILD/.compiled"
}

reactor_modules() {
    local mods="kafka-modules/clients,kafka-modules/server-common,kafka-modules/storage,kafka-modules/server,kafka-modules/core" d
    for d in "$ROOT"/providers/*/pom.xml; do
        [[ -f "$d" ]] || continue
        d="${d%/pom.xml}"
        [[ "${d##*/}" == native-gzip && -f "$NATIVE_LEFT_OUT" ]] && continue
        mods="$mods,providers/${d##*/}"
    done
    for d in "$ROOT"/tools/*/pom.xml; do   # the distribution's own tools (bin/kafka-compression-advisor.sh)
        [[ -f "$d" ]] || continue
        d="${d%/pom.xml}"; mods="$mods,tools/${d##*/}"
    done
    echo "$mods"
}

patched_jar() { # artifact -> path of our jar
    local art="$1" m
    for m in "${MODULES[@]}"; do
        [[ "${m%%:*}" == "$art" ]] && { echo "$BUILD/kafka-modules/${m##*:}/$art-$DIST_VERSION.jar"; return; }
    done
    return 1
}

assemble() {
    local state
    state="$(cat "$BUILD/.compiled")-$(find "$ROOT/bin" "$ROOT/config" "$ROOT/licenses" "$EXTRA_LOCK" -type f | sort | xargs cat | sha256sum | cut -c1-16)"
    if [[ -f "$DIST/.assembled" && "$(cat "$DIST/.assembled")" == "$state" ]]; then
        return 0
    fi
    log "assembling $DIST"
    local tmp="$BUILD/dist/.tmp"
    rm -rf "$tmp"
    mkdir -p "$tmp/libs" "$tmp/bin" "$tmp/config"
    cp "$UPSTREAM_OUT"/libs/*.jar "$tmp/libs/"
    local m art
    for m in "${MODULES[@]}"; do
        art="${m%%:*}"
        rm -f "$tmp/libs/$art-$KAFKA_VERSION.jar"       # never both on one classpath
        cp "$(patched_jar "$art")" "$tmp/libs/"
    done
    # providers and tools: their jar plus runtime dependencies the distribution lacks
    local p
    for p in "$BUILD"/providers/*/dist "$BUILD"/tools/*/dist; do
        [[ -d "$p" ]] || continue
        local j
        for j in "$p"/*.jar; do
            [[ -e "$tmp/libs/${j##*/}" ]] || cp "$j" "$tmp/libs/"
        done
    done
    # every jar in libs/ is upstream's (locked), ours, or in $EXTRA_LOCK (checked again here, as shipped)
    local extra
    for j in "$tmp"/libs/*.jar; do
        j="${j##*/}"
        grep -qx "libs/$j" <(awk '{print $2}' "$LOCK") && continue
        [[ "$j" == *-"$DIST_VERSION".jar ]] && continue      # built here: patched modules, providers, tools
        extra="$(awk -v j="$j" '$2 ~ "/" j "$" {print $1}' "$EXTRA_LOCK")"
        [[ -n "$extra" ]] || die "libs/$j is neither upstream's (upstream/artifacts.sha256), ours, nor in $EXTRA_LOCK"
        echo "$extra  $tmp/libs/$j" | sha256sum --quiet -c >&2 || die "libs/$j: SHA-256 differs from $EXTRA_LOCK"
    done
    cp -r "$ROOT"/bin/. "$tmp/bin/"
    cp -r "$ROOT"/config/. "$tmp/config/"
    chmod +x "$tmp"/bin/*.sh
    # LICENSE, NOTICE and licenses/ in the form of upstream's binary release: the Apache License and every bundled
    # component with its licence (licenses/components.txt), our NOTICE and the bundled jars' NOTICE files
    python3 "$ROOT/licenses/generate.py" "$tmp" \
        || die "a jar in libs/ has no licence entry (listed above): add it to licenses/components.txt"
    cat > "$tmp/RELEASE" <<EOF
Apache Kafka $KAFKA_VERSION (Scala $SCALA_VERSION), upstream commit $COMMIT_ID
with the patch series of this distribution: version $DIST_VERSION
$(series_patches | sed 's/^/  /')
EOF
    rm -rf "$DIST"
    mkdir -p "$BUILD/dist"
    mv "$tmp" "$DIST"
    tar -C "$BUILD/dist" -czf "$BUILD/dist/$DIST_NAME.tgz" "$DIST_NAME"
    echo "$state" > "$DIST/.assembled"
    log "distribution: $DIST (and $DIST_NAME.tgz)"
}

cmd_build() {
    mkdir -p "$BUILD"
    fetch_upstream
    materialize
    compile
    assemble
    if [[ -f "$NATIVE_LEFT_OUT" ]]; then
        log "native-gzip provider left out of the distribution: $(cat "$NATIVE_LEFT_OUT")"
    fi
}

# ---------------------------------------------------------------------------
# run

cmd_run() {
    local dir="$BUILD/run"
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --dir) dir="$2"; shift 2 ;;
            *) die "run: unknown argument $1 (see ./build.sh --help)" ;;
        esac
    done
    cmd_build
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    local props="$dir/server.properties"
    if [[ ! -f "$props" ]]; then
        sed "s:^log.dirs=.*:log.dirs=$dir/data:" "$DIST/config/server.properties" > "$props"
    fi
    if [[ ! -f "$dir/data/meta.properties" ]]; then
        local id
        id="$("$DIST/bin/kafka-storage.sh" random-uuid)"
        log "formatting storage in $dir/data (cluster id $id)"
        "$DIST/bin/kafka-storage.sh" format -t "$id" -c "$props" >&2
    fi
    cat >&2 <<EOF
[build.sh] starting Kafka $DIST_VERSION (KRaft, broker+controller) with $props
[build.sh] bootstrap server: 127.0.0.1:9092   (Ctrl-C stops it; data stays in $dir/data)
[build.sh] try:  echo hello | $DIST/bin/kafka-console-producer.sh --bootstrap-server 127.0.0.1:9092 --topic demo --compression-codec zstd && $DIST/bin/kafka-console-consumer.sh --bootstrap-server 127.0.0.1:9092 --topic demo --from-beginning --max-messages 1
EOF
    LOG_DIR="${LOG_DIR:-$dir/logs}" exec "$DIST/bin/kafka-server-start.sh" "$props"
}

# ---------------------------------------------------------------------------
# tests

# tests/project: tests marked "container" need a container engine, "fresh" is the
# fresh-machine test (Debian 12 and 13 containers built from scratch; docs/testing.md)
cmd_test() {
    local mode=default
    case "${1:-}" in
        --quick) mode=quick; shift ;;
        --full) mode=full; shift ;;
        "") ;;
        *) die "test: unknown argument $1 (see ./build.sh --help)" ;;
    esac
    [[ $# == 0 ]] || die "test: unknown argument $1 (see ./build.sh --help)"
    cmd_build
    if [[ -f "$NATIVE_LEFT_OUT" ]]; then
        die "the native-gzip provider was left out of the distribution: $(cat "$NATIVE_LEFT_OUT"); its tests cannot pass"
    fi
    ensure_venv
    local rc=0 t0
    # seconds to a minute: upstream's checkstyle rules on what the series adds or changes, in every mode
    ( cmd_checkstyle ) || rc=1
    if [[ $mode != quick ]]; then
        # first, alone: upstream's CPU-heavy tests (the sticky assignors) carry
        # their own timeouts, which other load on 2 cores can make them miss
        t0=$SECONDS
        log "upstream's test gate (tests/upstream/gate.sh)"
        bash "$ROOT/tests/upstream/gate.sh" || rc=1
        log "upstream's test gate: finished in $(elapsed "$t0")"
    fi
    local marks=()
    case $mode in
        quick) marks=(-m "not container and not fresh") ;;
        default) marks=(-m "not fresh") ;;
        full) export KC_SYSTEST_FULL=1 ;;   # the system tests' long cases too (docs/testing.md)
    esac
    t0=$SECONDS
    # the system tests run beside the other project tests, in a pytest of their own: they are about a third of the
    # project tests' time, spent mostly waiting on nodes in containers of their own network (no loopback port, no
    # file of the others), and the project tests leave more than half of the 2 cores idle (docs/testing.md). The
    # client interop cases, the cleaner levels and Connect/MirrorMaker 2 (brokers on free loopback ports, files
    # under their own temporary folder; they wait on brokers more than they compute) go with them, so that the two
    # pytests take about as long as each other
    local beside=(tests/project/test_systest.py::test_system_tests_pass tests/project/test_client_interop.py
                  tests/project/test_cleaner_levels.py tests/project/test_connect_mirror.py)
    local sys_pid="" sys_log="$BUILD/test-systest.log" deselect=() t
    if [[ $mode != quick ]]; then
        log "system tests and client interop: pytest ${beside[*]}, beside the other project tests (output: $sys_log)"
        (cd "$ROOT" && exec python3 -m pytest -q -p no:cacheprovider --durations=10 --basetemp="$BUILD/pytest-systest" \
            "${marks[@]}" "${beside[@]}") > "$sys_log" 2>&1 &
        sys_pid=$!
        for t in "${beside[@]}"; do deselect+=(--deselect "$t"); done
    fi
    log "project tests: pytest tests/project ${marks[*]}${sys_pid:+ but those beside}"
    (cd "$ROOT" && python3 -m pytest -q -p no:cacheprovider --durations=30 "${marks[@]}" "${deselect[@]}" tests/project) \
        || rc=1
    log "project tests: finished in $(elapsed "$t0")"
    if [[ -n $sys_pid ]]; then
        wait "$sys_pid" || rc=1
        log "system tests and client interop: their pytest output ($sys_log):"
        cat "$sys_log" >&2
    fi
    [[ $rc == 0 ]] && log "all tests passed" || die "tests failed"
}

# docs: docs/configuration.md, generated from the jars as Kafka generates its own configuration docs
cmd_docs() {
    local check=""
    case "${1:-}" in
        --check) check=1; shift ;;
    esac
    [[ $# == 0 ]] || die "docs: unknown argument $1 (see ./build.sh docs --help)"
    cmd_build
    local page="$ROOT/docs/configuration.md" out="$BUILD/configuration.md"
    java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "$ROOT/tools/config-docs/ConfigDocs.java" \
        "$DIST/libs" "$UPSTREAM_OUT/libs" > "$out" || die "tools/config-docs/ConfigDocs.java failed (output above)"
    if [[ -n $check ]]; then
        diff -u "$page" "$out" >&2 \
            || die "docs/configuration.md differs from what the jars say (diff above): run ./build.sh docs and commit it"
        log "docs/configuration.md: as the jars say"
    else
        mv "$out" "$page"
        log "wrote docs/configuration.md"
    fi
}

cmd_gate() {
    cmd_build
    ensure_venv
    if [[ "${1:-}" == --each-patch ]]; then
        shift
        exec bash "$ROOT/tests/upstream/each-patch.sh" "$@"
    fi
    [[ $# == 0 ]] || die "gate: unknown argument $1 (see ./build.sh --help)"
    bash "$ROOT/tests/upstream/gate.sh"
}

# ---------------------------------------------------------------------------
# checkstyle: Kafka's own Java style rules, import control and import order, on the files the series adds or
# changes. kafka/ is rebuilt from the release's source jars, which carry no checkstyle/ folder: the rules are ours,
# written from upstream's (tools/checkstyle/checkstyle.xml says which), and checkstyle comes from Maven Central at
# the version upstream's build uses, every jar checked against tools/checkstyle/artifacts.sha256.

CHECKSTYLE_DIR="$ROOT/tools/checkstyle"
CHECKSTYLE_POM="$CHECKSTYLE_DIR/checkstyle-pom.xml"
CHECKSTYLE_LOCK="$CHECKSTYLE_DIR/artifacts.sha256"

checkstyle_usage() {
    cat <<EOF
Usage: ./build.sh checkstyle [FILE...]

Runs checkstyle $(sed -n 's:.*<checkstyle.version>\(.*\)</checkstyle.version>.*:\1:p' "$CHECKSTYLE_POM") with tools/checkstyle/checkstyle.xml: upstream Kafka's style
checks, import order and import control (the module's tools/checkstyle/import-control-MODULE.xml),
less the suppressions in tools/checkstyle/suppressions.xml.

Without FILE: every .java file the patch series adds or changes in kafka/ (main and test,
git -C kafka diff --name-only upstream trunk), kafka/ materialized first if needed.
With FILE...: those files, in a tree laid out as kafka/ (MODULE/src/{main,test}/java/...):
the folder before src/ names the module, and so its import-control file.

Prints each violation in checkstyle's form, [ERROR] FILE:LINE:COL: MESSAGE [Check],
and exits non-zero when there is any. Checkstyle and its dependencies come from Maven
(the local repository, ~/.m2 by default), each jar checked against
tools/checkstyle/artifacts.sha256 (./build.sh lock --checkstyle re-records it).
EOF
}

# checkstyle_resolve: checkstyle's classpath, as Maven resolves it, in $BUILD/checkstyle/classpath.txt
checkstyle_resolve() {
    mkdir -p "$BUILD/checkstyle"
    verify_plugins      # the pom runs maven-dependency-plugin at the version pom.xml pins, which the plugin lock covers
    mvn_q -f "$CHECKSTYLE_POM" dependency:build-classpath -Dmdep.includeScope=runtime \
        -Dmdep.outputFile="$BUILD/checkstyle/classpath.txt" || die "Maven could not resolve checkstyle ($CHECKSTYLE_POM)"
}

# checkstyle_jars: the classpath's jars, relative to Maven's local repository, one a line
checkstyle_jars() { tr ':' '\n' < "$BUILD/checkstyle/classpath.txt" | sed "s:^$(maven_local_repo)/::" | sort; }

# checkstyle_classpath: resolves checkstyle and prints its classpath, every jar verified
checkstyle_classpath() {
    checkstyle_resolve
    [[ -f "$CHECKSTYLE_LOCK" ]] || die "no lock file $CHECKSTYLE_LOCK (run ./build.sh lock --checkstyle to record one)"
    lock_lists_same "$CHECKSTYLE_LOCK" "$(checkstyle_jars)" \
        "checkstyle's classpath is not what $CHECKSTYLE_LOCK lists (see the diff above)"
    check_m2_lock "$CHECKSTYLE_LOCK" || die "SHA-256 mismatch against $CHECKSTYLE_LOCK: refusing to run unverified jars"
    cat "$BUILD/checkstyle/classpath.txt"
}

cmd_lock_checkstyle() {
    mkdir -p "$BUILD"
    checkstyle_resolve
    (cd "$(maven_local_repo)" && checkstyle_jars | xargs sha256sum) > "$CHECKSTYLE_LOCK"
    log "recorded $(wc -l < "$CHECKSTYLE_LOCK") jars in $CHECKSTYLE_LOCK"
}

cmd_checkstyle() {
    local files=() f
    for f in "$@"; do
        case "$f" in
            -h|--help) checkstyle_usage; return 0 ;;
            -*) die "checkstyle: unknown option $f (see ./build.sh checkstyle --help)" ;;
            *) [[ -f "$f" ]] || die "checkstyle: no such file: $f"
               files+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")") ;;
        esac
    done
    local t0=$SECONDS base=""
    mkdir -p "$BUILD"
    if [[ ${#files[@]} == 0 ]]; then
        fetch_upstream
        materialize
        base="$TREE/"
        while IFS= read -r f; do files+=("$TREE/$f"); done \
            < <(git -C "$TREE" diff --name-only --diff-filter=d upstream HEAD -- '*.java')
        [[ ${#files[@]} -gt 0 ]] || { log "checkstyle: the series adds or changes no Java file"; return 0; }
    fi
    local cp
    cp="$(checkstyle_classpath)"
    # one checkstyle run per module: each module has its own import-control file, as in upstream's build
    local -A by_module=()
    local m
    for f in "${files[@]}"; do
        [[ "$f" =~ /([^/]+)/src/(main|test)/java/ ]] || die "checkstyle: $f is not under MODULE/src/{main,test}/java/"
        m="${BASH_REMATCH[1]}"
        [[ -f "$CHECKSTYLE_DIR/import-control-$m.xml" ]] \
            || die "checkstyle: no import-control file for module $m (tools/checkstyle/import-control-$m.xml): write one from upstream's"
        by_module[$m]+="$f"$'\n'
    done
    local modules out rc violations=0 n
    modules="$(printf '%s\n' "${!by_module[@]}" | sort | tr '\n' ' ')"
    for m in $modules; do
        rc=0
        # C1 and the serial collector: a short batch run, not a server
        out="$(printf '%s' "${by_module[$m]}" | tr '\n' '\0' | xargs -0 java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
            -cp "$cp" -DcheckstyleDir="$CHECKSTYLE_DIR" -DimportControlFile="$CHECKSTYLE_DIR/import-control-$m.xml" \
            com.puppycrawl.tools.checkstyle.Main -c "$CHECKSTYLE_DIR/checkstyle.xml" 2>&1)" || rc=$?
        # grep -c prints 0 and exits 1 when checkstyle reported nothing: the count decides, not grep's status
        n="$(grep -c '^\[ERROR\] ' <<<"$out" || true)"
        if [[ $rc != 0 && $n == 0 ]]; then
            printf '%s\n' "$out" >&2
            die "checkstyle failed on module $m (output above)"
        fi
        # checkstyle's own lines, with paths relative to kafka/ when it checks kafka/ (none to show: grep exits 1;
        # the count above decides the result)
        grep '^\[\(ERROR\|WARN\)\] ' <<<"$out" | if [[ -n "$base" ]]; then sed "s:\] $base:] :"; else cat; fi || true
        violations=$((violations + n))
    done
    local what="${#files[@]} Java files (${modules% })"
    if [[ $violations != 0 ]]; then
        die "checkstyle: $violations violations in $what, in $(elapsed "$t0")"
    fi
    log "checkstyle: no violations in $what, in $(elapsed "$t0")"
}

# the system package groups a subcommand needs (see system_packages)
groups_for() {
    local engine=engine
    # a Docker engine that answers replaces podman and its helpers
    command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1 && engine=""
    case "$1" in
        build|run|source|lock|checkstyle|docs) echo build ;;
        gate|bench) echo build python ;;
        test) [[ "${2:-}" == --quick ]] && echo build python || echo "build python $engine ssh" ;;
        image) echo "build $engine" ;;
        systest) echo "build python $engine ssh" ;;
    esac
}

# ---------------------------------------------------------------------------

# sub_usage SUB: the lines of usage() that describe SUB (its entries and their continuation lines)
sub_usage() {
    echo "Usage: ./build.sh $1 [ARGS]"
    echo
    usage | awk -v sub_="$1" '
        /^Subcommands:/ { on = 1; next }
        on && /^$/ { exit }
        on && /^  [^ ]/ { split($0, w, " "); show = (w[1] == sub_) }
        on && show { print }'
}

# sub_help SUB: prints SUB's usage and exits 0, before anything is installed, fetched or built
sub_help() {
    case "$1" in
        build|run|test|gate|docs|source|lock|clean) sub_usage "$1" ;;
        checkstyle) checkstyle_usage ;;
        image) exec bash "$ROOT/docker/images.sh" --help ;;
        systest) exec bash "$ROOT/tests/systest.sh" --help ;;
        bench) exec bash "$ROOT/bench/bench.sh" --help ;;
        *) usage >&2; die "unknown subcommand: $1" ;;
    esac
    exit 0
}

main() {
    local sub="${1:-build}"
    [[ $# -gt 0 ]] && shift
    case "$sub" in
        -h|--help|help) usage; return 0 ;;
    esac
    if [[ " $* " == *" --help "* || " $* " == *" -h "* ]]; then
        sub_help "$sub"
    fi
    [[ $sub == clean ]] || require_system $(groups_for "$sub" "$@")
    case "$sub" in
        build) cmd_build "$@" ;;
        run) cmd_run "$@" ;;
        test) cmd_test "$@" ;;
        gate) cmd_gate "$@" ;;
        docs) cmd_docs "$@" ;;
        source) mkdir -p "$BUILD"; fetch_upstream; materialize ;;
        lock) case "${1:-}" in
                  --python) cmd_lock_python ;;
                  --checkstyle) cmd_lock_checkstyle ;;
                  --newest) cmd_lock_newest ;;
                  *) cmd_lock ;;
              esac ;;
        checkstyle) cmd_checkstyle "$@" ;;
        clean) rm -rf "$BUILD" ;;
        image|systest|bench)
            local script="$ROOT/docker/images.sh"
            [[ $sub == systest ]] && script="$ROOT/tests/systest.sh"
            [[ $sub == bench ]] && script="$ROOT/bench/bench.sh"
            [[ -f "$script" ]] || die "$sub: not available in this checkout ($script is missing)"
            cmd_build
            [[ $sub == image ]] || ensure_venv
            [[ $sub == systest ]] && fetch_newest_upstream     # stock 4.3.2 and 4.4.0 for the upgrade test's nodes
            export KC_ROOT="$ROOT" KC_DIST="$DIST" KC_BUILD="$BUILD" KC_DIST_VERSION="$DIST_VERSION" \
                KC_KAFKA_VERSION="$KAFKA_VERSION" KC_COMMIT_ID="$COMMIT_ID" KC_UPSTREAM="$UPSTREAM_OUT" \
                KC_NEWEST_UPSTREAM="$NEWEST_OUT"
            exec bash "$script" "$@" ;;
        *) usage >&2; die "unknown subcommand: $sub" ;;
    esac
}

# sourced (tests/project/test_setup.py) only defines the functions
[[ "${BASH_SOURCE[0]}" != "$0" ]] || main "$@"
