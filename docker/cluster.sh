#!/usr/bin/env bash
# Clusters of broker containers (or test nodes) on a private network of their own.
#
#   docker/cluster.sh up NAME N [opts]   network NAME-net and containers NAME-1..N
#                                        (hostnames NAME-1..), a KRaft cluster of N
#                                        combined broker+controller nodes; waits
#                                        until a controller is elected and all N
#                                        brokers are registered
#   docker/cluster.sh nodes NAME N [opts] N test nodes (node image, sshd) on NAME-net;
#                                        --ssh-key PUBFILE is authorized for root
#   docker/cluster.sh down NAME          remove NAME's containers and network
#   docker/cluster.sh run N [opts] -- CMD...
#                                        up a cluster with a fresh name, run CMD with
#                                        KC_CLUSTER_NAME, KC_CLUSTER_NETWORK,
#                                        KC_CLUSTER_BOOTSTRAP (in-network) exported,
#                                        then remove it, also on failure or Ctrl-C
#   docker/cluster.sh list               clusters made by this script
# opts: --image IMG   --env K=V (repeatable, KAFKA_* settings for every broker)
#       --publish BASEPORT (node i's 9092 at 127.0.0.1:BASEPORT+i-1; advertised so)
#       --timeout SECONDS (wait for the cluster, default 120)
#
# Everything is labelled io.kafkacompress.cluster=NAME; `down` removes by label.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=docker/engine.sh
. "$here/engine.sh"
KC_ROOT="${KC_ROOT:-$(cd "$here/.." && pwd)}"
pom_prop() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$KC_ROOT/pom.xml" | head -1; }
KC_DIST_VERSION="${KC_DIST_VERSION:-$(pom_prop revision)$(pom_prop changelist)}"
LABEL=io.kafkacompress.cluster

log() { printf '[cluster] %s\n' "$*" >&2; }
die() { printf '[cluster] ERROR: %s\n' "$*" >&2; exit 1; }

IMAGE=""; ENVS=(); PUBLISH=""; TIMEOUT=120; SSH_KEY=""
parse_opts() {
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --image) IMAGE="$2"; shift 2 ;;
            --env) ENVS+=("$2"); shift 2 ;;
            --publish) PUBLISH="$2"; shift 2 ;;
            --timeout) TIMEOUT="$2"; shift 2 ;;
            --ssh-key) SSH_KEY="$2"; shift 2 ;;
            --) shift; REST=("$@"); return 0 ;;
            *) die "unknown option $1" ;;
        esac
    done
    REST=()
}

cmd_down() {
    local name="$1" ids
    ids="$(engine ps -a -q --filter "label=$LABEL=$name" 2>/dev/null || true)"
    if [[ -n "$ids" ]]; then
        # shellcheck disable=SC2086
        engine rm -f -t 2 $ids >/dev/null 2>&1 || engine rm -f $ids >/dev/null 2>&1 || true
    fi
    engine network rm -f "$name-net" >/dev/null 2>&1 || engine network rm "$name-net" >/dev/null 2>&1 || true
    log "removed cluster $name"
}

make_network() {
    local name="$1"
    engine network inspect "$name-net" >/dev/null 2>&1 \
        || engine network create --label "$LABEL=$name" "$name-net" >/dev/null
}

cmd_up() {
    local name="$1" n="$2"; shift 2
    parse_opts "$@"
    [[ -n "$IMAGE" ]] || IMAGE="localhost/kafka-compress:$KC_DIST_VERSION"
    engine_image_exists "$IMAGE" || die "image $IMAGE not found (./build.sh image)"
    make_network "$name"
    local cluster_id voters="" i
    cluster_id="$(engine run --rm --entrypoint kafka-storage.sh -e KAFKA_HEAP_OPTS=-Xmx64m "$IMAGE" random-uuid | tail -1)"
    for ((i = 1; i <= n; i++)); do voters="${voters:+$voters,}$i@$name-$i:9093"; done
    for ((i = 1; i <= n; i++)); do
        local adv="PLAINTEXT://$name-$i:9092" pub=() listeners="PLAINTEXT://:9092,CONTROLLER://:9093"
        local protos="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
        if [[ -n "$PUBLISH" ]]; then
            # clients on the host: an extra listener, advertised at the mapped port
            local hp=$((PUBLISH + i - 1))
            pub=(-p "127.0.0.1:$hp:19092")
            listeners="$listeners,HOST://:19092"; adv="$adv,HOST://127.0.0.1:$hp"
            protos="$protos,HOST:PLAINTEXT"
        fi
        local envs=(
            -e "CLUSTER_ID=$cluster_id"
            -e "KAFKA_NODE_ID=$i"
            -e "KAFKA_PROCESS_ROLES=broker,controller"
            -e "KAFKA_CONTROLLER_QUORUM_VOTERS=$voters"
            -e "KAFKA_LISTENERS=$listeners"
            -e "KAFKA_ADVERTISED_LISTENERS=$adv"
            -e "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=$protos"
            -e "KAFKA_INTER_BROKER_LISTENER_NAME=PLAINTEXT"
            -e "KAFKA_CONTROLLER_LISTENER_NAMES=CONTROLLER"
            -e "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR=$(( n < 3 ? n : 3 ))"
            -e "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR=$(( n < 3 ? n : 3 ))"
            -e "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR=1"
            -e "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR=$(( n < 3 ? n : 3 ))"
            -e "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR=1"
            -e "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS=0"
            -e "KAFKA_HEAP_OPTS=${KC_BROKER_HEAP:--Xmx384m -Xms128m}"
        )
        local e; for e in "${ENVS[@]}"; do envs+=(-e "$e"); done
        engine run -d --name "$name-$i" --hostname "$name-$i" --network "$name-net" \
            --network-alias "$name-$i" --label "$LABEL=$name" "${pub[@]}" "${envs[@]}" "$IMAGE" >/dev/null
    done
    log "started $n brokers of cluster $name (cluster id $cluster_id) on network $name-net"
    cmd_wait "$name" "$n"
}

# until the quorum has a leader and N brokers are registered and unfenced
cmd_wait() {
    local name="$1" n="$2" deadline=$((SECONDS + TIMEOUT)) out=""
    while ((SECONDS < deadline)); do
        out="$(engine exec -e KAFKA_HEAP_OPTS=-Xmx96m -e KAFKA_OPTS=-XX:TieredStopAtLevel=1 "$name-1" \
               kafka-metadata-quorum.sh --bootstrap-server "$name-1:9092" describe --status 2>/dev/null || true)"
        if grep -Eq '^LeaderId:[[:space:]]+[0-9]+' <<<"$out"; then
            local voters
            voters="$(sed -n -E 's/^CurrentVoters:[[:space:]]*//p' <<<"$out")"
            if [[ "$(grep -o '"id": *[0-9]*' <<<"$voters" | wc -l)" -ge "$n" ]]; then
                log "cluster $name is up: leader $(sed -n -E 's/^LeaderId:[[:space:]]+//p' <<<"$out"), $n voters"
                return 0
            fi
        fi
        local i
        for ((i = 1; i <= n; i++)); do
            [[ "$(engine inspect --format '{{.State.Running}}' "$name-$i" 2>/dev/null)" == true ]] || {
                engine logs --tail 30 "$name-$i" >&2 2>&1 || true
                die "broker $name-$i exited"; }
        done
        sleep 3
    done
    printf '%s\n' "$out" >&2
    die "cluster $name not ready after ${TIMEOUT}s"
}

cmd_nodes() {
    local name="$1" n="$2"; shift 2
    parse_opts "$@"
    [[ -n "$IMAGE" ]] || IMAGE="localhost/kafka-compress-node:$KC_DIST_VERSION"
    engine_image_exists "$IMAGE" || die "image $IMAGE not found (./build.sh image)"
    local key=()
    [[ -n "$SSH_KEY" ]] && key=(-e "SSH_AUTHORIZED_KEYS=$(cat "$SSH_KEY")")
    make_network "$name"
    local i e envs=()
    for e in "${ENVS[@]}"; do envs+=(-e "$e"); done
    for ((i = 1; i <= n; i++)); do
        engine run -d --name "$name-$i" --hostname "$name-$i" --network "$name-net" \
            --network-alias "$name-$i" --label "$LABEL=$name" "${key[@]}" "${envs[@]}" "$IMAGE" >/dev/null
    done
    log "started $n nodes of pool $name on network $name-net"
}

cmd_list() {
    engine ps -a --filter "label=$LABEL" --format "{{.Names}} {{.Status}}"
}

cmd_run() {
    local n="$1"; shift
    parse_opts "$@"
    [[ ${#REST[@]} -gt 0 ]] || die "run: no command (docker/cluster.sh run N [opts] -- CMD...)"
    local cmd=("${REST[@]}")
    RUN_NAME="kc$$-$RANDOM"
    trap 'cmd_down "$RUN_NAME"' EXIT
    trap 'exit 130' INT TERM
    local opts=()
    [[ -n "$IMAGE" ]] && opts+=(--image "$IMAGE")
    [[ -n "$PUBLISH" ]] && opts+=(--publish "$PUBLISH")
    local e; for e in "${ENVS[@]}"; do opts+=(--env "$e"); done
    opts+=(--timeout "$TIMEOUT")
    cmd_up "$RUN_NAME" "$n" "${opts[@]}"
    local bootstrap="" i
    for ((i = 1; i <= n; i++)); do bootstrap="${bootstrap:+$bootstrap,}$RUN_NAME-$i:9092"; done
    KC_CLUSTER_NAME="$RUN_NAME" KC_CLUSTER_NETWORK="$RUN_NAME-net" KC_CLUSTER_BOOTSTRAP="$bootstrap" "${cmd[@]}"
}

engine_available || die "no container engine: $KC_ENGINE_REASON"
sub="${1:-}"; [[ $# -gt 0 ]] && shift
case "$sub" in
    up) [[ $# -ge 2 ]] || die "up NAME N"; cmd_up "$@" ;;
    nodes) [[ $# -ge 2 ]] || die "nodes NAME N"; cmd_nodes "$@" ;;
    down) [[ $# -ge 1 ]] || die "down NAME"; cmd_down "$1" ;;
    wait) [[ $# -ge 2 ]] || die "wait NAME N"; cmd_wait "$1" "$2" ;;
    run) [[ $# -ge 1 ]] || die "run N -- CMD"; cmd_run "$@" ;;
    list) cmd_list ;;
    *) sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; [[ -z "$sub" ]] || exit 2 ;;
esac
