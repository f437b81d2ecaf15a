"""With none of this distribution's settings, a broker differs from stock Apache Kafka 4.3.1 only where
docs/upgrading.md says so ("What differs with none of our settings").

A stock 4.3.1 broker and ours, both with only upstream's settings, get the same produce requests byte for byte
(tests/project/differential/DiffClient.java): well-formed batches of every codec into topics of every
compression.type and two KIP-390 levels; batches with a valid CRC that cannot be decompressed, whose inner offsets
have gaps, or whose first record declares a negative size; and 3 MB of keyed records into four compacted topics,
which the cleaner then rewrites. Per case the test compares the produce responses (error code, base offset) and the
stored segment files byte for byte, after cleaning. The cases that differ must be exactly those the page lists: a new
difference fails the test until the page lists it, and a listed one that is gone fails it too. Each case has a row of
its own, found by words of its "what" cell; the words that say how it differs must be in that row's own cells (stock's
behaviour in the "stock 4.3.1" cell, ours in "this distribution", its patch, this test among "shown by"), and the
error each side answered in that side's cell, so that words elsewhere on the page or in another cell do not count.
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
# the columns of the section's table
COLUMNS = ("what", "stock 4.3.1", "this distribution", "patch", "shown by")
# case -> the docs/upgrading.md row that lists how it differs: words of its "what" cell, which find the row, and the
# words each of its other cells must hold; every such row also names this test in its "shown by" cell
CORRUPT = {"what": "has a valid CRC but cannot be decompressed", "stock 4.3.1": "answers `UNKNOWN_SERVER_ERROR`",
           "this distribution": "answers `CORRUPT_MESSAGE`", "patch": "`0003`"}
DOCUMENTED = {
    "corrupt-deflate-gzip": CORRUPT,
    "corrupt-deflate-lz4": CORRUPT,
    "gaps-gzip": {"what": "whose inner offsets are not consecutive", "stock 4.3.1": "answers `UNKNOWN_SERVER_ERROR`",
                  "this distribution": "rebuilds it with consecutive offsets and accepts it", "patch": "`0002`"},
    "negative-size-gzip": {"what": "declares a negative size",
                           "stock 4.3.1": "stores the batch when it goes to a topic of the batch's own codec",
                           "this distribution": "refuses it with `INVALID_RECORD`", "patch": "`0005`"},
    "clean-zstd-19": {"what": "the log cleaner rebuilding a batch of a topic's own `compression.type`",
                      "stock 4.3.1": "at the codec's default level",
                      "this distribution": "at the topic's `compression.<codec>.level`", "patch": "`0007`"},
}
# the error codes a produce case answers, as the table names them
ERRORS = {-1: "UNKNOWN_SERVER_ERROR", 2: "CORRUPT_MESSAGE", 87: "INVALID_RECORD"}
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


def documented_rows(text=None):
    """The table of docs/upgrading.md's section "What differs with none of our settings": [{column: cell}]."""
    text = DOCS.read_text() if text is None else text
    section = text[text.index("## What differs with none of our settings"):]
    section = section[:section.index("\n## ", 5)] if "\n## " in section[5:] else section
    lines = [l.strip() for l in section.splitlines() if l.strip().startswith("|")]
    cells = [[c.strip() for c in l.strip("|").split("|")] for l in lines]
    assert cells and tuple(cells[0]) == COLUMNS, "the section's table has columns %s, not %s" % (cells[:1], COLUMNS)
    rows = []
    for c in cells[2:]:                                   # after the header and its |---| line
        assert len(c) == len(COLUMNS), "a row of %d cells: %s" % (len(c), c)
        rows.append(dict(zip(COLUMNS, c)))
    return rows


def listed_row(case, rows, codes=None):
    """Fails unless exactly one row's "what" cell holds the case's words and each of that row's cells the words the
    case gives it (and, with codes {"stock": [(error, base)...], "ours": [...]}, the error each side answered)."""
    want = DOCUMENTED[case]
    found = [r for r in rows if want["what"] in r["what"]]
    assert len(found) == 1, "%s: %d rows of docs/upgrading.md's section have %r in their \"what\" cell" % (
        case, len(found), want["what"])
    row = found[0]
    for column, words in sorted(want.items()):
        assert words in row[column], "%s: the row %r has no %r in its %r cell: %r" % (
            case, want["what"], words, column, row[column])
    assert "test_always_on_differences.py" in row["shown by"], "%s: the row %r does not name this test: %r" % (
        case, want["what"], row["shown by"])
    for side, column in (("stock", "stock 4.3.1"), ("ours", "this distribution")):
        for code in sorted(set(c for c, _ in (codes or {}).get(side, {}).get(case, []))):
            if code != 0:
                assert ERRORS.get(code, "error %d" % code) in row[column], \
                    "%s: %s answered %s, which the row %r does not say in its %r cell: %r" % (
                        case, side, ERRORS.get(code, code), want["what"], column, row[column])
    return row


def test_each_listed_difference_has_a_row_of_its_own():
    """The page side of the check below, without brokers (so also in --quick)."""
    rows = documented_rows()
    for case in DOCUMENTED:
        listed_row(case, rows)


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
    for case in DOCUMENTED:
        listed_row(case, rows, codes)
