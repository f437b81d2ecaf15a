#!/usr/bin/env bash
# Licensed to the Apache Software Foundation (ASF) under the Apache License 2.0.
# Measures every codec, level and compression provider on a topic's records (or a file of
# records) and recommends the topic and producer compression settings. See docs/advisor.md.
if [ -z "$KAFKA_HEAP_OPTS" ]; then
  export KAFKA_HEAP_OPTS="-Xmx768M"
fi
exec "$(dirname "$0")/kafka-run-class.sh" io.kafkacompress.tools.advisor.CompressionAdvisor "$@"
