"""tests/data/generate.py, the seeded generator meant to replace the JSON test records (whose licence cannot be
established): the same seed gives the same bytes, another seed other bytes, and the records have the committed
files' count, sizes and compressibility (gzip-6, and zstd-3 and lz4 when their commands are installed)."""
import hashlib
import importlib.util
import json
import subprocess
import sys

import pytest

from conftest import DATA

GENERATOR = DATA / "generate.py"


def load_generator():
    """Imports generate.py without leaving a __pycache__ in tests/data (whose every file needs a SHA-256 line)."""
    old = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        spec = importlib.util.spec_from_file_location("kc_data_generate", GENERATOR)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.dont_write_bytecode = old


gen = load_generator()


def generate(out, *seed):
    subprocess.run([sys.executable, "-B", str(GENERATOR), "--out", str(out)] + [str(s) for s in seed and ("--seed",) + seed],
                   check=True, timeout=60)
    return {name: (out / name).read_bytes() for name in (gen.RECORDS, gen.LARGE)}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return tmp_path_factory.mktemp("generated")


def test_same_seed_same_bytes_other_seed_other_bytes(generated, tmp_path):
    first = generate(generated)
    again = generate(tmp_path / "again")
    assert {k: hashlib.sha256(v).hexdigest() for k, v in first.items()} == \
        {k: hashlib.sha256(v).hexdigest() for k, v in again.items()}
    other = generate(tmp_path / "other", gen.DEFAULT_SEED + 1)
    for name in first:
        assert other[name] != first[name], name


def test_one_json_document_per_line(generated):
    generate(generated)
    for name in (gen.RECORDS, gen.LARGE):
        data = (generated / name).read_bytes()
        assert data.endswith(b"\n") and b"\r" not in data, name
        lines = data[:-1].split(b"\n")
        assert all(lines), "%s: an empty line" % name
        for i, line in enumerate(lines, 1):
            json.loads(line)                                    # raises on a record that is not one JSON document
    records = (generated / gen.RECORDS).read_bytes()[:-1].split(b"\n")
    large = (generated / gen.LARGE).read_bytes()[:-1].split(b"\n")
    assert b"".join(x[1:-1] + b"," for x in large) == b"".join(x + b"," for x in records), \
        "the large records are not the records joined in order"


def test_properties_within_the_bands_of_the_committed_files(generated):
    generate(generated)
    current, new = gen.properties(str(DATA)), gen.properties(str(generated))
    assert [k for k, _ in current] == [k for k, _ in new]
    off = []
    for (k, a), (_, b) in zip(current, new):
        if abs(b - a) > gen.bands(k) * a + 1e-9:
            off.append("%s: committed %.3f, generated %.3f (band %.0f%%)" % (k, a, b, 100 * gen.bands(k)))
    assert not off, "\n".join(off)
