"""Delta clients from PyPI reading a delta-rs table on S3 (moto) through
lakegate's catalog `s3`, whose storage keys only the gateway holds and
which vends credentials (docs/storage.md): the readers hold no S3 keys,
only where the store is (its endpoint and region, which UC's answer does
not name). Each read is compared row by row with the Delta log
(conftest's s3lake: DeltaTable(s3 path, version=v) with the writer's
keys).
"""

import multiprocessing as mp
import os
import queue

import pytest

from conftest import NS, S3_BUCKET, S3_CATALOG, S3_ENDPOINT, S3_PLACE, UC, URI, arrow_rows, diff, dict_rows, http

# delta-rs' Unity Catalog client on lakegate (as test_clients.py), plus
# where the store is: delta-rs hands these and the vended keys to its S3
# store (crates/catalog-unity: the options, extended with the vended ones).
UC_S3_OPTIONS = {"unity_workspace_url": URI, "unity_access_token": "interop", "unity_allow_http_url": "true",
                 **S3_PLACE}


def no_keys():
    """Drops every AWS_* variable: a reader here has no S3 keys of its own."""
    for k in [k for k in os.environ if k.startswith("AWS_")]:
        del os.environ[k]


def vended(t, op="READ"):
    """UC's temporary table credentials for t, as delta-rs asks for them."""
    info = http("GET", f"{UC}/tables/{t.full}").json()
    return info, http("POST", f"{UC}/temporary-table-credentials",
                      json={"table_id": info["table_id"], "operation": op}).json()


# --- UC's API

def test_uc_s3_get_table(s3lake):
    t = s3lake["events"]
    info = http("GET", f"{UC}/tables/{t.full}").json()
    assert info["storage_location"].rstrip("/") == t.path
    assert [c["name"] for c in info["columns"]] == t.columns[t.latest]


def test_uc_s3_vended_keys_read_the_table(s3lake):
    """The vended keys are STS's (not the writer's), expire, and read the
    table's log on moto, which checks every signature."""
    import pyarrow.fs as pafs

    t = s3lake["events"]
    _, creds = vended(t)
    aws = creds["aws_temp_credentials"]
    assert aws["access_key_id"] and aws["session_token"], creds.keys()
    assert aws["access_key_id"] != os.environ["DC_S3_KEY_ID"]
    assert creds["url"].rstrip("/") == t.path
    assert creds["expiration_time"] > 0
    fs = pafs.S3FileSystem(access_key=aws["access_key_id"], secret_key=aws["secret_access_key"],
                           session_token=aws["session_token"], endpoint_override=S3_ENDPOINT, scheme="http",
                           region="us-east-1")
    key = t.path.removeprefix("s3://") + "/_delta_log/00000000000000000000.json"
    with fs.open_input_stream(key) as f:
        assert b'"protocol"' in f.read()
    # What the keys are for: this table's folder (the session policy; moto
    # does not apply session policies, docs/storage.md).
    bad = pafs.S3FileSystem(access_key=aws["access_key_id"], secret_key=aws["secret_access_key"] + "x",
                            session_token=aws["session_token"], endpoint_override=S3_ENDPOINT, scheme="http",
                            region="us-east-1")
    with pytest.raises(OSError):
        bad.open_input_stream(key).read()


# --- delta-rs through uc://

# delta-rs 1.6.6 sometimes deadlocks while it resolves a uc:// table: after
# lakegate answered its temporary-table-credentials (a 200, read whole),
# the process never goes on (in about 6 of 10 fresh processes here, on S3
# as on a local path; delta-io/delta-rs#3113, which brought uc:// to
# Python, names the deadlock of its runtime juggling). Which read
# deadlocks is chance, not lakegate's answer (the same bytes each time).
# So each read runs in fresh processes, ATTEMPTS at a time for up to
# ROUNDS rounds, and the first that returns is judged; a read that fails
# (rather than hangs) fails the test at once.
ATTEMPTS, ROUNDS, ROUND_TIMEOUT = 4, 3, 30


def _read_uc_s3(full, columns, q):
    """In a child process without S3 keys: (latest version, {version:
    rows}) of uc://full."""
    try:
        no_keys()
        from deltalake import DeltaTable

        from conftest import arrow_rows as rows_of

        dt = DeltaTable(f"uc://{full}", storage_options=UC_S3_OPTIONS)
        out = {}
        for v, cols in columns.items():
            dt.load_as_version(v)
            out[v] = rows_of(dt.to_pyarrow_table(), cols)
        q.put((dt.version(), out, None))
    except BaseException as e:  # noqa: BLE001 (the parent reports it)
        q.put((None, None, f"{type(e).__name__}: {e}"))


def read_in_children(target, args):
    """The first answer of target(*args, q) among fresh processes (see
    ATTEMPTS); fails when every one of them hung."""
    ctx = mp.get_context("spawn")  # delta-rs' runtime does not survive a fork
    hung = 0  # reads of rounds that all hung
    for _ in range(ROUNDS):
        q = ctx.Queue()
        kids = [ctx.Process(target=target, args=(*args, q)) for _ in range(ATTEMPTS)]
        for k in kids:
            k.start()
        try:
            return q.get(timeout=ROUND_TIMEOUT), hung
        except queue.Empty:
            hung += ATTEMPTS
        finally:
            for k in kids:
                k.kill()
                k.join()
    pytest.fail(f"all {hung} delta-rs uc:// reads hung (delta-rs' deadlock, see above)")


def test_deltars_s3_uc(s3lake):
    """DeltaTable("uc://s3.dl.<table>") at every version, with no S3 keys:
    delta-rs resolves the table (getTable) and reads with the keys lakegate
    vends (temporary-table-credentials)."""
    t = s3lake["events"]
    (latest, rows, err), hung = read_in_children(_read_uc_s3, (t.full, {v: t.columns[v] for v in sorted(t.rows)}))
    print(f"delta-rs uc:// on S3: {hung} reads of rounds that all hung before one answered")
    assert err is None, err
    assert latest == t.latest
    for v in sorted(t.rows):
        assert rows[v] == t.rows[v], diff(rows[v], t.rows[v], f"uc:// version {v}")


# --- DuckDB: unity_catalog + delta extensions

def test_duckdb_s3(s3lake):
    """DuckDB 1.5.5's unity_catalog extension turns the vended keys into an
    S3 secret of its own, for AWS's endpoint: neither an S3 secret with
    moto's ENDPOINT nor AWS_ENDPOINT_URL reaches the delta extension's
    reads, so on an S3-compatible store it cannot read (expected-failures.txt)."""
    from test_clients import duckdb_connection

    t = s3lake["events"]
    con = duckdb_connection()
    try:
        con.execute(f"ATTACH '{S3_CATALOG}' AS lgs3 (TYPE UC_CATALOG)")
        rows, cols = t.rows[t.latest], t.columns[t.latest]
        got = arrow_rows(con.execute(f'SELECT * FROM lgs3.{NS}."{t.name}"').fetch_arrow_table(), cols)
        assert got == rows, diff(got, rows, "DuckDB SELECT")
    finally:
        con.close()


# --- Daft through Unity Catalog

def test_daft_s3(s3lake):
    """Daft's Unity Catalog client (load_table: getTable and the vended
    READ keys, as its IOConfig); the store's endpoint, which UC's answer
    does not name, added to that IOConfig by the reader."""
    import dataclasses

    import daft
    from daft.catalog.__unity import UnityCatalogClient

    t = s3lake["events"]
    uc = UnityCatalogClient(endpoint=URI, token="interop")
    table = uc.load_table(t.full, operation="READ")
    s3 = table.io_config.s3
    assert s3.key_id and s3.key_id != os.environ["DC_S3_KEY_ID"], "vended keys, not the writer's"
    s3 = s3.replace(endpoint_url=S3_ENDPOINT, region_name="us-east-1", use_ssl=False, force_virtual_addressing=False)
    table = dataclasses.replace(table, io_config=table.io_config.replace(s3=s3))
    rows, cols = t.rows[t.latest], t.columns[t.latest]
    got = dict_rows(daft.read_deltalake(table).to_pydict(), cols)
    assert got == rows, diff(got, rows, "Daft read_deltalake(UnityCatalogTable) on S3")
