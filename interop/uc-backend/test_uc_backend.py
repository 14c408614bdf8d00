"""Unity Catalog OSS as a remote Iceberg REST backend of lakegate.

PyIceberg 0.12 reads UC's UniForm tables (seed.py) through lakegate
(`[lakegate]`) and directly from UC's Iceberg endpoint (`[direct]`, the
evidence for any difference); then writes are tried both ways: UC's
Iceberg REST endpoint is read-only, and lakegate must answer a clear error
in the Iceberg error model, never a fake success. What each side answered
each write goes to the findings file (run.sh prints it).
"""

import datetime as dt
import json
import os

import pyarrow as pa
import pytest
import requests
from pyiceberg.catalog.rest import DEFAULT_ENDPOINTS
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
from pyiceberg.expressions import EqualTo
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from conftest import ADMIN, TARGETS, URLS, WAREHOUSE, make_catalog, record

TABLES = ("plain", "partitioned")
NS = "sales"


def prefix_url(target):
    """The prefixed base a raw request goes to: lakegate's catalog is
    `unity`, UC's prefix is catalogs/unity (its /v1/config)."""
    return URLS[target] + ("/v1/unity" if target == "lakegate" else "/v1/catalogs/unity")


def rows_of(arrow):
    def norm(v):
        return v.isoformat() if isinstance(v, dt.date) else v

    return sorted(({k: norm(v) for k, v in r.items()} for r in arrow.to_pylist()), key=json.dumps)


def sorted_rows(rows):
    return sorted(rows, key=json.dumps)


def iceberg_error(resp):
    """(type, message) of an answer in the Iceberg error model, else None."""
    try:
        err = resp.json().get("error")
    except ValueError:
        return None
    if not isinstance(err, dict) or not err.get("type"):
        return None
    return err["type"], err.get("message", "")


# --- config and listings

def test_config(seed, target):
    r = requests.get(URLS[target] + "/v1/config", params={"warehouse": WAREHOUSE}, timeout=30)
    assert r.status_code == 200, r.text
    cfg = r.json()
    endpoints = set(cfg.get("endpoints", []))
    if target == "direct":
        assert cfg["overrides"]["prefix"] == "catalogs/unity"
    else:
        assert cfg["overrides"]["prefix"] == "unity"
        assert cfg["overrides"]["namespace-separator"] == "%1F"
        uc = requests.get(URLS["direct"] + "/v1/config", params={"warehouse": WAREHOUSE}, timeout=30).json()
        assert endpoints == set(uc["endpoints"]), "lakegate serves every endpoint UC lists, and no other"
    # Read-only: no write endpoint is listed on either side.
    writes = [e for e in endpoints if e.split()[0] in ("POST", "DELETE") and not e.endswith("/metrics")]
    assert writes == [], endpoints


def test_list_namespaces(catalog, seed):
    assert sorted(catalog.list_namespaces()) == sorted((n,) for n in seed["namespaces"])


def test_list_tables(catalog, seed):
    # UC's Iceberg endpoint lists only UniForm tables: delta_only is not there.
    assert sorted(catalog.list_tables(NS)) == sorted((NS, t) for t in seed["tables"])
    assert catalog.list_tables("other") == []


def test_exists(catalog, seed):
    assert catalog.namespace_exists(NS)
    assert not catalog.namespace_exists("nosuch")
    assert catalog.table_exists(f"{NS}.plain")
    assert not catalog.table_exists(f"{NS}.nosuch")
    assert not catalog.table_exists(f"{NS}.delta_only")


# --- loads and scans

@pytest.mark.parametrize("table", TABLES)
def test_load_table(catalog, seed, table):
    want = seed["tables"][table]
    t = catalog.load_table(f"{NS}.{table}")
    assert t.location() == want["location"]
    assert str(t.metadata.table_uuid) == want["table_uuid"]
    # UC answers the metadata file as a path (its NormalizedURL drops file://).
    assert t.metadata_location.removeprefix("file://") == want["metadata_location"].removeprefix("file://")
    assert [f.name for f in t.schema().fields] == want["columns"]
    assert [f.name for f in t.spec().fields] == want["partition_fields"]
    assert [s.snapshot_id for s in t.snapshots()] == [s["snapshot_id"] for s in want["snapshots"]]


@pytest.mark.parametrize("table", TABLES)
def test_scan(catalog, seed, table):
    t = catalog.load_table(f"{NS}.{table}")
    assert rows_of(t.scan().to_arrow()) == sorted_rows(seed["tables"][table]["rows"])


def test_scan_first_snapshot(catalog, seed):
    first = seed["tables"]["plain"]["snapshots"][0]
    t = catalog.load_table(f"{NS}.plain")
    assert rows_of(t.scan(snapshot_id=first["snapshot_id"]).to_arrow()) == sorted_rows(first["rows"])


def test_scan_partition_pruned(catalog, seed):
    t = catalog.load_table(f"{NS}.partitioned")
    scan = t.scan(row_filter=EqualTo("region", "eu"))
    assert len(list(scan.plan_files())) == 1, "the region=eu partition's one file"
    want = [r for r in seed["tables"]["partitioned"]["rows"] if r["region"] == "eu"]
    assert rows_of(scan.to_arrow()) == sorted_rows(want)


def test_missing(catalog, seed):
    with pytest.raises(NoSuchTableError):
        catalog.load_table(f"{NS}.nosuch")
    with pytest.raises(NoSuchTableError):
        catalog.load_table(f"{NS}.delta_only")
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_tables("nosuch")
    with pytest.raises(NoSuchNamespaceError):
        catalog.load_namespace_properties("nosuch")


def test_missing_raw(seed, target):
    """The 404s in the Iceberg error model, as UC types them: a name UC does
    not know is its BaseException, a Delta table that is not UniForm is
    NoSuchTableException. lakegate passes both on as they are."""
    base = prefix_url(target)
    for path, want in [(f"/namespaces/{NS}/tables/nosuch", "BaseException"),
                       (f"/namespaces/{NS}/tables/delta_only", "NoSuchTableException"),
                       ("/namespaces/nosuch", "BaseException")]:
        r = requests.get(base + path, timeout=30)
        assert r.status_code == 404, (path, r.text)
        err = iceberg_error(r)
        assert err and err[0] == want, (path, r.text)
        record(kind="read", target=target, op="GET " + path, status=r.status_code, type=err[0], message=err[1])


@pytest.mark.parametrize("table", TABLES)
def test_same_load_answer(seed, table):
    """lakegate hands on UC's loadTable answer as UC sent it."""
    got = {t: requests.get(f"{prefix_url(t)}/namespaces/{NS}/tables/{table}", timeout=30) for t in TARGETS}
    for t, r in got.items():
        assert r.status_code == 200, (t, r.text)
    assert got["lakegate"].json() == got["direct"].json()


def test_report_metrics(seed, target):
    """reportMetrics is the one POST UC lists: accepted and discarded (204)."""
    t = seed["tables"]["plain"]
    report = {"report-type": "scan-report", "table-name": f"{WAREHOUSE}.{NS}.plain",
              "snapshot-id": t["snapshots"][-1]["snapshot_id"], "filter": True, "schema-id": 0,
              "projected-field-ids": [1], "projected-field-names": ["id"], "metrics": {}}
    r = requests.post(f"{prefix_url(target)}/namespaces/{NS}/tables/plain/metrics", json=report, timeout=30)
    assert r.status_code == 204, r.text


# --- writes: UC's Iceberg endpoint is read-only

def write_requests(seed):
    """One raw request per write operation of the spec:
    (operation, method, path, body)."""
    plain = seed["tables"]["plain"]
    ident = {"namespace": [NS], "name": "plain"}
    commit = {"requirements": [{"type": "assert-table-uuid", "uuid": plain["table_uuid"]}],
              "updates": [{"action": "set-properties", "updates": {"written-by": "uc-backend"}}]}
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "required": True, "type": "long"}]}
    return [
        ("createNamespace", "POST", "/namespaces", {"namespace": ["ucb_new"]}),
        ("updateProperties", "POST", f"/namespaces/{NS}/properties", {"updates": {"owner": "ucb"}, "removals": []}),
        ("dropNamespace", "DELETE", "/namespaces/other", None),
        ("createTable", "POST", f"/namespaces/{NS}/tables", {"name": "ucb_new", "schema": schema}),
        ("registerTable", "POST", f"/namespaces/{NS}/register",
         {"name": "ucb_registered", "metadata-location": plain["metadata_location"]}),
        ("updateTable", "POST", f"/namespaces/{NS}/tables/plain", commit),
        ("dropTable", "DELETE", f"/namespaces/{NS}/tables/plain", None),
        ("renameTable", "POST", "/tables/rename",
         {"source": ident, "destination": {"namespace": [NS], "name": "plain_renamed"}}),
        ("commitTransaction", "POST", "/transactions/commit", {"table-changes": [{"identifier": ident, **commit}]}),
    ]


WRITE_OPS = [w[0] for w in write_requests({"tables": {"plain": {"metadata_location": "", "table_uuid": ""}}})]


@pytest.mark.parametrize("op", WRITE_OPS)
def test_raw_write(seed, target, op):
    """A client that does not check /v1/config's endpoints sends the write.
    UC's router answers text/plain 405 (no such method on a read route) or
    404 (no route at all); lakegate answers 501
    UnsupportedOperationException in the Iceberg error model without
    sending it."""
    _, method, path, body = next(w for w in write_requests(seed) if w[0] == op)
    r = requests.request(method, prefix_url(target) + path, json=body, timeout=30)
    err = iceberg_error(r)
    record(kind="raw", target=target, op=op, request=f"{method} {path}", status=r.status_code,
           content_type=r.headers.get("Content-Type", ""),
           type=err[0] if err else None, message=err[1] if err else r.text.strip())
    assert r.status_code >= 400, f"a write to a read-only catalog succeeded: {r.status_code} {r.text}"
    if target == "lakegate":
        assert r.status_code == 501, r.text
        assert r.headers["Content-Type"] == "application/json"
        assert err and err[0] == "UnsupportedOperationException", r.text
        assert f'does not serve {op}' in err[1], r.text
        assert r.json()["error"]["code"] == 501
    else:
        assert r.status_code in (404, 405), r.text
        assert err is None, "UC answers its router's text, not an Iceberg error"


def test_keyed_write_refused_twice(seed):
    """With an Idempotency-Key, the refusal is the same on a retry."""
    key = "01900000-0000-7000-8000-000000000ab0"
    answers = [requests.post(prefix_url("lakegate") + "/namespaces", json={"namespace": ["ucb_keyed"]},
                             headers={"Idempotency-Key": key}, timeout=30) for _ in range(2)]
    assert [a.status_code for a in answers] == [501, 501], [a.text for a in answers]
    assert answers[0].json() == answers[1].json()


def pyiceberg_write(catalog, seed, op):
    """The write op through PyIceberg's own API."""
    schema = Schema(NestedField(1, "id", LongType(), required=True))
    if op == "createNamespace":
        catalog.create_namespace("ucb_new")
    elif op == "updateProperties":
        catalog.update_namespace_properties(NS, updates={"owner": "ucb"})
    elif op == "dropNamespace":
        catalog.drop_namespace("other")
    elif op == "createTable":
        catalog.create_table(f"{NS}.ucb_new", schema=schema)
    elif op == "registerTable":
        catalog.register_table(f"{NS}.ucb_registered", seed["tables"]["plain"]["metadata_location"])
    elif op == "append":
        t = catalog.load_table(f"{NS}.plain")
        t.append(pa.Table.from_pylist([{"id": 99, "name": "refused", "amount": 1.0}],
                                      schema=t.schema().as_arrow()))
    elif op == "dropTable":
        catalog.drop_table(f"{NS}.plain")
    elif op == "renameTable":
        catalog.rename_table(f"{NS}.plain", f"{NS}.plain_renamed")
    else:
        raise AssertionError(op)


PYICEBERG_OPS = ["createNamespace", "updateProperties", "dropNamespace", "createTable", "registerTable",
                 "append", "dropTable", "renameTable"]


@pytest.mark.parametrize("op", PYICEBERG_OPS)
def test_pyiceberg_write(catalog, seed, target, op):
    """PyIceberg checks /v1/config's endpoints: neither UC nor lakegate lists
    a write, so PyIceberg refuses it itself (NotImplementedError) and
    nothing is sent."""
    with pytest.raises(NotImplementedError, match="Server does not support endpoint") as e:
        pyiceberg_write(catalog, seed, op)
    record(kind="pyiceberg", target=target, op=op, exception=type(e.value).__name__, message=str(e.value))


@pytest.mark.parametrize("op", PYICEBERG_OPS)
def test_pyiceberg_write_unchecked(seed, target, op):
    """The same with PyIceberg's endpoint check out of the way (the spec's
    default endpoints, as for a server that lists none): the write is sent.
    Through lakegate it fails as NotImplementedError carrying lakegate's
    501; directly, with whatever UC's router answer becomes."""
    catalog = make_catalog(target)
    catalog._supported_endpoints = set(DEFAULT_ENDPOINTS)
    with pytest.raises(Exception) as e:
        pyiceberg_write(catalog, seed, op)
    record(kind="unchecked", target=target, op=op, exception=type(e.value).__name__, message=str(e.value))
    if target == "lakegate":
        assert isinstance(e.value, NotImplementedError), repr(e.value)
        assert "UnsupportedOperationException: catalog \"unity\" does not serve" in str(e.value)


def test_unlisted_reads(seed, target):
    """Reads UC does not list are still sent by lakegate; UC's router
    answers them 404 (text), which lakegate hands on in the Iceberg error
    model. (PyIceberg does not call them: list_views answers [] itself.)"""
    base = prefix_url(target)
    for op, path in [("listViews", f"/namespaces/{NS}/views"),
                     ("loadCredentials", f"/namespaces/{NS}/tables/plain/credentials")]:
        r = requests.get(base + path, timeout=30)
        err = iceberg_error(r)
        record(kind="unlisted-read", target=target, op=op, request=f"GET {path}", status=r.status_code,
               content_type=r.headers.get("Content-Type", ""),
               type=err[0] if err else None, message=err[1] if err else r.text.strip())
        assert r.status_code == 404, r.text
        if target == "lakegate":
            assert err and err[0] == "NotFoundException", r.text


# --- after the writes

def test_nothing_changed(seed, target):
    """Every refused write left UC as seeded (the appends' data files,
    written before the refused commit, stay in the table folder unreferenced)."""
    catalog = make_catalog(target)
    assert sorted(catalog.list_namespaces()) == sorted((n,) for n in seed["namespaces"])
    assert sorted(catalog.list_tables(NS)) == sorted((NS, t) for t in seed["tables"])
    for name, want in seed["tables"].items():
        t = catalog.load_table(f"{NS}.{name}")
        assert t.metadata_location.removeprefix("file://") == want["metadata_location"].removeprefix("file://")
        assert rows_of(t.scan().to_arrow()) == sorted_rows(want["rows"])
    assert catalog.load_namespace_properties(NS).get("owner") is None
    # What the refused appends left behind: PyIceberg writes the data file,
    # manifest and manifest list before its commit, and none is cleaned up.
    t = catalog.load_table(f"{NS}.plain")
    folder = t.location().removeprefix("file://")
    on_disk = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(folder, "data")) for f in fs
                     if f.endswith(".parquet"))
    referenced = {p.removeprefix("file://") for p in t.inspect.files().column("file_path").to_pylist()}
    record(kind="orphans", target=target, op="append",
           message=f"{len(set(on_disk) - referenced)} of {len(on_disk)} data files in {folder}/data unreferenced")


def test_breaker_closed(seed):
    """No refused write counted against UC's health: the catalog is ready
    and its breaker closed, with no backend error noted."""
    if not ADMIN:
        pytest.skip("UCB_ADMIN is not set")
    ready = requests.get(ADMIN + "/lakegate/health/ready", timeout=10)
    assert ready.status_code == 200, ready.text
    status = requests.get(ADMIN + "/lakegate/status", timeout=10).json()
    cat = next(c for c in status["catalogs"] if c["name"] == WAREHOUSE)
    assert cat["breaker"] == "closed", cat
    assert not cat.get("last_error"), cat
    record(kind="status", target="lakegate", op="status", message=json.dumps(cat, sort_keys=True))

