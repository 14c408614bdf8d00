#!/usr/bin/env python3
"""summarize.py JUNIT_XML: per-area counts, then the suite's line

    sharing/oracle: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the expected
failures of expected-failures.txt, which the per-area lines show apart as
xfailed). Exits 1 when something failed or the report is missing or has
no test."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import junit_summary  # noqa: E402  (interop/junit_summary.py)

AREAS = [("test_list", "listings"), ("test_changes", "change feed"), ("test_rows", "rows"),
         ("test_limit", "rows"), ("test_metadata", "metadata"), ("_raw", "raw protocol"),
         ("version", "versions")]


def area(case):
    name = case.get("name", "")
    for marker, label in AREAS:
        if marker in name:
            return label
    return "other"


def main():
    order = []
    for _, label in AREAS:
        if label not in order:
            order.append(label)
    return junit_summary.summarize("sharing/oracle", "oracle", sys.argv[1], area, order + ["other"])


if __name__ == "__main__":
    sys.exit(main())
