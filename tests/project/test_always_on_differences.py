"""With none of this distribution's settings, a broker differs from stock Apache Kafka 4.3.1 only where
docs/upgrading.md says so ("What differs with none of our settings").

A stock 4.3.1 broker and ours, both with only upstream's settings, get the same produce requests byte for byte
(tests/project/differential/DiffClient.java): well-formed batches of every codec into topics of every
compression.type and two KIP-390 levels; batches with a valid CRC that cannot be decompressed, whose inner offsets
have gaps, or whose first record declares a negative size; and 3 MB of keyed records into four compacted topics,
which the cleaner then rewrites. Per case the test compares the produce responses (error code, base offset) and the
stored segment files byte for byte, after cleaning. The cases that differ must be exactly those the page lists, each
naming its row: a new difference fails the test until the page lists it, and a listed one that is gone fails it too.
"""
import hashlib
import re
import subprocess
import time

from conftest import DIST, ROOT, require_dist

DOCS = ROOT / "docs" / "upgrading.md"
# upstream's own setting, on both brokers: the cleaner looks for work every 0.5 s instead of every 15 s
CLEANER = {"log.cleaner.backoff.ms": "500"}
CLEANED = ("clean-gzip", "clean-lz4", "clean-producer", "clean-zstd-19")
# case -> words of the docs/upgrading.md row that lists how it differs
DOCUMENTED = {
    "corrupt-deflate-gzip": "has a valid CRC but cannot be decompressed",
    "corrupt-deflate-lz4": "has a valid CRC but cannot be decompressed",
    "gaps-gzip": "whose inner offsets are not consecutive",
    "negative-size-gzip": "declares a negative size",
    "clean-zstd-19": "the log cleaner rebuilding a batch of a topic's own `compression.type`",
}
ANSWER = re.compile(r"^case=(\S+) request=(\d+) error=(-?\d+) base=(-?\d+) message=(.*)$")


def diff_client(tmp_path, *args):
    out = tmp_path / "diff-client"
    if not out.is_dir():
        subprocess.run(["javac", "--release", "17", "-proc:none", "-d", str(out), "-cp", str(DIST / "libs" / "*"),
                        str(ROOT / "tests" / "project" / "bomb" / "BombClient.java"),
                        str(ROOT / "tests" / "project" / "differential" / "DiffClient.java")], check=True)
    p = subprocess.run(["java", "-Xmx256m", "-cp", "%s:%s" % (out, DIST / "libs" / "*"), "DiffClient"] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, "DiffClient %s failed (%d):\n%s\n%s" % (args, p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    return p.stdout


def answers(out):
    """{case: [(error code, base offset), ...]} and {case: first error message}."""
    codes, messages = {}, {}
    for line in out.splitlines():
        m = ANSWER.match(line)
        if m:
            codes.setdefault(m.group(1), []).append((int(m.group(3)), int(m.group(4))))
            messages.setdefault(m.group(1), m.group(5))
    return codes, messages


def cleaned(broker):
    """True once the cleaner's checkpoint of every compacted topic has reached its active segment."""
    path = broker.data / "cleaner-offset-checkpoint"
    if not path.exists():
        return False
    done = {}
    for line in path.read_text().splitlines()[2:]:
        topic, _, offset = line.split()
        done[topic] = int(offset)
    return all(t in done and done[t] >= int(broker.segments(t)[-1].stem) for t in CLEANED)


def stored(broker, topic):
    return [(p.name, hashlib.sha256(p.read_bytes()).hexdigest()[:16]) for p in broker.segments(topic)]


def documented_rows():
    text = DOCS.read_text()
    section = text[text.index("## What differs with none of our settings"):]
    return section[:section.index("\n## ", 5)] if "\n## " in section[5:] else section


def test_only_listed_differences_with_none_of_our_settings(broker_factory, tmp_path):
    require_dist()
    brokers = {"stock": broker_factory("stock", stock=True, extra_props=CLEANER),
               "ours": broker_factory("ours", extra_props=CLEANER)}
    codes, messages = {}, {}
    timestamp = int(time.time()) * 1000      # the same records to both; recent, so retention leaves them
    for name, broker in brokers.items():
        codes[name], messages[name] = answers(diff_client(tmp_path, "produce", broker.bootstrap, timestamp))
        diff_client(tmp_path, "clean", broker.bootstrap)
    assert codes["stock"].keys() == codes["ours"].keys() and len(codes["stock"]) >= 40, codes
    deadline = time.time() + 240
    while not all(cleaned(b) for b in brokers.values()) and time.time() < deadline:
        time.sleep(1)
    assert all(cleaned(b) for b in brokers.values()), {n: (b.data / "cleaner-offset-checkpoint").read_text()
                                                       for n, b in brokers.items()}
    for b in brokers.values():
        b.stop()

    differing = {}
    for case in codes["stock"]:
        stock_files, our_files = stored(brokers["stock"], case), stored(brokers["ours"], case)
        if codes["stock"][case] != codes["ours"][case] or stock_files != our_files:
            differing[case] = "stock %s %s, ours %s %s; stock: %s, ours: %s" % (
                codes["stock"][case][:2], stock_files[:3], codes["ours"][case][:2], our_files[:3],
                messages["stock"][case], messages["ours"][case])
    for case, what in sorted(differing.items()):
        print("differs: %s: %s" % (case, what))
    print("the same on both: %d cases" % (len(codes["stock"]) - len(differing)))
    # every compacted topic was rewritten (files of several segments, cleaned), and the well-formed cases stored
    for t in CLEANED:
        assert len(stored(brokers["stock"], t)) >= 2, (t, stored(brokers["stock"], t))
    unlisted = sorted(set(differing) - set(DOCUMENTED))
    assert not unlisted, "differences docs/upgrading.md does not list: %s" % {c: differing[c] for c in unlisted}
    gone = sorted(set(DOCUMENTED) - set(differing))
    assert not gone, "listed differences that are gone: %s" % gone
    rows = documented_rows()
    for case, words in DOCUMENTED.items():
        assert words in rows, "%s: docs/upgrading.md's section has no row with %r" % (case, words)
