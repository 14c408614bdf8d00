#!/usr/bin/env python3
"""summarize.py SUITE JUNIT_XML: per-target counts, then the suite's line

    python/SUITE: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the expected
failures of expected-failures.txt, which the per-target lines show apart as
xfailed). Exits 1 when something failed or the
report is missing or has no test."""

import re
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import junit_summary  # noqa: E402  (interop/junit_summary.py)

TARGETS = ("embedded", "unified", "refserver", "nessie")


def target_of(case):
    name = case.get("name", "")
    m = re.search(r"\[(.*)\]$", name)
    if m:
        for part in m.group(1).split("-"):
            if part in TARGETS:
                return part
    if "oauth2" in name:
        return "policy"
    return "other"


def main():
    suite, path = sys.argv[1], sys.argv[2]
    return junit_summary.summarize(f"python/{suite}", suite, path, target_of, [*TARGETS, "policy", "other"])


if __name__ == "__main__":
    sys.exit(main())
