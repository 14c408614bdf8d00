"""Engines from the registries through lakegate's Iceberg REST door:
ClickHouse (chdb), DuckDB with its iceberg extension, iceberg-rust and
Daft, each on the embedded catalog, the unified catalog and the policy
example (conftest.py). Each engine creates a table and writes it in two
commits; the table is then read by the engine itself (latest and, time
travel, at the first commit's snapshot), by the next engine (READER_OF)
and by PyIceberg. Then what only some engines do: DuckDB's CREATE SCHEMA,
CTAS, UPDATE and DELETE; iceberg-rust's schema evolution and DROP TABLE.
"""

import pytest

from conftest import BATCH1, BATCH2, ENGINES, READER_OF, current_snapshot, oracle_rows, pyiceberg_catalog, rows

# {(target, engine): (table, first snapshot)} of the writes that succeeded.
WRITTEN = {}


def table_of(engine):
    return f"{engine}_t"


def written(target, engine):
    """The engine's table on target, or a failure naming the write that did
    not happen (test_write says why)."""
    got = WRITTEN.get((target.name, engine))
    if got is None:
        pytest.fail(f"{engine} did not write its table on {target.name} (see test_write[{target.name}-{engine}])")
    return got


@pytest.mark.parametrize("engine", ENGINES)
def test_write(target, engine, engines):
    """CREATE TABLE, then two INSERTs (two snapshots); the engine reads back
    both batches."""
    e, table = engines[engine], table_of(engine)
    e.create(target, table)
    e.insert(target, table, BATCH1)
    first = current_snapshot(target, table)
    assert first is not None, "the first insert made no snapshot"
    e.insert(target, table, BATCH2)
    assert current_snapshot(target, table) != first, "the second insert made no snapshot"
    WRITTEN[(target.name, engine)] = (table, first)
    assert e.read(target, table) == rows(BATCH1 + BATCH2)


@pytest.mark.parametrize("engine", ENGINES)
def test_time_travel(target, engine, engines):
    """The engine reads its own table at the first insert's snapshot."""
    table, first = written(target, engine)
    assert engines[engine].read(target, table, snapshot=first) == rows(BATCH1)


@pytest.mark.parametrize("engine", ENGINES)
def test_read_by_next(target, engine, engines):
    """Another engine reads the table, latest and at the first snapshot."""
    table, first = written(target, engine)
    reader = engines[READER_OF[engine]]
    assert reader.read(target, table) == rows(BATCH1 + BATCH2), f"{reader.name} reading {engine}'s table"
    assert reader.read(target, table, snapshot=first) == rows(BATCH1), f"{reader.name} at {first}"


@pytest.mark.parametrize("engine", ENGINES)
def test_read_by_pyiceberg(target, engine):
    table, first = written(target, engine)
    assert oracle_rows(target, table) == rows(BATCH1 + BATCH2)
    assert oracle_rows(target, table, snapshot=first) == rows(BATCH1)


# --- DuckDB: DDL and DML beyond CREATE TABLE and INSERT

def test_duckdb_schema(target, engines):
    """CREATE SCHEMA, a table in it, DROP TABLE and DROP SCHEMA."""
    duck, ns = engines["duckdb"], f"{target.ns}_ddl"
    duck.sql(target, f"CREATE SCHEMA lg.{ns}")
    duck.sql(target, f"CREATE TABLE lg.{ns}.s (id BIGINT)")
    duck.sql(target, f"INSERT INTO lg.{ns}.s VALUES (7)")
    assert duck.sql(target, f"SELECT id FROM lg.{ns}.s").fetchall() == [(7,)]
    duck.sql(target, f"DROP TABLE lg.{ns}.s")
    duck.sql(target, f"DROP SCHEMA lg.{ns}")
    assert (ns,) not in pyiceberg_catalog(target).list_namespaces()


def test_duckdb_ctas(target, engines):
    """CREATE TABLE AS SELECT: a staged create committed with its data."""
    duck = engines["duckdb"]
    duck.sql(target, f"CREATE TABLE lg.{target.ns}.ctas AS "
                     "SELECT range AS id, 'n' || range AS name FROM range(5)")
    want = rows([{"id": i, "name": f"n{i}"} for i in range(5)])
    assert duck.read(target, "ctas") == want
    assert oracle_rows(target, "ctas") == want


def test_duckdb_update_delete(target, engines):
    """UPDATE and DELETE (DuckDB writes position deletes); ClickHouse and
    PyIceberg read the result."""
    duck, table = engines["duckdb"], "dml"
    duck.create(target, table)
    duck.insert(target, table, BATCH1 + BATCH2)
    duck.sql(target, f"UPDATE {duck.ident(target, table)} SET name = 'TWO' WHERE id = 2")
    duck.sql(target, f"DELETE FROM {duck.ident(target, table)} WHERE id = 1")
    want = rows([{"id": 2, "name": "TWO"}, *BATCH2])
    assert duck.read(target, table) == want
    assert engines["clickhouse"].read(target, table) == want
    assert oracle_rows(target, table) == want


# --- iceberg-rust: schema evolution

def test_icerust_evolve(target, engines):
    """iceberg-rust adds a column and appends rows that fill it; the older
    rows read null there, in iceberg-rust, DuckDB and PyIceberg."""
    rust, table = engines["icerust"], "evolve"
    rust.create(target, table)
    rust.insert(target, table, BATCH1)
    rust.run(target, "add-column", table, "note")
    rust.insert(target, table, [{"id": 5, "name": "five", "note": "added"}])
    cols = ("id", "name", "note")
    want = rows([*BATCH1, {"id": 5, "name": "five", "note": "added"}], cols)
    assert rust.read(target, table, columns=cols) == want
    assert engines["duckdb"].read(target, table, columns=cols) == want
    assert oracle_rows(target, table, columns=cols) == want
    rust.run(target, "drop", table)
    assert not pyiceberg_catalog(target).table_exists((target.ns, table)), "iceberg-rust's DROP TABLE left it"
