#!/usr/bin/env bash
# Licensed to the Apache Software Foundation (ASF) under the Apache License 2.0.
# Runs a Kafka class with the distribution's libs/ on the classpath, honouring
# Apache Kafka's environment variables: JAVA_HOME, KAFKA_HEAP_OPTS,
# KAFKA_JVM_PERFORMANCE_OPTS, KAFKA_GC_LOG_OPTS, KAFKA_LOG4J_OPTS, KAFKA_OPTS,
# KAFKA_JMX_OPTS, JMX_PORT, LOG_DIR, CLASSPATH, INCLUDE_TEST_JARS, and KAFKA_DEBUG
# (with JAVA_DEBUG_PORT, DEBUG_SUSPEND_FLAG, JAVA_DEBUG_OPTS).

if [ $# -lt 1 ]; then
  echo "USAGE: $0 [-daemon] [-name servicename] [-loggc] classname [opts]"
  exit 1
fi

base_dir=$(cd "$(dirname "$0")/.." && pwd)

# As upstream: test, source and doc jars stay off the classpath unless
# INCLUDE_TEST_JARS=true, and so does connect-file (the FileStream connectors are
# loaded as a plugin: plugin.path=libs/connect-file-<version>.jar, KAFKA-13748).
if [ -z "$INCLUDE_TEST_JARS" ]; then
  INCLUDE_TEST_JARS=false
fi
should_include_file() {
  [ "$INCLUDE_TEST_JARS" = true ] && return 0
  case "${1##*/}" in
    *-test.jar|*-test-sources.jar|*-src.jar|*-scaladoc.jar|*-javadoc.jar|*.jar.asc|connect-file*.jar) return 1 ;;
  esac
  return 0
}

# Our patched kafka-clients jar goes first, so that kafka/kafka-version.properties
# (the version every client, broker and tool reports) is this distribution's.
for file in "$base_dir"/libs/kafka-clients-*.jar; do
  CLASSPATH="${CLASSPATH:+$CLASSPATH:}$file"
done
for file in "$base_dir"/libs/*.jar; do
  case "${file##*/}" in kafka-clients-*) continue ;; esac
  should_include_file "$file" && CLASSPATH="${CLASSPATH:+$CLASSPATH:}$file"
done

if [ -z "$KAFKA_JMX_OPTS" ]; then
  KAFKA_JMX_OPTS="-Dcom.sun.management.jmxremote=true -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false"
fi
if [ -n "$JMX_PORT" ]; then
  KAFKA_JMX_OPTS="$KAFKA_JMX_OPTS -Dcom.sun.management.jmxremote.port=$JMX_PORT"
  if ! echo "$KAFKA_JMX_OPTS" | grep -qF -- '-Dcom.sun.management.jmxremote.rmi.port=' ; then
    KAFKA_JMX_OPTS="$KAFKA_JMX_OPTS -Dcom.sun.management.jmxremote.rmi.port=$JMX_PORT"
  fi
fi

if [ -z "$LOG_DIR" ]; then
  LOG_DIR="$base_dir/logs"
fi
if [ -z "$KAFKA_LOG4J_OPTS" ]; then
  KAFKA_LOG4J_OPTS="-Dlog4j2.configurationFile=$base_dir/config/tools-log4j2.yaml"
fi
KAFKA_LOG4J_OPTS="-Dkafka.logs.dir=$LOG_DIR $KAFKA_LOG4J_OPTS"

if [ -z "$KAFKA_HEAP_OPTS" ]; then
  KAFKA_HEAP_OPTS="-Xmx256M"
fi
if [ -z "$KAFKA_JVM_PERFORMANCE_OPTS" ]; then
  KAFKA_JVM_PERFORMANCE_OPTS="-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true"
fi

if [ -n "$KAFKA_DEBUG" ]; then
  JAVA_DEBUG_PORT=${JAVA_DEBUG_PORT:-5005}
  if [ -z "$JAVA_DEBUG_OPTS" ]; then
    JAVA_DEBUG_OPTS="-agentlib:jdwp=transport=dt_socket,server=y,suspend=${DEBUG_SUSPEND_FLAG:-n},address=$JAVA_DEBUG_PORT"
  fi
  echo "Enabling Java debug options: $JAVA_DEBUG_OPTS"
  KAFKA_OPTS="$JAVA_DEBUG_OPTS $KAFKA_OPTS"
fi

if [ -z "$JAVA_HOME" ]; then
  JAVA="java"
else
  JAVA="$JAVA_HOME/bin/java"
fi

DAEMON_MODE=false
GC_LOG_ENABLED=false
while [ $# -gt 0 ]; do
  case "$1" in
    -name) DAEMON_NAME=$2; CONSOLE_OUTPUT_FILE=$LOG_DIR/$DAEMON_NAME.out; shift 2 ;;
    -loggc) GC_LOG_ENABLED=true; shift ;;
    -daemon) DAEMON_MODE=true; shift ;;
    *) break ;;
  esac
done

if [ "$GC_LOG_ENABLED" = true ] && [ -n "$DAEMON_NAME" ]; then
  GC_FILE_SUFFIX='-gc.log'
  KAFKA_GC_LOG_OPTS="${KAFKA_GC_LOG_OPTS:--Xlog:gc*:file=$LOG_DIR/$DAEMON_NAME$GC_FILE_SUFFIX:time,tags:filecount=10,filesize=100M}"
fi

mkdir -p "$LOG_DIR" 2>/dev/null

# shellcheck disable=SC2086
if [ "$DAEMON_MODE" = true ]; then
  nohup "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS $KAFKA_GC_LOG_OPTS $KAFKA_JMX_OPTS $KAFKA_LOG4J_OPTS \
    -cp "$CLASSPATH" $KAFKA_OPTS "$@" > "$CONSOLE_OUTPUT_FILE" 2>&1 < /dev/null &
else
  exec "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS $KAFKA_GC_LOG_OPTS $KAFKA_JMX_OPTS $KAFKA_LOG4J_OPTS \
    -cp "$CLASSPATH" $KAFKA_OPTS "$@"
fi
