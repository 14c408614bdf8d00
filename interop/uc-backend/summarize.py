#!/usr/bin/env python3
"""summarize.py JUNIT_XML: per-target counts, then the suite's line

    uc-backend/lakegate: N passed, N failed, N skipped

`lakegate` are PyIceberg's calls through lakegate, `direct` the same
against UC's own Iceberg endpoint (the oracle), `compare` the tests that
put both answers side by side. Failed counts failures and errors; skipped
counts skips and the expected failures of expected-failures.txt, which the
per-target lines show apart as xfailed. Exits 1 when something failed or
the report is missing or has no test."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import junit_summary  # noqa: E402  (interop/junit_summary.py)

TARGETS = ("lakegate", "direct")
# Tests without a target parameter that only ask lakegate.
LAKEGATE_ONLY = ("test_keyed_write_refused_twice", "test_breaker_closed")


def target_of(case):
    name = case.get("name", "")
    m = re.search(r"\[(.*)\]$", name)
    if m:
        for part in m.group(1).split("-"):
            if part in TARGETS:
                return part
    if name.split("[")[0] in LAKEGATE_ONLY:
        return "lakegate"
    return "compare"


def main():
    return junit_summary.summarize("uc-backend/lakegate", "uc-backend", sys.argv[1], target_of,
                                   [*TARGETS, "compare"])


if __name__ == "__main__":
    sys.exit(main())
