#!/usr/bin/env python3
"""findings.py FINDINGS_JSONL [KIND ...]: what UC and lakegate answered each write
(and the reads that end in an error), as the markdown tables README.md
quotes (only the tables of the KINDs named: raw, unchecked, pyiceberg,
unlisted-read, read, orphans, status). test_uc_backend.py writes the file
(conftest.record)."""

import json
import sys


def cell(d):
    if d is None:
        return "(not run)"
    if "status" in d:
        what = d.get("type") or f'not an Iceberg error ({d.get("content_type", "").split(";")[0]})'
        out = f'{d["status"]} {what}: {d.get("message", "")}'
    else:
        out = f'{d.get("exception")}: {d.get("message", "")}'
    out = out.replace("\n", "\\n").replace("|", "\\|")
    return out if len(out) <= 160 else out[:157] + "..."


def main():
    rows, only = {}, set(sys.argv[2:])
    with open(sys.argv[1]) as f:
        for line in f:
            d = json.loads(line)
            rows.setdefault(d["kind"], {}).setdefault(d["op"], {})[d["target"]] = d
    titles = {
        "raw": "Raw HTTP writes (a client that does not check /v1/config's endpoints)",
        "unchecked": "PyIceberg 0.12 with its endpoint check bypassed (the write is sent)",
        "pyiceberg": "PyIceberg 0.12 as it is (it checks /v1/config's endpoints)",
        "unlisted-read": "Reads UC does not list",
        "read": "Reads of what is not there",
    }
    for kind, title in titles.items():
        if kind not in rows or (only and kind not in only):
            continue
        print(f"\n{title}:\n")
        print("| operation | UC directly | through lakegate |")
        print("| --- | --- | --- |")
        for op, by in rows[kind].items():
            req = (by.get("lakegate") or by.get("direct") or {}).get("request")
            name = f"{op} (`{req}`)" if req else op
            print(f"| {name} | {cell(by.get('direct'))} | {cell(by.get('lakegate'))} |")
    orphans = rows.get("orphans", {}).get("append", {})
    if orphans and (not only or "orphans" in only):
        last = orphans.get("direct") or orphans.get("lakegate")
        print(f"\nAfter the refused appends (PyIceberg writes data before its commit): {last['message']}")
    status = rows.get("status", {}).get("status", {}).get("lakegate")
    if status and (not only or "status" in only):
        print(f"\nlakegate's status of the catalog after the writes: `{status['message']}`")


if __name__ == "__main__":
    main()
