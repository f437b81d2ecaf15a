"""The Maven plugins the build runs, and their dependencies, are locked: upstream/plugin-artifacts.sha256 lists every
plugin jar Maven resolves for the poms (paths in Maven's local repository) with its SHA-256; build.sh checks them
before compiling or fetching anything and stops on a jar the list lacks or a hash that differs; ./build.sh lock
writes the list. These tests run Maven's plugin resolution (about 20 s; network only for jars not yet in the local
repository) and check tampered copies in a local repository of their own."""
import os
import re
import subprocess
from pathlib import Path

from conftest import ROOT

BUILD_SH = str(ROOT / "build.sh")
PLUGIN_LOCK = ROOT / "upstream" / "plugin-artifacts.sha256"
LINE = re.compile(r"^([0-9a-f]{64})  (\S+\.jar)$")


def sourced(script, tmp_path, env_extra=None):
    """Runs SCRIPT after sourcing build.sh, with build.sh's state files under tmp_path (never the real build/)."""
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run(["bash", "-c", 'source "$1"; BUILD="$2"; ' + script, "-", BUILD_SH, str(tmp_path)],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)


def lock_entries():
    entries = []
    for line in PLUGIN_LOCK.read_text().splitlines():
        m = LINE.match(line)
        assert m, "not a '<sha256>  <path>' line in %s: %r" % (PLUGIN_LOCK, line)
        entries.append((m.group(1), m.group(2)))
    return entries


def test_the_lock_lists_exactly_the_plugin_jars_maven_resolves(tmp_path):
    p = sourced("plugin_closure", tmp_path)
    assert p.returncode == 0, p.stderr
    resolved = p.stdout.split()
    assert not [r for r in resolved if r == "OUTSIDE"], "plugin jars outside Maven's local repository:\n" + p.stdout
    listed = [path for _, path in lock_entries()]
    assert sorted(listed) == sorted(set(listed)), "duplicate lines in %s" % PLUGIN_LOCK
    missing = sorted(set(resolved) - set(listed))
    extra = sorted(set(listed) - set(resolved))
    assert not missing, "resolved plugin jars without an entry in %s (run ./build.sh lock):\n%s" % (
        PLUGIN_LOCK, "\n".join(missing))
    assert not extra, "entries in %s that the build no longer resolves:\n%s" % (PLUGIN_LOCK, "\n".join(extra))
    # the plugins the poms run are among them, at the versions pom.xml pins
    pom = (ROOT / "pom.xml").read_text() + (ROOT / "kafka-modules" / "core" / "pom.xml").read_text()
    for artifact in ("maven-compiler-plugin", "maven-surefire-plugin", "maven-jar-plugin", "maven-shade-plugin",
                     "maven-resources-plugin", "maven-install-plugin", "maven-dependency-plugin",
                     "exec-maven-plugin", "scala-maven-plugin"):
        version = re.search(r"<artifactId>%s</artifactId>\s*<version>([^<]+)</version>" % artifact, pom)
        assert version, "%s has no pinned version in pom.xml's pluginManagement" % artifact
        jar = "/%s/%s/%s-%s.jar" % (artifact, version.group(1), artifact, version.group(1))
        assert any(path.endswith(jar) for path in listed), "%s not in %s" % (jar, PLUGIN_LOCK)


def test_every_plugin_in_the_poms_has_a_version_and_no_added_dependencies():
    """A plugin without a version resolves to whatever Maven picks, which no lock can follow. Dependencies a pom adds
    to a plugin (<plugin><dependencies>) are not in what resolve-plugins lists (measured: a scala-compiler added to
    scala-maven-plugin left the list unchanged), so they would escape the check: none may be declared."""
    unpinned, added = [], []
    for pom in sorted(ROOT.glob("**/pom.xml")):
        rel = pom.relative_to(ROOT).as_posix()
        if rel.startswith(("build/", "kafka/")):
            continue
        for block in re.findall(r"<plugin>(.*?)</plugin>", pom.read_text(), re.S):
            block = re.sub(r"<(configuration|executions)>.*?</\1>", "", block, flags=re.S)
            artifact = re.search(r"<artifactId>([^<]+)</artifactId>", block).group(1)
            if "<dependencies>" in block:
                added.append("%s: %s" % (rel, artifact))
            block = re.sub(r"<dependencies>.*?</dependencies>", "", block, flags=re.S)
            if "<version>" not in block and artifact not in managed_plugins():
                unpinned.append("%s: %s" % (rel, artifact))
    assert not unpinned, "plugins without a version here or in pom.xml's pluginManagement:\n" + "\n".join(unpinned)
    assert not added, "plugins with dependencies added in a pom (not covered by the lock):\n" + "\n".join(added)


def managed_plugins():
    text = (ROOT / "pom.xml").read_text()
    managed = re.search(r"<pluginManagement>(.*?)</pluginManagement>", text, re.S).group(1)
    return {m.group(1) for m in re.finditer(r"<artifactId>([^<]+)</artifactId>\s*<version>[^<]+</version>", managed)}


def test_a_plugin_jar_missing_from_the_lock_stops_the_build(tmp_path):
    entries = lock_entries()
    dropped = next(path for _, path in entries if "/maven-shade-plugin-" in path)
    short = tmp_path / "plugin-artifacts.sha256"
    short.write_text("".join("%s  %s\n" % (h, p) for h, p in entries if p != dropped))
    p = sourced('PLUGIN_LOCK="%s"; verify_plugins' % short, tmp_path)
    assert p.returncode != 0
    assert "> " + dropped in p.stderr, p.stderr          # the diff names the jar the lock lacks
    assert "are not the ones" in p.stderr and "./build.sh lock" in p.stderr
    assert not (tmp_path / ".plugins").exists()


def test_a_tampered_plugin_jar_stops_the_build(tmp_path):
    """A local repository of links to the locked jars: as recorded it passes; a copy of one jar with one byte
    changed fails, and so does a missing jar. The shared local repository is never written."""
    repo, real = tmp_path / "m2", local_repo()
    entries = lock_entries()
    for _, path in entries:
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).symlink_to(real / path)
    env = {"MAVEN_OPTS": (os.environ.get("MAVEN_OPTS", "") + " -Dmaven.repo.local=%s" % repo).strip()}
    # the set itself is checked above; a stamp of this very state makes verify_plugins check the hashes only
    check = 'plugins_stamp > "$BUILD/.plugins"; verify_plugins'
    p = sourced(check, tmp_path, env)
    assert p.returncode == 0, p.stderr
    assert "build plugins verified: %d jars" % len(entries) in p.stderr
    victim = next(path for _, path in entries if "/maven-compiler-plugin-" in path)
    data = bytearray((repo / victim).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (repo / victim).unlink()                              # the link, not the shared jar
    (repo / victim).write_bytes(bytes(data))
    p = sourced(check, tmp_path, env)
    assert p.returncode != 0
    assert "%s: FAILED" % victim in p.stderr, p.stderr
    assert "SHA-256 mismatch" in p.stderr and "refusing to run unverified build plugins" in p.stderr
    (repo / victim).unlink()                              # and a jar that is not there at all
    p = sourced(check, tmp_path, env)
    assert p.returncode != 0 and "SHA-256 mismatch (or missing file" in p.stderr


def local_repo():
    out = subprocess.run(["bash", "-c", 'source "$1"; maven_local_repo', "-", BUILD_SH], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.strip()
    return Path(out)
