#!/usr/bin/env python3
"""summarize.py SUITE JUNIT_XML: per-format counts, then the suite's line

    sharing/SUITE: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the expected
failures of expected-failures.txt, which the per-format lines show apart
as xfailed). Exits 1 when something failed or the report is missing or has
no test."""

import re
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import junit_summary  # noqa: E402  (interop/junit_summary.py)

FORMATS = ("parquet", "delta", "auto")


def fmt_of(case):
    m = re.search(r"\[(.*)\]$", case.get("name", ""))
    return m.group(1) if m and m.group(1) in FORMATS else "other"


def main():
    suite, path = sys.argv[1], sys.argv[2]
    return junit_summary.summarize(f"sharing/{suite}", suite, path, fmt_of, [*FORMATS, "other"])


if __name__ == "__main__":
    sys.exit(main())
