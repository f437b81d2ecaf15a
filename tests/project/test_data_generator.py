"""tests/data/generate.py, the seeded generator of the JSON test records: the same seed gives the same bytes, another
seed other bytes, every record is one JSON document, and the default seed writes exactly the committed files (so a
user can rebuild them, and a change to the script that moves them fails here)."""
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
    return read(out)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The default seed's files, written once for the module's tests."""
    out = tmp_path_factory.mktemp("generated")
    generate(out)
    return out


def read(folder):
    return {name: (folder / name).read_bytes() for name in (gen.RECORDS, gen.LARGE)}


def test_same_seed_same_bytes_other_seed_other_bytes(generated, tmp_path):
    first = read(generated)
    again = generate(tmp_path / "again")
    assert {k: hashlib.sha256(v).hexdigest() for k, v in first.items()} == \
        {k: hashlib.sha256(v).hexdigest() for k, v in again.items()}
    other = generate(tmp_path / "other", gen.DEFAULT_SEED + 1)
    for name in first:
        assert other[name] != first[name], name


def test_one_json_document_per_line(generated):
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


def test_default_seed_writes_the_committed_files(generated):
    for name, data in sorted(read(generated).items()):
        committed = (DATA / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == hashlib.sha256(committed).hexdigest(), \
            "%s: generate.py --seed %d no longer writes the committed file" % (name, gen.DEFAULT_SEED)


def test_compare_prints_every_property_within_its_band(generated):
    """--compare, the check a user runs against their own records, reads both folders and judges every row."""
    p = subprocess.run([sys.executable, "-B", str(GENERATOR), "--compare", str(DATA), str(generated)],
                       capture_output=True, text=True, check=True, timeout=120)
    rows = [line.split() for line in p.stdout.splitlines()[1:] if line.strip() and not line.startswith("(")]
    assert len(rows) == len(gen.properties(str(DATA))), p.stdout
    assert all(r[-1] == "yes" and r[-2] == "+0.0%" for r in rows), p.stdout
