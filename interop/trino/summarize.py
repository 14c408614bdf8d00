#!/usr/bin/env python3
"""summarize.py JUNIT_XML TARGET...: one line per target asked for,

    trino/TARGET: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the strict
expected failures of expected-failures.txt), then any other target with a
failure. A target is the test's
parameter (embedded, refserver, nessie, direct-refserver, direct-nessie);
the OAuth2 tests are `policy`. Exits 1 when something failed, or a target
asked for ran no test, or the report is missing."""

import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from junit_summary import outcome  # noqa: E402  (interop/junit_summary.py)


def target_of(case):
    name = case.get("name", "")
    if name.startswith("test_oauth2"):
        return "policy"
    m = re.search(r"\[(.*)\]$", name)
    return m.group(1) if m else "other"


def main():
    path, targets = sys.argv[1], sys.argv[2:]
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        for t in targets:
            print(f"trino/{t}: no report ({e})")
        return 1
    counts = {}
    for case in root.iter("testcase"):
        c = counts.setdefault(target_of(case), {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0})
        c[outcome(case)] += 1
    rc = 0
    # The targets asked for, then any other group only when something of
    # it failed (a target not asked for only skips).
    others = sorted(t for t in set(counts) - set(targets) if counts[t]["failed"])
    for t in [*targets, *others]:
        c = counts.get(t, {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0})
        if c["failed"] or not c["passed"] + c["xfailed"]:
            rc = 1
        print(f"  trino[{t}]  {c['passed']} passed  {c['failed']} failed  {c['skipped']} skipped"
              f"  {c['xfailed']} xfailed")
        print(f"trino/{t}: {c['passed']} passed, {c['failed']} failed, {c['skipped'] + c['xfailed']} skipped")
    return rc


if __name__ == "__main__":
    sys.exit(main())
