"""The repository states its licence (LICENSE, NOTICE, pom.xml's <licenses>), and the distribution carries LICENSE,
NOTICE and licenses/ in the form of upstream Kafka's binary release (whose build renames its LICENSE-binary and
NOTICE-binary to LICENSE and NOTICE): the Apache License followed by every jar in libs/ (and the native and shaded
code) with its licence, generated from licenses/components.txt, and our NOTICE followed by the NOTICE files of the
bundled jars; a jar without an entry fails the build."""
import importlib.util
import re
import subprocess
import tarfile
import zipfile

from conftest import DIST, ROOT, require_dist

spec = importlib.util.spec_from_file_location("license_generate", ROOT / "licenses" / "generate.py")
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)


def test_every_jar_in_libs_has_a_licence_entry():
    require_dist()
    jars = [p.name for p in (DIST / "libs").glob("*.jar")]
    assert len(jars) > 100
    _, missing = gen.match_jars(gen.read_table(), jars)
    assert missing == [], "jars without an entry in licenses/components.txt: %s" % missing


def test_the_repository_states_its_licence():
    """LICENSE is the Apache License, Version 2.0, as upstream Kafka's; NOTICE is ours and quotes Apache Kafka's
    whole (the release's, from its sources jar, in kafka/); pom.xml names the licence for every module."""
    licence = (ROOT / "LICENSE").read_text()
    assert licence.lstrip().startswith("Apache License\n                           Version 2.0, January 2004")
    assert "END OF TERMS AND CONDITIONS" in licence
    upstream = ROOT / "kafka" / "LICENSE"
    if upstream.is_file():
        assert upstream.read_bytes() == (ROOT / "LICENSE").read_bytes()
    notice = (ROOT / "NOTICE").read_text()
    assert notice.startswith("Kafka compression distribution\nCopyright ")
    upstream = ROOT / "kafka" / "NOTICE"
    if upstream.is_file():
        assert gen.normalised(upstream.read_text()) in gen.normalised(notice)
    else:
        assert "This product includes software developed at\nThe Apache Software Foundation" in notice
    pom = (ROOT / "pom.xml").read_text()
    licences = re.findall(r"<licenses>(.*?)</licenses>", pom, re.S)
    assert len(licences) == 1, "pom.xml: one <licenses> block"
    assert "<name>The Apache License, Version 2.0</name>" in licences[0]
    assert "<url>https://www.apache.org/licenses/LICENSE-2.0.txt</url>" in licences[0]


def test_distribution_licence_files_have_upstream_binary_form():
    """LICENSE: the repository's LICENSE, then every bundled component by licence, Apache's first ("the licence
    above"), each other licence's text once in licenses/; NOTICE: the repository's NOTICE, then every NOTICE text a
    bundled jar carries that it does not already hold; no LICENSE-binary or NOTICE-binary beside them."""
    require_dist()
    text = (DIST / "LICENSE").read_text()
    assert text.startswith((ROOT / "LICENSE").read_text().rstrip("\n") + "\n")
    for jar in (DIST / "libs").glob("*.jar"):
        assert "\n%s  -- " % jar.name[:-4] in text, jar.name
    for component in ("zlib-ng 2.1.5", "protobuf-java 3.25.5", "opentelemetry-proto 1.3.2-alpha", "qat-java-2.3.2",
                      "libisal2", "libdeflate0", "libqatzip3", "openjdk-25-jre-headless"):
        assert component in text, component
    assert "\nApache-2.0   (see the licence above)\n" in text
    used = {ref[len("licenses/"):] for line in text.splitlines() if "   (see " in line
            for ref in line.split("(see ")[1].rstrip(")").split(", ") if ref != "the licence above"}
    shipped = {p.name for p in (DIST / "licenses").iterdir()}
    assert used and used == shipped and "Apache-2.0" not in shipped
    for lic in shipped:     # the texts are the tracked ones, byte for byte
        assert (DIST / "licenses" / lic).read_bytes() == (ROOT / "licenses" / lic).read_bytes()

    notice = (DIST / "NOTICE").read_text()
    ours = gen.normalised((ROOT / "NOTICE").read_text())
    assert notice.startswith(ours + "\n")
    carried = {}
    for jar in sorted((DIST / "libs").glob("*.jar")):
        with zipfile.ZipFile(jar) as z:
            for name in z.namelist():
                if re.fullmatch(r"(META-INF/)?NOTICE(\.txt|\.md)?", name, re.I):
                    carried.setdefault(gen.normalised(z.read(name).decode("utf-8", "replace")), []).append(jar.name)
    assert len(carried) > 10, carried.keys()
    # after ours, one block a text: a rule, the jars that carry it, a blank line, the text
    blocks = notice[len(ours):].split("\n" + "-" * 79 + "\n")[1:]
    bodies = [b.split(":\n\n", 1)[1].rstrip("\n") for b in blocks]
    assert len(bodies) == len(set(bodies)), "a notice written twice"
    assert set(bodies) == {body for body in carried if body not in ours}
    kafka_notice = next(body for body, jars in carried.items() if "kafka-raft-4.3.1.jar" in jars)
    assert kafka_notice in ours and kafka_notice not in bodies    # Apache Kafka's, once: in ours

    assert not (DIST / "LICENSE-binary").exists() and not (DIST / "NOTICE-binary").exists()
    tgz = DIST.parent / (DIST.name + ".tgz")
    with tarfile.open(tgz) as t:
        names = set(t.getnames())
    for name in ("LICENSE", "NOTICE", "licenses/Zlib", "licenses/EPL-2.0"):
        assert "%s/%s" % (DIST.name, name) in names, name
    assert "%s/LICENSE-binary" % DIST.name not in names


def test_a_jar_without_an_entry_stops_the_generator(tmp_path):
    (tmp_path / "libs").mkdir()
    for name in ("kafka-clients-4.3.1-compress.1.jar", "zstd-jni-1.5.7-17.jar", "mystery-lib-0.1.jar"):
        zipfile.ZipFile(tmp_path / "libs" / name, "w").close()
    p = subprocess.run(["python3", str(ROOT / "licenses" / "generate.py"), str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert "mystery-lib-0.1.jar" in p.stderr and "zstd-jni" not in p.stderr
    assert not (tmp_path / "LICENSE").exists() and not (tmp_path / "NOTICE").exists()
    (tmp_path / "libs" / "mystery-lib-0.1.jar").unlink()
    p = subprocess.run(["python3", str(ROOT / "licenses" / "generate.py"), str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "zstd-jni-1.5.7-17  -- " in (tmp_path / "LICENSE").read_text()
    assert (tmp_path / "licenses" / "BSD-2-Clause").is_file()
    assert (tmp_path / "NOTICE").read_text().startswith(gen.normalised((ROOT / "NOTICE").read_text()))


def test_jar_names_split_from_versions():
    assert gen.jar_name("kafka_2.13-4.3.1-compress.1.jar") == ("kafka_2.13", "4.3.1-compress.1")
    assert gen.jar_name("scala-logging_2.13-3.9.6.jar") == ("scala-logging_2.13", "3.9.6")
    assert gen.jar_name("zstd-jni-1.5.7-17.jar") == ("zstd-jni", "1.5.7-17")
    assert gen.jar_name("jakarta.activation-api-2.1.0.jar") == ("jakarta.activation-api", "2.1.0")
