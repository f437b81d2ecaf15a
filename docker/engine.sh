# shellcheck shell=bash
# Container engine helper; source it:   . docker/engine.sh
#
# Defines `engine`, which runs `docker` when a Docker engine answers (`docker info`
# succeeds) and rootful `podman` otherwise, with this project's containers.conf
# (CONTAINERS_CONF=docker/containers.conf: no default ulimits, runtime runc; see
# that file). KC_ENGINE=docker|podman forces a choice. After sourcing,
# KC_ENGINE says which engine was found ("" when none works; `engine_available`
# is false then, with the reason in KC_ENGINE_REASON).
#
# Also defines:
#   engine_base_image IMAGE   make IMAGE (a Debian trixie base, e.g.
#                             debian:trixie-slim) available: present already,
#                             pulled from a registry, or built offline with
#                             mmdebstrap and imported under the name
#                             localhost/debian:trixie-slim. Prints the name to
#                             pass as BASE_IMAGE on stdout.
#   engine_debian_image SUITE  make localhost/debian:SUITE-slim (e.g. bookworm,
#                             trixie) available, built offline with mmdebstrap
#                             if missing (never pulled); prints its name
#   engine_image_exists IMAGE

KC_DOCKER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KC_CONTAINERS_CONF="${KC_CONTAINERS_CONF:-$KC_DOCKER_DIR/containers.conf}"

_kc_engine_log() { printf '[engine] %s\n' "$*" >&2; }

_kc_detect_engine() {
    KC_ENGINE_REASON=""
    if [[ -n "${KC_ENGINE:-}" ]]; then
        return 0
    fi
    if command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1; then
        KC_ENGINE=docker
    elif command -v podman >/dev/null 2>&1; then
        if [[ $(id -u) != 0 ]]; then
            KC_ENGINE=""
            KC_ENGINE_REASON="no Docker engine answers and podman needs root here (rootful podman)"
        elif CONTAINERS_CONF="$KC_CONTAINERS_CONF" timeout 60 podman info >/dev/null 2>&1; then
            KC_ENGINE=podman
        else
            KC_ENGINE=""
            KC_ENGINE_REASON="no Docker engine answers and 'podman info' fails"
        fi
    else
        KC_ENGINE=""
        KC_ENGINE_REASON="no Docker engine answers and podman is not installed (apt-get install podman buildah runc mmdebstrap)"
    fi
}

engine() {
    case "${KC_ENGINE:-}" in
        docker) docker "$@" ;;
        podman) CONTAINERS_CONF="$KC_CONTAINERS_CONF" podman "$@" ;;
        *) _kc_engine_log "no container engine: ${KC_ENGINE_REASON:-unknown}"; return 127 ;;
    esac
}

engine_available() { [[ -n "${KC_ENGINE:-}" ]]; }

engine_image_exists() { engine image inspect "$1" >/dev/null 2>&1; }

KC_OFFLINE_BASE="${KC_OFFLINE_BASE:-localhost/debian:trixie-slim}"

# The Debian archive mmdebstrap builds from: this host's own apt sources, never a host named here, so a mirror or
# proxy the host's apt uses serves the images too. KC_DEBIAN_MIRROR / KC_DEBIAN_SECURITY override.
#
# kc_apt_sources [FILE...]: "URI SUITE" for each deb source of /etc/apt/sources.list and sources.list.d/*.list
# (one-line style) and sources.list.d/*.sources (deb822), comments and disabled files left out
kc_apt_sources() {
    local files=("$@")
    if [[ ${#files[@]} == 0 ]]; then
        local f
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
            [[ -f "$f" ]] && files+=("$f")
        done
        [[ ${#files[@]} == 0 ]] && return 0
    fi
    awk 'BEGIN { enabled = 1 }
        FNR == 1 { if (deb822) flush(); deb822 = (FILENAME ~ /\.sources$/) }
        function flush(   n, u, s, i, j, t) {
            t = " " types " "; gsub(/\t/, " ", t)
            if (index(t, " deb ") && enabled) {
                n = split(uris, u, /[ \t]+/); split(suites, s, /[ \t]+/)
                for (i = 1; i <= n; i++) for (j in s) if (u[i] != "" && s[j] != "") print u[i], s[j]
            }
            types = ""; uris = ""; suites = ""; enabled = 1
        }
        /^[ \t]*#/ { next }
        { sub(/#.*/, "") }
        deb822 && /^[ \t]*$/ { flush(); next }
        deb822 {
            k = tolower($1); v = $0; sub(/^[^:]*:[ \t]*/, "", v)
            if (k == "types:") types = v; else if (k == "uris:") uris = v
            else if (k == "suites:") suites = v; else if (k == "enabled:") enabled = (tolower(v) != "no")
            next
        }
        !deb822 && $1 == "deb" {
            i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            print $i, $(i + 1)
        }
        END { if (deb822) flush() }
    ' "${files[@]}" 2>/dev/null
}

# kc_debian_mirrors [FILE...]: "MIRROR SECURITY_MIRROR" from those sources: the first source of a Debian suite
# (a codename or stable/testing/unstable, plain or -updates/-backports) and the first of a -security suite
kc_debian_mirrors() {
    kc_apt_sources "$@" | awk '
        $2 ~ /^(buster|bullseye|bookworm|trixie|forky|duke|sid|oldstable|stable|testing|unstable)(-updates|-backports)?$/ && main == "" { main = $1 }
        $2 ~ /^(buster|bullseye|bookworm|trixie|forky|duke|oldstable|stable|testing)[-\/]security$/ && sec == "" { sec = $1 }
        END { if (main != "") print main, (sec != "" ? sec : "-") }
    '
}

_kc_debian_mirror_setup() {
    local m s
    # a host without apt sources gives no line: then KC_DEBIAN_MIRROR/KC_DEBIAN_SECURITY (or the base image's own) apply
    read -r m s < <(kc_debian_mirrors) || true
    KC_DEBIAN_MIRROR="${KC_DEBIAN_MIRROR:-${m:-}}"
    [[ "${s:-}" == - ]] && s=""
    KC_DEBIAN_SECURITY="${KC_DEBIAN_SECURITY:-${s:-}}"
}

engine_base_image() {
    local want="${1:-debian:trixie-slim}"
    if engine_image_exists "$want"; then
        # podman resolves a short name to localhost/... too: say which it is
        if [[ "$(engine image inspect --format '{{.Id}}' "$want")" == \
              "$(engine image inspect --format '{{.Id}}' "$KC_OFFLINE_BASE" 2>/dev/null)" ]]; then
            _kc_engine_log "base image: using $KC_OFFLINE_BASE (built offline earlier with mmdebstrap) for $want"
            want="$KC_OFFLINE_BASE"
        fi
        printf '%s\n' "$want"; return 0
    fi
    if engine_image_exists "$KC_OFFLINE_BASE"; then
        _kc_engine_log "base image: using $KC_OFFLINE_BASE (built offline earlier with mmdebstrap) for $want"
        printf '%s\n' "$KC_OFFLINE_BASE"; return 0
    fi
    if [[ "${KC_OFFLINE:-}" != 1 ]]; then
        # a short name as given: docker resolves it with the daemon's registry mirrors, podman with its
        # registries.conf (short-name aliases, unqualified-search-registries, [[registry]] mirrors)
        local q="$want"
        _kc_engine_log "base image: pulling $q"
        if timeout 300 env CONTAINERS_CONF="$KC_CONTAINERS_CONF" "$KC_ENGINE" pull -q "$q" >/dev/null 2>"${TMPDIR:-/tmp}/kc-pull.$$"; then
            rm -f "${TMPDIR:-/tmp}/kc-pull.$$"
            printf '%s\n' "$q"; return 0
        fi
        _kc_engine_log "base image: cannot pull $q ($(tail -1 "${TMPDIR:-/tmp}/kc-pull.$$" | cut -c1-160))"
        rm -f "${TMPDIR:-/tmp}/kc-pull.$$"
    fi
    _kc_build_offline_base || return 1
    printf '%s\n' "$KC_OFFLINE_BASE"
}

engine_debian_image() {
    local suite="$1" name="localhost/debian:$1-slim"
    engine_image_exists "$name" || _kc_build_offline_base "$suite" "$name" || return 1
    printf '%s\n' "$name"
}

# _kc_build_offline_base [SUITE [NAME]]: Debian SUITE (trixie), minbase, documentation
# and locales excluded like the official -slim images (the dpkg excludes stay in
# the image, so later apt installs honour them too); apt lists are not kept.
_kc_build_offline_base() {
    local suite="${1:-trixie}" name="${2:-$KC_OFFLINE_BASE}"
    command -v mmdebstrap >/dev/null 2>&1 \
        || { _kc_engine_log "no registry and no mmdebstrap (apt-get install mmdebstrap): cannot make a base image"; return 1; }
    _kc_debian_mirror_setup
    [[ -n "$KC_DEBIAN_MIRROR" ]] || { _kc_engine_log "no Debian archive in this host's apt sources (/etc/apt/sources.list, /etc/apt/sources.list.d/): set KC_DEBIAN_MIRROR (and KC_DEBIAN_SECURITY) to your Debian mirror's URL"; return 1; }
    local sources=("deb $KC_DEBIAN_MIRROR $suite main" "deb $KC_DEBIAN_MIRROR $suite-updates main")
    [[ -n "$KC_DEBIAN_SECURITY" ]] && sources+=("deb $KC_DEBIAN_SECURITY $suite-security main")
    local tmp; tmp="$(mktemp -d)"
    _kc_engine_log "base image: building $name offline with mmdebstrap --variant=minbase $suite (${sources[*]}; from this host's apt sources)"
    if ! mmdebstrap --variant=minbase --quiet \
            --dpkgopt='path-exclude=/usr/share/man/*' \
            --dpkgopt='path-exclude=/usr/share/doc/*' \
            --dpkgopt='path-include=/usr/share/doc/*/copyright' \
            --dpkgopt='path-exclude=/usr/share/locale/*' \
            --dpkgopt='path-exclude=/usr/share/info/*' \
            --aptopt='Acquire::Languages "none"' \
            "$suite" "$tmp/base.tar" "${sources[@]}" >&2; then
        rm -rf "$tmp"; _kc_engine_log "mmdebstrap failed"; return 1
    fi
    engine import --change 'CMD ["bash"]' "$tmp/base.tar" "$name" >/dev/null || { rm -rf "$tmp"; return 1; }
    rm -rf "$tmp"
    _kc_engine_log "base image: imported $name ($(engine image inspect --format '{{.Size}}' "$name" 2>/dev/null | awk '{printf "%.0f MB", $1/1e6}'))"
}

_kc_detect_engine
