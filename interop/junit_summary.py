"""The summary every pytest suite's summarize.py prints from its JUnit XML:
per-group counts, then the suite's line

    LABEL: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the strict
expected failures of expected-failures.txt, which the per-group lines show
apart as xfailed). Returns 1 when something failed or the report is missing
or has no test."""

import xml.etree.ElementTree as ET

KINDS = ("passed", "failed", "skipped", "xfailed")


def outcome(case):
    skipped = case.find("skipped")
    if case.find("failure") is not None or case.find("error") is not None:
        return "failed"
    if skipped is not None and skipped.get("type") == "pytest.xfail":
        return "xfailed"
    return "skipped" if skipped is not None else "passed"


def summarize(label, prefix, path, group_of, order):
    """Prints `  PREFIX[group] ...` per group (in order, then any other),
    then `LABEL: ...`; group_of(testcase element) names a case's group."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"{label}: no report ({e})")
        return 1
    counts = {}
    for case in root.iter("testcase"):
        c = counts.setdefault(group_of(case), dict.fromkeys(KINDS, 0))
        c[outcome(case)] += 1
    total = {k: sum(c[k] for c in counts.values()) for k in KINDS}
    for g in [*order, *sorted(set(counts) - set(order))]:
        if g in counts:
            c = counts[g]
            print(f"  {prefix}[{g}]  {c['passed']} passed  {c['failed']} failed  {c['skipped']} skipped"
                  f"  {c['xfailed']} xfailed")
    skipped = total["skipped"] + total["xfailed"]
    print(f"{label}: {total['passed']} passed, {total['failed']} failed, {skipped} skipped")
    return 1 if total["failed"] or not sum(total.values()) else 0
