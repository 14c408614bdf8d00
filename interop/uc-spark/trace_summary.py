"""Markdown of a ucproxy.py log: the calls per statement, then each endpoint once.

    python trace_summary.py LOG.jsonl [TITLE]  >calls.md

Per label (the statement a test or trace script marked), the ordered
`METHOD path status` list, consecutive repeats folded as `×N`. Then each
distinct endpoint (method, path with names replaced by {catalog},
{schema}, {table}, {full_name}; and status) with its first request and
response in full.
"""

import json
import re
import sys

UC = "/api/2.1/unity-catalog"


def template(path):
    """The endpoint of a path: names replaced by placeholders."""
    p = path
    m = re.match(rf"^{UC}/delta/v1/catalogs/[^/]+/schemas/[^/]+(/.*)?$", p)
    if m:
        rest = m.group(1) or ""
        rest = re.sub(r"^/tables/[^/]+", "/tables/{table}", rest)
        rest = re.sub(r"^/staging-tables/[^/]+", "/staging-tables/{table_id}", rest)
        return f"{UC}/delta/v1/catalogs/{{catalog}}/schemas/{{schema}}{rest}"
    p = re.sub(rf"^{UC}/(tables|schemas|catalogs)/[^/]+$",
               lambda m: f"{UC}/{m.group(1)}/" + {"tables": "{full_name}", "schemas": "{full_name}",
                                                  "catalogs": "{name}"}[m.group(1)], p)
    return p


def fmt_body(text):
    if not text:
        return "(empty)"
    try:
        return json.dumps(json.loads(text), indent=1, ensure_ascii=False)
    except ValueError:
        return text


def main():
    path = sys.argv[1]
    title = sys.argv[2] if len(sys.argv) > 2 else path
    recs = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    out = [f"# {title}", ""]
    out.append("## Calls per statement")
    out.append("")
    out.append("Paths under `/api/2.1/unity-catalog`; `delta/v1/...` is the UC Delta REST API, "
               "the rest UC's main API. Consecutive identical calls are folded (`×N`). "
               "Labels are set just before a statement runs; a call that Delta makes "
               "asynchronously after a statement (the metrics report) can land under the next one.")
    out.append("")
    label, group = None, []

    def flush():
        if label is None:
            return
        out.append(f"### {label}")
        out.append("")
        if not group:
            out.append("(no call)")
        prev, n = None, 0
        lines = []
        for r in group:
            q = f"?{r['query']}" if r["query"] else ""
            key = f"{r['method']} {r['path'].replace(UC, '', 1)}{q} → {r['status']}"
            if key == prev:
                n += 1
                continue
            if prev is not None:
                lines.append(f"{prev}" + (f" ×{n}" if n > 1 else ""))
            prev, n = key, 1
        if prev is not None:
            lines.append(f"{prev}" + (f" ×{n}" if n > 1 else ""))
        for i, line in enumerate(lines, 1):
            out.append(f"{i}. `{line}`")
        out.append("")

    for r in recs:
        if r["label"] != label:
            flush()
            label, group = r["label"], []
        group.append(r)
    flush()

    out.append("## Endpoints (first example of each)")
    out.append("")
    seen = {}
    for r in recs:
        k = (r["method"], template(r["path"]), r["status"])
        if k not in seen:
            seen[k] = r
    count = {}
    for r in recs:
        k = (r["method"], template(r["path"]), r["status"])
        count[k] = count.get(k, 0) + 1
    for (method, tpl, status), r in seen.items():
        out.append(f"### {method} {tpl.replace(UC, '', 1)} → {status}  ({count[(method, tpl, status)]} calls)")
        out.append("")
        q = f"?{r['query']}" if r["query"] else ""
        out.append(f"Example from \"{r['label']}\": `{method} {r['path']}{q}`")
        out.append("")
        if r.get("request"):
            out.append("Request:")
            out.append("```json")
            out.append(fmt_body(r["request"]))
            out.append("```")
        out.append("Response:")
        out.append("```json")
        out.append(fmt_body(r.get("response")))
        out.append("```")
        out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
