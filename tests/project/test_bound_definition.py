"""max.decompressed.message.bytes is defined as upstream 4.3.2 defines it (patches 0005 and 0006 backport its
apache/kafka#23429): the topic setting and the broker setting (name, type, default, validator, importance, whether
internal, doc text) and the broker setting as the topic setting's synonym (what DescribeConfigs lists), read by
tests/project/bound/BoundDefinition.java from 4.3.2's own jars (pinned in upstream/newest-upstream.sha256) and from
the distribution's libs/. An operator who moves between us and 4.3.2 finds the setting behaving the same."""
import subprocess

from conftest import DIST, UPSTREAM, require_dist
from newest_upstream import NEWEST_43, fetch

PROGRAM = "tests/project/bound/BoundDefinition.java"
# the modules that define the setting, taken from 4.3.2; the rest of the classpath is stock 4.3.1's libs/
MODULES = ("kafka-clients", "kafka-server-common", "kafka-storage", "kafka-server")


def definition(classpath):
    from conftest import ROOT
    p = subprocess.run(["java", "-cp", classpath, str(ROOT / PROGRAM)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return dict(line.split("=", 1) for line in p.stdout.splitlines())


def upstream_432():
    jars = [str(fetch(m, NEWEST_43)) for m in MODULES]
    stock = [str(j) for j in sorted((UPSTREAM / "libs").glob("*.jar"))
             if not any(j.name.startswith(m + "-4.") for m in MODULES)]
    return definition(":".join(jars + stock))


def test_bound_is_defined_as_in_4_3_2():
    require_dist()
    theirs = upstream_432()
    ours = definition(str(DIST / "libs" / "*"))
    # what 4.3.2 says, spelled out, so that a change on either side shows here
    assert theirs["topic.type"] == "INT" and theirs["topic.default"] == "2147483639"
    assert theirs["topic.validator"] == "[1,...,2147483639]" and theirs["topic.importance"] == "MEDIUM"
    assert theirs["synonyms"] == "max.decompressed.message.bytes"
    assert theirs["broker.doc"].startswith(theirs["topic.doc"])
    differing = {k: (ours.get(k), v) for k, v in theirs.items() if ours.get(k) != v}
    assert differing == {}, "ours differs from 4.3.2's as (ours, 4.3.2's): %s" % differing
    assert set(ours) == set(theirs)
