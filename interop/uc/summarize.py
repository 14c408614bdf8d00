#!/usr/bin/env python3
"""summarize.py JUNIT_XML: per-operation counts, then the suite's line

    uc/conformance: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the expected
failures of expected-failures.txt, which the per-operation lines show apart
as xfailed). A case's operation is read from its id's prefix (the ids of
test_conformance.py's CASES start with it). Exits 1 when something failed
or the report is missing or has no test."""

import re
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import junit_summary  # noqa: E402  (interop/junit_summary.py)

# Longest prefix first.
PREFIXES = [
    ("path-credentials", "getTemporaryPathCredentials"),
    ("staging-credentials", "getStagingTableCredentials"),
    ("staging", "createStagingTable"),
    ("credentials", "getTableCredentials"),
    ("config", "getConfig"),
    ("create", "createTable"),
    ("load", "loadTable"),
    ("exists", "tableExists"),
    ("delete", "deleteTable"),
    ("update", "updateTable"),
    ("rename", "renameTable"),
    ("metrics", "reportMetrics"),
]


def group(case):
    name = case.get("name", "")
    m = re.match(r"test_conformance\[(.*)\]$", name)
    if not m:
        return "spec readings" if name.startswith("test_spec_readings") else "other"
    for prefix, op in PREFIXES:
        if m.group(1).startswith(prefix):
            return op
    return "other"


def main():
    return junit_summary.summarize("uc/conformance", "uc", sys.argv[1], group,
                                   [op for _, op in PREFIXES] + ["spec readings", "other"])


if __name__ == "__main__":
    sys.exit(main())
