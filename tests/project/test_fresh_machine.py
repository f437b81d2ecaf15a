"""The fresh-machine path: in a fresh Debian 12 (bookworm) and Debian 13 (trixie)
container, made offline with mmdebstrap by docker/engine.sh, with nothing but the
repository (a git clone of the checkout, at a commit of its tracked files with
uncommitted changes included; no build/, no kafka/) and nothing else, tests/project/fresh_machine.sh
checks that `./build.sh run` without root stops with the apt-get line, that
`./build.sh run` as root sets everything up and serves a produce and a consume,
and that `./build.sh test --quick` passes.

TLS: where the host trusts extra CAs (a TLS-inspecting proxy, as on our CI
machines), the container needs them for Maven Central and PyPI, as a user behind
such a proxy would: /usr/local/share/ca-certificates is mounted read-only (the
ca-certificates and JDK packages pick it up when apt installs them) and PIP_CERT
points pip at the system bundle.

Slow (tens of minutes per Debian release, mostly downloads and the build), so it
runs only with ./build.sh test --full (mark "fresh"). Run it alone with
  flock /tmp/kc-containers.lock build/venv/bin/pytest -m fresh tests/project/test_fresh_machine.py
"""
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import BUILD, ROOT, run

pytestmark = [pytest.mark.fresh, pytest.mark.container]

HOST_CAS = "/usr/local/share/ca-certificates"
TIMEOUT = int(os.environ.get("KC_FRESH_TIMEOUT", "5400"))


def say(msg):
    print("[fresh-machine] %s" % msg, file=sys.__stderr__, flush=True)


def engine_name():
    p = subprocess.run(["bash", "-c", '. "$1"; printf "%s\\n%s" "$KC_ENGINE" "$KC_ENGINE_REASON"',
                        "-", str(ROOT / "docker" / "engine.sh")], capture_output=True, text=True, timeout=120)
    name, _, reason = p.stdout.partition("\n")
    if not name:
        pytest.fail("no container engine: %s" % (reason or p.stderr.strip()))
    return name


def engine_env(name):
    env = dict(os.environ)
    if name == "podman":
        env["CONTAINERS_CONF"] = str(ROOT / "docker" / "containers.conf")
    return env


@pytest.fixture
def source(tmp_path_factory):
    """The repository's tracked files as the checkout has them, alone in a directory of their own (mounted at
    /work, so nothing beside the clone): one per container (a run leaves its build/ and kafka/ behind, which the
    next must not see). The test data are tracked files (tests/data), so the clone carries them."""
    top = tmp_path_factory.mktemp("fresh")
    # a clone (the project tests need a git checkout), at a commit of the working tree's tracked files
    rev = run(["git", "stash", "create"], cwd=ROOT).stdout.strip() or run(["git", "rev-parse", "HEAD"], cwd=ROOT).stdout.strip()
    run(["git", "clone", "-q", "--no-hardlinks", "--no-checkout", str(ROOT), str(top / "repo")])
    run(["git", "-C", str(top / "repo"), "checkout", "-q", "--detach", rev])
    assert not (top / "repo" / "build").exists() and not (top / "repo" / "kafka").exists()
    assert sorted(os.listdir(top)) == ["repo"], os.listdir(top)
    # readable by the unprivileged user the script tries first
    for d in (top.parent, top):
        os.chmod(d, 0o755)
    return top


@pytest.mark.parametrize("suite", ["bookworm", "trixie"])
def test_fresh_debian_builds_runs_and_tests(source, suite):
    name = engine_name()
    env = engine_env(name)
    t0 = time.time()
    p = subprocess.run(["bash", "-c", '. "$1"; engine_debian_image "$2"', "-",
                        str(ROOT / "docker" / "engine.sh"), suite],
                       capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, "no %s base image:\n%s" % (suite, p.stderr[-3000:])
    image = p.stdout.strip().splitlines()[-1]
    say("%s: base image %s (%.0f s)" % (suite, image, time.time() - t0))

    container = "kc-fresh-%s-%d" % (suite, os.getpid())
    argv = [name, "run", "--rm", "--name", container, "-v", "%s:/work" % source,
            "-e", "PIP_CERT=/etc/ssl/certs/ca-certificates.crt"]
    if os.path.isdir(HOST_CAS) and any(f.endswith(".crt") for f in os.listdir(HOST_CAS)):
        argv += ["-v", "%s:%s:ro" % (HOST_CAS, HOST_CAS)]
    argv += [image, "nice", "-n", "10", "bash", "/work/repo/tests/project/fresh_machine.sh"]
    log = BUILD / "fresh-machine" / ("%s.log" % suite)
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            rc = proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            subprocess.run([name, "rm", "-f", container], env=env, capture_output=True)
            proc.wait()
            rc = "timeout after %d s" % TIMEOUT
    total = time.time() - t0
    text = log.read_text(errors="replace")
    phases = re.findall(r"^@@ (\S+) (\d+)$", text, re.M)
    summary = ", ".join("%s %s s" % p for p in phases)
    say("%s: %s in %.0f s (%s); log %s" % (suite, "passed" if rc == 0 else "FAILED", total, summary, log))
    assert rc == 0 and "FRESH-MACHINE OK" in text, \
        "fresh %s container: exit %s\n%s" % (suite, rc, text[-6000:])
