#!/usr/bin/env python3
"""summarize.py JUNIT_XML: per-area counts, then the suite's line

    sharing/spark: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the expected
failures of expected-failures.txt, which the per-area lines show apart as
xfailed). Exits 1 when something failed or the report is missing or has
no test."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import junit_summary  # noqa: E402  (interop/junit_summary.py)

AREAS = [("test_streaming", "streaming"), ("test_change_feed", "change feed"), ("_as_of", "time travel"),
         ("test_", "snapshot")]


def area(case):
    name = case.get("name", "")
    for marker, label in AREAS:
        if marker in name:
            return label
    return "other"


def main():
    return junit_summary.summarize("sharing/spark", "spark", sys.argv[1], area,
                                   [label for _, label in AREAS] + ["other"])


if __name__ == "__main__":
    sys.exit(main())
