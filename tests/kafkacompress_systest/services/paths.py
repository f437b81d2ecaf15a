"""Fixed paths on the test nodes (test-node image + mounts made by tests/systest.sh)."""

KAFKA_HOME = "/opt/kafka"                 # the distribution, baked into the test-node image
STOCK_LIBS = "/opt/kafka-stock/libs"      # stock Apache Kafka 4.3.1 jars (mounted read-only)
# stock Apache Kafka 4.3.2 and 4.4.0 jars (build/newest-upstream/<release>/libs, mounted read-only; test-only)
NEWEST_STOCK_LIBS = {"4.3.2": "/opt/kafka-stock-4.3.2/libs", "4.4.0": "/opt/kafka-stock-4.4.0/libs"}
TOOLS = "/opt/systest"                    # systest-client.jar and payload data (mounted read-only)
CLIENT_JAR = TOOLS + "/systest-client.jar"
PY_CLIENT = TOOLS + "/systest_client.py"      # python/systest_client.py (confluent-kafka, kafka-python)
PY_CLIENTS_PYTHON = "/opt/pyclients/bin/python"   # the test-node image's venv with the pinned clients
PAYLOAD = TOOLS + "/data/json-records.ndjson"
TIERED = "/mnt/tiered-storage"            # the tiered case's remote store, one directory every node mounts
WORK = "/mnt/kafka"                       # per-node scratch, removed by clean_node
