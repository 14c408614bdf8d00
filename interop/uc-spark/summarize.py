#!/usr/bin/env python3
"""summarize.py JUNIT_XML TARGET: per-area counts, then the suite's line

    uc-spark/TARGET: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips, among them the
steps skipped because a step they build on did not pass, and the expected
failures of expected-failures.txt, which the per-area lines show apart as
xfailed). Exits 1 when something failed or the report is missing or has
no test."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import junit_summary  # noqa: E402  (interop/junit_summary.py)

AREAS = [("TestManaged", "managed"), ("TestExternal", "external"), ("", "schema")]


def area(case):
    cls = case.get("classname", "")
    for marker, label in AREAS:
        if marker in cls:
            return label
    return "other"


def main():
    target = sys.argv[2]
    return junit_summary.summarize(f"uc-spark/{target}", target, sys.argv[1], area,
                                   [label for _, label in AREAS] + ["other"])


if __name__ == "__main__":
    sys.exit(main())
