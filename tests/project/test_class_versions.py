"""Class file versions: every jar of the distribution targets the Java release of upstream's jar of the same
artifact (kafka-clients Java 11, class file version 55; the broker modules Java 17, 61), and the providers, which
client applications load beside kafka-clients, target Java 11 too. An application on Java 11 that swaps in our
client jar and a provider must not fail with UnsupportedClassVersionError."""
import re
import zipfile

from conftest import DIST, DIST_VERSION, KAFKA_VERSION, PATCHED, UPSTREAM, require_dist

JAVA_11 = 55
# the providers' jars, their shared pool of engines (kafka-compress-slots) and the one jar only a provider brings
# (qat-java, the QAT provider's binding)
PROVIDER_JARS = [re.compile(re.escape("kafka-compress-%s-%s.jar" % (provider, DIST_VERSION)))
                 for provider in ("native-gzip", "qat-gzip", "slots")] + [re.compile(r"qat-java-[\d.]+\.jar")]


def class_versions(jar):
    """{entry: class file major version} of every class in jar. Multi-release entries keep their
    META-INF/versions/N/ prefix, so they are compared with the same release's entry upstream."""
    versions = {}
    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if not name.endswith(".class"):
                continue
            with z.open(name) as f:
                head = f.read(8)
            assert head[:4] == b"\xca\xfe\xba\xbe", "%s: %s is not a class file" % (jar.name, name)
            versions[name] = int.from_bytes(head[6:8], "big")
    return versions


def upstream_counterpart(jar):
    """Upstream's jar of the same artifact: ours with our version replaced by upstream's, or a third-party jar of
    the same name; None when upstream has none (our own jars)."""
    name = jar.name
    if name.endswith("-%s.jar" % DIST_VERSION):
        name = name[:-len("-%s.jar" % DIST_VERSION)] + "-%s.jar" % KAFKA_VERSION
    candidate = UPSTREAM / "libs" / name
    return candidate if candidate.is_file() else None


def test_jars_target_the_java_release_of_their_upstream_counterparts():
    require_dist()
    compared, wrong = [], []
    for jar in sorted((DIST / "libs").glob("*.jar")):
        counterpart = upstream_counterpart(jar)
        if counterpart is None:
            continue
        ours, theirs = class_versions(jar), class_versions(counterpart)
        compared.append(jar.name)
        # a class a patch adds has no counterpart: it may target no later release than upstream's own classes
        newest = max((v for n, v in theirs.items() if not n.startswith("META-INF/versions/")), default=None)
        for name, version in sorted(ours.items()):
            expected = theirs.get(name)
            if expected is not None and version != expected:
                wrong.append("%s: %s is version %d, upstream's %s has %d" % (jar.name, name, version,
                                                                           counterpart.name, expected))
            elif expected is None and newest is not None and version > newest:
                wrong.append("%s: %s (not in upstream's %s) is version %d, newer than upstream's classes (%d)"
                             % (jar.name, name, counterpart.name, version, newest))
    ours_patched = {"%s-%s.jar" % (artifact, DIST_VERSION) for artifact in PATCHED}
    assert ours_patched <= set(compared), "patched jars not compared with upstream's: %s" \
        % sorted(ours_patched - set(compared))
    assert not wrong, "%d classes target another Java release than upstream's, e.g.:\n%s" \
        % (len(wrong), "\n".join(wrong[:20]))


def test_providers_target_java_11():
    require_dist()
    jars = sorted((DIST / "libs").glob("*.jar"))
    for wanted in PROVIDER_JARS:
        found = [j for j in jars if wanted.fullmatch(j.name)]
        assert found, "no jar matching %s in %s" % (wanted.pattern, DIST / "libs")
        for jar in found:
            versions = class_versions(jar)
            assert versions, "%s holds no classes" % jar.name
            newer = sorted(n for n, v in versions.items() if v > JAVA_11 and not n.startswith("META-INF/versions/"))
            assert not newer, "%s: %d classes newer than Java 11 (class file version %d), e.g. %s: version %d" \
                % (jar.name, len(newer), JAVA_11, newer[0], versions[newer[0]])
