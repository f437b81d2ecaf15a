#!/usr/bin/env bash
# Container images of the distribution; what `./build.sh image` runs.
#
#   docker/images.sh [build] [--force]   base image (pulled, or built offline with
#                                        mmdebstrap), broker image, test-node image;
#                                        prints their sizes
#   docker/images.sh sizes               sizes of the images
#   docker/images.sh cluster ...         docker/cluster.sh (N broker containers)
#
# Images are labelled with a content hash of the distribution, the Dockerfiles and
# the scripts they copy, and are only rebuilt when that changes (--force rebuilds).
# Environment from build.sh: KC_ROOT, KC_DIST, KC_DIST_VERSION, KC_KAFKA_VERSION,
# KC_COMMIT_ID. Run directly, they are derived from the checkout (after ./build.sh).
set -euo pipefail

case "${1:-}" in
    # the comment above; before engine.sh, which probes the container engines
    -h|--help|help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"; exit 0 ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=docker/engine.sh
. "$here/engine.sh"

KC_ROOT="${KC_ROOT:-$(cd "$here/.." && pwd)}"
pom_prop() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$KC_ROOT/pom.xml" | head -1; }
KC_KAFKA_VERSION="${KC_KAFKA_VERSION:-$(pom_prop revision)}"
KC_DIST_VERSION="${KC_DIST_VERSION:-$KC_KAFKA_VERSION$(pom_prop changelist)}"
KC_COMMIT_ID="${KC_COMMIT_ID:-$(pom_prop kafka.commitId)}"
KC_DIST="${KC_DIST:-$KC_ROOT/build/dist/kafka_$(pom_prop kafka.scala.version)-$KC_DIST_VERSION}"

BROKER_IMAGE="${KC_BROKER_IMAGE:-localhost/kafka-compress:$KC_DIST_VERSION}"
NODE_IMAGE="${KC_NODE_IMAGE:-localhost/kafka-compress-node:$KC_DIST_VERSION}"
BASE_IMAGE="${KC_BASE_IMAGE:-debian:trixie-slim}"
HASH_LABEL=io.kafkacompress.content-hash

log() { printf '[images] %s\n' "$*" >&2; }
die() { printf '[images] ERROR: %s\n' "$*" >&2; exit 1; }

content_hash() { # files and dirs -> short hash of names and contents
    (cd "$KC_ROOT" && find "$@" -type f ! -name .assembled | LC_ALL=C sort | xargs sha256sum) \
        | sha256sum | cut -c1-16
}

image_label() { engine image inspect --format "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true; }

image_size() { engine image inspect --format '{{.Size}}' "$1" 2>/dev/null | awk '{printf "%.0f MB", $1/1e6}'; }

build_image() { # name hash dockerfile [build args...]
    local name="$1" hash="$2" file="$3"; shift 3
    if [[ -z "$FORCE" && "$(image_label "$name" "$HASH_LABEL")" == "$hash" ]]; then
        log "$name is up to date (content hash $hash)"
        return 0
    fi
    log "building $name from $file (content hash $hash)"
    local fmt=()
    [[ "$KC_ENGINE" == podman ]] && fmt=(--format docker)   # keeps HEALTHCHECK
    local t0=$SECONDS
    nice -n 10 env CONTAINERS_CONF="$KC_CONTAINERS_CONF" "$KC_ENGINE" build "${fmt[@]}" \
        -f "$KC_ROOT/$file" -t "$name" --label "$HASH_LABEL=$hash" "$@" "$KC_ROOT" >&2 \
        || die "building $name failed"
    log "built $name in $((SECONDS - t0)) s"
}

# The non-Java Kafka clients of the system tests at requirements.txt's pins (confluent-kafka, kafka-python
# and kafka-python's codec libraries), downloaded on this host as wheels for the node image's Python
# (Debian trixie: CPython 3.13) into build/node-wheels, which the node image installs offline: a build
# container needs no HTTPS (egress that re-signs TLS would need the host's CA bundle inside it).
# Downloaded once per pin; a changed pin replaces its wheel.
NODE_PYTHON="${KC_NODE_PYTHON:-3.13}"
NODE_PACKAGES=(confluent-kafka kafka-python lz4 zstandard python-snappy cramjam)
node_wheels() {
    local dir="$KC_ROOT/build/node-wheels" pins=() missing=() keep=() p ver f k ok arch
    for p in "${NODE_PACKAGES[@]}"; do
        ver="$(sed -n "s/^$p==\([^ #]*\).*/\1/p" "$KC_ROOT/requirements.txt" | head -1)"
        [[ -n "$ver" ]] || die "requirements.txt does not pin $p (name==version)"
        pins+=("$p==$ver")
        keep+=("${p//-/_}-$ver-")
        compgen -G "$dir/${p//-/_}-$ver-*.whl" >/dev/null || missing+=("$p==$ver")
    done
    mkdir -p "$dir"
    for f in "$dir"/*.whl; do
        [[ -e "$f" ]] || continue
        ok=0
        for k in "${keep[@]}"; do [[ "$(basename "$f")" == "$k"* ]] && ok=1; done
        [[ $ok == 1 ]] || rm -f "$f"
    done
    [[ ${#missing[@]} == 0 ]] && { node_wheels_check "$dir"; return 0; }
    arch="$(uname -m)"
    # the pins with their SHA-256 hashes from requirements.txt (./build.sh lock --python): pip checks each wheel
    local req="$KC_ROOT/build/node-wheels.requirements.txt" m
    : > "$req"
    for m in "${missing[@]}"; do
        p="$(awk -v pin="$m" 'index($0, pin " ") == 1 || $0 == pin { on = 1 }
                            on { print; if ($0 !~ /\\$/) exit }' "$KC_ROOT/requirements.txt")"
        grep -q -- "--hash=sha256:" <<<"$p" || die "requirements.txt has no --hash for $m (./build.sh lock --python)"
        echo "$p" >> "$req"
    done
    log "downloading wheels for the test nodes (CPython $NODE_PYTHON, $arch), hash-checked: ${missing[*]}"
    "${KC_PYTHON:-python3}" -m pip download -q --disable-pip-version-check --only-binary=:all: --no-deps -d "$dir" \
        --platform "manylinux_2_28_$arch" --platform "manylinux_2_17_$arch" --platform "manylinux2014_$arch" \
        --python-version "$NODE_PYTHON" --implementation cp --require-hashes -r "$req" \
        || die "pip download ${missing[*]} failed (index reachable? pip's index-url, proxy, PIP_CERT for a TLS proxy; a hash mismatch?)"
    node_wheels_check "$dir"
}

# every wheel the node image installs has a SHA-256 that requirements.txt lists (kept ones from earlier runs too)
node_wheels_check() {
    local f
    for f in "$1"/*.whl; do
        [[ -e "$f" ]] || continue
        grep -q -- "--hash=sha256:$(sha256sum "$f" | cut -c1-64)" "$KC_ROOT/requirements.txt" \
            || { rm -f "$f"; die "$(basename "$f"): its SHA-256 is not in requirements.txt (removed; run again)"; }
    done
}

cmd_build() {
    engine_available || die "no container engine: $KC_ENGINE_REASON"
    [[ -f "$KC_DIST/RELEASE" ]] || die "no distribution at $KC_DIST (run ./build.sh first)"
    # one build at a time (./build.sh test runs the system tests beside the other project tests, and both build):
    # the second waits here, then finds the images current
    mkdir -p "$KC_ROOT/build"
    exec 9>"$KC_ROOT/build/images.lock"
    flock 9
    local rel_dist="${KC_DIST#"$KC_ROOT"/}"
    [[ "$rel_dist" != /* ]] || die "the distribution must be inside the repository ($KC_DIST)"
    log "engine: $KC_ENGINE$([[ $KC_ENGINE == podman ]] && echo " (CONTAINERS_CONF=$KC_CONTAINERS_CONF)")"

    local base; base="$(engine_base_image "$BASE_IMAGE")" || die "no base image"
    local base_id; base_id="$(engine image inspect --format '{{.Id}}' "$base")"
    log "base image: $base ($(image_size "$base"))"

    local series=""
    [[ -f "$KC_ROOT/patches/series" ]] && \
        series="$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$KC_ROOT/patches/series" | grep -v '^$' | tr '\n' ' ' | sed 's/ $//' || true)"

    local broker_hash
    broker_hash="$( { echo "$base_id $series"; content_hash "$rel_dist" Dockerfile .dockerignore docker/entrypoint.sh docker/healthcheck.sh; } | sha256sum | cut -c1-16)"
    # what the image was built on, recorded in it: the base's name, its image ID, and its registry digest when it
    # was pulled (an offline mmdebstrap base has none; its ID and the apt sources it came from identify it)
    local base_digest
    # an offline (mmdebstrap) base has no registry digest: the label then says so, the base id is recorded beside it
    base_digest="$(engine image inspect --format '{{join .RepoDigests " "}}' "$base" 2>/dev/null || true)"
    build_image "$BROKER_IMAGE" "$broker_hash" Dockerfile \
        --label "io.kafkacompress.base.image=$base" --label "io.kafkacompress.base.id=$base_id" \
        --label "io.kafkacompress.base.digest=${base_digest:-none (built offline)}" \
        --build-arg "BASE_IMAGE=$base" \
        --build-arg "DIST_DIR=$rel_dist" \
        --build-arg "KAFKA_DIST_VERSION=$KC_DIST_VERSION" \
        --build-arg "KAFKA_VERSION=$KC_KAFKA_VERSION" \
        --build-arg "KAFKA_COMMIT_ID=$KC_COMMIT_ID" \
        --build-arg "KAFKA_SERIES=$series"

    node_wheels
    local node_hash
    node_hash="$( { echo "$broker_hash"; content_hash docker/node build/node-wheels; } | sha256sum | cut -c1-16)"
    build_image "$NODE_IMAGE" "$node_hash" docker/node/Dockerfile \
        --build-arg "BROKER_IMAGE=$BROKER_IMAGE"

    cmd_sizes
}

cmd_sizes() {
    engine_available || die "no container engine: $KC_ENGINE_REASON"
    local i
    for i in "$BROKER_IMAGE" "$NODE_IMAGE"; do
        if engine_image_exists "$i"; then
            printf '%-50s %s\n' "$i" "$(image_size "$i")"
        else
            printf '%-50s %s\n' "$i" "(not built)"
        fi
    done
}

FORCE=""
sub="${1:-build}"; [[ $# -gt 0 ]] && shift
case "$sub" in
    build)
        [[ "${1:-}" == --force ]] && FORCE=1
        cmd_build ;;
    --force) FORCE=1; cmd_build ;;
    sizes) cmd_sizes ;;
    cluster) exec bash "$here/cluster.sh" "$@" ;;
    *) die "unknown subcommand $sub (see --help)" ;;
esac
