"""Shared setup of the Delta clients suite (test_clients.py, test_freshness.py).

run.sh starts lakegate on interop/delta-clients/Caddyfile (and, with a
PostgreSQL, two replicas on Caddyfile.replicas) and tells the tests where
they are; without these variables every test skips with the reason:

  DC_URI        lakegate: Iceberg REST at /v1, UC at /api/2.1/unity-catalog
  DC_WAREHOUSE  the embedded catalog's warehouse folder, where delta-rs
                writes the EXTERNAL tables (under ext/)
  DC_PROFILE    the Delta Sharing profile of share `clients` (recipient pandas)
  DC_REPLICAS   (test_freshness.py) the two replicas' URIs, comma-separated,
  DC_REPLICA_WAREHOUSE  their shared warehouse folder, and
  DC_SHARE_TOKEN        the recipient's bearer token for raw Sharing calls
  DC_S3_ENDPOINT, DC_S3_BUCKET  (test_s3.py) moto's S3, and the bucket of
                catalog `s3`, whose warehouse is s3://<bucket>/warehouse
  DC_S3_KEY_ID, DC_S3_SECRET  the data platform's writer keys on that
                store: delta-rs writes the S3 tables with them, as a
                producer with keys of its own does; readers get none

The truth is the Delta log: `lake` writes the tables with delta-rs
(deltalake), registers them through lakegate, and keeps each version's rows
as DeltaTable(path, version=v) reads them, which every client's read is
compared with, row by row.

expected-failures.txt lists what fails through lakegate today, each entry
naming the finding of issue 37 it waits for; conftest marks those tests
xfail(strict=True) (see interop/expected_failures.py), so a fix that lands
makes its entry fail until it is removed.
"""

import datetime as dt
import os
import sys
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)

URI = os.environ.get("DC_URI", "")
WAREHOUSE = os.environ.get("DC_WAREHOUSE", "")
PROFILE = os.environ.get("DC_PROFILE", "")
CATALOG, NS, SHARE = "local", "dl", "clients"
S3_CATALOG = "s3"
S3_ENDPOINT = os.environ.get("DC_S3_ENDPOINT", "")
S3_BUCKET = os.environ.get("DC_S3_BUCKET", "")
# Where the S3 store is, and nothing else: what a reader on moto is told
# besides the keys UC vends (UC's answer names no endpoint or region).
S3_PLACE = {"AWS_ENDPOINT_URL": S3_ENDPOINT, "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
UC = "/api/2.1/unity-catalog"
DELTA = f"{UC}/delta/v1"
RUN_ID = uuid.uuid4().hex[:6]
# Partition values that need escaping in Delta's paths and in URLs: a
# space, '/', '%', '=', non-ASCII, and a plain one.
REGIONS = ["a b", "x/y", "50%", "k=v", "ünï", "plain"]


def unique(prefix):
    return f"{prefix}_{RUN_ID}"


# --- rows, as every reader's answer is compared

def _norm(v):
    try:
        import pandas as pd

        if v is None or v is pd.NaT or (isinstance(v, float) and v != v):
            return None
        if isinstance(v, pd.Timestamp):
            v = v.to_pydatetime()
    except (TypeError, ValueError):
        pass
    if hasattr(v, "item") and not isinstance(v, (bytes, str)):  # numpy scalars
        v = v.item()
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return v


def _sort(rows):
    return sorted(rows, key=lambda r: tuple((x is None, str(x)) for x in r))


def arrow_rows(tbl, columns):
    """The rows of a pyarrow table over columns, sorted, nulls as None."""
    missing = [c for c in columns if c not in tbl.column_names]
    assert not missing, f"columns {missing} missing from the answer (it has {tbl.column_names})"
    data = [tbl.column(c).to_pylist() for c in columns]
    return _sort([tuple(_norm(v) for v in r) for r in zip(*data)])


def pandas_rows(df, columns):
    missing = [c for c in columns if c not in df.columns]
    assert not missing, f"columns {missing} missing from the answer (it has {list(df.columns)})"
    return _sort([tuple(_norm(v) for v in r) for r in df[columns].itertuples(index=False, name=None)])


def dict_rows(d, columns):
    missing = [c for c in columns if c not in d]
    assert not missing, f"columns {missing} missing from the answer (it has {list(d)})"
    return _sort([tuple(_norm(v) for v in r) for r in zip(*(d[c] for c in columns))])


def diff(got, want, what):
    """An assertion message naming what differs, not the whole tables."""
    gs, ws = set(got), set(want)
    return (f"{what}: {len(got)} rows, the log has {len(want)}; "
            f"not in the log: {sorted(gs - ws, key=str)[:5]}; missing: {sorted(ws - gs, key=str)[:5]}")


# --- the tables, written by delta-rs

class Table:
    """One Delta table delta-rs writes at path; rows[v] is version v's rows
    (sorted tuples over columns[v]) as delta-rs reads the log."""

    def __init__(self, name, path, catalog=CATALOG, options=None):
        self.name, self.path, self.catalog = name, path, catalog
        self.full = f"{catalog}.{NS}.{name}"
        self.rows, self.columns = {}, {}
        # delta-rs' storage_options for the writer (its keys on S3)
        self.options = options

    @property
    def location(self):
        """The table's storage location as UC names it."""
        return self.path if "://" in self.path else "file://" + self.path

    def record(self):
        from deltalake import DeltaTable

        latest = DeltaTable(self.path, storage_options=self.options).version()
        for v in range(len(self.rows), latest + 1):
            tbl = DeltaTable(self.path, version=v, storage_options=self.options).to_pyarrow_table()
            self.columns[v] = tbl.column_names
            self.rows[v] = arrow_rows(tbl, tbl.column_names)

    @property
    def latest(self):
        return max(self.rows)


def batch(ids, score=False):
    import pyarrow as pa

    cols = {"id": pa.array(ids, pa.int64()),
            "region": pa.array([REGIONS[i % len(REGIONS)] for i in ids], pa.string()),
            "amount": pa.array([None if i % 7 == 0 else i * 1.5 for i in ids], pa.float64()),
            "day": pa.array([dt.date(2026, 1, 1) + dt.timedelta(days=i) for i in ids], pa.date32())}
    if score:
        cols["score"] = pa.array([i / 4 for i in ids], pa.float64())
    return pa.table(cols)


def http(method, path, base=None, expect=(200,), **kw):
    import requests

    r = requests.request(method, (base or URI) + path, timeout=60, **kw)
    assert r.status_code in expect, f"{method} {path}: {r.status_code} {r.text[:400]}"
    return r


def register_uc(t, base=None):
    """UC's createTable, as engines register an EXTERNAL table: no columns
    (the log holds them)."""
    http("POST", f"{UC}/tables", base=base, json={
        "name": t.name, "catalog_name": t.catalog, "schema_name": NS,
        "table_type": "EXTERNAL", "data_source_format": "DELTA", "storage_location": t.location})


def register_delta_api(t):
    """The UC Delta API's createTable, EXTERNAL, with the log's columns
    and its latest commit's time."""
    from deltalake import DeltaTable

    last = DeltaTable(t.path).history(1)[0]["timestamp"]
    fields = [{"name": "id", "type": "long", "nullable": True, "metadata": {}},
              {"name": "region", "type": "string", "nullable": True, "metadata": {}},
              {"name": "amount", "type": "double", "nullable": True, "metadata": {}},
              {"name": "day", "type": "date", "nullable": True, "metadata": {}}]
    http("POST", f"{DELTA}/catalogs/{CATALOG}/schemas/{NS}/tables", json={
        "name": t.name, "location": "file://" + t.path, "table-type": "EXTERNAL",
        "data-source-format": "DELTA", "columns": {"type": "struct", "fields": fields},
        "protocol": {"min-reader-version": 1, "min-writer-version": 2}, "properties": {},
        "last-commit-timestamp-ms": last})


@pytest.fixture(scope="session")
def gateway():
    if not URI or not WAREHOUSE or not PROFILE:
        pytest.skip("DC_URI / DC_WAREHOUSE / DC_PROFILE are not set (run.sh did not start lakegate)")
    http("POST", f"{UC}/schemas", json={"catalog_name": CATALOG, "name": NS}, expect=(200, 400))
    return URI


@pytest.fixture(scope="session")
def lake(gateway):
    """Every Delta table of the suite, written before any client reads one:
    a reader through the Iceberg door or Sharing brings a table's Iceberg
    side to its log (docs/unity-delta.md), which must not decide whether a
    UC reader sees the log (issue 37, finding 2).

    events   partitioned by region (values needing escaping), registered
             with UC's createTable after version 0, then: append, delete,
             append with schema_mode="merge" (new column score),
             optimize.compact, overwrite, create_checkpoint and one append
             after the checkpoint
    plain    unpartitioned, registered with the Delta API's create (with
             columns) after version 1, then one append
    changes  partitioned, delta.enableChangeDataFeed, registered with UC's
             createTable: append, delete (delta-rs writes _change_data), append
    """
    from deltalake import DeltaTable, write_deltalake

    root = os.path.join(WAREHOUSE, "ext")
    os.makedirs(root, exist_ok=True)
    tables = {n: Table(unique(n), os.path.join(root, unique(n))) for n in ("events", "plain", "changes")}

    write_events(tables["events"])

    pl = tables["plain"]
    write_deltalake(pl.path, batch([1, 2, 3]))
    write_deltalake(pl.path, batch([4, 5]), mode="append")
    register_delta_api(pl)
    write_deltalake(pl.path, batch([6]), mode="append")
    pl.record()

    ch = tables["changes"]
    write_deltalake(ch.path, batch(list(range(6))), partition_by=["region"],
                    configuration={"delta.enableChangeDataFeed": "true"})
    register_uc(ch)
    write_deltalake(ch.path, batch(list(range(6, 10))), mode="append")
    DeltaTable(ch.path).delete("id = 2")
    write_deltalake(ch.path, batch([10, 11]), mode="append")
    ch.record()
    return tables


def write_events(ev):
    """The history of table `events` (see lake), written by delta-rs at
    ev.path with ev.options, registered with UC's createTable after
    version 0; every version recorded."""
    from deltalake import DeltaTable, write_deltalake

    o = ev.options
    write_deltalake(ev.path, batch(list(range(12))), partition_by=["region"], storage_options=o)
    register_uc(ev)
    write_deltalake(ev.path, batch(list(range(12, 18))), mode="append", storage_options=o)
    DeltaTable(ev.path, storage_options=o).delete("id = 3")
    write_deltalake(ev.path, batch(list(range(18, 24)), score=True), mode="append", schema_mode="merge",
                    storage_options=o)
    DeltaTable(ev.path, storage_options=o).optimize.compact()
    write_deltalake(ev.path, batch(list(range(30, 42)), score=True), mode="overwrite", storage_options=o)
    DeltaTable(ev.path, storage_options=o).create_checkpoint()
    write_deltalake(ev.path, batch(list(range(42, 45)), score=True), mode="append", storage_options=o)
    ev.record()


@pytest.fixture(scope="session")
def s3lake(gateway):
    """Table `events` of catalog s3 (warehouse on moto, vended
    credentials): the same history as lake's, written by delta-rs to
    s3://<bucket>/warehouse/ext/<name> with the writer's own keys (a data
    platform's producer), registered through UC's createTable."""
    if not S3_ENDPOINT or not S3_BUCKET:
        pytest.skip("DC_S3_ENDPOINT / DC_S3_BUCKET are not set (run.sh did not start moto)")
    http("POST", f"{UC}/schemas", json={"catalog_name": S3_CATALOG, "name": NS}, expect=(200, 400))
    writer = {**S3_PLACE, "AWS_ACCESS_KEY_ID": os.environ["DC_S3_KEY_ID"],
              "AWS_SECRET_ACCESS_KEY": os.environ["DC_S3_SECRET"],
              # one writer at a time: no locking provider needed on moto
              "AWS_S3_ALLOW_UNSAFE_RENAME": "true"}
    name = unique("events")
    ev = Table(name, f"s3://{S3_BUCKET}/warehouse/ext/{name}", catalog=S3_CATALOG, options=writer)
    write_events(ev)
    return {"events": ev}


# --- expected-failures.txt

def pytest_collection_modifyitems(config, items):
    """Marks the listed tests xfail(strict=True): KEYS are the parameter ids
    the entry holds for (`events`, `delta-plain`, ...), or `*` for all."""
    expected = expected_failures.load(os.path.dirname(__file__))
    for item in items:
        cs = getattr(item, "callspec", None)
        pid = cs.id if cs else "*"
        key = expected_failures.key(item)
        if key in expected and (pid in expected[key][0] or "*" in expected[key][0]):
            _, reason, match = expected[key]
            expected_failures.mark(item, f"{reason[0] if reason else ''} (expected-failures.txt)", match)


# The report hook: only the listed failures are expected (see expected_failures.py).
from expected_failures import pytest_runtest_makereport  # noqa: E402,F401
