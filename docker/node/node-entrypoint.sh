#!/usr/bin/env bash
# Entry point of the test-node image. `sshd` (the default command): host keys are
# generated now (none are in the image), root's authorized_keys come from
# SSH_AUTHORIZED_KEYS and/or /run/kc/authorized_keys, then sshd runs in the
# foreground. `broker`: the broker image's entry point. Anything else runs as is.
set -euo pipefail
case "${1:-sshd}" in
    sshd)
        ssh-keygen -A >/dev/null
        : > /root/.ssh/authorized_keys
        [[ -n "${SSH_AUTHORIZED_KEYS:-}" ]] && printf '%s\n' "$SSH_AUTHORIZED_KEYS" >> /root/.ssh/authorized_keys
        [[ -f /run/kc/authorized_keys ]] && cat /run/kc/authorized_keys >> /root/.ssh/authorized_keys
        chmod 0600 /root/.ssh/authorized_keys
        [[ -s /root/.ssh/authorized_keys ]] || echo "[node] warning: no SSH key given (SSH_AUTHORIZED_KEYS or /run/kc/authorized_keys)" >&2
        # ssh sessions do not inherit the container's environment; give them the image's
        printf 'PATH=%s\nKAFKA_HOME=%s\nLOG_DIR=%s\n' "$PATH" "${KAFKA_HOME:-/opt/kafka}" "${LOG_DIR:-/opt/kafka/logs}" > /etc/environment
        mkdir -p /run/sshd
        exec /usr/sbin/sshd -D -e ;;
    broker)
        shift; exec /etc/kafka/docker/entrypoint.sh "$@" ;;
    *)
        exec "$@" ;;
esac
