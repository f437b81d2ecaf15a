#!/usr/bin/env bash
# ./build.sh systest [TEST...]: the ducktape system tests (tests/kafkacompress_systest) on a pool of
# containers of the test-node image, on a network of their own.
#
#   TEST: a test file or class/method in ducktape syntax, or a short name (codec_matrix,
#         recompression, log_cleaning, providers, misconfiguration, faults, cold_recompression, upgrade,
#         tiered_recompression).
#         Default: all.
#
# Steps: build the images if missing or stale (docker/images.sh, incremental), compile the test client, start
# KC_SYSTEST_NODES (5) node containers with a per-run SSH key, write ducktape's cluster file, run
# ducktape, print a summary (test, result, duration) and the results dir under build/systest/,
# then remove every container and the network it made (also on failure or Ctrl-C).
#
# Environment: KC_SYSTEST_IMAGE (node image), KC_SYSTEST_NODES, KC_SYSTEST_MOUNT_DIST=1 (mount
# build/dist over the image's /opt/kafka: test the fresh build with an older image),
# KC_SYSTEST_KEEP=1 (keep containers for debugging), KC_SYSTEST_TIMEOUT (whole run, s, 2100),
# KC_SYSTEST_FULL=1 (also the long cases, e.g. upgrade's full roll; ./build.sh test --full sets it).
set -euo pipefail
if [[ " $* " == *" --help "* || " $* " == *" -h "* ]]; then
    # the comment above: builds and starts nothing
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
    exit 0
fi
KC_ROOT="${KC_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
pom_prop() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$KC_ROOT/pom.xml" | head -1; }
KC_BUILD="${KC_BUILD:-$KC_ROOT/build}"
KC_DIST_VERSION="${KC_DIST_VERSION:-$(pom_prop revision)$(pom_prop changelist)}"
KC_DIST="${KC_DIST:-$KC_BUILD/dist/kafka_$(pom_prop kafka.scala.version)-$KC_DIST_VERSION}"
KC_UPSTREAM="${KC_UPSTREAM:-$KC_BUILD/upstream}"
# stock Apache Kafka 4.3.2 and 4.4.0 (build.sh's fetch_newest_upstream, checked against
# upstream/newest-upstream-libs.sha256; test-only): the upgrade test rolls onto them
KC_NEWEST_UPSTREAM="${KC_NEWEST_UPSTREAM:-$KC_BUILD/newest-upstream}"
NEWEST_RELEASES="4.3.2 4.4.0"
IMAGE="${KC_SYSTEST_IMAGE:-localhost/kafka-compress-node:$KC_DIST_VERSION}"
NODES="${KC_SYSTEST_NODES:-5}"
TIMEOUT="${KC_SYSTEST_TIMEOUT:-2100}"
PKG="$KC_ROOT/tests/kafkacompress_systest"
log() { printf '[systest] %s\n' "$*" >&2; }
die() { printf '[systest] ERROR: %s\n' "$*" >&2; exit 2; }
T0=$(date +%s)
phase_start=$T0
declare -a PHASES=()
phase() { local now; now=$(date +%s); PHASES+=("$(printf '%-34s %5ds' "$1" $((now - phase_start)))"); phase_start=$now; }

# ---------------------------------------------------------------- engine
if [[ -f "$KC_ROOT/docker/engine.sh" ]]; then
    # shellcheck source=/dev/null
    . "$KC_ROOT/docker/engine.sh"
else
    engine() { CONTAINERS_CONF="$KC_BUILD/systest/containers.conf" podman "$@"; }
    mkdir -p "$KC_BUILD/systest"
    printf '[containers]\ndefault_ulimits = []\n[engine]\nruntime = "runc"\n' > "$KC_BUILD/systest/containers.conf"
    if command -v docker >/dev/null && timeout 20 docker info >/dev/null 2>&1; then engine() { docker "$@"; }; fi
fi
engine info >/dev/null 2>&1 || die "no container engine works (docker or rootful podman)"
command -v ducktape >/dev/null || die "ducktape is not installed: run this through ./build.sh systest (it installs requirements.txt into build/venv)"
[[ -d "$KC_DIST/libs" ]] || die "no distribution at $KC_DIST (run ./build.sh)"

# ---------------------------------------------------------------- what is missing
if [[ -n "${KC_SYSTEST_IMAGE:-}" ]]; then
    engine image inspect "$IMAGE" >/dev/null 2>&1 || die "image $IMAGE not found"
else
    # incremental (content hash): rebuilds the images only when the distribution or docker/ changed,
    # so the nodes always run the distribution just built
    log "images: docker/images.sh (builds what is missing or stale)"
    bash "$KC_ROOT/docker/images.sh" >&2 || die "building the images failed"
    engine image inspect "$IMAGE" >/dev/null 2>&1 || die "image $IMAGE not found after docker/images.sh"
fi
phase "images"

RUN_ID="$(date +%Y%m%d-%H%M%S)"
RUN_DIR="$KC_BUILD/systest/$RUN_ID"
MNT="$KC_BUILD/systest/mnt"
mkdir -p "$RUN_DIR" "$MNT/data" "$MNT/classes"
# the test client (one Java file, compiled against the distribution's kafka-clients)
src="$PKG/java/SysTestClient.java"
if [[ ! -f "$MNT/systest-client.jar" || "$src" -nt "$MNT/systest-client.jar" ]]; then
    javac --release 17 -nowarn -d "$MNT/classes" -cp "$KC_DIST/libs/*" "$src"
    jar cf "$MNT/systest-client.jar" -C "$MNT/classes" .
fi
cp -f "$PKG/python/systest_client.py" "$MNT/"     # its Python twin (confluent-kafka, kafka-python)
data_src="${KC_SYSTEST_DATA:-$KC_ROOT/tests/data}"   # the JSON records, tests/data/README.md
[[ -f "$data_src/json-records.ndjson" ]] || die "test data not found in $data_src (json-records.ndjson)"
cp -f "$data_src"/*.ndjson "$MNT/data/"
# upstream's LocalTieredStorage (kafka-storage's test jar, checked against upstream/artifacts.sha256 by build.sh):
# the remote store of the tiered case, on a directory every node mounts
cp -f "$KC_UPSTREAM/testlibs/kafka-storage-4.3.1-test.jar" "$MNT/"
mkdir -p "$RUN_DIR/tiered-storage"
phase "client + data"

# ---------------------------------------------------------------- nodes
NAME="kcst-${RUN_ID//[^0-9]/}"
NET="$NAME-net"
CREATED=()
NET_CREATED=0
DT_PID=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -n "$DT_PID" ]] && kill -0 "$DT_PID" 2>/dev/null; then
        kill -TERM -- "-$DT_PID" 2>/dev/null; sleep 3; kill -KILL -- "-$DT_PID" 2>/dev/null || true
        log "stopped ducktape"
    fi
    if [[ "${KC_SYSTEST_KEEP:-0}" == 1 ]]; then
        log "KC_SYSTEST_KEEP=1: leaving ${CREATED[*]:-} and $NET"
    else
        for c in "${CREATED[@]}"; do engine rm -f -t 2 "$c" >/dev/null 2>&1 || true; done
        [[ $NET_CREATED == 1 ]] && engine network rm -f "$NET" >/dev/null 2>&1 || true
        log "removed ${#CREATED[@]} containers and network $NET"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

export PYTHONPATH="$KC_ROOT/tests${PYTHONPATH:+:$PYTHONPATH}"
ssh-keygen -q -t ed25519 -N '' -C "systest-$RUN_ID" -f "$RUN_DIR/id_ed25519"
engine network create "$NET" >/dev/null
NET_CREATED=1
mounts=(-v "$MNT:/opt/systest:ro" -v "$KC_UPSTREAM/libs:/opt/kafka-stock/libs:ro"
        -v "$RUN_DIR/tiered-storage:/mnt/tiered-storage")
for v in $NEWEST_RELEASES; do
    [[ -f "$KC_NEWEST_UPSTREAM/$v/libs/kafka_2.13-$v.jar" ]] \
        || die "no stock Apache Kafka $v jars in $KC_NEWEST_UPSTREAM/$v/libs (run this through ./build.sh systest)"
    mounts+=(-v "$KC_NEWEST_UPSTREAM/$v/libs:/opt/kafka-stock-$v/libs:ro")
done
[[ "${KC_SYSTEST_MOUNT_DIST:-0}" == 1 ]] && mounts+=(-v "$KC_DIST:/opt/kafka:ro")
for i in $(seq 1 "$NODES"); do
    c="$NAME-$i"
    engine run -d --no-healthcheck --name "$c" --hostname "$c" --network "$NET" --label io.kafkacompress.systest="$RUN_ID" \
        -e SSH_AUTHORIZED_KEYS="$(cat "$RUN_DIR/id_ed25519.pub")" "${mounts[@]}" "$IMAGE" >/dev/null
    CREATED+=("$c")
done
{
    echo '{"nodes": ['
    for i in $(seq 1 "$NODES"); do
        c="$NAME-$i"
        ip="$(engine inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$c")"
        [[ $i -gt 1 ]] && echo ','
        printf '{"externally_routable_ip": "%s", "ssh_config": {"host": "%s", "hostname": "%s", "user": "root", "port": 22, "identityfile": "%s", "password": null}}' \
            "$ip" "$c" "$ip" "$RUN_DIR/id_ed25519"
    done
    echo ']}'
} > "$RUN_DIR/cluster.json"
ssh_opts=(-o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o ConnectTimeout=3 -o LogLevel=ERROR -i "$RUN_DIR/id_ed25519")
for ip in $(python3 -c 'import json,sys; print(" ".join(n["ssh_config"]["hostname"] for n in json.load(open(sys.argv[1]))["nodes"]))' "$RUN_DIR/cluster.json"); do
    for _ in $(seq 1 60); do ssh "${ssh_opts[@]}" "root@$ip" true 2>/dev/null && break; sleep 1; done
    ssh "${ssh_opts[@]}" "root@$ip" test -x /opt/kafka/bin/kafka-server-start.sh || die "node $ip: no sshd login or no /opt/kafka"
done
log "$NODES nodes up on network $NET ($IMAGE)"
phase "start $NODES nodes"

# ---------------------------------------------------------------- ducktape
declare -A SHORT=([codec_matrix]=codec_matrix_test.py [recompression]=recompression_test.py
    [log_cleaning]=log_cleaning_test.py [providers]=providers_test.py
    [misconfiguration]=misconfiguration_test.py [faults]=faults_test.py
    [cold_recompression]=cold_recompression_test.py [upgrade]=upgrade_test.py
    [tiered_recompression]=tiered_recompression_test.py)
targets=()
for t in "$@"; do
    if [[ -n "${SHORT[$t]:-}" ]]; then targets+=("$PKG/tests/${SHORT[$t]}")
    elif [[ -e "${t%%::*}" ]]; then targets+=("$(realpath "${t%%::*}")${t#"${t%%::*}"}")
    elif [[ -e "$PKG/tests/${t%%::*}" ]]; then targets+=("$PKG/tests/$t")
    else die "unknown test $t (short names: ${!SHORT[*]})"; fi
done
[[ ${#targets[@]} -gt 0 ]] || targets=("$PKG/tests")
log "ducktape ${targets[*]#"$KC_ROOT/"}"
# ducktape runs in its own process group (setsid) so that cleanup can stop all of it
set +e
setsid bash -c 'cd "$1/tests" && shift && exec timeout -k 30 "$@"' _ "$KC_ROOT" "$TIMEOUT" \
    ducktape --cluster ducktape.cluster.json.JsonCluster --cluster-file "$RUN_DIR/cluster.json" \
    --results-root "$RUN_DIR/results" --default-num-nodes "$NODES" "${targets[@]}" > "$RUN_DIR/ducktape.out" 2>&1 &
DT_PID=$!
wait "$DT_PID"
dt_rc=$?
DT_PID=""
set -e
phase "ducktape"
[[ $dt_rc == 124 ]] && log "ducktape hit the overall timeout (${TIMEOUT}s)"
tail -5 "$RUN_DIR/ducktape.out" >&2 || true

# ---------------------------------------------------------------- summary
python3 "$PKG/summary.py" "$RUN_DIR" || true
printf '\nwhere the time went:\n' 
printf '  %s\n' "${PHASES[@]}"
printf '  %-34s %5ds\n' "total" $(( $(date +%s) - T0 ))
echo "results: $RUN_DIR (ducktape.out, results/latest/report.html)"
status=$(python3 "$PKG/summary.py" --status "$RUN_DIR" 2>/dev/null || echo fail)
[[ $status == pass && $dt_rc == 0 ]] && exit 0
exit 1
