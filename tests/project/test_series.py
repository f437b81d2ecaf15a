"""The patch-series machinery, on a copy of this checkout: a throw-away patch is
applied as its own commit on top of pristine upstream and changes the jar it
should; a patch that does not apply stops the build naming the patch, file and
hunk, and leaves kafka/ at the last patch that applied. And the series itself:
numbered in order, one author, short subjects, the KIP-390 patches first and
free of KIP-1121."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, DIST_VERSION, KAFKA_VERSION, ROOT, full_only, run

PROBE = "clients/src/main/java/org/apache/kafka/common/utils/SeriesProbe.java"
PROBE_SUBJECT = "KAFKA-00000: Throw-away probe of the patch machinery"


def link_or_copy(src, dst):
    """A hard link where the temp dir shares the checkout's file system, a copy where it
    does not (a tmpfs /tmp, a checkout on a bind mount)."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A copy of the repository's tracked files, with the verified upstream artifacts reused."""
    dst = tmp_path_factory.mktemp("series") / "repo"
    files = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT).stdout.split("\0")
    for f in filter(None, files):
        src = ROOT / f
        if src.is_file():
            (dst / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / f)
    (dst / "build").mkdir()
    shutil.copytree(BUILD / "upstream", dst / "build" / "upstream", copy_function=link_or_copy)
    run(["git", "init", "-q"], cwd=dst)
    return dst


def git(repo, *args):
    return run(["git", "-C", str(repo)] + list(args)).stdout.strip()


# the maintainers' workflow (docs/maintainers.md), about 4 minutes: it rebuilds kafka-clients in a copy of the checkout;
# CI's own build applies and compiles the series
@full_only
def test_throwaway_patch_becomes_a_commit_and_changes_the_jar(checkout):
    run([str(checkout / "build.sh"), "source"], timeout=600)
    tree = checkout / "kafka"
    base = git(tree, "rev-parse", "HEAD")
    (tree / PROBE).write_text(
        "package org.apache.kafka.common.utils;\n\npublic final class SeriesProbe {\n"
        "    public static final String VALUE = \"probe\";\n}\n")
    git(tree, "add", PROBE)
    git(tree, "-c", "user.name=Probe", "-c", "user.email=probe@localhost", "commit", "-q", "-m", PROBE_SUBJECT,
        "-m", "Only the series machinery test makes this patch.")
    name = git(tree, "format-patch", "-o", str(checkout / "patches"), "--start-number", "900", "HEAD~1..HEAD")
    name = os.path.basename(name)
    with open(checkout / "patches" / "series", "a") as s:
        s.write(name + "\n")
    # from scratch: kafka/ is rebuilt from the artifacts and the series
    shutil.rmtree(tree)
    run([str(checkout / "build.sh")], timeout=1200)
    assert git(tree, "log", "-1", "--format=%s") == PROBE_SUBJECT
    assert git(tree, "log", "--reverse", "--format=%s", "upstream..HEAD").splitlines()[-1] == PROBE_SUBJECT
    assert git(tree, "log", "-1", "--format=%s", "upstream").startswith("Apache Kafka %s" % KAFKA_VERSION)
    assert git(tree, "status", "--porcelain") == ""
    changed = git(tree, "diff", "--name-only", "HEAD~1", "HEAD")
    assert changed == PROBE
    jar = checkout / "build" / "kafka-modules" / "clients" / ("kafka-clients-%s.jar" % DIST_VERSION)
    listing = run(["unzip", "-Z1", str(jar)]).stdout.split()
    assert "org/apache/kafka/common/utils/SeriesProbe.class" in listing
    dist_jar = next((checkout / "build" / "dist").glob("*/libs/kafka-clients-%s.jar" % DIST_VERSION))
    assert "org/apache/kafka/common/utils/SeriesProbe.class" in run(["unzip", "-Z1", str(dist_jar)]).stdout.split()
    # the probe's commit sits directly on the real series, which re-materializing
    # reproduced commit for commit (fixed dates and committer: same ids as before)
    assert git(tree, "rev-parse", "HEAD~1") == base


@full_only   # after the test above, whose probe patch this one's hunk does not match
def test_patch_that_does_not_apply_stops_the_build(checkout):
    tree = checkout / "kafka"
    last = git(tree, "log", "-1", "--format=%H")
    broken = checkout / "patches" / "0999-KAFKA-00001-broken.patch"
    broken.write_text(
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        "From: Probe <probe@localhost>\nDate: Sat, 1 Jan 2000 00:00:00 +0000\n"
        "Subject: [PATCH] KAFKA-00001: A patch whose context is not in 4.3.1\n\n---\n"
        " %s | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\n"
        "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n"
        "@@ -3,3 +3,3 @@ package org.apache.kafka.common.utils;\n"
        " public final class SeriesProbe {\n"
        "-    public static final String VALUE = \"this line is not there\";\n"
        "+    public static final String VALUE = \"changed\";\n"
        " }\n--\n2.39.5\n\n" % ((PROBE,) * 5))
    with open(checkout / "patches" / "series", "a") as s:
        s.write(broken.name + "\n")
    p = subprocess.run([str(checkout / "build.sh")], capture_output=True, text=True, timeout=600)
    assert p.returncode != 0
    err = p.stderr
    assert "patch %s" % broken.name in err and "does not apply" in err, err[-3000:]
    assert "file %s, hunk at line 3" % PROBE in err, err[-3000:]
    # kafka/ stays at the last patch that applied, clean
    assert git(tree, "log", "-1", "--format=%H") == last
    assert git(tree, "status", "--porcelain") == ""
    assert not (tree / ".git" / "rebase-apply").exists()


def series():
    names = []
    for line in (ROOT / "patches" / "series").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def header(patch):
    """The From and Subject of a git format-patch file (the subject unfolded, without [PATCH n/m])."""
    text = (ROOT / "patches" / patch).read_text()
    head = text.split("\n\n", 1)[0]
    unfolded = re.sub(r"\n[ \t]+", " ", head)
    fields = dict(re.findall(r"^(From|Subject): (.*)$", unfolded, re.M))
    return fields["From"], re.sub(r"^\[PATCH[^\]]*\] ", "", fields["Subject"]), text


def test_series_is_numbered_in_order_with_one_author_and_short_subjects():
    names = series()
    assert names, "patches/series lists no patch"
    on_disk = sorted(p.name for p in (ROOT / "patches").glob("*.patch"))
    assert on_disk == sorted(names), "patches/ and patches/series differ"
    authors = set()
    for i, name in enumerate(names, 1):
        assert name.startswith("%04d-" % i), "%s is #%d in the series" % (name, i)
        author, subject, _ = header(name)
        authors.add(author)
        assert len(subject) < 72, "subject of %s is %d characters" % (name, len(subject))
        # a ticket when there is one; a patch with no KIP or JIRA ticket says what it does without a prefix
        assert re.match(r"((KIP-\d+|KAFKA-\d+): )?[A-Z]\S", subject), subject
    assert authors == {"Kafka compression distribution <build@localhost>"}, authors


# how an upstream bug fix or backport is labelled: upstream's own prefixes, or the pull request it backports
UPSTREAM_FIX = re.compile(r"(MINOR|KAFKA-\d+): |Backport apache/kafka#\d+ ")


def test_upstream_fixes_then_kip390_come_first_and_apply_to_pristine_upstream():
    """Upstream bug fixes and backports stand first, labelled as what they are (MINOR:, KAFKA-NNNN: or Backport
    apache/kafka#N), then the KIP-390 cleaner feature; none of them uses KIP-1121's classes, and in series order they
    apply to pristine 4.3.1 without the rest of the series."""
    names = series()
    subjects = [header(n)[1] for n in names]
    fixes = next((i for i, s in enumerate(subjects) if not UPSTREAM_FIX.match(s)), len(subjects))
    assert fixes > 0, "the series does not start with an upstream fix: %s" % subjects[0]
    kip390 = next((i for i, s in enumerate(subjects[fixes:], fixes) if not s.startswith("KIP-390: ")), len(subjects))
    assert kip390 > fixes, "KIP-390 does not follow the upstream fixes: %s" % subjects[fixes]
    later = [s for s in subjects[kip390:] if UPSTREAM_FIX.match(s) or s.startswith("KIP-390: ")]
    assert not later, "upstream fixes and KIP-390 must come first: %s" % later
    kip390 = names[:kip390]
    for name in kip390:
        added = [l for l in header(name)[2].splitlines() if l.startswith("+")]
        for symbol in ("CompressionProviders", "ProviderCompression", "CompressionService"):
            assert not any(symbol in l for l in added), "%s uses KIP-1121's %s" % (name, symbol)
    tree = ROOT / "kafka"
    if not (tree / ".git").is_dir():
        pytest.skip("kafka/ is not materialized (./build.sh source)")
    index = BUILD / ("series-check-%d.index" % os.getpid())
    env = dict(os.environ, GIT_INDEX_FILE=str(index))
    try:
        run(["git", "-C", str(tree), "read-tree", "upstream"], env=env)
        for name in kip390:
            run(["git", "-C", str(tree), "apply", "--cached", str(ROOT / "patches" / name)], env=env)
    finally:
        index.unlink(missing_ok=True)


def changed_lines(numstat):
    """The lines added and removed in git's --numstat output."""
    return sum(int(added) + int(removed) for added, removed, _ in (l.split("\t", 2) for l in numstat.splitlines()))


def test_series_changes_each_line_about_once():
    """A reviewer reads the series once: no patch reworks what an earlier one added, so the lines the patches change
    add up to at most 1.1x the net diff from pristine 4.3.1 (a series that adds a design and then replaces it reads
    both); and each patch stays reviewable, at most about 500 changed lines."""
    tree = ROOT / "kafka"
    if not (tree / ".git").is_dir():
        pytest.skip("kafka/ is not materialized (./build.sh source)")
    # git apply --numstat counts a patch without applying it; from kafka/, where the patch's paths are rooted
    per_patch = {name: changed_lines(run(["git", "-C", str(tree), "apply", "--numstat",
                                          str(ROOT / "patches" / name)]).stdout)
                 for name in series()}
    net = changed_lines(run(["git", "-C", str(tree), "diff", "--numstat", "upstream", "HEAD"]).stdout)
    total = sum(per_patch.values())
    assert total <= 1.1 * net, "the patches change %d lines for a net diff of %d (%.2fx)" % (total, net, total / net)
    large = {n: c for n, c in per_patch.items() if c > 550}
    assert not large, "patches over about 500 changed lines: %s" % large


ITERATOR = re.compile(r"CloseableIterator<Record>\s+(streamingIterator|skipKeyValueIterator)\s*\(")


def test_record_layer_declares_no_more_iterators_than_upstream():
    """How a batch is read (buffer supplier, the thread's providers, the bound on a record's size) travels in one
    DecompressionContext rather than in overloads: the clients' main code declares streamingIterator() and
    skipKeyValueIterator() no more often than upstream 4.3.1 does (7; each overload multiplies by the
    implementations), and none of them takes a BufferSupplier, which would read without the thread's providers."""
    tree = ROOT / "kafka"
    if not (tree / ".git").is_dir():
        pytest.skip("kafka/ is not materialized (./build.sh source)")
    found = ["%s: %s" % (path.relative_to(tree), line.strip())
             for path in sorted((tree / "clients" / "src" / "main").rglob("*.java"))
             for line in path.read_text().splitlines() if ITERATOR.search(line)]
    upstream = run(["git", "-C", str(tree), "grep", "-E", ITERATOR.pattern.replace(r"\s", "[[:space:]]"),
                    "upstream", "--", "clients/src/main"], check=False).stdout.splitlines()
    assert len(upstream) == 7, "upstream 4.3.1's declarations, counted the same way: %s" % upstream
    assert len(found) <= len(upstream), "%d declarations:\n%s" % (len(found), "\n".join(found))
    assert not [f for f in found if "BufferSupplier" in f], "\n".join(found)


# Where the patched main code reads or writes batches with the built-in codecs on purpose (ThreadProviders.NONE,
# ProviderSet.NONE, or a DecompressionContext of a buffer supplier alone), and how often: anywhere else the
# owner's providers must be passed. Declarations and javadoc do not count.
BUILT_IN_ON_PURPOSE = {
    # the empty set's threads' handle, and a one-argument DecompressionContext, which says so
    "clients/src/main/java/org/apache/kafka/common/compress/ProviderSet.java": 1,
    "clients/src/main/java/org/apache/kafka/common/record/internal/DecompressionContext.java": 1,
    # upstream's Iterable view of a batch (for-each), and offsetOfMaxTimestamp: no reading thread to ask
    "clients/src/main/java/org/apache/kafka/common/record/internal/DefaultRecordBatch.java": 1,
    "clients/src/main/java/org/apache/kafka/common/record/internal/RecordBatch.java": 1,
    # a share consumer loads no providers (KafkaShareConsumer refuses the settings)
    "clients/src/main/java/org/apache/kafka/clients/consumer/internals/ShareCompletedFetch.java": 1,
    # ListOffsets by timestamp, local and remote: a few records of one batch, on a thread without providers
    "clients/src/main/java/org/apache/kafka/common/record/internal/FileRecords.java": 1,
    "storage/src/main/java/org/apache/kafka/server/log/remote/storage/RemoteLogManager.java": 1,
    # upstream's RequestLocal factories (coordinators' and tests' appends) say they use the built-in codecs
    "server-common/src/main/java/org/apache/kafka/server/common/RequestLocal.java": 2,
    # upstream's test constructors of CleanerConfig
    "storage/src/main/java/org/apache/kafka/storage/internals/log/CleanerConfig.java": 1,
    # a broker before start-up and after shutdown; a controller's and the raft test server's handlers
    "core/src/main/scala/kafka/server/BrokerServer.scala": 2,
    "core/src/main/scala/kafka/server/ControllerServer.scala": 1,
    "core/src/main/scala/kafka/tools/TestRaftServer.scala": 1,
}
NONE = re.compile(r"\b(ThreadProviders|ProviderSet)\.NONE\b")


def built_in_uses(line):
    """ThreadProviders.NONE and ProviderSet.NONE in a line, and DecompressionContext.of() with one argument."""
    count = len(NONE.findall(line))
    for m in re.finditer(r"DecompressionContext\.of\(", line):
        depth, i = 1, m.end()
        while i < len(line) and depth:
            depth += {"(": 1, ")": -1}.get(line[i], 0)
            if depth == 1 and line[i] == ",":
                break
            i += 1
        count += depth == 0
    return count


def test_main_code_reads_without_providers_only_where_listed():
    """No overload or default drops an owner's providers: the main code that reads or writes batches with the
    built-in codecs does so explicitly, in the places BUILT_IN_ON_PURPOSE lists with their reasons."""
    tree = ROOT / "kafka"
    if not (tree / ".git").is_dir():
        pytest.skip("kafka/ is not materialized (./build.sh source)")
    listed = run(["git", "-C", str(tree), "grep", "-l", "-E", r"(ThreadProviders|ProviderSet)\.NONE|DecompressionContext\.of\(",
                  "HEAD", "--", "*/src/main/*"], check=False).stdout.split()
    found = {}
    for name in listed:
        path = name.split(":", 1)[1]
        code = [line for line in (tree / path).read_text().splitlines()
                if not line.strip().startswith(("*", "/*", "//"))]
        count = sum(built_in_uses(line) for line in code)
        if count:
            found[path] = count
    assert found == BUILT_IN_ON_PURPOSE
