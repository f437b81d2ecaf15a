#!/bin/bash
# Runs inside a fresh Debian container (see test_fresh_machine.py), as root, with
# the repository at /work/repo (a git clone: no build/, no kafka/) and nothing
# else. Does what a new user does, and nothing else:
#   1. ./build.sh run as a user without root or sudo: must stop at once with the
#      apt-get line, touching nothing;
#   2. ./build.sh run as root: installs the system packages, builds, starts the
#      broker; then a produce and a consume against it;
#   3. ./build.sh test --quick.
# Prints "@@ <phase> <seconds>" lines for the harness.
set -euo pipefail
cd /work/repo
t0=$SECONDS
phase() { echo "@@ $1 $((SECONDS - t0))"; t0=$SECONDS; }
fail() { echo "FRESH-MACHINE FAILURE: $*"; exit 1; }
. /etc/os-release
echo "== $PRETTY_NAME, $(nproc) cores"

# 1. no root, no sudo
set +e
out="$(setpriv --reuid=65534 --regid=65534 --clear-groups ./build.sh run 2>&1)"
rc=$?
set -e
echo "$out" | sed 's/^/   (as nobody) /'
[[ $rc != 0 ]] || fail "./build.sh run as nobody did not stop"
grep -q 'apt-get install -y --no-install-recommends .*default-jdk-headless.*maven' <<<"$out" \
    || fail "./build.sh run as nobody did not print the apt-get line"
[[ ! -e build && ! -e kafka ]] || fail "./build.sh run as nobody left build/ or kafka/ behind"
phase nonroot

# 2. ./build.sh run, then produce and consume with the distribution's tools
./build.sh run --dir /tmp/run > /tmp/run.out 2>&1 &
pid=$!
for _ in $(seq 1 3600); do
    grep -q 'Kafka Server started' /tmp/run.out 2>/dev/null && break
    kill -0 $pid 2>/dev/null || { tail -60 /tmp/run.out; fail "./build.sh run exited"; }
    sleep 1
done
grep -q 'Kafka Server started' /tmp/run.out || { tail -60 /tmp/run.out; fail "no broker after an hour"; }
grep '^\[build.sh\]' /tmp/run.out | sed 's/^/   /'
sed '/starting Kafka/q' /tmp/run.out | grep -q $'\e' && fail "escape sequences in the build output"
phase run
bin="$(ls -d build/dist/kafka_*/bin | head -1)"
msg="fresh-machine-$RANDOM"
echo "$msg" | "$bin/kafka-console-producer.sh" --bootstrap-server 127.0.0.1:9092 --topic fresh \
    --compression-codec gzip
got="$("$bin/kafka-console-consumer.sh" --bootstrap-server 127.0.0.1:9092 --topic fresh \
    --from-beginning --max-messages 1 --timeout-ms 60000 2>/dev/null)"
[[ "$got" == "$msg" ]] || fail "consumed '$got', produced '$msg'"
echo "   produced and consumed '$msg' (gzip)"
phase produce_consume
kill $pid; wait $pid || true
phase stop

# 3. the tests that need no container engine
./build.sh test --quick > /tmp/test.out 2>&1 || { tail -80 /tmp/test.out; fail "./build.sh test --quick failed"; }
grep -E '^\[build.sh\]|passed|failed' /tmp/test.out | tail -15 | sed 's/^/   /'
phase test_quick
echo "FRESH-MACHINE OK"
