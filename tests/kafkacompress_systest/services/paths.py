"""Fixed paths on the test nodes (test-node image + mounts made by tests/systest.sh)."""

KAFKA_HOME = "/opt/kafka"                 # the distribution, baked into the test-node image
STOCK_LIBS = "/opt/kafka-stock/libs"      # stock Apache Kafka 4.3.1 jars (mounted read-only)
TOOLS = "/opt/systest"                    # systest-client.jar and payload data (mounted read-only)
CLIENT_JAR = TOOLS + "/systest-client.jar"
PAYLOAD = TOOLS + "/data/json-records.ndjson"
WORK = "/mnt/kafka"                       # per-node scratch, removed by clean_node
