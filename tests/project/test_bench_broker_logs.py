"""bench/benchlib/brokers.py reads a broker's log files across log4j2's hourly rolls (NAME.yyyy-MM-dd-HH): the bench
tables and the scale benchmark find the cleaner's lines in them, and a run that crosses the hour must find the lines
written before the roll too. Needs no build and no broker."""
import os
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
try:
    from benchlib.brokers import log_mark, log_text
finally:
    sys.path.remove(str(BENCH))


def roll(path, hour):
    """What log4j2's time-based policy does: the file renamed to NAME.yyyy-MM-dd-HH, a new one begun."""
    os.rename(path, "%s.2026-11-29-%02d" % (path, hour))
    path.write_text("")


def test_text_since_a_mark_follows_the_rolls(tmp_path):
    log = tmp_path / "log-cleaner.log"
    log.write_text("before the mark\n")
    mark = log_mark(str(log))
    with open(log, "a") as f:
        f.write("after the mark, rolled\n")
    roll(log, 1)
    log.write_text("in the second file, rolled\n")
    roll(log, 2)
    log.write_text("in the current file\n")
    assert log_text(str(log), mark) == "after the mark, rolled\nin the second file, rolled\nin the current file\n"


def test_text_since_a_mark_without_a_roll(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("earlier\n")
    roll(log, 0)
    log.write_text("before the mark\n")
    mark = log_mark(str(log))
    with open(log, "a") as f:
        f.write("after the mark\n")
    assert log_text(str(log), mark) == "after the mark\n"


def test_whole_text_oldest_first(tmp_path):
    log = tmp_path / "log-cleaner.log"
    log.write_text("first\n")
    roll(log, 3)
    log.write_text("second\n")
    assert log_text(str(log)) == "first\nsecond\n"
    assert log_text(str(tmp_path / "missing.log")) == ""
