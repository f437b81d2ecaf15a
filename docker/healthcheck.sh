#!/usr/bin/env bash
# Health check of the broker image: healthy when every non-controller listener of
# the running configuration accepts TCP connections. Cheap (no JVM started).
set -uo pipefail
CONFIG="${KAFKA_HOME:-/opt/kafka}/config/server.properties"
[[ -f "$CONFIG" ]] || exit 1
prop() { sed -n -E "s/^[[:space:]]*${1//./\\.}[[:space:]]*[=:][[:space:]]*//p" "$CONFIG" | tail -1; }
listeners="$(prop listeners)"
controllers=",$(prop controller.listener.names),"
checked=0
IFS=',' read -ra items <<<"$listeners"
brokers=()
for l in "${items[@]}"; do
    l="${l// /}"; [[ -n "$l" ]] || continue
    [[ "$controllers" == *",${l%%://*},"* ]] || brokers+=("$l")
done
# a controller-only node: check its controller listeners
[[ ${#brokers[@]} -gt 0 ]] || brokers=("${items[@]}")
for l in "${brokers[@]}"; do
    l="${l// /}"; [[ -n "$l" ]] || continue
    hostport="${l#*://}"
    host="${hostport%:*}"; port="${hostport##*:}"
    [[ -z "$host" || "$host" == 0.0.0.0 || "$host" == "[::]" ]] && host=127.0.0.1
    timeout 5 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null || exit 1
    checked=$((checked + 1))
done
[[ $checked -gt 0 ]]
