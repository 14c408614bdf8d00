#!/usr/bin/env python3
"""Reads one target's surefire XML reports and prints its summary.

usage: summarize.py TARGET BACKEND REPORTS_DIR EXPECTED_FAILURES_FILE

Prints the failing tests (each marked expected or UNEXPECTED), then
`java/TARGET: N passed, N failed, N skipped` as the last line. N failed counts
every failing test (errors included), expected or not. Exit status: 0 when
every failure is listed for BACKEND in the expected-failures file, 1 when one
is not (or when there are no reports at all, or no test ran).

A test is named `Class.method` (simple class name, method without its
parameters), so an entry covers every parameterized invocation of a method;
`Class.*` covers every test of the class.
"""

import glob
import os
import re
import sys
import xml.etree.ElementTree as ET


def load_expected(path, backend):
    """{test: reason} for the lines of PATH that name BACKEND."""
    expected = {}
    reason = []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line:
                reason = []
                continue
            if line.startswith("#"):
                reason.append(line.lstrip("# "))
                continue
            fields = line.split("#", 1)[0].split()
            if len(fields) != 2:
                sys.exit(f"{path}: cannot read line: {raw.rstrip()}")
            backends, test = fields
            if backend in backends.split(","):
                expected[test] = " ".join(reason)
    return expected


def test_name(testcase):
    cls = testcase.get("classname", "").rsplit(".", 1)[-1]
    method = re.split(r"[(\[]", testcase.get("name", ""), maxsplit=1)[0]
    return f"{cls}.{method}", f"{cls}.{testcase.get('name', '')}"


def first_line(element):
    text = (element.get("message") or element.text or "").strip()
    text = " ".join(text.split())
    return text[:240]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    target, backend, reports, expected_file = sys.argv[1:]
    expected = load_expected(expected_file, backend)

    passed = failed = skipped = 0
    failures = []  # (test, full name, message)
    ran = set()
    files = sorted(glob.glob(os.path.join(reports, "TEST-*.xml")))
    for path in files:
        for tc in ET.parse(path).getroot().iter("testcase"):
            ran.add(test_name(tc)[0])
            bad = tc.find("failure")
            if bad is None:
                bad = tc.find("error")
            if bad is not None:
                failed += 1
                name, full = test_name(tc)
                failures.append((name, full, first_line(bad)))
            elif tc.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1

    def listed(name):
        cls = name.split(".", 1)[0]
        return name in expected or f"{cls}.*" in expected

    unexpected = 0
    failing_names = set()
    for name, full, message in failures:
        failing_names.add(name)
        if listed(name):
            print(f"  expected   {full}: {message}")
        else:
            unexpected += 1
            print(f"  UNEXPECTED {full}: {message}")
    for name in sorted((set(expected) & ran) - failing_names):
        print(f"  note: {name} is listed as an expected failure for {backend} but did not fail")
    if failures:
        print(f"  {failed - unexpected} expected failure(s), {unexpected} unexpected")

    print(f"java/{target}: {passed} passed, {failed} failed, {skipped} skipped")
    if not files or passed + failed == 0:
        print(f"  no test reports in {reports}", file=sys.stderr)
        return 1
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
