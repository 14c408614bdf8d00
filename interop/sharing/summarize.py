#!/usr/bin/env python3
"""summarize.py SUITE JUNIT_XML: per-format counts, then the suite's line

    sharing/SUITE: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the expected
failures of expected-failures.txt, which the per-format lines show apart
as xfailed). Exits 1 when something failed or the report is missing or has
no test."""

import re
import sys
import xml.etree.ElementTree as ET

FORMATS = ("parquet", "delta", "auto")


def fmt_of(case):
    m = re.search(r"\[(.*)\]$", case.get("name", ""))
    return m.group(1) if m and m.group(1) in FORMATS else "other"


def main():
    suite, path = sys.argv[1], sys.argv[2]
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"sharing/{suite}: no report ({e})")
        return 1
    counts = {}
    for case in root.iter("testcase"):
        c = counts.setdefault(fmt_of(case), {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0})
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
    for f in (*FORMATS, "other"):
        if f in counts:
            c = counts[f]
            print(f"  {suite}[{f}]  {c['passed']} passed  {c['failed']} failed  {c['skipped']} skipped"
                  f"  {c['xfailed']} xfailed")
    skipped = total["skipped"] + total["xfailed"]
    print(f"sharing/{suite}: {total['passed']} passed, {total['failed']} failed, {skipped} skipped")
    return 1 if total["failed"] or not sum(total.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
