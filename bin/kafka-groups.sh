#!/usr/bin/env bash
# Licensed to the Apache Software Foundation (ASF) under the Apache License 2.0.
exec "$(dirname "$0")/kafka-run-class.sh" org.apache.kafka.tools.GroupsCommand "$@"
