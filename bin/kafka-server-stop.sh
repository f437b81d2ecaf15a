#!/usr/bin/env bash
# Licensed to the Apache Software Foundation (ASF) under the Apache License 2.0.
SIGNAL=${SIGNAL:-TERM}

if [ "$1" = "--process-role" ] || [ "$1" = "--node-id" ]; then
  FILTER=$1
  VALUE=$2
fi

PIDS=$(ps ax | grep ' kafka\.Kafka ' | grep java | grep -v grep | awk '{print $1}')
if [ -n "$FILTER" ]; then
  SELECTED=""
  for pid in $PIDS; do
    props=$(tr '\0' '\n' < /proc/$pid/cmdline | grep -E '\.properties$' | tail -1)
    [ -f "$props" ] || continue
    key=node.id
    [ "$FILTER" = "--process-role" ] && key=process.roles
    if grep -Eq "^$key=$VALUE\$" "$props"; then SELECTED="$SELECTED $pid"; fi
  done
  PIDS=$SELECTED
fi

if [ -z "$PIDS" ]; then
  echo "No kafka server to stop"
  exit 1
else
  kill -s "$SIGNAL" $PIDS
fi
