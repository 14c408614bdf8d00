"""Iceberg REST smoke run, the same requests through lakegate and directly
against the catalog behind it, and what differs between the two.

Usage: smoke.py GATEWAY_URL GATEWAY_WAREHOUSE DIRECT_URL DIRECT_WAREHOUSE
  (URLs without /v1; a warehouse may be ''). Standard library only.

Both runs use the same names, one after the other (gateway first), each
dropping what it made, so their answers can be compared once volatile
parts (UUIDs, timestamps, metadata file names) are masked. Exit status 1
when a step failed its expected status on either side; differences are
printed, and counted, but do not fail the run on their own.
"""

import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

SEP = "%1F"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
VOLATILE = {"last-updated-ms", "timestamp-ms", "snapshot-id", "current-snapshot-id",
            "sequence-number", "last-sequence-number", "version-id", "current-version-id"}

SCHEMA = {"type": "struct", "schema-id": 0, "fields": [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "data", "required": False, "type": "string"}]}


def request(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            status, headers, raw = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        status, headers, raw = e.code, e.headers, e.read()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw.decode(errors="replace")
    return status, headers, parsed


def mask(v, urls):
    if isinstance(v, dict):
        return {k: ("<v>" if k in VOLATILE else mask(x, urls)) for k, x in v.items()}
    if isinstance(v, list):
        return [mask(x, urls) for x in v]
    if isinstance(v, str):
        for u, name in urls:
            v = v.replace(u, name)
        v = UUID.sub("<uuid>", v)
        v = re.sub(r"[0-9a-f]{64,}", "<hash>", v)  # Nessie commit ids
        v = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:[\d.]+Z", "<time>", v)
        v = re.sub(r"/metadata/\d{5}-<uuid>\.metadata\.json", "/metadata/<file>", v)
        return v
    return v


def client_config(base, warehouse):
    """What an Iceberg client does first: GET /v1/config, then merge."""
    q = "?" + urllib.parse.urlencode({"warehouse": warehouse}) if warehouse else ""
    status, headers, body = request("GET", base + "/v1/config" + q)
    if status != 200 or not isinstance(body, dict):
        raise SystemExit(f"GET {base}/v1/config{q}: HTTP {status} {body}")
    merged = dict(body.get("defaults") or {})
    merged.update(body.get("overrides") or {})
    return status, body, merged


def steps():
    ns, child = "lg_smoke", "lg_smoke" + SEP + "child"
    t = f"/namespaces/{ns}/tables"
    v = f"/namespaces/{ns}/views"
    view = {"name": "v1", "schema": SCHEMA, "properties": {},
            "view-version": {"version-id": 1, "timestamp-ms": 1700000000000, "schema-id": 0,
                             "summary": {"engine-name": "smoke"}, "default-namespace": [ns],
                             "representations": [{"type": "sql", "sql": "select 1 as id",
                                                  "dialect": "spark"}]}}
    return [
        ("create namespace", "POST", "/namespaces", {"namespace": [ns], "properties": {"owner": "smoke"}}, 200),
        ("create namespace again", "POST", "/namespaces", {"namespace": [ns], "properties": {}}, 409),
        ("load namespace", "GET", f"/namespaces/{ns}", None, 200),
        ("namespace exists (HEAD)", "HEAD", f"/namespaces/{ns}", None, 204),
        ("update namespace properties", "POST", f"/namespaces/{ns}/properties",
         {"updates": {"k": "v"}, "removals": ["owner"]}, 200),
        ("create nested namespace", "POST", "/namespaces", {"namespace": [ns, "child"]}, 200),
        ("list namespaces", "GET", "/namespaces", None, 200),
        ("list child namespaces", "GET", "/namespaces?parent=" + ns, None, 200),
        ("load nested namespace", "GET", f"/namespaces/{child}", None, 200),
        ("create table", "POST", t, {"name": "t1", "schema": SCHEMA, "stage-create": False,
                                     "properties": {"p": "1"}}, 200),
        ("create table again", "POST", t, {"name": "t1", "schema": SCHEMA, "stage-create": False}, 409),
        ("create table in nested namespace", "POST", f"/namespaces/{child}/tables",
         {"name": "t9", "schema": SCHEMA, "stage-create": False}, 200),
        ("load table", "GET", t + "/t1", None, 200),
        ("load table, snapshots=refs", "GET", t + "/t1?snapshots=refs", None, 200),
        ("table exists (HEAD)", "HEAD", t + "/t1", None, 204),
        ("list tables", "GET", t, None, 200),
        ("commit: set property", "POST", t + "/t1",
         {"requirements": [{"type": "assert-create"}], "updates": []}, 409),
        ("commit: set property (ok)", "POST", t + "/t1",
         {"requirements": [], "updates": [{"action": "set-properties", "updates": {"q": "2"}}]}, 200),
        ("rename table", "POST", "/tables/rename",
         {"source": {"namespace": [ns], "name": "t1"}, "destination": {"namespace": [ns], "name": "t2"}}, 204),
        ("load renamed-away table", "GET", t + "/t1", None, 404),
        ("table missing (HEAD)", "HEAD", t + "/t1", None, 404),
        ("load table in missing namespace", "GET", "/namespaces/lg_nope/tables/x", None, 404),
        ("create view", "POST", v, view, 200),
        ("list views", "GET", v, None, 200),
        ("load view", "GET", v + "/v1", None, 200),
        ("drop view", "DELETE", v + "/v1", None, 204),
        ("drop namespace not empty", "DELETE", f"/namespaces/{ns}", None, 409),
        ("drop table", "DELETE", t + "/t2", None, 204),
        ("drop table again", "DELETE", t + "/t2", None, 404),
        ("drop nested table", "DELETE", f"/namespaces/{child}/tables/t9?purgeRequested=true", None, 204),
        ("drop nested namespace", "DELETE", f"/namespaces/{child}", None, 204),
        ("drop namespace", "DELETE", f"/namespaces/{ns}", None, 204),
        ("load dropped namespace", "GET", f"/namespaces/{ns}", None, 404),
    ]


def run(label, base, warehouse, urls):
    _, cfg_body, merged = client_config(base, warehouse)
    root = merged.get("uri", base).rstrip("/")
    prefix = merged.get("prefix")
    api = root + "/v1" + ("/" + prefix if prefix else "")
    print(f"[{label}] config -> uri={merged.get('uri')} prefix={prefix}; requests go to {api}")
    out = [("config", 200, 200, mask(cfg_body, urls), {})]
    for name, method, path, body, want in steps():
        status, headers, resp = request(method, api + path, body)
        hdr = {"content-type": (headers.get("Content-Type") or "").lower().replace(" ", "")}
        out.append((name, want, status, mask(resp, urls), hdr))
    return cfg_body, merged, out


def main():
    gw, gw_wh, direct, direct_wh = sys.argv[1:5]
    urls = [(gw.rstrip("/"), "<gateway>"), (direct.rstrip("/"), "<direct>")]
    # The catalog's own root (http://host:port) is also masked: Nessie names
    # its other APIs there.
    m = re.match(r"(https?://[^/]+)", direct)
    urls.append((m.group(1), "<direct-root>"))
    m = re.match(r"(https?://[^/]+)", gw)
    urls.append((m.group(1), "<gateway-root>"))

    gcfg, gmerged, g = run("gateway", gw, gw_wh, urls)
    dcfg, dmerged, d = run("direct", direct, direct_wh, urls)

    failed = differ = 0
    print()
    print(f"{'step':38} {'want':>4} {'gw':>4} {'direct':>6}  same body")
    for (name, want, gs, gb, gh), (_, _, ds, db, dh) in zip(g, d):
        same = gb == db and gh == dh
        bad = gs != want or ds != want
        failed += bad
        if name == "config":
            same = None
        print(f"{name:38} {want:>4} {gs:>4} {ds:>6}  {'-' if same is None else ('yes' if same else 'NO')}"
              f"{'   <-- unexpected status' if bad else ''}")
        if same is False or (gs != ds):
            differ += 1
            if gh != dh:
                print(f"      headers: gateway {gh} / direct {dh}")
            if gb != db:
                print("      gateway: " + json.dumps(gb, sort_keys=True)[:1500])
                print("      direct : " + json.dumps(db, sort_keys=True)[:1500])

    print()
    print("config, client's merged view (defaults + overrides), gateway vs direct:")
    keys = sorted(set(gmerged) | set(dmerged))
    for k in keys:
        a, b = gmerged.get(k), dmerged.get(k)
        if a != b:
            print(f"  {k:28} gateway={a!r:45} direct={b!r}")
    leaks = {k: v for k, v in gmerged.items()
             if isinstance(v, str) and urls[2][0] in v}
    if leaks:
        print("gateway config names the catalog's own address (a client could bypass lakegate):")
        for k, v in sorted(leaks.items()):
            print(f"  {k} = {v}")
    print(f"endpoints: gateway advertises {len(gcfg.get('endpoints') or [])}, "
          f"direct {len(dcfg.get('endpoints') or [])} (none means the spec's defaults)")
    missing = [e for e in (gcfg.get("endpoints") or []) if "views" in e]
    if not missing:
        print("  gateway advertises no view endpoint (clients then refuse view calls,"
              " even with view-endpoints-supported=true)")
    print()
    print(f"{len(g) - failed} passed, {failed} failed")
    print(f"differences gateway vs direct: {differ}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
