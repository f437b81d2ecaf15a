"""`./build.sh checkstyle` can fail: on copies of files the series adds, laid out as in kafka/, a clean copy passes,
and copies with an import out of upstream's order, or a forbidden and unused import (common.compress importing
clients, or common.metrics), are each reported in checkstyle's form, with a non-zero exit. No import-control
violation of the series is suppressed. kafka/ itself is not touched."""
import re
import shutil

import pytest

from conftest import ROOT, run

TREE = ROOT / "kafka"
COMPRESS = "clients/src/main/java/org/apache/kafka/common/compress"


def copy(tmp_path, rel):
    src = TREE / rel
    if not src.is_file():
        pytest.skip("kafka/ is not materialized (./build.sh source)")
    dst = tmp_path / rel
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)
    return dst


def checkstyle(*files):
    return run([str(ROOT / "build.sh"), "checkstyle"] + [str(f) for f in files], check=False, timeout=600)


def test_checkstyle_reports_what_upstream_forbids(tmp_path):
    # the series' own suppressions are upstream's: none exempts an import
    assert "ImportControl" not in (ROOT / "tools/checkstyle/suppressions.xml").read_text()

    # a file the series adds
    clean = copy(tmp_path / "clean", COMPRESS + "/CompressionProviders.java")
    text = clean.read_text()
    assert "import org.apache.kafka.common.metrics." not in text
    p = checkstyle(clean)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "no violations in 1 Java files (clients)" in p.stderr

    # an import out of upstream's order: two of the java.* group swapped
    order = copy(tmp_path / "order", COMPRESS + "/CompressionProviders.java")
    a, b = "import java.util.ArrayList;\n", "import java.util.EnumMap;\n"
    assert a + b in text
    order.write_text(text.replace(a + b, b + a, 1))

    # a forbidden import: common.compress must not depend on clients
    forbidden = copy(tmp_path / "forbidden", COMPRESS + "/ProviderMemory.java")
    ftext = forbidden.read_text()
    assert ftext.count("\nimport ") == ftext.count("\nimport java.")
    forbidden.write_text(ftext.replace("\nimport java.", "\nimport org.apache.kafka.clients.producer.KafkaProducer;\n\n"
                                       "import java.", 1))

    # another forbidden import: common.compress must not depend on common.metrics (the owner's registry shows the
    # providers' counters)
    suppressed = copy(tmp_path / "metrics", COMPRESS + "/CompressionProviders.java")
    suppressed.write_text(text.replace("\nimport org.apache.kafka.common.record.", "\nimport org.apache.kafka.common.metrics.Metrics;"
                                       "\nimport org.apache.kafka.common.record.", 1))

    p = checkstyle(order, forbidden, suppressed)
    assert p.returncode != 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert all(re.match(r"\[ERROR\] /.+\.java:\d+:\d+: .+ \[\w+\]$", line) for line in lines), p.stdout

    def reported(path, check, text):
        return [line for line in lines
                if line.startswith("[ERROR] %s:" % path) and line.endswith("[%s]" % check) and text in line]

    assert reported(order, "ImportOrder", "Wrong order for 'java.util.ArrayList' import"), p.stdout
    assert reported(forbidden, "ImportControl", "Disallowed import - org.apache.kafka.clients.producer.KafkaProducer"), \
        p.stdout
    assert reported(suppressed, "ImportControl", "Disallowed import - org.apache.kafka.common.metrics.Metrics"), \
        p.stdout
    # and both added imports are unused
    assert reported(forbidden, "UnusedImports", "Unused import - org.apache.kafka.clients.producer.KafkaProducer")
    assert reported(suppressed, "UnusedImports", "Unused import - org.apache.kafka.common.metrics.Metrics")
    assert len(lines) == 5, p.stdout
    assert "checkstyle: 5 violations in 3 Java files (clients)" in p.stderr, p.stderr
