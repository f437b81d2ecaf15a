"""No tracked file that the build, the images or the tests execute names a package registry or mirror host.

Users sit behind mirrors and proxies: every download goes through the package tool's own configuration (Maven's
settings.xml, pip's index-url/PIP_INDEX_URL, apt's sources, the container engine's registries.conf), so a script
that names a host would bypass it. Allowed, and why:
  - Markdown prose (README.md, docs/, */README.md): it explains where things come from to a reader; nothing runs it.
  - patches/: upstream Kafka's own sources and build files, changed as upstream PRs (their hosts are upstream's).
  - tests/data/: recorded JSON events (their URLs are data, not downloads).
  - Binary files (the charts in docs/).
  - LICENSE, NOTICE and licenses/: licence texts and notices name their projects' home pages, never a download.
"""
import re
import subprocess

from conftest import ROOT

# registry and mirror hosts a build script might be tempted to hard-code
HOSTS = [
    r"pypi\.org", r"pypi\.python\.org", r"files\.pythonhosted\.org",
    r"deb\.debian\.org", r"security\.debian\.org", r"ftp(\.[a-z]{2})?\.debian\.org", r"snapshot\.debian\.org",
    r"archive\.ubuntu\.com", r"security\.ubuntu\.com",
    r"repo1?\.maven\.org", r"repo\.maven\.apache\.org", r"central\.sonatype\.(com|org)", r"oss\.sonatype\.org",
    r"repository\.apache\.org", r"plugins\.gradle\.org",
    r"docker\.io", r"registry-1\.docker\.io", r"index\.docker\.io", r"hub\.docker\.com", r"ghcr\.io", r"quay\.io",
    r"gcr\.io", r"registry\.k8s\.io", r"public\.ecr\.aws",
    r"downloads\.apache\.org", r"archive\.apache\.org", r"dlcdn\.apache\.org",
    r"github\.com/[^ ]*/(releases|archive)/", r"objects\.githubusercontent\.com", r"codeload\.github\.com",
]
HOST_RE = re.compile("|".join(HOSTS), re.IGNORECASE)

ALLOWED_PREFIXES = ("patches/", "tests/data/", "licenses/")
ALLOWED_FILES = {"LICENSE", "NOTICE"}


def allowed(path):
    return (path.endswith(".md") or path.startswith(ALLOWED_PREFIXES) or path.rsplit("/", 1)[-1] in ALLOWED_FILES)


def tracked_files():
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p]


def offending_lines(paths):
    hits = []
    for path in paths:
        if allowed(path):
            continue
        f = ROOT / path
        if not f.is_file():
            continue
        data = f.read_bytes()
        if b"\0" in data[:8192]:          # binary
            continue
        for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if HOST_RE.search(line):
                hits.append("%s:%d: %s" % (path, n, line.strip()[:160]))
    return hits


def test_no_tracked_script_names_a_registry_host():
    files = tracked_files()
    assert "build.sh" in files and "docker/engine.sh" in files     # we really scan the tree
    hits = offending_lines(files)
    assert not hits, ("tracked files name a registry or mirror host; use the package tool's own configuration "
                      "instead:\n  " + "\n  ".join(hits))


def test_the_scan_can_fail(tmp_path, monkeypatch):
    """The scan finds a host in a script and in a pom, and lets the same line through in Markdown."""
    dot = "."      # split, so that this file itself does not name the hosts
    (tmp_path / "fetch.sh").write_text("curl -O https://files%spythonhosted%sorg/packages/x/y.tar.gz\n" % (dot, dot))
    (tmp_path / "pom.xml").write_text("<url>https://repo1%smaven%sorg/maven2</url>\n" % (dot, dot))
    (tmp_path / "engine.sh").write_text('M="${M:-http://deb%sdebian%sorg/debian}"\n' % (dot, dot))
    (tmp_path / "notes.md").write_text("PyPI (https://pypi%sorg) hosts the sdist.\n" % dot)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    hits = offending_lines(["fetch.sh", "pom.xml", "engine.sh", "notes.md"])
    assert [h.split(":")[0] for h in hits] == ["fetch.sh", "pom.xml", "engine.sh"]


def test_debian_mirror_comes_from_apt_sources(tmp_path):
    """docker/engine.sh reads the Debian archive from apt's sources (one-line and deb822), not from a default."""
    (tmp_path / "a.list").write_text(
        "# deb http://commented.example/debian trixie main\n"
        "deb-src http://src.example/debian trixie main\n"
        "deb [arch=amd64 signed-by=/k.gpg] http://third.example/repo nodistro main\n")
    (tmp_path / "b.sources").write_text(
        "Types: deb\n# a comment inside the stanza\nURIs: http://mirror.example/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n\n"
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\n\n"
        "Types: deb\nEnabled: no\nURIs: http://disabled.example/debian\nSuites: bookworm\n")
    out = subprocess.run(["bash", "-c", '. docker/engine.sh >/dev/null 2>&1; kc_debian_mirrors "$@"', "x",
                          str(tmp_path / "a.list"), str(tmp_path / "b.sources")],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert out == ["http://mirror.example/debian", "http://mirror.example/debian-security"]
    none = subprocess.run(["bash", "-c", '. docker/engine.sh >/dev/null 2>&1; kc_debian_mirrors "$@"', "x",
                           str(tmp_path / "a.list")], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert none.strip() == ""
