"""Runs the ducktape system tests (./build.sh systest) as part of ./build.sh test.

Fails if any system test fails; skipped (with the reason) only when no container engine works."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import FULL

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# ./build.sh test --full (KC_SYSTEST_FULL=1) adds the long cases: the rolling upgrade alone takes 34 minutes more
TIMEOUT = int(os.environ.get("KC_SYSTEST_PYTEST_TIMEOUT", "7200" if FULL else "2400"))


def engine_problem():
    """None if docker or rootful podman works, else why not."""
    engine_sh = os.path.join(ROOT, "docker", "engine.sh")
    if os.path.exists(engine_sh):
        r = subprocess.run(["bash", "-c", '. "$1"; engine info >/dev/null 2>&1 && echo ok || echo "${KC_ENGINE_REASON:-engine info fails}"',
                            "_", engine_sh], capture_output=True, text=True, timeout=120)
        out = r.stdout.strip()
        return None if out == "ok" else out or "docker/engine.sh finds no engine"
    if shutil.which("docker") and subprocess.run(["docker", "info"], capture_output=True, timeout=60).returncode == 0:
        return None
    if shutil.which("podman") and os.geteuid() == 0:
        return None
    return "no Docker engine answers and rootful podman is not available"


def test_cluster_ids_are_never_read_as_options():
    """The system tests' cluster ids go to kafka-storage.sh format -t: one starting with '-' (1 in 64 of random ones)
    would be taken for an option and the brokers would not start."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    try:
        from kafkacompress_systest.services.kafka import KafkaService
    finally:
        sys.path.pop(0)
    ids = [KafkaService.random_cluster_id() for _ in range(20000)]
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)
    assert len(set(ids)) == len(ids)


@pytest.mark.container
def test_system_tests_pass():
    problem = engine_problem()
    if problem:
        pytest.skip("no container engine works: %s" % problem)
    r = subprocess.run([os.path.join(ROOT, "build.sh"), "systest"], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
    print(r.stdout[-20000:])
    assert r.returncode == 0, "system tests failed (exit %d):\n%s" % (r.returncode, r.stdout[-6000:])
    assert " FAIL " not in r.stdout, r.stdout[-6000:]
