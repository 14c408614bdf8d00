"""Unity Catalog's Delta REST API (uc-delta-api.yaml) against lakegate_delta.

Every operation of the spec, through real HTTP: success paths and the
documented error paths. One table of cases (CASES); each case makes what it
needs (fresh tables with unique names, through the Delta API itself or
Iceberg REST), sends one request, and passes only when

  - SPEC.check accepts the answer (conftest.py: a status the spec lists for
    the operation, a body that validates against the declared schema, the
    declared headers, error code/type agreeing with the status),
  - the status is the one the case expects (and the error type, for errors),
  - and the case's own check of the content holds.

Setup and follow-up calls go through SPEC.check too. Success cases also
check that the request they send is valid per the spec, so a pass means a
spec-conforming client gets that answer.
"""

import uuid

import pytest

from conftest import BAD_REQUEST, CATALOG, NS, SPEC, UC, Call, unique

T = UC.tables()
NO_SCHEMA = unique("noschema")
NO_CATALOG = unique("nocatalog")


class Case:
    def __init__(self, id, op, call, status, error=None, check=None, valid_request=None, skip=None):
        self.id, self.op, self.call, self.skip = id, op, call, skip
        # the expected status (or statuses, where the spec allows more than one answer)
        self.status = (status,) if isinstance(status, int) else tuple(status)
        self.error = (error,) if isinstance(error, str) else error
        self.check = check
        # Success cases send spec-valid requests; error cases usually do not.
        self.valid_request = (min(self.status) < 300) if valid_request is None else valid_request


CASES = []


def case(*a, **kw):
    CASES.append(Case(*a, **kw))


def lt_of(call):
    return call.ctx["lt"]


def same_columns(c, call, body):
    assert body["metadata"]["columns"] == call.body["columns"]


def etag_header(c, resp, body):
    """lakegate sends the load response's etag as the ETag header too
    (docs/unity-delta.md, "Load response"; the spec itself declares no headers)."""
    assert resp.headers.get("ETag") == f'"{body["metadata"]["etag"]}"', resp.headers.get("ETag")


def credentials_for(op):
    def check(c, call, body):
        for cred in body["storage-credentials"]:
            assert cred["operation"] == op, cred
    return check


# --- getConfig

def config(pv="1.0", catalog=CATALOG):
    params = {}
    if catalog is not None:
        params["catalog"] = catalog
    if pv is not None:
        params["protocol-versions"] = pv
    return lambda c: Call("getConfig", "GET", "/config", params=params)


def check_config(c, call, body):
    assert body["protocol-version"] == "1.0"
    spec_endpoints = {f"{m} {p[len('/delta'):]}" for m, p, _ in SPEC.ops.values()}
    listed = set(body["endpoints"])
    assert listed <= spec_endpoints, f"not in the spec: {sorted(listed - spec_endpoints)}"
    served = {f"{m} {p[len('/delta'):]}" for op, (m, p, _) in SPEC.ops.items()
              if op not in ("getConfig", "getTemporaryPathCredentials")}
    assert served <= listed, f"not listed: {sorted(served - listed)}"


case("config-1.0", "getConfig", config("1.0"), 200, check=check_config)
case("config-1.1", "getConfig", config("1.1"), 200, check=check_config)
case("config-1.1,2.3", "getConfig", config("1.1,2.3"), 200, check=check_config)
case("config-2.0", "getConfig", config("2.0"), 400, BAD_REQUEST)
case("config-0.9", "getConfig", config("0.9"), 400, BAD_REQUEST)
case("config-not-a-version", "getConfig", config("abc"), 400, BAD_REQUEST)
case("config-major-only", "getConfig", config("1"), 400, BAD_REQUEST)
case("config-no-protocol-versions", "getConfig", config(None), 400, BAD_REQUEST)
case("config-no-catalog", "getConfig", config("1.0", None), 400, BAD_REQUEST)
case("config-unknown-catalog", "getConfig", config("1.0", NO_CATALOG), 404, "NoSuchCatalogException")


# --- createStagingTable, getStagingTableCredentials

def staging(name=None, schema=NS, catalog=CATALOG, body=None, data=None):
    def make(c):
        b = body if body is not None else {"name": name or unique("stg")}
        return Call("createStagingTable", "POST", f"/catalogs/{catalog}/schemas/{schema}/staging-tables",
                    body=b if data is None else None, data=data)
    return make


def check_staging(c, call, body):
    assert body["table-type"] == "MANAGED"
    assert body["location"].startswith(f"file://{c.warehouse}/"), body["location"]
    for cred in body["storage-credentials"]:
        assert cred["operation"] == "READ_WRITE", cred


def staging_existing(c):
    name, _ = c.delta_table("stgx")
    return staging(name)(c)


def stage(c):
    """A staging table: (its name, DeltaStagingTableResponse)."""
    name = unique("stg")
    _, st = c.call("createStagingTable", "POST", f"/catalogs/{CATALOG}/schemas/{NS}/staging-tables",
                   body={"name": name}, expect=200)
    return name, st


def staging_creds(table_id):
    return Call("getStagingTableCredentials", "GET", f"/staging-tables/{table_id}/credentials")


def staging_creds_after_create(c):
    name, st = stage(c)
    c.call("createTable", "POST", T, body=c.create_body(name, location=st["location"]), expect=200)
    return staging_creds(st["table-id"])


case("staging-create", "createStagingTable", staging(), 200, check=check_staging)
case("staging-existing-table", "createStagingTable", staging_existing, 409, "AlreadyExistsException")
case("staging-no-name", "createStagingTable", staging(body={}), 400, BAD_REQUEST)
case("staging-invalid-name", "createStagingTable", staging("../x"), 400, BAD_REQUEST)
case("staging-no-schema", "createStagingTable", staging(schema=NO_SCHEMA), 404, "NoSuchSchemaException")
case("staging-no-catalog", "createStagingTable", staging(catalog=NO_CATALOG), 404, "NoSuchCatalogException")
case("staging-malformed-json", "createStagingTable", staging(data="{not json"), 400, BAD_REQUEST)
case("staging-credentials", "getStagingTableCredentials", lambda c: staging_creds(stage(c)[1]["table-id"]), 200,
     check=credentials_for("READ_WRITE"))
case("staging-credentials-unknown", "getStagingTableCredentials", lambda c: staging_creds(uuid.uuid4()), 404,
     "NoSuchTableException")
case("staging-credentials-after-create", "getStagingTableCredentials", staging_creds_after_create, 404,
     "NoSuchTableException")
case("staging-credentials-not-a-uuid", "getStagingTableCredentials", lambda c: staging_creds("not-a-uuid"), 404,
     "NoSuchTableException")


# --- createTable

ALL_TYPES = {"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": False, "metadata": {"comment": "the key"}},
    {"name": "b", "type": "byte", "nullable": True, "metadata": {}},
    {"name": "sh", "type": "short", "nullable": True, "metadata": {}},
    {"name": "i", "type": "integer", "nullable": True, "metadata": {}},
    {"name": "f", "type": "float", "nullable": True, "metadata": {}},
    {"name": "d", "type": "double", "nullable": True, "metadata": {}},
    {"name": "dec", "type": "decimal(10,2)", "nullable": True, "metadata": {}},
    {"name": "bo", "type": "boolean", "nullable": True, "metadata": {}},
    {"name": "s", "type": "string", "nullable": True, "metadata": {"delta.columnMapping.id": 9}},
    {"name": "bin", "type": "binary", "nullable": True, "metadata": {}},
    {"name": "dt", "type": "date", "nullable": True, "metadata": {}},
    {"name": "ts", "type": "timestamp", "nullable": True, "metadata": {}},
    {"name": "tsn", "type": "timestamp_ntz", "nullable": True, "metadata": {}},
    {"name": "arr", "type": {"type": "array", "element-type": "integer", "contains-null": True},
     "nullable": True, "metadata": {}},
    {"name": "m", "type": {"type": "map", "key-type": "string", "value-type": {"type": "struct", "fields": [
        {"name": "q", "type": "double", "nullable": True, "metadata": {}}]}, "value-contains-null": True},
     "nullable": True, "metadata": {}},
    {"name": "st", "type": {"type": "struct", "fields": [
        {"name": "a", "type": "string", "nullable": False, "metadata": {}}]}, "nullable": True, "metadata": {}},
]}


def create(name=None, schema=NS, catalog=CATALOG, drop=(), data=None, **over):
    def make(c):
        n = name or unique("ct")
        body = c.create_body(n, **over)
        for k in drop:
            body.pop(k)
        return Call("createTable", "POST", f"/catalogs/{catalog}/schemas/{schema}/tables",
                    body=body if data is None else None, data=data)
    return make


def check_created(c, resp, call, body):
    md, req = body["metadata"], call.body
    assert md["columns"] == req["columns"]
    assert md["partition-columns"] == req.get("partition-columns", [])
    assert md["table-type"] == req["table-type"]
    assert md["location"].rstrip("/") == req["location"].rstrip("/")
    for k, v in req["properties"].items():
        assert md["properties"].get(k) == v, k
    assert md["properties"]["delta.minReaderVersion"] == str(req["protocol"]["min-reader-version"])
    assert md["properties"]["delta.minWriterVersion"] == str(req["protocol"]["min-writer-version"])
    assert md["last-commit-timestamp-ms"] == req["last-commit-timestamp-ms"]
    assert body["latest-table-version"] == 0
    etag_header(c, resp, body)
    # and loadTable answers the same table
    lr, loaded = c.call("loadTable", "GET", c.table(req["name"]), expect=200)
    assert loaded["metadata"]["table-uuid"] == md["table-uuid"]
    assert loaded["metadata"]["columns"] == req["columns"]


def create_at_staged(c):
    name, st = stage(c)
    return Call("createTable", "POST", T, body=c.create_body(name, location=st["location"]), st=st)


def check_staged_uuid(c, call, body):
    assert body["metadata"]["table-uuid"] == call.ctx["st"]["table-id"], "the staged table uuid was not kept"


def create_uniform(c):
    src, res = c.iceberg_table("ctu_src")
    c.iceberg("DELETE", f"/namespaces/{NS}/tables/{src}", params={"purgeRequested": "false"})
    body = c.create_body(unique("ctu"), **{
        "location": res["metadata"]["location"], "table-type": "EXTERNAL",
        "properties": {"delta.universalFormat.enabledFormats": "iceberg"},
        "uniform": {"iceberg": {"metadata-location": res["metadata-location"], "converted-delta-version": 2,
                                "converted-delta-timestamp": 1700000000000}}})
    return Call("createTable", "POST", T, body=body, iceberg=res)


def check_uniform_created(c, call, body):
    assert body["metadata"]["table-uuid"] == call.ctx["iceberg"]["metadata"]["table-uuid"]
    assert body["uniform"]["iceberg"]["metadata-location"]
    assert body["latest-table-version"] == 2


def create_existing(c):
    name, _ = c.delta_table("ctx")
    return create(name)(c)


# ALL_TYPES has a timestamp_ntz column, which needs the timestampNtz feature.
NTZ_PROTOCOL = {"min-reader-version": 3, "min-writer-version": 7, "reader-features": ["timestampNtz"],
                "writer-features": ["timestampNtz"]}
case("create-managed", "createTable", create(columns=ALL_TYPES, **{"partition-columns": ["dt"]},
                                             properties={"delta.appendOnly": "false", "owner.note": "x"},
                                             comment="a table", protocol=NTZ_PROTOCOL),
     200, check=lambda c, call, body: check_created(c, call.ctx["resp"], call, body))
case("create-ntz-without-feature", "createTable", create(columns=ALL_TYPES), 400, "InvalidParameterValueException")
case("create-external", "createTable", create(**{"table-type": "EXTERNAL"}), 200,
     check=lambda c, call, body: check_created(c, call.ctx["resp"], call, body))
case("create-at-staged-location", "createTable", create_at_staged, 200, check=check_staged_uuid)
case("create-uniform", "createTable", create_uniform, 200, check=check_uniform_created)
case("create-existing", "createTable", create_existing, 409, "AlreadyExistsException")
case("create-no-schema", "createTable", create(schema=NO_SCHEMA), 404, "NoSuchSchemaException")
case("create-no-catalog", "createTable", create(catalog=NO_CATALOG), 404, "NoSuchCatalogException")
case("create-outside-warehouse", "createTable", create(location=f"file:///nonexistent-{uuid.uuid4().hex}/t"),
     403, "PermissionDeniedException")
for field in ("name", "location", "table-type", "columns", "protocol", "properties", "last-commit-timestamp-ms"):
    case(f"create-without-{field}", "createTable", create(drop=(field,)), 400, BAD_REQUEST)
case("create-bad-table-type", "createTable", create(**{"table-type": "VIEW"}), 400, BAD_REQUEST)
case("create-unknown-column-type", "createTable", create(columns={"type": "struct", "fields": [
    {"name": "id", "type": "varchar", "nullable": False, "metadata": {}}]}), 400, BAD_REQUEST)
case("create-duplicate-columns", "createTable", create(columns={"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": False, "metadata": {}},
    {"name": "ID", "type": "long", "nullable": False, "metadata": {}}]}), 400, BAD_REQUEST)
case("create-unknown-partition-column", "createTable", create(**{"partition-columns": ["nope"]}), 400, BAD_REQUEST)
case("create-bad-protocol", "createTable", create(protocol={"min-reader-version": 0, "min-writer-version": 2}),
     400, BAD_REQUEST)
# Protocols the Delta protocol does not allow, and features in use that the protocol lacks.
for cid, proto, extra in [
    ("writer-7-without-features", {"min-reader-version": 1, "min-writer-version": 7}, {}),
    ("reader-5", {"min-reader-version": 5, "min-writer-version": 7, "reader-features": [], "writer-features": []}, {}),
    ("reader-3-writer-5", {"min-reader-version": 3, "min-writer-version": 5, "reader-features": []}, {}),
    ("unknown-feature", {"min-reader-version": 1, "min-writer-version": 7, "writer-features": ["teleport"]}, {}),
    ("reader-feature-not-written", {"min-reader-version": 3, "min-writer-version": 7,
                                    "reader-features": ["deletionVectors"], "writer-features": []}, {}),
    ("property-without-feature", {"min-reader-version": 1, "min-writer-version": 2},
     {"properties": {"delta.enableDeletionVectors": "true"}}),
    ("domain-without-feature", {"min-reader-version": 1, "min-writer-version": 2},
     {"domain-metadata": {"delta.clustering": {"clusteringColumns": [["id"]]}}}),
]:
    case(f"create-protocol-{cid}", "createTable", create(protocol=proto, **extra), 400, BAD_REQUEST,
         valid_request=True)
case("create-relative-location", "createTable", create(location="relative/t"), 400, BAD_REQUEST, valid_request=True)
case("create-derived-property", "createTable", create(properties={"delta.minReaderVersion": "1"}), 400, BAD_REQUEST)
case("create-invalid-name", "createTable", create("../x"), 400, BAD_REQUEST)
case("create-name-with-dot", "createTable", create(f"a.{unique('dot')}"), 400, BAD_REQUEST)
case("create-malformed-json", "createTable", create(data="{not json"), 400, BAD_REQUEST)


# --- loadTable, tableExists, deleteTable

def on_table(op, method, suffix="", params=None, body=None):
    """A call on a fresh Delta table."""
    def make(c):
        name, lt = c.delta_table()
        b = body(lt) if callable(body) else body
        return Call(op, method, c.table(name, suffix), params=params, body=b, lt=lt, name=name)
    return make


def on_iceberg_table(op, method, suffix="", params=None, body=None):
    def make(c):
        name, res = c.iceberg_table()
        b = body(res["metadata"]["table-uuid"]) if callable(body) else body
        return Call(op, method, c.table(name, suffix), params=params, body=b)
    return make


def on_name(op, method, name, suffix="", schema=NS, catalog=CATALOG, params=None, body=None, raw=False):
    """A call on a table that is not there (or a name that is invalid)."""
    def make(c):
        path = (f"{UC.tables(schema, catalog)}/{name}{suffix}" if raw
                else c.table(name, suffix, schema=schema, catalog=catalog))
        return Call(op, method, path, params=params, body=body)
    return make


def check_loaded(c, call, body):
    lt = lt_of(call)
    assert body["metadata"]["table-uuid"] == lt["metadata"]["table-uuid"]
    assert body["metadata"]["etag"] == lt["metadata"]["etag"]
    assert body["metadata"]["columns"] == lt["metadata"]["columns"]
    assert body["latest-table-version"] == 0
    etag_header(c, call.ctx["resp"], body)


def check_deleted(c, call, body):
    r, _ = c.call("tableExists", "HEAD", call.path)
    assert r.status_code == 404, f"the table is still there after deleteTable: HEAD {r.status_code}"


MISSING = unique("missing")
case("load", "loadTable", on_table("loadTable", "GET"), 200, check=check_loaded)
case("load-missing", "loadTable", on_name("loadTable", "GET", MISSING), 404, "NoSuchTableException")
case("load-no-schema", "loadTable", on_name("loadTable", "GET", MISSING, schema=NO_SCHEMA), 404,
     "NoSuchSchemaException")
case("load-no-catalog", "loadTable", on_name("loadTable", "GET", MISSING, catalog=NO_CATALOG), 404,
     "NoSuchCatalogException")
case("load-iceberg-only", "loadTable", on_iceberg_table("loadTable", "GET"), 400, "UnsupportedTableFormatException")
case("load-invalid-name", "loadTable", on_name("loadTable", "GET", "%2E%2E", raw=True), 404, "NoSuchTableException")
case("exists", "tableExists", on_table("tableExists", "HEAD"), 204)
case("exists-missing", "tableExists", on_name("tableExists", "HEAD", MISSING), 404)
case("exists-no-schema", "tableExists", on_name("tableExists", "HEAD", MISSING, schema=NO_SCHEMA), 404)
case("exists-invalid-name", "tableExists", on_name("tableExists", "HEAD", "%2E%2E", raw=True), 404)
# A table with no Delta side is no Delta table: 404 where the spec lists no 400.
case("exists-iceberg-only", "tableExists", on_iceberg_table("tableExists", "HEAD"), 404)
case("delete", "deleteTable", on_table("deleteTable", "DELETE"), 204, check=check_deleted)
case("delete-missing", "deleteTable", on_name("deleteTable", "DELETE", MISSING), 404, "NoSuchTableException")
case("delete-no-schema", "deleteTable", on_name("deleteTable", "DELETE", MISSING, schema=NO_SCHEMA), 404,
     "NoSuchSchemaException")
case("delete-invalid-name", "deleteTable", on_name("deleteTable", "DELETE", "%2E%2E", raw=True), 404,
     "NoSuchTableException")
case("delete-iceberg-only", "deleteTable", on_iceberg_table("deleteTable", "DELETE"), 404, "NoSuchTableException")


# --- updateTable

def uuid_req(lt):
    return {"type": "assert-table-uuid", "uuid": lt["metadata"]["table-uuid"]}


def plain(table_type="MANAGED", protocol=None):
    over = {"table-type": table_type}
    if protocol:
        over["protocol"] = protocol
    return lambda c: c.delta_table(**over)


def uni(table_type="MANAGED", converted=0):
    return lambda c: c.uniform_table(table_type=table_type, converted=converted)[:2]


def update(*updates, requirements=None, setup=None, table=plain()):
    """updateTable on a fresh table (table(c) makes it: plain or uni).
    requirements (default: the right assert-table-uuid) and updates may be
    functions of (client, load response, ctx); setup(c, name, lt, ctx) runs
    first and may return a newer load response."""
    def make(c):
        name, lt = table(c)
        ctx = {}
        if setup:
            lt = setup(c, name, lt, ctx) or lt
        reqs = [uuid_req(lt)] if requirements is None else [r(c, lt, ctx) if callable(r) else r
                                                            for r in requirements]
        ups = [u(c, lt, ctx) if callable(u) else u for u in updates]
        return Call("updateTable", "POST", c.table(name), body={"requirements": reqs, "updates": ups},
                    lt=lt, name=name, **ctx)
    return make


def raw_update(body, **kw):
    def make(c):
        name, lt = c.delta_table()
        b = body(lt) if callable(body) else body
        return Call("updateTable", "POST", c.table(name), body=b, lt=lt, **kw)
    return make


def props(**kv):
    return {"action": "set-properties", "updates": kv}


def check_updated(extra=None):
    def check(c, call, body):
        lt = lt_of(call)
        assert body["metadata"]["table-uuid"] == lt["metadata"]["table-uuid"]
        etag_header(c, call.ctx["resp"], body)
        _, loaded = c.call("loadTable", "GET", call.path, expect=200)
        assert loaded["metadata"]["etag"] == body["metadata"]["etag"], "loadTable after updateTable differs"
        if extra:
            extra(c, call, body, loaded)
    return check


def etag_moved(c, call, body, loaded):
    assert body["metadata"]["etag"] != lt_of(call)["metadata"]["etag"], "the etag did not change"


COLS2 = {"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": False, "metadata": {}},
    {"name": "s", "type": "string", "nullable": True, "metadata": {"comment": "now documented"}},
    {"name": "n", "type": {"type": "array", "element-type": "long", "contains-null": True},
     "nullable": True, "metadata": {}}]}
# An upgrade from the created protocol (1, 2): writer 7 must list what
# writer 2 implied (appendOnly, invariants), per the Delta protocol.
PROTO3 = {"min-reader-version": 3, "min-writer-version": 7, "reader-features": ["deletionVectors"],
          "writer-features": ["appendOnly", "invariants", "deletionVectors", "domainMetadata"]}
# Domain metadata needs writer 7 with domainMetadata (and clustering for delta.clustering).
PROTO_DOMAINS = {"min-reader-version": 1, "min-writer-version": 7,
                 "writer-features": ["appendOnly", "invariants", "domainMetadata", "clustering"]}
CLUSTERING = {"delta.clustering": {"clusteringColumns": [["id"]]}}


def set_then_remove(c, name, lt, ctx):
    _, lt2 = c.update(name, lt, [props(gone="soon")], expect=200)
    return lt2


def with_domain(c, name, lt, ctx):
    _, lt2 = c.update(name, lt, [{"action": "set-domain-metadata", "updates": CLUSTERING}], expect=200)
    return lt2


def add_commit(version, location, ts=1700000100000):
    return {"action": "add-commit",
            "commit": {"version": version, "timestamp": ts, "file-name": f"{uuid.uuid4()}.json",
                       "file-size": 1024, "file-modification-timestamp": ts},
            "uniform": {"iceberg": {"metadata-location": location, "converted-delta-version": version,
                                    "converted-delta-timestamp": ts}}}


def next_commit(version=None):
    """add-commit of the next UniForm metadata file (version: latest+1 by default)."""
    def u(c, lt, ctx):
        v = lt["latest-table-version"] + 1 if version is None else version(lt)
        return add_commit(v, c.next_metadata(lt))
    return u


def committed_once(c, name, lt, ctx):
    """Setup: one accepted add-commit (version 1); ctx["first"] is its update."""
    first = add_commit(lt["latest-table-version"] + 1, c.next_metadata(lt))
    _, lt2 = c.update(name, lt, [first], expect=200)
    assert lt2["latest-table-version"] == first["commit"]["version"]
    ctx["first"] = first
    return lt2


def snapshot_version(v, ts=1700000100000):
    return {"action": "update-metadata-snapshot-version", "last-commit-version": v, "last-commit-timestamp-ms": ts}


def snapshot_at_2(c, name, lt, ctx):
    """Setup: the post-commit hook reports version 2 (the table was registered at 2)."""
    _, lt2 = c.update(name, lt, [snapshot_version(2)], expect=200)
    return lt2


def foreign_commit(c, lt, ctx):
    return add_commit(lt["latest-table-version"] + 1, c.next_metadata(lt, table_uuid=str(uuid.uuid4())))


def check_committed(c, call, body, loaded):
    v = call.body["updates"][0]["commit"]["version"]
    assert body["latest-table-version"] == v == loaded["latest-table-version"]
    # ratified, not yet backfilled: newest first, the commit as sent
    assert loaded["commits"][0] == call.body["updates"][0]["commit"], loaded["commits"]


def check_backfilled(c, call, body, loaded):
    assert loaded["commits"] == [], "every commit up to the published version leaves the list"


def check_replayed(c, call, body, loaded):
    assert body["latest-table-version"] == call.ctx["first"]["commit"]["version"]
    assert body["metadata"]["etag"] == lt_of(call)["metadata"]["etag"], "a replayed add-commit changed the table"


def check_props(**want):
    def extra(c, call, body, loaded):
        for k, v in want.items():
            got = body["metadata"]["properties"].get(k)
            assert got == v, f"property {k}: {got!r}, want {v!r}"
    return extra


def check_no_prop(key):
    def extra(c, call, body, loaded):
        assert key not in body["metadata"]["properties"], body["metadata"]["properties"]
    return extra


def check_columns(cols):
    def extra(c, call, body, loaded):
        assert body["metadata"]["columns"] == cols
    return extra


def check_partitioned(c, call, body, loaded):
    assert body["metadata"]["partition-columns"] == ["id"]


def check_snapshot_version(v, ts):
    def extra(c, call, body, loaded):
        assert body["metadata"]["last-commit-version"] == v
        assert body["metadata"]["last-commit-timestamp-ms"] == ts
        assert body["metadata"]["properties"]["delta.lastUpdateVersion"] == str(v)
    return extra


case("update-set-properties", "updateTable", update(props(k="v")), 200,
     check=check_updated(lambda *a: (etag_moved(*a), check_props(k="v")(*a))))
case("update-assert-etag", "updateTable", update(props(k="v"), requirements=[
    lambda c, lt, ctx: uuid_req(lt), lambda c, lt, ctx: {"type": "assert-etag", "etag": lt["metadata"]["etag"]}]),
     200, check=check_updated(check_props(k="v")))
case("update-remove-properties", "updateTable",
     update({"action": "remove-properties", "removals": ["gone"]}, setup=set_then_remove), 200,
     check=check_updated(check_no_prop("gone")))
case("update-set-columns", "updateTable", update({"action": "set-columns", "columns": COLS2}), 200,
     check=check_updated(check_columns(COLS2)))
case("update-set-table-comment", "updateTable", update({"action": "set-table-comment", "comment": "hello"}), 200,
     check=check_updated(etag_moved))
case("update-set-protocol", "updateTable", update({"action": "set-protocol", "protocol": PROTO3}), 200,
     check=check_updated(check_props(**{"delta.minReaderVersion": "3", "delta.minWriterVersion": "7",
                                         "delta.feature.deletionVectors": "supported"})))
case("update-set-domain-metadata", "updateTable",
     update({"action": "set-domain-metadata", "updates": CLUSTERING}, table=plain(protocol=PROTO_DOMAINS)), 200,
     check=check_updated(etag_moved))
case("update-remove-domain-metadata", "updateTable",
     update({"action": "remove-domain-metadata", "domains": ["delta.clustering"]}, setup=with_domain,
            table=plain(protocol=PROTO_DOMAINS)), 200, check=check_updated(etag_moved))
case("update-domain-without-feature", "updateTable",
     update({"action": "set-domain-metadata", "updates": CLUSTERING}), 400, BAD_REQUEST, valid_request=True)
case("update-protocol-downgrade", "updateTable",
     update({"action": "set-protocol", "protocol": {"min-reader-version": 1, "min-writer-version": 1}}), 400,
     BAD_REQUEST, valid_request=True)
case("update-set-partition-columns", "updateTable",
     update({"action": "set-partition-columns", "partition-columns": ["id"]}), 200,
     check=check_updated(check_partitioned))
# update-metadata-snapshot-version is "external tables only, used by post-commit hook":
# the client commits to the Delta log itself and reports the version.
case("update-metadata-snapshot-version", "updateTable",
     update(snapshot_version(0, 1700000050000), table=plain("EXTERNAL")), 200,
     check=check_updated(check_snapshot_version(0, 1700000050000)))
case("update-metadata-snapshot-version-advances", "updateTable",
     update(snapshot_version(1, 1700000050000), table=plain("EXTERNAL")), 200,
     check=check_updated(check_snapshot_version(1, 1700000050000)))
case("update-several-actions", "updateTable",
     update({"action": "set-table-comment", "comment": "c"}, {"action": "set-columns", "columns": COLS2},
            props(a="1"), {"action": "set-protocol", "protocol": PROTO3}), 200,
     check=check_updated(lambda *a: (check_columns(COLS2)(*a), check_props(a="1")(*a))))
case("update-add-commit", "updateTable", update(next_commit(), table=uni()), 200,
     check=check_updated(check_committed))
case("update-add-commit-replay", "updateTable",
     update(lambda c, lt, ctx: ctx["first"], setup=committed_once, table=uni()), 200,
     check=check_updated(check_replayed))
# errors: shape
case("update-empty-updates", "updateTable", update(), 400, BAD_REQUEST)
case("update-empty-requirements", "updateTable", update(props(k="v"), requirements=[]), 400, BAD_REQUEST)
case("update-without-requirements", "updateTable", raw_update({"updates": [props(k="v")]}), 400, BAD_REQUEST)
case("update-without-updates", "updateTable", raw_update(lambda lt: {"requirements": [uuid_req(lt)]}), 400,
     BAD_REQUEST)
case("update-without-assert-table-uuid", "updateTable", update(props(k="v"), requirements=[
    lambda c, lt, ctx: {"type": "assert-etag", "etag": lt["metadata"]["etag"]}]), 400, BAD_REQUEST)
case("update-duplicate-action", "updateTable", update(props(k="v"), props(k2="w")), 400, BAD_REQUEST)
case("update-duplicate-requirement", "updateTable", update(props(k="v"), requirements=[
    lambda c, lt, ctx: uuid_req(lt), lambda c, lt, ctx: uuid_req(lt)]), 400, BAD_REQUEST)
case("update-set-and-remove-property", "updateTable",
     update(props(k="v"), {"action": "remove-properties", "removals": ["k"]}), 400, BAD_REQUEST)
case("update-set-and-remove-domain", "updateTable",
     update({"action": "set-domain-metadata", "updates": CLUSTERING},
            {"action": "remove-domain-metadata", "domains": ["delta.clustering"]}), 400, BAD_REQUEST)
case("update-set-derived-property", "updateTable", update(props(**{"delta.minReaderVersion": "3"})), 400,
     BAD_REQUEST)
case("update-remove-derived-property", "updateTable",
     update({"action": "remove-properties", "removals": ["delta.lastUpdateVersion"]}), 400, BAD_REQUEST)
case("update-unknown-action", "updateTable", update({"action": "drop-everything"}), 400, BAD_REQUEST)
case("update-unknown-requirement", "updateTable", update(props(k="v"), requirements=[
    lambda c, lt, ctx: uuid_req(lt), {"type": "assert-moon-phase", "phase": "full"}]), 400, BAD_REQUEST)
case("update-malformed-json", "updateTable",
     lambda c: (lambda n: Call("updateTable", "POST", c.table(n[0]), data="{not json"))(c.delta_table()),
     400, BAD_REQUEST)
# errors: content
case("update-set-columns-incompatible-type", "updateTable", update({"action": "set-columns", "columns": {
    "type": "struct", "fields": [{"name": "id", "type": "string", "nullable": False, "metadata": {}},
                                 {"name": "s", "type": "string", "nullable": True, "metadata": {}}]}}),
     400, BAD_REQUEST)
case("update-set-columns-nullable-to-required", "updateTable", update({"action": "set-columns", "columns": {
    "type": "struct", "fields": [{"name": "id", "type": "long", "nullable": False, "metadata": {}},
                                 {"name": "s", "type": "string", "nullable": False, "metadata": {}}]}}),
     400, BAD_REQUEST)
case("update-set-partition-columns-unknown", "updateTable",
     update({"action": "set-partition-columns", "partition-columns": ["nope"]}), 400, BAD_REQUEST)
case("update-set-protocol-invalid", "updateTable",
     update({"action": "set-protocol", "protocol": {"min-reader-version": 0, "min-writer-version": 2}}),
     400, BAD_REQUEST)
# An add-commit without UniForm metadata is a Delta data commit: lakegate
# reads the staged commit file it names and commits its files as an Iceberg
# snapshot. A name that is no staged commit file, or a file that is not
# there, is refused before anything changes.
case("update-add-commit-not-a-staged-commit", "updateTable", update({"action": "add-commit", "commit": {
    "version": 1, "timestamp": 1700000100000, "file-name": f"{uuid.uuid4()}.json", "file-size": 1024,
    "file-modification-timestamp": 1700000100000}}), 400, "InvalidParameterValueException", valid_request=True)
case("update-add-commit-missing-file", "updateTable", update({"action": "add-commit", "commit": {
    "version": 1, "timestamp": 1700000100000, "file-name": f"{1:020d}.{uuid.uuid4()}.json", "file-size": 1024,
    "file-modification-timestamp": 1700000100000}}), 400, "InvalidParameterValueException", valid_request=True)
case("update-set-latest-backfilled-version", "updateTable",
     update(lambda c, lt, ctx: {"action": "set-latest-backfilled-version",
                                "latest-published-version": lt["latest-table-version"]},
            setup=committed_once, table=uni()), 200, check=check_updated(check_backfilled))
case("update-backfilled-past-latest", "updateTable",
     update(lambda c, lt, ctx: {"action": "set-latest-backfilled-version",
                                "latest-published-version": lt["latest-table-version"] + 1}), 400, BAD_REQUEST,
     valid_request=True)
# errors: requirements and versions
case("update-wrong-table-uuid", "updateTable", update(props(k="v"), requirements=[
    {"type": "assert-table-uuid", "uuid": str(uuid.uuid4())}]), 409, "UpdateRequirementConflictException")
case("update-wrong-etag", "updateTable", update(props(k="v"), requirements=[
    lambda c, lt, ctx: uuid_req(lt), {"type": "assert-etag", "etag": "0123456789abcdef"}]), 409,
     "UpdateRequirementConflictException")
case("update-add-commit-version-gap", "updateTable",
     update(next_commit(lambda lt: lt["latest-table-version"] + 2), table=uni()), 409,
     "CommitVersionConflictException")
case("update-add-commit-version-backwards", "updateTable",
     update(next_commit(lambda lt: lt["latest-table-version"] - 1), setup=committed_once, table=uni()), 409,
     "CommitVersionConflictException")
case("update-add-commit-same-version-other-file", "updateTable",
     update(next_commit(lambda lt: lt["latest-table-version"]), setup=committed_once, table=uni()), 409,
     "CommitVersionConflictException")
case("update-add-commit-foreign-metadata", "updateTable", update(foreign_commit, table=uni()), 409,
     "CommitVersionConflictException")
case("update-snapshot-version-backwards", "updateTable",
     update(snapshot_version(1), setup=snapshot_at_2, table=uni("EXTERNAL", converted=2)), 409,
     "CommitVersionConflictException")
case("update-snapshot-version-on-managed", "updateTable", update(snapshot_version(0)), 400, BAD_REQUEST,
     valid_request=True)
case("update-add-commit-on-external", "updateTable", update(next_commit(), table=uni("EXTERNAL")), 400,
     BAD_REQUEST, valid_request=True)
# errors: the table
case("update-missing", "updateTable", on_name("updateTable", "POST", MISSING, body={
    "requirements": [{"type": "assert-table-uuid", "uuid": str(uuid.uuid4())}], "updates": [props(k="v")]}),
     404, "NoSuchTableException", valid_request=True)
case("update-no-schema", "updateTable", on_name("updateTable", "POST", MISSING, schema=NO_SCHEMA, body={
    "requirements": [{"type": "assert-table-uuid", "uuid": str(uuid.uuid4())}], "updates": [props(k="v")]}),
     404, "NoSuchSchemaException", valid_request=True)
case("update-iceberg-only", "updateTable", on_iceberg_table("updateTable", "POST", body=lambda u: {
    "requirements": [{"type": "assert-table-uuid", "uuid": u}], "updates": [props(k="v")]}),
     400, "UnsupportedTableFormatException", valid_request=True)


# --- renameTable

def rename(new=None, existing=False):
    def make(c):
        name, lt = c.delta_table("rn")
        target = new
        if existing:
            target, _ = c.delta_table("rnx")
        body = {} if target is False else {"new-name": target or unique("rnto")}
        return Call("renameTable", "POST", c.table(name, "/rename"), body=body, lt=lt, name=name)
    return make


def check_renamed(c, call, body):
    new = call.body["new-name"]
    r, _ = c.call("tableExists", "HEAD", c.table(call.ctx["name"]))
    assert r.status_code == 404, "the old name still exists"
    _, loaded = c.call("loadTable", "GET", c.table(new), expect=200)
    assert loaded["metadata"]["table-uuid"] == lt_of(call)["metadata"]["table-uuid"]


case("rename", "renameTable", rename(), 204, check=check_renamed)
case("rename-onto-existing", "renameTable", rename(existing=True), 409, "AlreadyExistsException")
case("rename-missing", "renameTable", on_name("renameTable", "POST", MISSING, "/rename",
                                              body={"new-name": unique("rnto")}), 404, "NoSuchTableException",
     valid_request=True)
case("rename-no-schema", "renameTable", on_name("renameTable", "POST", MISSING, "/rename", schema=NO_SCHEMA,
                                                body={"new-name": unique("rnto")}), 404, "NoSuchSchemaException",
     valid_request=True)
case("rename-iceberg-only", "renameTable", on_iceberg_table("renameTable", "POST", "/rename",
                                                          body={"new-name": unique("rnto")}), 400,
     "UnsupportedTableFormatException", valid_request=True)
case("rename-without-new-name", "renameTable", rename(False), 400, BAD_REQUEST)
case("rename-across-schemas", "renameTable", rename(f"other.{unique('rnto')}"), 400, BAD_REQUEST)
case("rename-invalid-new-name", "renameTable", rename(".."), 400, BAD_REQUEST)


# --- getTableCredentials

case("credentials-read", "getTableCredentials", on_table("getTableCredentials", "GET", "/credentials",
                                                         params={"operation": "READ"}), 200,
     check=credentials_for("READ"))
case("credentials-read-write", "getTableCredentials", on_table("getTableCredentials", "GET", "/credentials",
                                                               params={"operation": "READ_WRITE"}), 200,
     check=credentials_for("READ_WRITE"))
case("credentials-bad-operation", "getTableCredentials",
     on_table("getTableCredentials", "GET", "/credentials", params={"operation": "WRITE"}), 400, BAD_REQUEST)
case("credentials-without-operation", "getTableCredentials",
     on_table("getTableCredentials", "GET", "/credentials"), 400, BAD_REQUEST)
case("credentials-missing", "getTableCredentials",
     on_name("getTableCredentials", "GET", MISSING, "/credentials", params={"operation": "READ"}), 404,
     "NoSuchTableException")
case("credentials-iceberg-only", "getTableCredentials",
     on_iceberg_table("getTableCredentials", "GET", "/credentials", params={"operation": "READ"}), 400,
     "UnsupportedTableFormatException")


# --- reportMetrics

REPORT = {"commit-report": {
    "num-files-added": 2, "num-bytes-added": 2048, "num-files-removed": 1, "num-bytes-removed": 900,
    "num-rows-inserted": 10, "num-rows-removed": 3, "num-rows-updated": 1,
    "file-size-histogram": {"sorted-bin-boundaries": [0, 1024, 4096], "file-counts": [1, 1, 0],
                            "total-bytes": [900, 1148, 0], "commit-version": 0}}}


def metrics(body):
    return on_table("reportMetrics", "POST", "/metrics", body=body)


case("metrics", "reportMetrics", metrics(lambda lt: {"table-id": lt["metadata"]["table-uuid"], "report": REPORT}),
     204)
case("metrics-table-id-only", "reportMetrics", metrics(lambda lt: {"table-id": lt["metadata"]["table-uuid"]}), 204)
case("metrics-other-table-id", "reportMetrics", metrics({"table-id": str(uuid.uuid4()), "report": REPORT}), 400,
     BAD_REQUEST, valid_request=True)
case("metrics-without-table-id", "reportMetrics", metrics({"report": REPORT}), 400, BAD_REQUEST)
case("metrics-table-id-not-a-uuid", "reportMetrics", metrics({"table-id": "not-a-uuid"}), 400, BAD_REQUEST)
case("metrics-malformed-json", "reportMetrics",
     lambda c: (lambda n: Call("reportMetrics", "POST", c.table(n[0], "/metrics"), data="{not json"))(c.delta_table()),
     400, BAD_REQUEST)
case("metrics-missing", "reportMetrics",
     on_name("reportMetrics", "POST", MISSING, "/metrics", body={"table-id": str(uuid.uuid4())}), 404,
     "NoSuchTableException", valid_request=True)


# --- getTemporaryPathCredentials

def path_creds(location=None, operation=None):
    def make(c):
        params = {}
        if location is not None:
            params["location"] = location(c) if callable(location) else location
        if operation is not None:
            params["operation"] = operation
        return Call("getTemporaryPathCredentials", "GET", "/temporary-path-credentials", params=params)
    return make


def in_warehouse(c):
    return c.location(unique("ext"))


def check_path_creds(op):
    def check(c, call, body):
        loc = call.params["location"]
        for cred in body["storage-credentials"]:
            assert cred["operation"] == op, cred
            assert loc.startswith(cred["prefix"].rstrip("/")), f"{cred['prefix']} does not cover {loc}"
    return check


case("path-credentials-read", "getTemporaryPathCredentials", path_creds(in_warehouse, "READ"), 200,
     check=check_path_creds("READ"))
case("path-credentials-read-write", "getTemporaryPathCredentials", path_creds(in_warehouse, "READ_WRITE"), 200,
     check=check_path_creds("READ_WRITE"))
case("path-credentials-outside-warehouse", "getTemporaryPathCredentials",
     path_creds(f"file:///nonexistent-{uuid.uuid4().hex}/ext", "READ"), (403, 400),
     ("PermissionDeniedException", *BAD_REQUEST))
case("path-credentials-without-location", "getTemporaryPathCredentials", path_creds(None, "READ"), 400, BAD_REQUEST)
case("path-credentials-without-operation", "getTemporaryPathCredentials", path_creds(in_warehouse), 400,
     BAD_REQUEST)
case("path-credentials-bad-operation", "getTemporaryPathCredentials", path_creds(in_warehouse, "WRITE"), 400,
     BAD_REQUEST)


# --- what this gateway cannot be made to answer (visible as skipped)

NO_AUTH = ("interop/uc/Caddyfile configures no identity provider and no policy, so every caller is "
           "allowed: 401 and a policy's 403 cannot happen here (examples/policy and the Go tests "
           "cover them)")
case("config-unauthorized", "getConfig", None, 401, "NotAuthorizedException", skip=NO_AUTH)
case("load-permission-denied", "loadTable", None, 403, "PermissionDeniedException", skip=NO_AUTH)
case("update-too-many-unbackfilled-commits", "updateTable", None, 429, "ResourceExhaustedException",
     skip="reaching lakegate's bound needs 50 unbackfilled UniForm add-commits; the Go test "
          "TestUnbackfilledCommitsBounded checks the 429 ResourceExhaustedException")


# --- the test

def test_every_operation_has_cases():
    """Every operationId of the spec is exercised, with a success and an error case."""
    ops = {c.op for c in CASES}
    assert ops == set(SPEC.ops), f"operations without cases: {sorted(set(SPEC.ops) - ops)}"
    for op in SPEC.ops:
        statuses = {s for c in CASES if c.op == op for s in c.status}
        assert any(s < 300 for s in statuses) and any(s >= 400 for s in statuses), (op, statuses)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_conformance(uc, case):
    if case.skip:
        pytest.skip(case.skip)
    call = case.call(uc)
    if case.valid_request and call.body is not None and "requestBody" in SPEC.ops[call.op][2]:
        errs = SPEC.request_errors(call.op, call.body)
        assert not errs, f"the suite's own request is not valid per the spec: {errs}"
    resp = uc.send(call)
    call.ctx["resp"] = resp
    body = SPEC.check(case.op, resp)
    if resp.status_code not in case.status:
        want = " or ".join(map(str, case.status))
        raise AssertionError(f"{case.op} answered {resp.status_code}, expected {want}: {resp.text[:400]}")
    if case.error and resp.status_code >= 400:
        assert body["error"]["type"] in case.error, f"error type {body['error']['type']}, expected {case.error}"
    if case.check and resp.status_code < 300:
        case.check(uc, call, body)


# --- the spec readings (conftest.readings) accept and refuse what they should

LOAD = {"metadata": {"etag": "e", "table-type": "MANAGED", "table-uuid": str(uuid.uuid4()), "location": "s3://b/t",
                     "created-time": 1, "updated-time": 2, "properties": {},
                     "columns": {"type": "struct", "fields": [
                         {"name": "a", "type": "decimal(10,2)", "nullable": True, "metadata": {}}]}}}


def with_column_type(t):
    import copy
    lt = copy.deepcopy(LOAD)
    lt["metadata"]["columns"]["fields"][0]["type"] = t
    return lt


def without(key):
    import copy
    lt = copy.deepcopy(LOAD)
    del lt["metadata"][key]
    return lt


READINGS = [
    ("load-ok", "DeltaLoadTableResponse", LOAD, True),
    ("load-without-etag", "DeltaLoadTableResponse", without("etag"), False),
    ("load-bad-uuid", "DeltaLoadTableResponse", {**LOAD, "metadata": {**LOAD["metadata"], "table-uuid": "x"}}, False),
    ("type-primitive", "DeltaLoadTableResponse", with_column_type("timestamp_ntz"), True),
    ("type-unknown-primitive", "DeltaLoadTableResponse", with_column_type("varchar"), False),
    ("type-array", "DeltaLoadTableResponse",
     with_column_type({"type": "array", "element-type": "long", "contains-null": True}), True),
    ("type-array-without-element", "DeltaLoadTableResponse",
     with_column_type({"type": "array", "contains-null": True}), False),
    ("type-map-bad-value", "DeltaLoadTableResponse",
     with_column_type({"type": "map", "key-type": "string", "value-type": "varchar", "value-contains-null": True}),
     False),
    ("type-unknown-object", "DeltaLoadTableResponse", with_column_type({"type": "union"}), False),
    ("error-ok", "DeltaErrorResponse", {"error": {"message": "m", "type": "NoSuchTableException", "code": 404}}, True),
    ("error-unknown-type", "DeltaErrorResponse", {"error": {"message": "m", "type": "Oops", "code": 404}}, False),
    ("error-extra-key", "DeltaErrorResponse",
     {"error": {"message": "m", "type": "NoSuchTableException", "code": 404}, "x": 1}, False),
    ("update-unknown-action", "DeltaUpdateTableRequest",
     {"requirements": [{"type": "assert-table-uuid", "uuid": str(uuid.uuid4())}], "updates": [{"action": "x"}]},
     False),
    ("update-add-commit-without-commit", "DeltaUpdateTableRequest",
     {"requirements": [{"type": "assert-table-uuid", "uuid": str(uuid.uuid4())}],
      "updates": [{"action": "add-commit"}]}, False),
]


@pytest.mark.parametrize("schema,instance,valid", [r[1:] for r in READINGS], ids=[r[0] for r in READINGS])
def test_spec_readings(schema, instance, valid):
    errs = SPEC.schema_errors(f"/components/schemas/{schema}", instance)
    assert (not errs) == valid, errs
