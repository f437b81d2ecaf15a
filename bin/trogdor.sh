#!/usr/bin/env bash
# Licensed to the Apache Software Foundation (ASF) under the Apache License 2.0.
# The Trogdor test framework: its agent, coordinator and their REST clients.
usage() {
  cat <<USAGE
The Trogdor fault injector.

Usage:
  $0 [action] [options]

Actions:
  agent: Run the trogdor agent.
  coordinator: Run the trogdor coordinator.
  client: Run the client which communicates with the trogdor coordinator.
  agent-client: Run the client which communicates with the trogdor agent.
  help: This help message.
USAGE
}

if [ $# -lt 1 ]; then
  usage
  exit 0
fi
action=$1
shift
case $action in
  agent) CLASS=org.apache.kafka.trogdor.agent.Agent ;;
  coordinator) CLASS=org.apache.kafka.trogdor.coordinator.Coordinator ;;
  client) CLASS=org.apache.kafka.trogdor.coordinator.CoordinatorClient ;;
  agent-client) CLASS=org.apache.kafka.trogdor.agent.AgentClient ;;
  help) usage; exit 0 ;;
  *) echo "Unknown action '$action'.  Type '$0 help' for help."; exit 1 ;;
esac

export INCLUDE_TEST_JARS=1
exec "$(dirname "$0")/kafka-run-class.sh" "$CLASS" "$@"
