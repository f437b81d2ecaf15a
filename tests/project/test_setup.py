"""build.sh's set-up of a machine, on this host (fast; the real thing in fresh Debian
containers is test_fresh_machine.py): without root or sudo a missing system package
stops a subcommand before it does anything, with the one apt-get line, and only the
packages that subcommand needs; a host that cannot compile the native gzip provider
gets the reason, and the provider is left out of the reactor."""
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import DATA, ROOT, run

BUILD_SH = str(ROOT / "build.sh")


@pytest.fixture
def no_dpkg():
    """A PATH on which dpkg-query knows no package and sudo refuses: nothing is installed
    as far as build.sh can tell, except what its probes find (a JDK, mvn, ...). In a
    directory the unprivileged user can read (pytest's tmp_path is private to root)."""
    stubs = Path(tempfile.mkdtemp(prefix="kc-setup-stubs-"))
    stubs.chmod(0o755)
    for name in ("dpkg-query", "sudo"):
        (stubs / name).write_text("#!/bin/sh\nexit 1\n")
        (stubs / name).chmod(0o755)
    yield "%s:%s" % (stubs, os.environ["PATH"])
    shutil.rmtree(stubs)


def docker_answers():
    return bool(shutil.which("docker")) and subprocess.run(["docker", "info"], capture_output=True,
                                                           timeout=60).returncode == 0


def as_unprivileged(argv, path):
    """argv as the user nobody when we are root (as ourselves otherwise), with PATH."""
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    return subprocess.run(prefix + ["env", "PATH=" + path] + argv, capture_output=True, text=True,
                          timeout=120, cwd="/")


def apt_line(stderr):
    lines = [l.strip() for l in stderr.splitlines() if "apt-get install" in l]
    assert len(lines) == 1, stderr
    return lines[0].split("--no-install-recommends", 1)[1].split()


@pytest.mark.parametrize("sub, wanted, unwanted", [
    (["run"], {"libisal-dev", "libdeflate-dev", "libc6-dev"}, {"podman", "python3-venv", "openssh-client"}),
    (["test", "--quick"], {"libisal-dev"}, {"podman", "buildah", "openssh-client"}),
    (["test"], {"libisal-dev", "podman", "buildah", "runc", "mmdebstrap"}, set()),
])
def test_without_root_stops_first_with_the_apt_get_line(no_dpkg, sub, wanted, unwanted):
    if docker_answers():  # a Docker engine replaces podman and its helpers
        wanted = wanted - {"podman", "buildah", "runc", "mmdebstrap"}
    before = sorted(os.listdir(ROOT / "build"))
    p = as_unprivileged([BUILD_SH] + sub, no_dpkg)
    assert p.returncode != 0, p.stderr
    assert "missing system packages; as root, run:" in p.stderr, p.stderr
    pkgs = set(apt_line(p.stderr))
    assert wanted <= pkgs, (sub, pkgs)
    assert not (unwanted & pkgs), (sub, pkgs)
    # stopped before anything else: no Maven, no build step, nothing written
    assert "[build.sh] compiling" not in p.stderr and "fetching" not in p.stderr
    assert sorted(os.listdir(ROOT / "build")) == before


def test_help_and_clean_need_no_packages(no_dpkg):
    p = as_unprivileged([BUILD_SH, "--help"], no_dpkg)
    assert p.returncode == 0 and "test --quick" in p.stdout, p.stderr


def subcommands():
    """The subcommands ./build.sh --help lists (the first word of each entry of its Subcommands block)."""
    out = subprocess.run([BUILD_SH, "--help"], capture_output=True, text=True, check=True).stdout
    block = out.split("Subcommands:\n", 1)[1].split("\n\n", 1)[0]
    subs = [line.split()[0] for line in block.splitlines() if re.match(r"  [a-z]", line)]
    return list(dict.fromkeys(subs))


def test_every_subcommand_is_listed():
    assert set(subcommands()) >= {"build", "run", "test", "gate", "checkstyle", "image", "systest", "bench",
                                  "source", "lock", "clean"}


@pytest.mark.parametrize("sub", subcommands())
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_subcommand_help_prints_usage_and_does_nothing_else(no_dpkg, sub, flag):
    """SUB --help prints SUB's usage and exits 0 as a user who can install nothing, with no package known to be
    installed: it checks no system package, builds, fetches, starts and removes nothing (build.sh and the
    scripts it hands image, systest and bench to log every step on stderr, which stays empty)."""
    p = as_unprivileged([BUILD_SH, sub, flag], no_dpkg)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr == ""
    assert "./build.sh %s" % sub in p.stdout, p.stdout


def sourced(script, path=None):
    env = dict(os.environ)
    if path:
        env["PATH"] = path
    return run(["bash", "-c", 'source "$1"; ' + script, "-", BUILD_SH], env=env, cwd=ROOT)


def test_native_gzip_needs_a_compiler_and_headers(tmp_path):
    # here: gcc and both headers are installed (build.sh installs them), so nothing is missing
    assert sourced("native_gzip_problem").stdout.strip() == ""
    # a PATH without a C compiler: the reason, and the module leaves the reactor
    nocc = tmp_path / "bin"
    nocc.mkdir()
    for d in os.environ["PATH"].split(":"):
        if not os.path.isdir(d):
            continue
        for f in os.listdir(d):
            if f in ("gcc", "cc") or f.startswith(("gcc-", "x86_64-linux-gnu-gcc")) or (nocc / f).exists():
                continue
            (nocc / f).symlink_to(os.path.join(d, f))
    out = sourced("native_gzip_problem", path=str(nocc)).stdout.strip()
    assert out == "no C compiler (apt-get install gcc libc6-dev)", out
    marker = tmp_path / "left-out"
    marker.write_text(out + "\n")
    mods = sourced('NATIVE_LEFT_OUT="%s"; reactor_modules' % marker).stdout.strip().split(",")
    assert "providers/native-gzip" not in mods and "kafka-modules/clients" in mods, mods
    mods = sourced('NATIVE_LEFT_OUT="%s/none"; reactor_modules' % tmp_path).stdout.strip().split(",")
    assert "providers/native-gzip" in mods, mods


# ---------------------------------------------------------------------------------------------------------------
# The repository is self-contained: its test data are tracked files with known sums, and nothing reads beside it

DATA_README_SUM = re.compile(r"^    ([0-9a-f]{64})  (\S+)$", re.M)


def test_data_files_match_the_sha256_in_their_readme():
    """Every data file in tests/data is tracked (a clone carries it), has a SHA-256 line in tests/data/README.md,
    and has that SHA-256; every line names a file that is there. The generator script (generate.py, tested by
    test_data_generator.py) is not data."""
    listed = {name: digest for digest, name in DATA_README_SUM.findall((DATA / "README.md").read_text())}
    assert listed, "no SHA-256 lines ('    <sum>  <file>') in %s" % (DATA / "README.md")
    present = {p.name for p in DATA.iterdir() if p.name not in ("README.md", ".gitattributes", "generate.py")}
    assert present == set(listed), "files in %s without a SHA-256 line: %s; lines without a file: %s" \
        % (DATA, sorted(present - set(listed)), sorted(set(listed) - present))
    tracked = set(run(["git", "ls-files", "--", str(DATA)], cwd=ROOT).stdout.split())
    untracked = [n for n in listed if str((DATA / n).relative_to(ROOT)) not in tracked]
    assert not untracked, "not tracked by git, so a clone would lack them: %s" % untracked
    for name, digest in sorted(listed.items()):
        actual = hashlib.sha256((DATA / name).read_bytes()).hexdigest()
        assert actual == digest, "%s: SHA-256 %s, README says %s" % (DATA / name, actual, digest)


# paths outside the checkout that tests, benchmarks and tools once read (spelt in pieces so that this file does
# not match itself)
OUTSIDE = re.compile("|".join(re.escape(s) for s in ("../" + "shared", "shared" + "/data", 'parent / "' + 'shared"',
                                                      "/work" + "/shared")))


def test_no_tracked_file_reads_a_path_outside_the_checkout():
    """A clone is all a user has: no tracked file (code, build files, docs) names the folder beside the checkout
    that the test data used to come from."""
    found = []
    for rel in run(["git", "ls-files", "-z"], cwd=ROOT).stdout.split("\0"):
        path = ROOT / rel
        if not rel or not path.is_file():
            continue
        for n, line in enumerate(path.read_bytes().decode("utf-8", "replace").splitlines(), 1):
            if OUTSIDE.search(line):
                found.append("%s:%d: %s" % (rel, n, line.strip()[:160]))
    assert not found, "tracked files name a path outside the checkout (use tests/data):\n" + "\n".join(found)
