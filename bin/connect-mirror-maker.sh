#!/usr/bin/env bash
# Licensed to the Apache Software Foundation (ASF) under the Apache License 2.0.
if [ $# -lt 1 ]; then
  echo "USAGE: $0 [-daemon] mm2.properties"
  exit 1
fi
base_dir=$(dirname "$0")

if [ -z "$KAFKA_LOG4J_OPTS" ]; then
  export KAFKA_LOG4J_OPTS="-Dlog4j2.configurationFile=$base_dir/../config/connect-log4j2.yaml"
fi
if [ -z "$KAFKA_HEAP_OPTS" ]; then
  export KAFKA_HEAP_OPTS="-Xms256M -Xmx2G"
fi

EXTRA_ARGS=${EXTRA_ARGS-'-name mirrorMaker'}

case $1 in
  -daemon)
    EXTRA_ARGS="-daemon $EXTRA_ARGS"
    shift
    ;;
esac

# shellcheck disable=SC2086
exec "$base_dir/kafka-run-class.sh" $EXTRA_ARGS org.apache.kafka.connect.mirror.MirrorMaker "$@"
