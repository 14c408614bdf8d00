#!/usr/bin/env python3
"""summarize.py JUNIT_XML...: per-client counts, then the suite's line

    delta-clients: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the strict
expected failures of expected-failures.txt, which the per-client lines show
apart as xfailed). Exits 1 when something failed or a report is missing or
has no test."""

import os
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import junit_summary  # noqa: E402  (interop/junit_summary.py)

# A test's client, by the start of its name.
CLIENTS = (("test_uc_", "uc-api"), ("test_delta_api_", "uc-api"), ("test_deltars_", "delta-rs"),
           ("test_duckdb_", "duckdb"), ("test_daft_", "daft"), ("test_sdk_", "uc-sdk"),
           ("test_pyiceberg_", "pyiceberg"), ("test_sharing_", "sharing"), ("test_fresh", "freshness"))
ORDER = list(dict.fromkeys(c for _, c in CLIENTS))


def client_of(case):
    name = case.get("name", "")
    return next((c for prefix, c in CLIENTS if name.startswith(prefix)), "other")


def merged(paths):
    """One JUnit file of every case in paths (each run of pytest wrote one)."""
    root = ET.Element("testsuites")
    for p in paths:
        for case in ET.parse(p).getroot().iter("testcase"):
            root.append(case)
    fd, out = tempfile.mkstemp(suffix=".xml")
    os.close(fd)
    ET.ElementTree(root).write(out)
    return out


def main():
    try:
        path = merged(sys.argv[1:])
    except (OSError, ET.ParseError) as e:
        print(f"delta-clients: no report ({e})")
        return 1
    try:
        return junit_summary.summarize("delta-clients", "delta-clients", path, client_of, [*ORDER, "other"])
    finally:
        os.remove(path)


if __name__ == "__main__":
    sys.exit(main())
