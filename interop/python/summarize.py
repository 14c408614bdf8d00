#!/usr/bin/env python3
"""summarize.py SUITE JUNIT_XML: per-target counts, then the suite's line

    python/SUITE: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the expected
failures of expected-failures.txt, which the per-target lines show apart as
xfailed). Exits 1 when something failed or the
report is missing or has no test."""

import re
import sys
import xml.etree.ElementTree as ET

TARGETS = ("embedded", "refserver", "nessie")


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
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"python/{suite}: no report ({e})")
        return 1
    counts = {}
    for case in root.iter("testcase"):
        c = counts.setdefault(target_of(case), {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0})
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
    for t in (*TARGETS, "policy", "other"):
        if t in counts:
            c = counts[t]
            print(f"  {suite}[{t}]  {c['passed']} passed  {c['failed']} failed  {c['skipped']} skipped"
                  f"  {c['xfailed']} xfailed")
    skipped = total["skipped"] + total["xfailed"]
    print(f"python/{suite}: {total['passed']} passed, {total['failed']} failed, {skipped} skipped")
    return 1 if total["failed"] or not sum(total.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
