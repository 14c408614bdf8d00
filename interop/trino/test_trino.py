"""Trino 476's Iceberg connector through lakegate (and straight against the
backends), statement by statement.

Every statement's result is compared with the exact rows expected, and each
table a test writes is read back with PyIceberg through the same REST
catalog (same URI, same warehouse): same rows, same snapshots, same files.
Schemas are created by Trino without a location (a new user's plain
CREATE SCHEMA), so every table lands at the catalog's default location.
"""

import threading
import time
import uuid

import pytest
from pyiceberg.catalog import load_catalog

from conftest import DATA_TARGETS, TARGETS, Trino, TrinoError, catalog_name, unique


class Target:
    """One target: its Trino catalog and a PyIceberg catalog on the same REST URI."""

    def __init__(self, name, trino):
        self.name = name
        self.catalog = catalog_name(name)
        self.trino = trino
        self.props = TARGETS[name]
        self._pyi = None
        self._schema = None

    def q(self, sql):
        return self.trino.query(sql, catalog=self.catalog)

    @property
    def pyi(self):
        if self._pyi is None:
            self._pyi = load_catalog(f"pyi_{self.catalog}", **self.props)
        return self._pyi

    @property
    def schema(self):
        """This run's schema in the target, created by Trino without a location."""
        if self._schema is None:
            ns = unique("trino")
            self.q(f'CREATE SCHEMA {self.catalog}."{ns}"')
            self._schema = ns
        return self._schema

    def table(self, name):
        """A fresh table name in the schema: (Trino's qualified name, PyIceberg identifier)."""
        name = f"{name}_{uuid.uuid4().hex[:6]}"
        return f'{self.catalog}."{self.schema}"."{name}"', (self.schema, name)

    def rows(self, ident, *columns):
        """PyIceberg's scan of a table, as sorted tuples."""
        data = self.pyi.load_table(ident).scan().to_arrow()
        columns = columns or tuple(data.schema.names)
        return sorted(tuple(r[c] for c in columns) for r in data.to_pylist())


_targets = {}


@pytest.fixture(params=DATA_TARGETS)
def target(request, trino):  # request.param is the target's name (expected-failures.txt)
    name = request.param
    if name not in TARGETS:
        pytest.skip(f"target {name}: run.sh did not start it")
    if name not in _targets:
        _targets[name] = Target(name, trino)
    return _targets[name]


def sel(t, fq, order="id"):
    return [tuple(r) for r in t.q(f"SELECT * FROM {fq} ORDER BY {order}")]


ROWS = [(1, "eu", 10.5), (2, "us", 20.0), (3, "eu", 30.25)]
# As a VALUES list (DOUBLE literals: 10.5 alone is a decimal(3,1) in Trino).
VALUES = ", ".join(f"({i}, '{r}', DOUBLE '{a}')" for i, r, a in ROWS)


def new_table(t, name, partitioning="ARRAY['region']", rows=True):
    """A table (id bigint, region varchar, amount double), partitioned by
    region by default, holding ROWS."""
    fq, ident = t.table(name)
    with_ = f" WITH (partitioning = {partitioning})" if partitioning else ""
    t.q(f"CREATE TABLE {fq} (id bigint, region varchar, amount double){with_}")
    if rows:
        assert t.q(f"INSERT INTO {fq} VALUES {VALUES}") == [[len(ROWS)]]
    return fq, ident


def snapshot_ids(t, fq):
    return [r[0] for r in t.q(f'SELECT snapshot_id FROM {meta(fq, "snapshots")} ORDER BY committed_at')]


def meta(fq, name):
    """The metadata table `name` of a table: catalog."schema"."table$name"."""
    return fq[:-1] + f'${name}"'


# ---------------------------------------------------------------- tests


def test_create_schema(target):
    ns = unique("schema")
    assert target.q(f'CREATE SCHEMA {target.catalog}."{ns}"') == []
    assert [ns] in target.q(f"SHOW SCHEMAS FROM {target.catalog}")
    assert (ns,) in target.pyi.list_namespaces()
    target.q(f'DROP SCHEMA {target.catalog}."{ns}"')
    assert (ns,) not in target.pyi.list_namespaces()


def test_create_table_partitioned(target):
    # The plain CREATE TABLE of issue 25: in a schema created without a
    # location, with partitioning.
    fq, ident = new_table(target, "orders")
    assert sel(target, fq) == ROWS
    tbl = target.pyi.load_table(ident)
    assert [(f.name, str(f.transform)) for f in tbl.spec().fields] == [("region", "identity")]
    assert target.rows(ident) == ROWS


def test_ctas(target):
    fq, ident = target.table("ctas")
    assert target.q(f"CREATE TABLE {fq} WITH (partitioning = ARRAY['region']) AS "
                    f"SELECT * FROM (VALUES {VALUES}) AS v(id, region, amount)") == [[3]]
    assert sel(target, fq) == ROWS
    assert target.rows(ident) == ROWS
    assert [f.name for f in target.pyi.load_table(ident).spec().fields] == ["region"]


def test_insert_update_delete(target):
    fq, ident = new_table(target, "upd")
    assert target.q(f"INSERT INTO {fq} VALUES (4, 'us', 40.0)") == [[1]]
    assert target.q(f"UPDATE {fq} SET amount = amount * 2 WHERE region = 'eu'") == [[2]]
    assert target.q(f"DELETE FROM {fq} WHERE id = 2") == [[1]]
    want = [(1, "eu", 21.0), (3, "eu", 60.5), (4, "us", 40.0)]
    assert sel(target, fq) == want
    assert target.rows(ident) == want


def test_merge(target):
    fq, ident = new_table(target, "merge")
    n = target.q(
        f"MERGE INTO {fq} t USING (VALUES (1, 'eu', -1.0), (2, 'us', 22.0), (5, 'ap', 50.0)) "
        f"AS s(id, region, amount) ON t.id = s.id "
        f"WHEN MATCHED AND s.amount < 0 THEN DELETE "
        f"WHEN MATCHED THEN UPDATE SET amount = s.amount "
        f"WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.region, s.amount)")
    assert n == [[3]]
    want = [(2, "us", 22.0), (3, "eu", 30.25), (5, "ap", 50.0)]
    assert sel(target, fq) == want
    assert target.rows(ident) == want


def test_alter_columns(target):
    fq, ident = new_table(target, "alter", partitioning=None)
    target.q(f"ALTER TABLE {fq} ADD COLUMN note varchar")
    target.q(f"INSERT INTO {fq} VALUES (4, 'us', 40.0, 'new')")
    target.q(f"ALTER TABLE {fq} RENAME COLUMN amount TO total")
    target.q(f"ALTER TABLE {fq} DROP COLUMN region")
    want = [(1, 10.5, None), (2, 20.0, None), (3, 30.25, None), (4, 40.0, "new")]
    assert [r[0] for r in target.q(f"DESCRIBE {fq}")] == ["id", "total", "note"]
    assert sel(target, fq) == want
    tbl = target.pyi.load_table(ident)
    assert [f.name for f in tbl.schema().fields] == ["id", "total", "note"]
    assert target.rows(ident) == want


def test_partition_evolution(target):
    fq, ident = new_table(target, "evolve")
    target.q(f"ALTER TABLE {fq} SET PROPERTIES partitioning = ARRAY['region', 'bucket(id, 4)']")
    target.q(f"INSERT INTO {fq} VALUES (4, 'us', 40.0)")
    assert sel(target, fq) == ROWS + [(4, "us", 40.0)]
    tbl = target.pyi.load_table(ident)
    assert [(f.name, str(f.transform)) for f in tbl.spec().fields] == [
        ("region", "identity"), ("id_bucket", "bucket[4]")]
    assert len(tbl.specs()) == 2
    # One file per (spec, partition): the first insert's two under spec 0,
    # the last one's under spec 1.
    files = target.q(f"SELECT spec_id, record_count FROM {meta(fq, 'files')} ORDER BY spec_id, record_count")
    assert files == [[0, 1], [0, 2], [1, 1]]
    assert target.rows(ident) == ROWS + [(4, "us", 40.0)]


def test_time_travel(target):
    fq, ident = new_table(target, "travel", partitioning=None)
    target.q(f"INSERT INTO {fq} VALUES (4, 'us', 40.0)")
    # Trino's CREATE TABLE commits an empty snapshot first.
    ids = snapshot_ids(target, fq)
    assert len(ids) == 3, f"3 snapshots expected in $snapshots (CREATE TABLE, 2 INSERTs), got {ids}"
    s0, s1, s2 = ids
    committed = target.q(f"SELECT CAST(committed_at AS varchar) FROM {meta(fq, 'snapshots')} "
                         f"WHERE snapshot_id = {s1}")[0][0]
    assert target.q(f"SELECT * FROM {fq} FOR VERSION AS OF {s0}") == []
    assert sorted(tuple(r) for r in target.q(f"SELECT * FROM {fq} FOR VERSION AS OF {s1}")) == ROWS
    assert sorted(tuple(r) for r in target.q(f"SELECT * FROM {fq} FOR VERSION AS OF {s2}")) == \
        ROWS + [(4, "us", 40.0)]
    assert sorted(tuple(r) for r in target.q(
        f"SELECT * FROM {fq} FOR TIMESTAMP AS OF TIMESTAMP '{committed}'")) == ROWS
    tbl = target.pyi.load_table(ident)
    assert [s.snapshot_id for s in tbl.snapshots()] == [s0, s1, s2]
    old = tbl.scan(snapshot_id=s1).to_arrow().to_pylist()
    assert sorted(tuple(r.values()) for r in old) == ROWS


def test_metadata_tables(target):
    fq, ident = new_table(target, "meta")
    target.q(f"INSERT INTO {fq} VALUES (4, 'us', 40.0)")
    tbl = target.pyi.load_table(ident)
    ids = [s.snapshot_id for s in tbl.snapshots()]
    # $snapshots and $history: CREATE TABLE's empty append and the two
    # INSERTs, the same ids as PyIceberg's.
    assert target.q(f"SELECT snapshot_id, operation FROM {meta(fq, 'snapshots')} ORDER BY committed_at") == \
        [[i, "append"] for i in ids]
    assert target.q(f"SELECT snapshot_id, is_current_ancestor FROM {meta(fq, 'history')} "
                    f"ORDER BY made_current_at") == [[i, True] for i in ids]
    # $refs: main at the current snapshot.
    assert target.q(f"SELECT name, type, snapshot_id FROM {meta(fq, 'refs')}") == \
        [["main", "BRANCH", tbl.current_snapshot().snapshot_id]]
    # $files: the same data files as PyIceberg's manifests list.
    files = target.q(f"SELECT file_path, record_count FROM {meta(fq, 'files')} ORDER BY file_path")
    py_files = sorted([f, n] for f, n in zip(*tbl.inspect.files().select(["file_path", "record_count"])
                                              .to_pydict().values()))
    assert files == py_files
    assert sum(n for _, n in files) == 4
    # $partitions: one row per region.
    assert target.q(f"SELECT partition.region, record_count, file_count FROM {meta(fq, 'partitions')} "
                    f"ORDER BY 1") == [["eu", 2, 1], ["us", 2, 2]]


def test_show_create_table(target):
    fq, ident = new_table(target, "show", rows=False)
    text = target.q(f"SHOW CREATE TABLE {fq}")[0][0]
    location = target.pyi.load_table(ident).location()
    for part in ("id bigint", "region varchar", "amount double", "format = 'PARQUET'",
                 "partitioning = ARRAY['region']", f"location = '{location}'"):
        assert part in text, text


def test_views(target):
    fq, ident = new_table(target, "base")
    ns = ident[0]
    view = unique("v")
    vq = f'{target.catalog}."{ns}"."{view}"'
    target.q(f"CREATE VIEW {vq} AS SELECT id FROM {fq} WHERE amount > 15")
    assert target.q(f"SELECT * FROM {vq} ORDER BY id") == [[2], [3]]
    # (PyIceberg's view_exists, a HEAD: its list_views answers [] from a
    # server that does not list the view endpoints in /v1/config, as Nessie.)
    assert target.pyi.view_exists((ns, view))
    target.q(f"CREATE OR REPLACE VIEW {vq} AS SELECT id, region FROM {fq} WHERE region = 'eu'")
    assert target.q(f"SELECT * FROM {vq} ORDER BY id") == [[1, "eu"], [3, "eu"]]
    assert target.pyi.view_exists((ns, view))
    target.q(f"DROP VIEW {vq}")
    assert not target.pyi.view_exists((ns, view))
    assert [view] not in target.q(f'SHOW TABLES FROM {target.catalog}."{ns}"')


def test_optimize(target):
    fq, ident = new_table(target, "optimize", partitioning=None, rows=False)
    for i, r, a in ROWS:
        target.q(f"INSERT INTO {fq} VALUES ({i}, '{r}', {a})")
    assert target.q(f"SELECT count(*) FROM {meta(fq, 'files')}") == [[3]]
    target.q(f"ALTER TABLE {fq} EXECUTE optimize")
    assert target.q(f"SELECT count(*) FROM {meta(fq, 'files')}") == [[1]]
    assert sel(target, fq) == ROWS
    tbl = target.pyi.load_table(ident)
    assert tbl.current_snapshot().summary.operation.value == "replace"
    assert target.rows(ident) == ROWS


def test_expire_snapshots(target):
    fq, ident = new_table(target, "expire", partitioning=None, rows=False)
    for i, r, a in ROWS:
        target.q(f"INSERT INTO {fq} VALUES ({i}, '{r}', {a})")
    ids = snapshot_ids(target, fq)
    assert len(ids) == 4, f"4 snapshots expected in $snapshots (CREATE TABLE, 3 INSERTs), got {ids}"
    target.q(f"ALTER TABLE {fq} EXECUTE expire_snapshots(retention_threshold => '0s')")
    current = target.pyi.load_table(ident).current_snapshot().snapshot_id
    assert snapshot_ids(target, fq) == [current]
    assert [s.snapshot_id for s in target.pyi.load_table(ident).snapshots()] == [current]
    assert sel(target, fq) == ROWS
    assert target.rows(ident) == ROWS


def test_remove_orphan_files(target):
    fq, ident = new_table(target, "orphan", partitioning=None)
    tbl = target.pyi.load_table(ident)
    orphan = f"{tbl.location()}/data/orphan-{uuid.uuid4().hex}.parquet"
    with tbl.io.new_output(orphan).create() as f:
        f.write(b"not referenced by any snapshot")
    assert tbl.io.new_input(orphan).exists()
    time.sleep(1.1)  # older than the 0s retention, whatever the clocks' resolution
    target.q(f"ALTER TABLE {fq} EXECUTE remove_orphan_files(retention_threshold => '0s')")
    assert not tbl.io.new_input(orphan).exists()
    assert sel(target, fq) == ROWS
    assert target.rows(ident) == ROWS


def test_register_table(target):
    fq, ident = new_table(target, "source")
    tbl = target.pyi.load_table(ident)
    location, metadata = tbl.location(), tbl.metadata_location
    name = unique("registered")
    target.q(f"CALL {target.catalog}.system.register_table(schema_name => '{ident[0]}', "
             f"table_name => '{name}', table_location => '{location}', "
             f"metadata_file_name => '{metadata.rsplit('/', 1)[1]}')")
    assert sel(target, f'{target.catalog}."{ident[0]}"."{name}"') == ROWS
    assert target.rows((ident[0], name)) == ROWS


def test_rename_and_drop_table(target):
    fq, ident = new_table(target, "rename")
    new = unique("renamed")
    target.q(f'ALTER TABLE {fq} RENAME TO {target.catalog}."{ident[0]}"."{new}"')
    assert sel(target, f'{target.catalog}."{ident[0]}"."{new}"') == ROWS
    assert not target.pyi.table_exists(ident)
    assert target.rows((ident[0], new)) == ROWS
    target.q(f'DROP TABLE {target.catalog}."{ident[0]}"."{new}"')
    assert not target.pyi.table_exists((ident[0], new))
    assert [new] not in target.q(f'SHOW TABLES FROM {target.catalog}."{ident[0]}"')


def test_nested_namespaces(target):
    parent = unique("parent")
    cat = target.catalog
    target.q(f'CREATE SCHEMA {cat}."{parent}"')
    target.q(f'CREATE SCHEMA {cat}."{parent}.child"')
    assert [f"{parent}.child"] in target.q(f"SHOW SCHEMAS FROM {cat}")
    fq = f'{cat}."{parent}.child"."t"'
    assert target.q(f"CREATE TABLE {fq} AS SELECT * FROM (VALUES {VALUES}) AS v(id, region, amount)") == [[3]]
    assert sel(target, fq) == ROWS
    assert target.q(f'SHOW TABLES FROM {cat}."{parent}.child"') == [["t"]]
    assert target.pyi.list_namespaces((parent,)) == [(parent, "child")]
    assert target.pyi.list_tables((parent, "child")) == [(parent, "child", "t")]
    assert target.rows((parent, "child", "t")) == ROWS


def test_concurrent_inserts(target):
    # Three INSERTs into one table at once, each from its own Trino client.
    # Each commit that loses the race gets a 409 (CommitFailedException),
    # and Iceberg's commit retry (Trino's max_commit_retry, 4 by default)
    # re-applies it on the new head: all three land, once each.
    fq, ident = new_table(target, "concurrent", partitioning=None, rows=False)
    start = threading.Barrier(3)
    errors = []

    def insert(n):
        client = Trino(target.trino.uri, user=f"writer{n}")
        start.wait()
        try:
            client.query(f"INSERT INTO {fq} VALUES ({n}, 'w{n}', {n}.5), ({n + 10}, 'w{n}', {n}.25)",
                         catalog=target.catalog)
        except TrinoError as e:
            errors.append(e)

    threads = [threading.Thread(target=insert, args=(n,)) for n in (1, 2, 3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(180)
    assert not errors, errors
    want = sorted([(n, f"w{n}", n + 0.5) for n in (1, 2, 3)] + [(n + 10, f"w{n}", n + 0.25) for n in (1, 2, 3)])
    assert sel(target, fq) == want
    assert target.rows(ident) == want
    # One snapshot per INSERT (and CREATE TABLE's empty one).
    ops = target.q(f"SELECT operation FROM {meta(fq, 'snapshots')}")
    assert ops == [["append"]] * 4, f"4 appends expected in $snapshots, got {ops}"


# ------------------------------------------------ OAuth2 (examples/policy)


@pytest.fixture(scope="module")
def policy(trino):
    if "policy" not in TARGETS:
        pytest.skip("target policy: run.sh did not start it")
    pyi = load_catalog("pyi_policy", **TARGETS["policy"])
    ns = unique("policy")
    fq = f'policy_writer."{ns}"."orders"'
    trino.query(f'CREATE SCHEMA policy_writer."{ns}"')
    trino.query(f"CREATE TABLE {fq} (id bigint, region varchar, amount double) "
                f"WITH (partitioning = ARRAY['region'])")
    trino.query(f"INSERT INTO {fq} VALUES {VALUES}")
    return trino, pyi, ns


def policy_q(trino, role, sql):
    return trino.query(sql.replace("{cat}", f"policy_{role}"))


def test_oauth2_writer_writes(policy):
    trino, pyi, ns = policy
    fq = f'{{cat}}."{ns}"."orders"'
    assert policy_q(trino, "writer", f"INSERT INTO {fq} VALUES (4, 'us', 40.0)") == [[1]]
    assert policy_q(trino, "writer", f"DELETE FROM {fq} WHERE id = 4") == [[1]]
    assert [tuple(r) for r in policy_q(trino, "writer", f"SELECT * FROM {fq} ORDER BY id")] == ROWS
    data = pyi.load_table((ns, "orders")).scan().to_arrow().to_pylist()
    assert sorted(tuple(r.values()) for r in data) == ROWS


def test_oauth2_reader_reads(policy):
    trino, _, ns = policy
    assert [tuple(r) for r in policy_q(trino, "reader", f'SELECT * FROM {{cat}}."{ns}"."orders" ORDER BY id')] == ROWS
    assert ["orders"] in policy_q(trino, "reader", f'SHOW TABLES FROM {{cat}}."{ns}"')


@pytest.mark.parametrize("sql", [
    'INSERT INTO {cat}."{ns}"."orders" VALUES (9, \'eu\', 9.0)',
    'DELETE FROM {cat}."{ns}"."orders" WHERE id = 1',
    'CREATE TABLE {cat}."{ns}"."more" (id bigint)',
    'CREATE SCHEMA {cat}."{ns}_more"',
    'DROP TABLE {cat}."{ns}"."orders"',
    'CREATE VIEW {cat}."{ns}"."v" AS SELECT 1 AS one',
], ids=["insert", "delete", "create-table", "create-schema", "drop-table", "create-view"])
def test_oauth2_reader_writes_are_forbidden(policy, sql):
    trino, pyi, ns = policy
    with pytest.raises(TrinoError) as e:
        policy_q(trino, "reader", sql.replace("{ns}", ns))
    # lakegate's 403 (ForbiddenException), with the policy's reason.
    assert "Forbidden" in str(e.value) and "reader may not" in str(e.value), e.value
    data = pyi.load_table((ns, "orders")).scan().to_arrow().to_pylist()
    assert sorted(tuple(r.values()) for r in data) == ROWS


def test_oauth2_writer_views_are_forbidden(policy):
    trino, pyi, ns = policy
    with pytest.raises(TrinoError) as e:
        policy_q(trino, "writer", f'CREATE VIEW {{cat}}."{ns}"."wv" AS SELECT id FROM {{cat}}."{ns}"."orders"')
    assert "view changes need admin" in str(e.value), e.value
    assert not pyi.view_exists((ns, "wv"))


def test_oauth2_admin_views(policy):
    trino, pyi, ns = policy
    vq = f'{{cat}}."{ns}"."av"'
    policy_q(trino, "admin", f'CREATE VIEW {vq} AS SELECT id FROM {{cat}}."{ns}"."orders" WHERE region = \'eu\'')
    assert policy_q(trino, "reader", f"SELECT * FROM {vq} ORDER BY id") == [[1], [3]]
    assert pyi.view_exists((ns, "av"))
    policy_q(trino, "admin", f"DROP VIEW {vq}")
    assert not pyi.view_exists((ns, "av"))
