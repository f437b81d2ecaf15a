#!/usr/bin/env bash
# Entry point of the broker image. Configuration follows the official apache/kafka
# image, so that its users can switch images without changing their settings:
#
#  * Environment: every KAFKA_<NAME> variable becomes the broker property <name>,
#    lower-cased, with "___" -> "-", "__" -> "_", "_" -> "." (KAFKA_NODE_ID ->
#    node.id, KAFKA_COMPRESSION_GZIP_PROVIDER -> compression.gzip.provider).
#    The variables of Kafka's start scripts (KAFKA_HEAP_OPTS, KAFKA_OPTS,
#    KAFKA_JMX_OPTS, KAFKA_LOG4J_OPTS, KAFKA_JVM_PERFORMANCE_OPTS,
#    KAFKA_GC_LOG_OPTS, ...) are passed to them and are not properties.
#  * A server.properties mounted at /mnt/shared/config/server.properties is the
#    base configuration; environment variables override its properties.
#  * With neither, the image runs a single-node KRaft cluster (broker and
#    controller in one process) on ports 9092 (clients) and 9093 (controller),
#    advertised as localhost:9092.
#  * CLUSTER_ID: storage under log.dirs is formatted with it on the first start
#    (nothing happens when it is already formatted). Without CLUSTER_ID a
#    single-node default starts with a random cluster id.
#
# Differences from apache/kafka: log.dirs defaults to /var/lib/kafka/data (the
# image's volume) when no configuration sets it, and a command given to the
# container (`docker run IMAGE kafka-topics.sh ...`) runs instead of the broker.
set -euo pipefail

KAFKA_HOME="${KAFKA_HOME:-/opt/kafka}"
CONFIG="${KAFKA_HOME}/config/server.properties"
FILE_INPUT=/mnt/shared/config/server.properties
DATA_DIR=/var/lib/kafka/data

log() { printf '[entrypoint] %s\n' "$*" >&2; }

# A command other than an option runs as is (tools, a shell, sshd in the node image).
if [[ $# -gt 0 && "$1" != -* ]]; then
    exec "$@"
fi

# Variables of Kafka's scripts or of this image, not broker properties.
is_excluded() {
    case "$1" in
        KAFKA_VERSION|KAFKA_HOME|KAFKA_HEAP_OPTS|KAFKA_LOG4J_OPTS|KAFKA_OPTS|KAFKA_JMX_OPTS|\
        KAFKA_JVM_PERFORMANCE_OPTS|KAFKA_GC_LOG_OPTS|KAFKA_LOG4J_ROOT_LOGLEVEL|KAFKA_LOG4J_LOGGERS|\
        KAFKA_TOOLS_LOG4J_LOGLEVEL|KAFKA_JMX_HOSTNAME|KAFKA_JMX_PORT|KAFKA_DEBUG|KAFKA_CLUSTER_ID|\
        KAFKA_SSL_KEYSTORE_FILENAME|KAFKA_SSL_KEY_CREDENTIALS|KAFKA_SSL_KEYSTORE_CREDENTIALS|\
        KAFKA_SSL_TRUSTSTORE_FILENAME|KAFKA_SSL_TRUSTSTORE_CREDENTIALS)
            return 0 ;;
    esac
    return 1
}

# KAFKA_FOO__BAR___BAZ_QUX -> foo_bar-baz.qux
env_to_property() {
    local name="${1#KAFKA_}"
    name="${name,,}"
    name="${name//___/$'\x01'}"
    name="${name//__/$'\x02'}"
    name="${name//_/.}"
    name="${name//$'\x01'/-}"
    name="${name//$'\x02'/_}"
    printf '%s' "$name"
}

# apache/kafka: with an SSL:// or SASL_SSL:// advertised listener, the key and trust stores and the files holding
# their passwords are named relative to /etc/kafka/secrets (mount it); the passwords are read from those files
# into ssl.key.password, ssl.keystore.password (and ssl.truststore.password with ssl.client.auth
# required/requested), so they never appear in the container's environment.
SECRETS=/etc/kafka/secrets
need() { [[ -n "${!1:-}" ]] || { log "ERROR: $1 is not set (needed with an SSL listener in KAFKA_ADVERTISED_LISTENERS)"; exit 1; }; }
secret_file() { # VAR: the path of $SECRETS/${!VAR}, which must exist
    need "$1"
    local f="$SECRETS/${!1}"
    [[ -f "$f" ]] || { log "ERROR: $1=${!1}: $f does not exist (mount the secrets at $SECRETS)"; exit 1; }
    printf '%s' "$f"
}
if [[ "${KAFKA_ADVERTISED_LISTENERS:-}" == *"SSL://"* ]]; then
    log "SSL listener: key store and credentials from $SECRETS"
    KAFKA_SSL_KEYSTORE_LOCATION="$(secret_file KAFKA_SSL_KEYSTORE_FILENAME)"
    KAFKA_SSL_KEY_PASSWORD="$(cat "$(secret_file KAFKA_SSL_KEY_CREDENTIALS)")"
    KAFKA_SSL_KEYSTORE_PASSWORD="$(cat "$(secret_file KAFKA_SSL_KEYSTORE_CREDENTIALS)")"
    export KAFKA_SSL_KEYSTORE_LOCATION KAFKA_SSL_KEY_PASSWORD KAFKA_SSL_KEYSTORE_PASSWORD
    if [[ "${KAFKA_SSL_CLIENT_AUTH:-}" == *required* || "${KAFKA_SSL_CLIENT_AUTH:-}" == *requested* ]]; then
        KAFKA_SSL_TRUSTSTORE_LOCATION="$(secret_file KAFKA_SSL_TRUSTSTORE_FILENAME)"
        KAFKA_SSL_TRUSTSTORE_PASSWORD="$(cat "$(secret_file KAFKA_SSL_TRUSTSTORE_CREDENTIALS)")"
        export KAFKA_SSL_TRUSTSTORE_LOCATION KAFKA_SSL_TRUSTSTORE_PASSWORD
    fi
fi

env_names=()
while IFS= read -r var; do
    is_excluded "$var" || env_names+=("$var")
done < <(compgen -e | grep '^KAFKA_' | sort || true)

tmp="$(mktemp)"
if [[ -f "$FILE_INPUT" ]]; then
    log "configuration: $FILE_INPUT${env_names[*]:+, overridden by ${#env_names[@]} KAFKA_* variables}"
    cat "$FILE_INPUT" > "$tmp"
    echo >> "$tmp"
elif [[ ${#env_names[@]} -gt 0 ]]; then
    log "configuration: ${#env_names[@]} KAFKA_* environment variables"
    : > "$tmp"
else
    log "configuration: single-node defaults (no KAFKA_* variables, no $FILE_INPUT)"
    cat > "$tmp" <<'PROPS'
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@localhost:9093
listeners=PLAINTEXT://:9092,CONTROLLER://:9093
advertised.listeners=PLAINTEXT://localhost:9092
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.partitions=1
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
fi

# Environment overrides: drop the key from the base, then append it.
for var in "${env_names[@]}"; do
    prop="$(env_to_property "$var")"
    grep -v -E "^[[:space:]]*${prop//./\\.}[[:space:]]*[=:]" "$tmp" > "$tmp.new" || true
    mv "$tmp.new" "$tmp"
    printf '%s=%s\n' "$prop" "${!var}" >> "$tmp"
done

# apache/kafka: listeners default to the advertised ones, bound to all interfaces.
if ! grep -q -E '^[[:space:]]*listeners[[:space:]]*=' "$tmp" \
   && grep -q -E '^[[:space:]]*advertised\.listeners[[:space:]]*=' "$tmp"; then
    adv="$(sed -n -E 's/^[[:space:]]*advertised\.listeners[[:space:]]*=[[:space:]]*//p' "$tmp" | tail -1)"
    printf 'listeners=%s\n' "$(sed -e 's|://[^:,]*:|://0.0.0.0:|g' <<<"$adv")" >> "$tmp"
fi
if ! grep -q -E '^[[:space:]]*log\.dirs?[[:space:]]*=' "$tmp"; then
    printf 'log.dirs=%s\n' "$DATA_DIR" >> "$tmp"
fi
cat "$tmp" > "$CONFIG"
rm -f "$tmp"
# the passwords are in server.properties now: keep them out of the broker's environment
unset KAFKA_SSL_KEY_PASSWORD KAFKA_SSL_KEYSTORE_PASSWORD KAFKA_SSL_TRUSTSTORE_PASSWORD

prop_value() { sed -n -E "s/^[[:space:]]*${1//./\\.}[[:space:]]*[=:][[:space:]]*//p" "$CONFIG" | tail -1; }

# Format storage on the first start.
roles="$(prop_value process.roles)"
logdirs="$(prop_value log.dirs)"; [[ -n "$logdirs" ]] || logdirs="$(prop_value log.dir)"
first_dir="${logdirs%%,*}"
meta_dir="$(prop_value metadata.log.dir)"; [[ -n "$meta_dir" ]] || meta_dir="$first_dir"
if [[ ! -f "$meta_dir/meta.properties" ]]; then
    cluster_id="${CLUSTER_ID:-}"
    if [[ -z "$cluster_id" ]]; then
        if [[ -n "$roles" && ${#env_names[@]} -gt 0 && ! -f "$FILE_INPUT" ]]; then
            log "ERROR: CLUSTER_ID is not set; every node of a cluster needs the same one (kafka-storage.sh random-uuid makes one)"
            exit 1
        fi
        cluster_id="$(kafka-storage.sh random-uuid)"
        log "CLUSTER_ID not set: formatting with a new random cluster id $cluster_id"
    fi
    format_args=(format --cluster-id "$cluster_id" -c "$CONFIG" --ignore-formatted)
    if [[ "$roles" == *controller* && -z "$(prop_value controller.quorum.voters)" ]]; then
        # dynamic quorum (controller.quorum.bootstrap.servers): STORAGE_FORMAT_OPTS
        # may say --initial-controllers ...; a lone controller bootstraps itself.
        if [[ -n "${STORAGE_FORMAT_OPTS:-}" ]]; then
            # shellcheck disable=SC2206
            format_args+=(${STORAGE_FORMAT_OPTS})
        else
            format_args+=(--standalone)
        fi
    fi
    log "formatting $meta_dir (cluster id $cluster_id)"
    KAFKA_HEAP_OPTS="-Xmx128m" kafka-storage.sh "${format_args[@]}" >&2
fi

# apache/kafka: KAFKA_LOG4J_ROOT_LOGLEVEL sets the root logger's level and KAFKA_LOG4J_LOGGERS
# ("kafka.controller=WARN,org.apache.kafka.clients=DEBUG") sets loggers' levels, adding those the file lacks, in
# the broker's config/log4j2.yaml, rendered on every start from the image's own copy.
LOG4J="$KAFKA_HOME/config/log4j2.yaml"
[[ -f "$LOG4J.image" ]] || cp "$LOG4J" "$LOG4J.image"
level_ok() { [[ "${1^^}" =~ ^(OFF|FATAL|ERROR|WARN|INFO|DEBUG|TRACE|ALL)$ ]]; }
if [[ -n "${KAFKA_LOG4J_ROOT_LOGLEVEL:-}" ]] && ! level_ok "$KAFKA_LOG4J_ROOT_LOGLEVEL"; then
    log "ERROR: KAFKA_LOG4J_ROOT_LOGLEVEL=$KAFKA_LOG4J_ROOT_LOGLEVEL is not a log4j level (OFF, FATAL, ERROR, WARN, INFO, DEBUG, TRACE, ALL)"
    exit 1
fi
if [[ -n "${KAFKA_LOG4J_LOGGERS:-}" ]]; then
    IFS=, read -r -a log4j_pairs <<<"$KAFKA_LOG4J_LOGGERS"
    for pair in "${log4j_pairs[@]}"; do
        pair="${pair// /}"
        [[ -z "$pair" ]] && continue
        if [[ "$pair" != ?*=?* ]] || ! level_ok "${pair#*=}"; then
            log "ERROR: KAFKA_LOG4J_LOGGERS: '$pair' is not logger=LEVEL (e.g. kafka.controller=WARN,org.apache.kafka=DEBUG)"
            exit 1
        fi
    done
fi
awk -v root="${KAFKA_LOG4J_ROOT_LOGLEVEL:-}" -v loggers="${KAFKA_LOG4J_LOGGERS:-}" '
    BEGIN {
        n = split(loggers, pairs, ",")
        for (i = 1; i <= n; i++) {
            p = pairs[i]; gsub(/[ \t]/, "", p); if (p == "") continue
            k = substr(p, 1, index(p, "=") - 1); lv[k] = toupper(substr(p, index(p, "=") + 1)); order[++m] = k
        }
    }
    /^    Root:/ { inroot = 1 }
    inroot && /^      level:/ { if (root != "") $0 = "      level: " toupper(root); inroot = 0 }
    /^      - name:/ { cur = $0; sub(/^      - name:[ \t]*/, "", cur); gsub(/"/, "", cur) }
    /^        level:/ && (cur in lv) { $0 = "        level: " lv[cur]; done[cur] = 1 }
    { print }
    END { for (i = 1; i <= m; i++) if (!(order[i] in done)) { printf "      - name: \"%s\"\n        level: %s\n", order[i], lv[order[i]]; done[order[i]] = 1 } }
' "$LOG4J.image" > "$LOG4J"
[[ -n "${KAFKA_LOG4J_ROOT_LOGLEVEL:-}${KAFKA_LOG4J_LOGGERS:-}" ]] && \
    log "log4j: root level ${KAFKA_LOG4J_ROOT_LOGLEVEL:-unchanged}${KAFKA_LOG4J_LOGGERS:+, loggers $KAFKA_LOG4J_LOGGERS}"

log "starting Kafka $(sed -n 1p "$KAFKA_HOME/RELEASE" 2>/dev/null || true) as $(id -un) (uid $(id -u))"
exec kafka-server-start.sh "$CONFIG" "$@"
