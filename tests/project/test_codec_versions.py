"""The codec libraries the distribution bundles (zstd-jni, lz4-java, snappy-java) are at least as new as the newest
version that the kafka-clients poms of upstream's newest releases (4.3.2 and 4.4.0, pinned by SHA-256 in
upstream/newest-upstream.sha256) name: upstream moved them for CVEs, and a compression distribution must not ship
older ones. Checked in pom.xml (what every module and libs/ resolve) and in the built libs/ and test classpath."""
import re
import xml.etree.ElementTree as ET

from conftest import DIST, UPSTREAM, pom_prop, require_dist
from newest_upstream import NEWEST_43, NEWEST_44, fetch

# artifact id -> (group id, pom.xml property)
CODECS = {"zstd-jni": ("com.github.luben", "zstd.version"),
          "lz4-java": ("at.yawk.lz4", "lz4.version"),
          "snappy-java": ("org.xerial.snappy", "snappy.version")}


def version_key(v):
    """1.5.7-17 -> (1, 5, 7, 17); 1.1.10.11 -> (1, 1, 10, 11)."""
    assert re.fullmatch(r"\d+([.-]\d+)*", v), "unexpected version %r" % v
    return tuple(int(x) for x in re.split(r"[.-]", v))


def pom_codec_versions(pom):
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    found = {}
    for dep in ET.parse(pom).getroot().iterfind("m:dependencies/m:dependency", ns):
        aid, gid = dep.findtext("m:artifactId", namespaces=ns), dep.findtext("m:groupId", namespaces=ns)
        if aid in CODECS and CODECS[aid][0] == gid:
            found[aid] = dep.findtext("m:version", namespaces=ns)
    assert set(found) == set(CODECS), "%s names %s" % (pom, found)
    return found


def upstream_floor():
    """{artifact: newest version upstream's newest 4.3.x and 4.4.x kafka-clients poms name}."""
    poms = [pom_codec_versions(fetch("kafka-clients", v, "pom")) for v in (NEWEST_43, NEWEST_44)]
    return {a: max((p[a] for p in poms), key=version_key) for a in CODECS}


def older_codecs(jar_names, floor):
    """Codec jars among JAR_NAMES older than FLOOR, and codecs with no jar or more than one; [] when all is well."""
    problems = []
    for artifact, least in floor.items():
        versions = [m.group(1) for j in jar_names for m in [re.fullmatch(re.escape(artifact) + r"-(.+)\.jar", j)] if m]
        if len(versions) != 1:
            problems.append("%s: %s jars (%s)" % (artifact, len(versions), versions))
        elif version_key(versions[0]) < version_key(least):
            problems.append("%s-%s is older than upstream's %s" % (artifact, versions[0], least))
    return problems


def test_upstream_poms_name_what_the_floor_says():
    # what the pinned poms say, so that a reader sees the floor the other tests hold the distribution to
    assert upstream_floor() == {"zstd-jni": "1.5.7-17", "lz4-java": "1.11.4", "snappy-java": "1.1.10.11"}


def test_pom_pins_codecs_no_older_than_upstreams_newest():
    floor = upstream_floor()
    pinned = ["%s-%s.jar" % (a, pom_prop(prop)) for a, (_, prop) in CODECS.items()]
    assert older_codecs(pinned, floor) == []


def test_distribution_bundles_codecs_no_older_than_upstreams_newest():
    require_dist()
    floor = upstream_floor()
    for libs in (DIST / "libs", UPSTREAM / "libs", UPSTREAM / "testlibs"):
        assert older_codecs([p.name for p in libs.glob("*.jar")], floor) == [], libs


def test_an_older_or_duplicated_codec_is_reported():
    floor = {"zstd-jni": "1.5.7-17", "lz4-java": "1.11.4", "snappy-java": "1.1.10.11"}
    ok = ["zstd-jni-1.5.7-17.jar", "lz4-java-1.11.4.jar", "snappy-java-1.1.10.11.jar", "kafka-clients-4.3.1.jar"]
    assert older_codecs(ok, floor) == []
    assert older_codecs(["zstd-jni-1.6.0-1.jar", "lz4-java-1.14.1.jar", "snappy-java-1.1.10.12.jar"], floor) == []
    # 4.3.1's versions, as libs/ held them before
    old = ["zstd-jni-1.5.6-10.jar", "lz4-java-1.10.2.jar", "snappy-java-1.1.10.7.jar"]
    assert len(older_codecs(old, floor)) == 3
    assert older_codecs(ok[1:] + ["zstd-jni-1.5.7-9.jar"], floor) == ["zstd-jni-1.5.7-9 is older than upstream's 1.5.7-17"]
    assert older_codecs(ok + ["lz4-java-1.10.2.jar"], floor) == \
        ["lz4-java: 2 jars (['1.11.4', '1.10.2'])"]
    assert older_codecs(ok[1:], floor) == ["zstd-jni: 0 jars ([])"]
