"""Shared setup of the engines suite (test_engines.py): the lakegate
setups (targets) and one adapter per engine.

run.sh starts three gateways and tells the tests where they are; a target
whose variable is unset skips with the reason:

  embedded  ENG_EMBEDDED_URI  root Caddyfile, embedded catalog `local`
  unified   ENG_UNIFIED_URI   interop/unified/Caddyfile, catalog `all` (the
                              suite's namespaces fall to its default member
                              `third`)
  policy    ENG_POLICY_URI    examples/policy, catalog `local`, OAuth2 client
                              `writer` (the example's demo secret)

ENG_<TARGET>_DATA is each gateway's data folder (LAKEGATE_DATA): ClickHouse
runs there (it reads local files only under its working directory) and
puts the tables it creates under the target's warehouse in it.
ICERUST_BIN is the iceberg-rust program (icerust/), built by run.sh.

The oracle is PyIceberg 0.12 (the python suite's client): it creates the
suite's namespaces, tells the snapshot each write made, and reads every
table an engine wrote.

expected-failures.txt lists what fails today, per test and parameter id
(`embedded-duckdb`, `*-duckdb`: fnmatch patterns), marked
xfail(strict=True) (interop/expected_failures.py): a fix makes its entry
fail until it goes.
"""

import fnmatch
import json
import os
import subprocess
import sys
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)
import duckdb_ext  # noqa: E402  (next to this file)

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_ID = uuid.uuid4().hex[:6]
ENGINES = ["clickhouse", "duckdb", "icerust", "daft"]
# Who reads whose table: each engine's table is read back by the next one.
READER_OF = {w: ENGINES[(i + 1) % len(ENGINES)] for i, w in enumerate(ENGINES)}
# A subprocess engine that runs longer than this is broken, not slow.
CALL_TIMEOUT = 180


class Target:
    def __init__(self, name, warehouse, member_warehouse, credential=None):
        self.name = name
        self.uri = os.environ.get(f"ENG_{name.upper()}_URI", "")
        self.data = os.environ.get(f"ENG_{name.upper()}_DATA", "")
        self.warehouse = warehouse
        # The folder the catalog member holding the suite's namespaces keeps
        # its tables in (the gateway's Caddyfile says where).
        self.warehouse_dir = os.path.join(self.data, member_warehouse) if self.data else ""
        self.credential = credential
        self.ns = f"eng_{RUN_ID}"

    def skip_unless_available(self):
        if not self.uri:
            pytest.skip(f"target {self.name}: ENG_{self.name.upper()}_URI is not set (run.sh did not start it)")

    def __repr__(self):
        return f"Target({self.name})"


TARGETS = {
    "embedded": Target("embedded", "local", "local/warehouse"),
    "unified": Target("unified", "all", "third/warehouse"),
    "policy": Target("policy", "local", "local/warehouse", credential="writer:writer-secret"),
}


# --- rows: every answer is compared as a sorted list of (id, name, ...)

BATCH1 = [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}]
BATCH2 = [{"id": 3, "name": "three"}, {"id": 4, "name": None}]


def rows(records, columns=("id", "name")):
    """Records (dicts) as sorted tuples of the given columns; NaN/NaT as None."""
    def norm(v):
        return None if v is None or (isinstance(v, float) and v != v) else v
    return sorted((tuple(norm(r.get(c)) for c in columns) for r in records), key=repr)


# --- the oracle: PyIceberg

def pyiceberg_catalog(t):
    from pyiceberg.catalog.rest import RestCatalog

    props = {"uri": t.uri, "warehouse": t.warehouse}
    if t.credential:
        props.update(credential=t.credential, **{"oauth2-server-uri": f"{t.uri}/v1/oauth/tokens"})
    return RestCatalog(f"oracle-{t.name}", **props)


def oracle_rows(t, table, snapshot=None, columns=("id", "name")):
    tbl = pyiceberg_catalog(t).load_table((t.ns, table))
    return rows(tbl.scan(snapshot_id=snapshot).to_arrow().to_pylist(), columns)


def current_snapshot(t, table):
    snap = pyiceberg_catalog(t).load_table((t.ns, table)).current_snapshot()
    return snap.snapshot_id if snap else None


def oracle_create(t, table):
    """The table as PyIceberg creates it (id long, name string), for the
    engines that write into a table but create none (Daft)."""
    import pyarrow as pa

    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    pyiceberg_catalog(t).create_table((t.ns, table), schema=schema)


# --- the engines: create, insert, read (at a snapshot: time travel)

def _run(label, cmd, stdin=None, cwd=None, env=None):
    """Runs an engine's process; its stdout, or a failure with the end of its stderr."""
    p = subprocess.run(cmd, input=stdin, cwd=cwd, env=env, capture_output=True, text=True, timeout=CALL_TIMEOUT)
    if p.returncode != 0:
        raise AssertionError(f"{label} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p.stdout


class ClickHouse:
    """chdb (ClickHouse 26.9 in-process) through DataLakeCatalog; one
    process per call (chdb_run.py)."""

    name = "clickhouse"

    def sql(self, t, *statements):
        cfg = {"uri": t.uri, "warehouse": t.warehouse, "credential": t.credential, "statements": list(statements)}
        out = _run("chdb_run.py", [sys.executable, os.path.join(HERE, "chdb_run.py")], stdin=json.dumps(cfg), cwd=t.data)
        return json.loads(out)

    def ident(self, t, table):
        return f"lg.`{t.ns}.{table}`"

    def create(self, t, table):
        # IcebergLocal: the table's files on the local file system, under
        # the member's warehouse (a path outside it is refused by lakegate).
        path = os.path.join(t.warehouse_dir, f"{t.ns}.db", table)
        self.sql(t, f"CREATE TABLE {self.ident(t, table)} (id Int64, name Nullable(String)) "
                    f"ENGINE = IcebergLocal('{path}')")

    def insert(self, t, table, records):
        values = ", ".join(f"({r['id']}, {sql_str(r['name'])})" for r in records)
        self.sql(t, f"INSERT INTO {self.ident(t, table)} VALUES {values}")

    def read(self, t, table, snapshot=None, columns=("id", "name")):
        settings = f" SETTINGS iceberg_snapshot_id = {snapshot}" if snapshot else ""
        return rows(self.sql(t, f"SELECT * FROM {self.ident(t, table)}{settings}")[0], columns)


def sql_str(v):
    return "NULL" if v is None else "'" + v.replace("'", "''") + "'"


class DuckDB:
    """DuckDB 1.5.5 with its iceberg extension, loaded from the
    duckdb-extension-* wheels (autoinstall off: nothing is downloaded)."""

    name = "duckdb"

    def __init__(self):
        self.cons = {}

    def con(self, t):
        if t.name not in self.cons:
            self.cons[t.name] = duckdb_connection(t)
        return self.cons[t.name]

    def sql(self, t, q):
        return self.con(t).execute(q)

    def ident(self, t, table):
        return f"lg.{t.ns}.{table}"

    def create(self, t, table):
        self.sql(t, f"CREATE TABLE {self.ident(t, table)} (id BIGINT, name VARCHAR)")

    def insert(self, t, table, records):
        values = ", ".join(f"({r['id']}, {sql_str(r['name'])})" for r in records)
        self.sql(t, f"INSERT INTO {self.ident(t, table)} VALUES {values}")

    def read(self, t, table, snapshot=None, columns=("id", "name")):
        at = f" AT (VERSION => {snapshot})" if snapshot else ""
        cur = self.sql(t, f"SELECT * FROM {self.ident(t, table)}{at}")
        names = [d[0] for d in cur.description]
        return rows([dict(zip(names, r)) for r in cur.fetchall()], columns)

    def close(self):
        for c in self.cons.values():
            c.close()


def duckdb_connection(t):
    con = duckdb_ext.connect()
    if t.credential:
        cid, secret = t.credential.split(":", 1)
        auth = (f"CLIENT_ID '{cid}', CLIENT_SECRET '{secret}', "
                f"OAUTH2_SERVER_URI '{t.uri}/v1/oauth/tokens'")
    else:
        auth = "AUTHORIZATION_TYPE 'none'"
    con.execute(f"ATTACH '{t.warehouse}' AS lg (TYPE ICEBERG, ENDPOINT '{t.uri}', {auth})")
    return con


class IceRust:
    """iceberg-rust 0.10.1 (crates iceberg + iceberg-catalog-rest): icerust/,
    one process per operation."""

    name = "icerust"

    def run(self, t, *args):
        binary = os.environ.get("ICERUST_BIN", "")
        if not binary:
            pytest.skip("ICERUST_BIN is not set (run.sh builds icerust/)")
        env = dict(os.environ, ICEBERG_URI=t.uri, ICEBERG_WAREHOUSE=t.warehouse)
        env.pop("ICEBERG_CREDENTIAL", None)
        if t.credential:
            env["ICEBERG_CREDENTIAL"] = t.credential
        return _run("icerust", [binary, args[0], t.ns, *args[1:]], env=env)

    def create(self, t, table):
        self.run(t, "create", table)

    def insert(self, t, table, records):
        self.run(t, "append", table, json.dumps(records))

    def read(self, t, table, snapshot=None, columns=("id", "name")):
        args = ["scan", table] + ([str(snapshot)] if snapshot else [])
        return rows(json.loads(self.run(t, *args)), columns)


class Daft:
    """Daft 0.7.26: writes and reads through PyIceberg's RestCatalog (Daft
    creates no Iceberg tables: the oracle does)."""

    name = "daft"

    def create(self, t, table):
        oracle_create(t, table)

    def insert(self, t, table, records):
        import daft

        tbl = pyiceberg_catalog(t).load_table((t.ns, table))
        daft.from_pylist(records).write_iceberg(tbl, mode="append")

    def read(self, t, table, snapshot=None, columns=("id", "name")):
        import daft

        tbl = pyiceberg_catalog(t).load_table((t.ns, table))
        return rows(daft.read_iceberg(tbl, snapshot_id=snapshot).to_pylist(), columns)


@pytest.fixture(scope="session")
def engines():
    e = {"clickhouse": ClickHouse(), "duckdb": DuckDB(), "icerust": IceRust(), "daft": Daft()}
    yield e
    e["duckdb"].close()


@pytest.fixture(scope="session")
def namespaces():
    """A function that creates a target's namespace (PyIceberg) the first
    time a test asks for that target, before any engine writes into it."""
    made = {}

    def ensure(t):
        if t.name not in made:
            pyiceberg_catalog(t).create_namespace(t.ns)
            made[t.name] = True
        return t
    return ensure


@pytest.fixture(params=list(TARGETS))
def target(request, namespaces):
    t = TARGETS[request.param]
    t.skip_unless_available()
    return namespaces(t)


def pytest_collection_modifyitems(config, items):
    """Marks the listed tests xfail(strict=True): KEYS are fnmatch patterns
    of the parameter ids (`embedded-duckdb`, `*-duckdb`, `*`)."""
    expected = expected_failures.load(HERE)
    for item in items:
        cs = getattr(item, "callspec", None)
        pid = cs.id if cs else ""
        key = expected_failures.key(item)
        if key in expected and any(fnmatch.fnmatchcase(pid, k) for k in expected[key][0]):
            _, reason, match = expected[key]
            expected_failures.mark(item, f"{reason[0] if reason else ''} (expected-failures.txt)", match)


# The report hook: only the listed failures are expected (see expected_failures.py).
from expected_failures import pytest_runtest_makereport  # noqa: E402,F401
