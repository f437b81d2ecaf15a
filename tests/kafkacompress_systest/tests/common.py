"""Helpers shared by the system tests."""

import os
import time

from ducktape.utils.util import wait_until

from ..services.paths import KAFKA_HOME


def full_only(case, minutes, why="CI's time limit does not hold it"):
    """None when the long cases run (KC_SYSTEST_FULL=1, which ./build.sh test --full sets), else the result that
    reports CASE (about MINUTES long) skipped, saying how to run it."""
    if os.environ.get("KC_SYSTEST_FULL") == "1":
        return None
    return {"skipped": "%s (about %s min) runs with ./build.sh test --full or KC_SYSTEST_FULL=1 ./build.sh systest: "
                       "%s, see docs/testing.md" % (case, minutes, why)}


def timed(times, label):
    """Context manager recording how long a step took into times[label]."""
    class _T(object):
        def __enter__(self):
            self.t = time.time()

        def __exit__(self, *a):
            times[label] = round(times.get(label, 0) + time.time() - self.t, 1)
    return _T()


class Events(object):
    """note(msg): a test's steps, each logged and kept with the seconds since the note was made for the result table."""

    def __init__(self, logger):
        self.logger = logger
        self.lines = []
        self.t0 = time.time()

    def __call__(self, msg):
        self.lines.append("%5.1fs %s" % (time.time() - self.t0, msg))
        self.logger.info(msg)


def jar_has_class(node, jar_glob, class_path):
    """True if a jar of the distribution on the node holds the class (zip directory names are plain text)."""
    out = node.account.ssh_output("grep -a -l -F '%s' %s/libs/%s 2>/dev/null || true"
                                  % (class_path, KAFKA_HOME, jar_glob), allow_fail=True)
    return out.strip() != b""


def has_provider_framework(node):
    return jar_has_class(node, "kafka-clients-*.jar", "org/apache/kafka/common/compress/CompressionService.class")


def table(header, rows):
    w = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).rjust(w[i]) if i else str(x).ljust(w[i]) for i, x in enumerate(r))
    return "\n".join([line(header), "  ".join("-" * n for n in w)] + [line(r) for r in rows])


def bounce(kafka, node, topic, note, what):
    """kill -9 a broker, restart it after 5 s, and wait until it is back in the topic's ISR (3 replicas)."""
    note("kill -9 %s (%s, node %d)" % (node.account.hostname, what, kafka.idx(node)))
    kafka.kill_node(node)
    time.sleep(5)
    kafka.start_node(node)
    note("restarted %s" % node.account.hostname)
    kafka.wait_for_cluster()
    wait_until(lambda: kafka.isr_size(topic) == 3, timeout_sec=90, backoff_sec=1,
               err_msg="%s did not rejoin the ISR" % node.account.hostname)
    note("ISR back to 3")


def assert_no_stalled_follower(kafka, nodes):
    """No broker's replica fetcher met a batch starting below its log end (a batch merged around it), in the whole
    run: UnexpectedAppendOffsetException nowhere in server.log. grep -c prints 0 and exits 1 when nothing matched,
    the outcome asserted here, hence "|| true"; a missing log prints nothing, also accepted (the caller's other
    checks fail first on a broker that never ran)."""
    for n in nodes:
        out = kafka.ssh_out(n, "cat %s/server.log* 2>/dev/null | grep -c UnexpectedAppendOffsetException || true"
                            % kafka.LOGS).strip()
        assert out in ("", "0"), "broker %d: %s UnexpectedAppendOffsetException lines" % (kafka.idx(n), out)
