"""Artifacts of the newest upstream releases (Apache Kafka 4.3.2 and 4.4.0) that the tests compare this
distribution with: fetched through Maven (its settings decide where from), kept in build/newest-upstream/, and
checked against upstream/newest-upstream.sha256 before anything reads them."""
import hashlib
import subprocess

from conftest import BUILD, ROOT

LOCK = ROOT / "upstream" / "newest-upstream.sha256"
OUT = BUILD / "newest-upstream"
NEWEST_43 = "4.3.2"
NEWEST_44 = "4.4.0"


def pinned():
    """{file name: SHA-256} of the lock."""
    return {name: sha for sha, name in (line.split() for line in LOCK.read_text().splitlines() if line.strip())}


def fetch(artifact, version, packaging="jar"):
    """Path of org.apache.kafka:ARTIFACT:VERSION:PACKAGING, fetched by Maven's dependency plugin (the version the
    parent pom pins, which the plugin lock covers) and verified against the lock; fails on a file the lock does not
    name or whose SHA-256 differs."""
    name = "%s-%s.%s" % (artifact, version, packaging)
    sha = pinned().get(name)
    assert sha, "%s is not pinned in %s" % (name, LOCK)
    path = OUT / name
    if not path.is_file():
        r = subprocess.run(["mvn", "-q", "-N", "dependency:copy",
                            "-Dartifact=org.apache.kafka:%s:%s:%s" % (artifact, version, packaging),
                            "-DoutputDirectory=%s" % OUT], cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    assert actual == sha, "%s: SHA-256 %s, %s pins %s" % (path, actual, LOCK.name, sha)
    return path
