#!/usr/bin/env python3
"""Reads the JUnit console launcher's XML reports (legacy format) for tests/upstream/gate.sh.

  reports.py failed DIR             one "fully.qualified.Class#method" per failed test method
  reports.py passed DIR             the same for test methods none of whose invocations failed
  reports.py counts DIR             "tests failed skipped" over the reports in DIR
"""
import glob
import re
import sys
import xml.etree.ElementTree as ET


def testcases(directory):
    for path in sorted(glob.glob(glob.escape(directory) + "/TEST-*.xml")):
        for case in ET.parse(path).getroot().iter("testcase"):
            yield case


def method_of(case):
    # "testFoo()", "testFoo(boolean)[2]", "testFoo(GroupProtocol).groupProtocol=CLASSIC", JUnit 4 "testFoo[0]"
    name = re.split(r"[(\[]", case.get("name", ""), maxsplit=1)[0].strip()
    return f"{case.get('classname', '')}#{name}"


def failed(case):
    return case.find("failure") is not None or case.find("error") is not None


def main():
    what, directory = sys.argv[1], sys.argv[2]
    if what == "failed":
        names = {method_of(c) for c in testcases(directory) if failed(c)}
    elif what == "passed":
        # a method passes only if none of its invocations failed: one parameter that passes does not excuse another
        cases = list(testcases(directory))
        failing = {method_of(c) for c in cases if failed(c)}
        names = {method_of(c) for c in cases if not failed(c) and c.find("skipped") is None} - failing
    elif what == "counts":
        cases = list(testcases(directory))
        print(len(cases), sum(failed(c) for c in cases), sum(c.find("skipped") is not None for c in cases))
        return
    else:
        sys.exit(f"usage: {sys.argv[0]} failed|passed|counts DIR")
    for name in sorted(names):
        print(name)


if __name__ == "__main__":
    main()
