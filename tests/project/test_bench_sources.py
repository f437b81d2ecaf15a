"""The benchmarks' Java sources compile against the jars their scripts compile them against.

Each script compiles its source only when it runs: `./build.sh bench` runs bench/java/KcBench.java and
bench/codec/run.sh, the standalone scripts (bench/validator/run.sh, bench/overhead/run.sh and topic-metrics.sh) only
when someone runs them, so a change to the patched API would otherwise break them unseen. Each is compiled here with the classpath its script uses.
"""
import subprocess

import pytest

from conftest import DIST, ROOT, require_dist

STOCK_LIBS = ROOT / "build" / "upstream" / "libs"
# source -> the jars its script compiles it against
SOURCES = {
    "bench/java/KcBench.java": STOCK_LIBS,
    "bench/overhead/Overhead.java": STOCK_LIBS,
    "bench/codec/CodecBench.java": DIST / "libs",
    "bench/validator/ValidatorBench.java": DIST / "libs",
    "bench/overhead/TopicMetricsCost.java": DIST / "libs",
}


def test_every_bench_source_is_listed():
    found = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "bench").rglob("*.java"))
    assert found == sorted(SOURCES), "bench sources changed: list each here with the jars its script uses"


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_bench_source_compiles(source, tmp_path):
    require_dist()
    libs = SOURCES[source]
    assert libs.is_dir(), "%s missing (run ./build.sh)" % libs
    p = subprocess.run(["javac", "-nowarn", "-proc:none", "-d", str(tmp_path), "-cp", str(libs / "*"),
                        str(ROOT / source)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, "%s does not compile against %s:\n%s" % (source, libs, p.stderr[-3000:])
