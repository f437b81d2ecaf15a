"""docs/configuration.md is what the jars say: ./build.sh docs --check regenerates it from the ConfigDefs of the
patched jars and of the release's (tools/config-docs/ConfigDocs.java) and fails when the tracked page differs, so a
setting a patch adds, drops or redescribes fails CI until the page is regenerated."""
import re

from conftest import ROOT, require_dist, run

PAGE = ROOT / "docs" / "configuration.md"
ROW = re.compile(r"^\| \[`([a-z0-9.]+)`\]\(#([a-z0-9-]+)\) \| (topic|broker|producer|consumer)( \(internal\))? \| "
                 r"([a-z]+) \| ([^|]*) \| (.*) \| (yes, per topic|yes, per broker|yes, per broker or cluster-wide|"
                 r"no \(read-only: server\.properties, at start\)|no \(read when the client starts\)) \|$", re.M)


def test_page_is_what_the_jars_say():
    require_dist()
    p = run([str(ROOT / "build.sh"), "docs", "--check"], check=False, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]


def test_every_setting_has_scope_type_default_dynamic_and_a_description():
    text = PAGE.read_text()
    rows = ROW.findall(text)
    table = [line for line in text.splitlines() if line.startswith("| [`")]
    assert rows and len(rows) == len(table), "a table row out of form"
    names = {r[0] for r in rows}
    m = re.search(r"^(\d+) settings, in (\d+) pairs of setting and scope:$", text, re.M)
    assert m and int(m.group(1)) == len(names) and int(m.group(2)) == len(rows)
    headings = re.findall(r"^## `([a-z0-9.]+)`$", text, re.M)
    assert headings == sorted(names)
    for name, anchor, scope, *_ in rows:
        assert anchor == name.replace(".", "")
        section = text.split("## `%s`\n" % name, 1)[1].split("\n## ", 1)[0]
        described = re.findall(r"^\*\*([a-z, ]+)\*\* \(importance (?:low|medium|high)[^)]*\): \S", section, re.M)
        assert any(scope in d.split(", ") for d in described), (name, scope)
    # the scopes the series is known to add to: a generator that lost a ConfigDef would drop them
    assert {r[2] for r in rows} == {"topic", "broker", "producer", "consumer"}


def test_readme_points_to_the_page():
    readme = (ROOT / "README.md").read_text()
    assert "[docs/configuration.md](docs/configuration.md)" in readme
