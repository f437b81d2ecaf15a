"""The distribution carries LICENSE-binary and licenses/, generated from licenses/components.txt, naming every jar in
libs/ (and the native and shaded code) with its licence; a jar without an entry fails the build."""
import importlib.util
import subprocess
import tarfile

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


def test_license_binary_names_every_component_and_ships_the_texts():
    require_dist()
    text = (DIST / "LICENSE-binary").read_text()
    for jar in (DIST / "libs").glob("*.jar"):
        assert "\n%s  -- " % jar.name[:-4] in text, jar.name
    for component in ("zlib-ng 2.1.5", "protobuf-java 3.25.5", "opentelemetry-proto 1.3.2-alpha", "qat-java-2.3.2",
                      "libisal2", "libdeflate0", "libqatzip3", "openjdk-25-jre-headless"):
        assert component in text, component
    used = {lic for line in text.splitlines() if "   (see licenses/" in line
            for lic in line.split("(see ")[1].rstrip(")").replace("licenses/", "").split(", ")}
    shipped = {p.name for p in (DIST / "licenses").iterdir()}
    assert used and used == shipped
    for lic in shipped:     # the texts are the tracked ones, byte for byte
        assert (DIST / "licenses" / lic).read_bytes() == (ROOT / "licenses" / lic).read_bytes()
    tgz = DIST.parent / (DIST.name + ".tgz")
    with tarfile.open(tgz) as t:
        names = set(t.getnames())
    assert "%s/LICENSE-binary" % DIST.name in names
    assert "%s/licenses/Zlib" % DIST.name in names and "%s/licenses/EPL-2.0" % DIST.name in names


def test_a_jar_without_an_entry_stops_the_generator(tmp_path):
    (tmp_path / "libs").mkdir()
    for name in ("kafka-clients-4.3.1-compress.1.jar", "zstd-jni-1.5.6-10.jar", "mystery-lib-0.1.jar"):
        (tmp_path / "libs" / name).write_bytes(b"")
    p = subprocess.run(["python3", str(ROOT / "licenses" / "generate.py"), str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert "mystery-lib-0.1.jar" in p.stderr and "zstd-jni" not in p.stderr
    assert not (tmp_path / "LICENSE-binary").exists()
    (tmp_path / "libs" / "mystery-lib-0.1.jar").unlink()
    p = subprocess.run(["python3", str(ROOT / "licenses" / "generate.py"), str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "zstd-jni-1.5.6-10  -- " in (tmp_path / "LICENSE-binary").read_text()
    assert (tmp_path / "licenses" / "BSD-2-Clause").is_file()


def test_jar_names_split_from_versions():
    assert gen.jar_name("kafka_2.13-4.3.1-compress.1.jar") == ("kafka_2.13", "4.3.1-compress.1")
    assert gen.jar_name("scala-logging_2.13-3.9.6.jar") == ("scala-logging_2.13", "3.9.6")
    assert gen.jar_name("zstd-jni-1.5.6-10.jar") == ("zstd-jni", "1.5.6-10")
    assert gen.jar_name("jakarta.activation-api-2.1.0.jar") == ("jakarta.activation-api", "2.1.0")
