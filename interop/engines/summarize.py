#!/usr/bin/env python3
"""summarize.py JUNIT_XML: per-engine counts, then the suite's line

    engines: N passed, N failed, N skipped

(failed counts failures and errors; skipped counts skips and the strict
expected failures of expected-failures.txt, which the per-engine lines
show apart as xfailed). Exits 1 when something failed or the report is
missing or has no test."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import junit_summary  # noqa: E402  (interop/junit_summary.py)

ENGINES = ["clickhouse", "duckdb", "icerust", "daft"]


def engine_of(case):
    """The engine a case is about: its `engine` parameter (test_write[embedded-duckdb])
    or its name (test_duckdb_ctas[policy])."""
    name = case.get("name", "")
    m = re.search(r"\[[^-\]]+-([a-z]+)\]$", name)
    if m and m.group(1) in ENGINES:
        return m.group(1)
    return next((e for e in ENGINES if name.startswith(f"test_{e}_")), "other")


if __name__ == "__main__":
    sys.exit(junit_summary.summarize("engines", "engines", sys.argv[1], engine_of, ENGINES))
