#!/usr/bin/env python3
"""Reads one target's JUnit XML reports (JUnit's console launcher, legacy
format, any number of TEST-*.xml under REPORTS_DIR) and prints its summary.

usage: summarize.py TARGET REPORTS_DIR EXPECTED_FAILURES_FILE

Each of UC's Delta SDK test classes is one @Test walking many cases, so a
class stops at its first mismatch. For every failing class this prints
where (the test's own source line, and the harness line when it failed in
setUp) and the message (for a refused call: UC's client puts the status
and the body the server gave in it), marked expected or UNEXPECTED, then

    uc-sdk/TARGET: N passed, N failed, N skipped (expected failures: N, unexpected: N)

N failed counts every failing test (errors included), expected or not.

An entry of the expected-failures file (see its header) names a target and
a class and a regular expression; a failure is expected only when the
expression is found in its evidence line (`File.java:LINE: message`), so a
class that starts failing elsewhere or otherwise is UNEXPECTED until its
entry is updated. A listed class that passes is noted, not failed (as
interop/java does).

Exit status: 0 when every failure is expected, 1 when one is not, or when
there are no reports or no test ran.
"""

import glob
import os
import re
import sys
import xml.etree.ElementTree as ET

PACKAGE = "io.unitycatalog.server."
# A stack frame: at pkg.Class.method(File.java:LINE)
FRAME = re.compile(r"^\s*at ([\w.$]+)\.([\w$<>]+)\(([\w$]+\.java):(\d+)\)", re.M)


def load_expected(path, target):
    """{class: (regex, reason)} for the entries of PATH that name TARGET."""
    expected = {}
    reason = []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line:
                reason = []
                continue
            if line.startswith("#"):
                reason.append(line.lstrip("# "))
                continue
            head, sep, match = line.partition(" match: ")
            fields = head.split()
            if not sep or len(fields) != 2 or not match.strip():
                sys.exit(f"{path}:{n}: want `TARGETS Class match: REGEX`, got: {raw.rstrip()}")
            targets, cls = fields
            if target in targets.split(","):
                expected[cls] = (re.compile(match.strip()), " ".join(reason))
    return expected


def evidence(cls, element):
    """`File.java:LINE[ (setUp: File.java:LINE)]: message` for a failure."""
    text = element.text or ""
    message = " ".join((element.get("message") or "").split())
    # A wrapped exception (`throw new RuntimeException("...", e)`): the
    # innermost cause's message says what the server answered.
    sections = re.split(r"^Caused by: ", text, flags=re.M)
    if len(sections) > 1:
        cause = " ".join(sections[-1].split("\n\tat ", 1)[0].split())
        if cause and cause not in message:
            message = f"{message} <- {cause}"
    test_lines = []  # the class's own frames, innermost first
    harness_frame = None
    for m in FRAME.finditer(sections[0]):
        owner, _, file, line = m.groups()
        if not owner.startswith(PACKAGE):
            continue
        if owner.rsplit(".", 1)[-1].split("$")[0] == cls:
            test_lines.append((file, line))
        elif not test_lines and harness_frame is None and not owner.endswith(".TestUtils"):
            # The first frame in UC's test code that is not the assertion
            # helpers: where a harness (setUp, fixture) call failed.
            harness_frame = f"{file}:{line}"
    if test_lines:
        where = "%s:%s" % test_lines[0]
        # A helper of the class failed: also the line of the test that called it.
        if len(test_lines) > 1 and test_lines[-1][1] != test_lines[0][1]:
            where += f" (from line {test_lines[-1][1]})"
        if harness_frame:
            where += f" (via {harness_frame})"
    else:
        where = harness_frame or "?"
    return f"{where}: {message}"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    target, reports, expected_file = sys.argv[1:]
    expected = load_expected(expected_file, target)

    passed = failed = skipped = 0
    failures = []  # (class, evidence)
    ran = set()
    files = sorted(glob.glob(os.path.join(reports, "**", "TEST-*.xml"), recursive=True))
    for path in files:
        for tc in ET.parse(path).getroot().iter("testcase"):
            cls = tc.get("classname", "").rsplit(".", 1)[-1]
            ran.add(cls)
            bad = tc.find("failure")
            if bad is None:
                bad = tc.find("error")
            if bad is not None:
                failed += 1
                failures.append((cls, evidence(cls, bad)))
            elif tc.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1

    unexpected = 0
    failing = set()
    for cls, ev in failures:
        failing.add(cls)
        short = ev if len(ev) <= 600 else ev[:600] + " ..."
        entry = expected.get(cls)
        if entry and entry[0].search(ev):
            print(f"  expected   {cls}: {short}")
        else:
            unexpected += 1
            why = "" if not entry else f" (listed, but not matching /{entry[0].pattern}/)"
            print(f"  UNEXPECTED {cls}{why}: {short}")
    for cls in sorted((set(expected) & ran) - failing):
        print(f"  note: {cls} is listed as an expected failure for {target} but passed")

    print(f"uc-sdk/{target}: {passed} passed, {failed} failed, {skipped} skipped"
          f" (expected failures: {failed - unexpected}, unexpected: {unexpected})")
    if not files or passed + failed == 0:
        print(f"  no test reports in {reports}", file=sys.stderr)
        return 1
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
