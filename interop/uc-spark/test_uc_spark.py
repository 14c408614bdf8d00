"""Spark with delta-spark 4.3.1 and Unity Catalog's Spark connector
(UCSingleCatalog, built from source, prebuilt in $INTEROP_CACHE) on a UC
server: lakegate (its UC Delta REST API) or Unity Catalog's own server (the
oracle).

Issue 24's statements, in order, on a MANAGED table (no LOCATION) and an
EXTERNAL one (LOCATION 'file:///...'): CREATE TABLE ... USING delta,
INSERT, SELECT, UPDATE, DELETE, MERGE, ALTER TABLE ADD COLUMNS, INSERT with
the new column, time travel (VERSION AS OF), DESCRIBE HISTORY, SHOW TABLES,
DROP TABLE. After each, Spark's rows are compared with the expected rows
and, on lakegate, the same table read through lakegate's Iceberg REST API
(PyIceberg) must have the same rows and columns.

Each step builds on the ones before it (the rows are cumulative): when a
step it needs did not pass, a step is skipped and says which.
"""

import os

import pytest

from conftest import CATALOG, EXTERNAL, SCHEMA, arrow_rows, rows_of, sort_rows

# The table's rows after each Delta version (0 = CREATE).
TWO = ["id", "name"]
THREE = ["id", "name", "score"]
V1 = [(1, "a"), (2, "b"), (3, "c")]
V2 = [(1, "a"), (2, "bb"), (3, "c")]
V3 = [(1, "a"), (2, "bb")]
V4 = [(1, "aa"), (2, "bb"), (4, "d")]
V5 = [r + (None,) for r in V4]
V6 = V5 + [(5, "e", 5.5)]
HISTORY = [(6, "WRITE"), (5, "ADD COLUMNS"), (4, "MERGE"), (3, "DELETE"), (2, "UPDATE"), (1, "WRITE"),
           (0, "CREATE TABLE")]


def test_create_schema(sql):
    """CREATE SCHEMA: the connector's createNamespace (UC main API)."""
    sql(f"CREATE SCHEMA IF NOT EXISTS {CATALOG}.{SCHEMA}")
    assert [SCHEMA] == [r["namespace"] for r in sql(f"SHOW SCHEMAS IN {CATALOG}") if r["namespace"] == SCHEMA]


class Chain:
    """The statements on one table; subclasses say which kind."""

    KIND = ""

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls.done = set()

    @property
    def name(self):
        return f"t_{self.KIND}"

    @property
    def table(self):
        return f"{CATALOG}.{SCHEMA}.{self.name}"

    @property
    def location(self):
        return os.path.join(EXTERNAL, self.name)

    def needs(self, *steps):
        for s in steps:
            if s not in self.done:
                pytest.skip(f"needs {s} on the {self.KIND} table, which did not pass")

    def passed(self, step):
        self.done.add(step)

    def same(self, sql, iceberg, expected, columns, what):
        """Spark's rows of the table, then (lakegate) the Iceberg door's."""
        got = rows_of(sql(f"SELECT * FROM {self.table}"), columns)
        assert got == sort_rows(expected), f"Spark after {what}"
        if iceberg is None:
            return
        self.iceberg_same(iceberg, expected, columns, what)

    def iceberg_same(self, iceberg, expected, columns, what):
        """The table read through lakegate's Iceberg door."""
        try:
            t = iceberg.load_table((SCHEMA, self.name))
            names = [f.name for f in t.schema().fields]
            tbl = t.scan().to_arrow()
        except Exception as e:  # noqa: BLE001  (said as the Iceberg door's failure)
            raise AssertionError(f"Iceberg door after {what}: {type(e).__name__}: {e}") from None
        assert names == columns, f"Iceberg door's columns after {what}"
        assert arrow_rows(tbl, columns) == sort_rows(expected), f"Iceberg door's rows after {what}"

    def test_create_table(self, sql, iceberg, schema):
        loc = f" LOCATION 'file://{self.location}'" if self.KIND == "external" else ""
        sql(f"CREATE TABLE {self.table} (id INT, name STRING) USING delta{loc}")
        self.same(sql, iceberg, [], TWO, "CREATE TABLE")
        self.passed("create")

    def test_insert(self, sql, iceberg):
        self.needs("create")
        sql(f"INSERT INTO {self.table} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        self.same(sql, iceberg, V1, TWO, "INSERT")
        self.passed("insert")

    def test_select(self, sql):
        self.needs("insert")
        rows = sql(f"SELECT name FROM {self.table} WHERE id >= 2 ORDER BY id")
        assert [r["name"] for r in rows] == ["b", "c"]
        assert sql(f"SELECT count(*) AS n, sum(id) AS s FROM {self.table}") == [{"n": 3, "s": 6}]

    def test_update(self, sql, iceberg):
        self.needs("insert")
        assert sql(f"UPDATE {self.table} SET name = 'bb' WHERE id = 2") == [{"num_affected_rows": 1}]
        self.same(sql, iceberg, V2, TWO, "UPDATE")
        self.passed("update")

    def test_delete(self, sql, iceberg):
        self.needs("update")
        assert sql(f"DELETE FROM {self.table} WHERE id = 3") == [{"num_affected_rows": 1}]
        self.same(sql, iceberg, V3, TWO, "DELETE")
        self.passed("delete")

    def test_merge(self, sql, iceberg):
        self.needs("delete")
        rows = sql(f"MERGE INTO {self.table} AS t "
                   "USING (SELECT 1 AS id, 'aa' AS name UNION ALL SELECT 4, 'd') AS s ON t.id = s.id "
                   "WHEN MATCHED THEN UPDATE SET name = s.name WHEN NOT MATCHED THEN INSERT *")
        assert rows == [{"num_affected_rows": 2, "num_updated_rows": 1, "num_deleted_rows": 0,
                         "num_inserted_rows": 1}]
        self.same(sql, iceberg, V4, TWO, "MERGE")
        self.passed("merge")

    def test_alter_add_columns(self, sql, iceberg):
        self.needs("merge")
        sql(f"ALTER TABLE {self.table} ADD COLUMNS (score DOUBLE)")
        self.same(sql, iceberg, V5, THREE, "ALTER TABLE ADD COLUMNS")
        self.passed("alter")

    def test_insert_new_column(self, sql, iceberg):
        self.needs("alter")
        sql(f"INSERT INTO {self.table} VALUES (5, 'e', 5.5)")
        self.same(sql, iceberg, V6, THREE, "INSERT with the new column")
        self.passed("insert_new")

    def test_iceberg_door_after_writes(self, iceberg):
        """After every write, the Iceberg door has the Delta table's rows
        (the managed table is also checked after each statement)."""
        self.needs("insert_new")
        if iceberg is None:
            pytest.skip("this target has no Iceberg door")
        self.iceberg_same(iceberg, V6, THREE, "all writes")

    def test_time_travel(self, sql):
        """VERSION AS OF: the rows (and columns) of versions 1 and 4."""
        self.needs("insert_new")
        assert rows_of(sql(f"SELECT * FROM {self.table} VERSION AS OF 1"), TWO) == sort_rows(V1)
        assert rows_of(sql(f"SELECT * FROM {self.table} VERSION AS OF 4"), TWO) == sort_rows(V4)
        assert rows_of(sql(f"SELECT * FROM {self.table} VERSION AS OF 6"), THREE) == sort_rows(V6)

    def test_describe_history(self, sql):
        self.needs("insert_new")
        rows = sql(f"DESCRIBE HISTORY {self.table}")
        assert [(r["version"], r["operation"]) for r in rows] == HISTORY

    def test_show_tables(self, sql):
        self.needs("create")
        names = [r["tableName"] for r in sql(f"SHOW TABLES IN {CATALOG}.{SCHEMA}")]
        assert self.name in names

    def test_drop_table(self, sql, iceberg):
        self.needs("create")
        sql(f"DROP TABLE {self.table}")
        names = [r["tableName"] for r in sql(f"SHOW TABLES IN {CATALOG}.{SCHEMA}")]
        assert self.name not in names
        if self.KIND == "external":
            # DROP of an EXTERNAL table leaves its files (Delta's and UC's rule).
            assert os.path.isdir(os.path.join(self.location, "_delta_log")), "external table's files"
        if iceberg is not None:
            assert not iceberg.table_exists((SCHEMA, self.name)), "Iceberg door still has the table"


class TestManaged(Chain):
    """A MANAGED table: UC (or lakegate) picks the location; commits go
    through the catalog (catalog-managed Delta, UC Delta REST API)."""

    KIND = "managed"


class TestExternal(Chain):
    """An EXTERNAL table at a LOCATION under UC_SPARK_EXTERNAL: registered
    through UC's main API, then committed by Delta to its own _delta_log."""

    KIND = "external"
    # Delta commits to the table's own _delta_log and the catalog sees only
    # the CREATE; lakegate syncs the Iceberg side from the log on load, so
    # the Iceberg door is checked after every statement here too.
