#!/usr/bin/env python3
"""summarize.py JUNIT_XML: per-operation counts, then the suite's line

    uc/conformance: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the expected
failures of expected-failures.txt, which the per-operation lines show apart
as xfailed). A case's operation is read from its id's prefix (the ids of
test_conformance.py's CASES start with it). Exits 1 when something failed
or the report is missing or has no test."""

import re
import sys
import xml.etree.ElementTree as ET

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
    path = sys.argv[1]
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"uc/conformance: no report ({e})")
        return 1
    counts = {}
    for case in root.iter("testcase"):
        c = counts.setdefault(group(case), {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0})
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            c["failed"] += 1
        elif skipped is not None and skipped.get("type") == "pytest.xfail":
            c["xfailed"] += 1
        elif skipped is not None:
            c["skipped"] += 1
        else:
            c["passed"] += 1
    total = {k: sum(c[k] for c in counts.values()) for k in ("passed", "failed", "skipped", "xfailed")}
    for g in [op for _, op in PREFIXES] + ["spec readings", "other"]:
        if g in counts:
            c = counts[g]
            print(f"  uc[{g}]  {c['passed']} passed  {c['failed']} failed  {c['skipped']} skipped"
                  f"  {c['xfailed']} xfailed")
    skipped = total["skipped"] + total["xfailed"]
    print(f"uc/conformance: {total['passed']} passed, {total['failed']} failed, {skipped} skipped")
    return 1 if total["failed"] or not sum(total.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
