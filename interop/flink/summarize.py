#!/usr/bin/env python3
"""summarize.py JUNIT_XML TARGET...: one line per target,

    flink/TARGET: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the expected
failures of expected-failures.txt). Exits 1 when something failed, or the
report is missing or has no test of a listed target."""

import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import junit_summary  # noqa: E402  (interop/junit_summary.py)


def main():
    path, targets = sys.argv[1], sys.argv[2:]
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        for t in targets:
            print(f"flink/{t}: no report ({e})")
        return 1
    counts = {t: dict.fromkeys(junit_summary.KINDS, 0) for t in targets}
    for case in root.iter("testcase"):
        m = re.search(r"\[(.*)\]$", case.get("name", ""))
        if m and m.group(1) in counts:
            counts[m.group(1)][junit_summary.outcome(case)] += 1
    rc = 0
    for t in targets:
        c = counts[t]
        if c["failed"] or not sum(c.values()):
            rc = 1
        if c["xfailed"]:
            print(f"  flink[{t}]: {c['xfailed']} of the skipped are listed expected failures", file=sys.stderr)
        print(f"flink/{t}: {c['passed']} passed, {c['failed']} failed, {c['skipped'] + c['xfailed']} skipped")
    return rc


if __name__ == "__main__":
    sys.exit(main())
