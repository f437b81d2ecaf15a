"""Produce requests whose gzip batch has a valid CRC but a payload that cannot be read (issue 29, patches 0003, 0004).

Stock Apache Kafka 4.3.1 answers a batch whose deflate data or gzip trailer is corrupt with UNKNOWN_SERVER_ERROR and
logs an ERROR with a stack trace for every request, so one client can flood a broker's log. This distribution
answers CORRUPT_MESSAGE with the reason, whatever the topic's codec (a gzip topic validates the batch in place, an lz4
topic recompresses it) and whether a provider decompresses it, and logs one WARN line a minute naming the partition
and the client, for corrupt and for invalid batches alike.

Each broker (stock, ours without a provider, ours with native-gzip) gets the same three damaged batches (the first
deflate block of a reserved type; the gzip trailer's size wrong; one record more declared than the member holds),
REQUESTS times each, into a gzip topic and into an lz4 topic.
"""
import re

from conftest import tool
from test_provider_bomb import PROVIDER, bomb_client, client, say  # noqa: F401 (client is a fixture)

REQUESTS = 40
DAMAGES = ("blocktype", "trailer", "count")
TOPICS = {"corrupt-gzip": "gzip", "corrupt-lz4": "lz4"}
CORRUPT_MESSAGE, UNKNOWN_SERVER_ERROR = 2, -1


def send_all(client, broker):
    """{(topic, damage): (error code counts, first error message)} for every topic and damage."""
    answers = {}
    for topic, codec in TOPICS.items():
        tool("kafka-topics.sh", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic,
             "--partitions", "1", "--config", "compression.type=" + codec)
        for damage in DAMAGES:
            out = bomb_client(client, "corrupt", broker.bootstrap, topic, damage, REQUESTS, heap="-Xmx256m")
            answers[(topic, damage)] = (re.search(r"errors=(\S+)", out).group(1), re.search(r"message=(.*)", out).group(1))
    return answers


def test_corrupt_batches_get_corrupt_message_and_one_log_line_a_minute(broker_factory, client):
    stock = broker_factory("stock", stock=True)
    stock_answers = send_all(client, stock)
    stock_errors = stock.output().count("Error processing append operation")
    say("stock 4.3.1: %s; 'Error processing append operation' ERROR lines: %d" % (stock_answers, stock_errors))
    # the upstream behaviour this fixes: were it gone, the test would prove nothing about the patches
    for (topic, damage), (counts, _) in stock_answers.items():
        if damage != "count":
            assert counts == "%d:%d" % (UNKNOWN_SERVER_ERROR, REQUESTS), (topic, damage, counts)
    assert stock_errors >= len(stock_answers) * REQUESTS

    verdicts = {}
    for label, props in (("ours", {}),
                         ("ours-native-gzip", {"compression.gzip.provider": PROVIDER,
                                               "compression.gzip.provider.required": "true"})):
        broker = broker_factory(label, extra_props=props)
        answers = send_all(client, broker)
        log = broker.output()
        lines = [line for line in log.splitlines() if "Rejected a record batch" in line]
        say("%s: %s; WARN lines: %s" % (label, answers, lines))
        for (topic, damage), (counts, message) in answers.items():
            code, n = counts.split(":")
            assert n == str(REQUESTS) and int(code) not in (0, UNKNOWN_SERVER_ERROR), (label, topic, damage, counts)
            if damage != "count":
                assert int(code) == CORRUPT_MESSAGE, (label, topic, damage, counts)
                assert message.startswith("Failed to decompress the gzip record batch in topic partition %s-0: "
                                          % topic), (label, topic, damage, message)
            assert message != "null", (label, topic, damage, "the client is not told why")
            # the same verdict whichever topic codec
            assert counts == answers[(next(iter(TOPICS)), damage)][0], (label, damage, answers)
        verdicts[label] = {k: v[0] for k, v in answers.items()}
        # 240 rejected batches in well under a minute: one WARN line, naming the partition, the client and why
        assert len(lines) == 1, lines
        assert re.search(r"WARN .*Rejected a record batch for partition \S*corrupt-gzip-0 from client corrupt-client "
                         r"at 127\.0\.0\.1: CORRUPT_MESSAGE \(Failed to decompress the gzip record batch", lines[0]), lines[0]
        assert "Error processing append operation" not in log
        assert broker.proc.poll() is None
        # and the broker still takes good batches on the same topics
        for topic in TOPICS:
            p = tool("kafka-producer-perf-test.sh", "--topic", topic, "--num-records", "1000", "--record-size", "100",
                     "--throughput", "-1", "--producer-props", "bootstrap.servers=" + broker.bootstrap,
                     "compression.type=gzip", "acks=all")
            assert "1000 records sent" in p.stdout, p.stdout[-2000:]
    # a provider changes nothing in the verdicts
    assert verdicts["ours"] == verdicts["ours-native-gzip"], verdicts
