#!/usr/bin/env bash
# Licensed to the Apache Software Foundation (ASF) under the Apache License 2.0.
if [ -z "$KAFKA_HEAP_OPTS" ]; then
  export KAFKA_HEAP_OPTS="-Xmx512M"
fi
exec "$(dirname "$0")/kafka-run-class.sh" org.apache.kafka.tools.VerifiableShareConsumer "$@"
