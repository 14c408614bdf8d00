"""Spark SQL (pyspark 4.1 + Iceberg's Spark runtime) through lakegate.

One SparkSession (one JVM) for the whole module, with one Iceberg REST
catalog per target (lg_embedded, lg_refserver, lg_nessie) and, on
examples/policy, one per OAuth2 client (pol_reader, pol_writer) plus one
without credentials (pol_anonymous). Every result is compared with the
exact rows expected.
"""

import json
import os
import urllib.parse
import urllib.request
from datetime import date
from urllib.parse import urlparse

import pytest

from conftest import CREDENTIALS, POLICY, TARGETS, unique

pyspark = pytest.importorskip("pyspark")
from pyspark.sql import SparkSession  # noqa: E402

CATALOG_IMPL = "org.apache.iceberg.spark.SparkCatalog"


def catalog_conf(name, uri, warehouse, extra=None):
    """The Spark conf lines of one Iceberg REST catalog named `name`."""
    conf = {
        f"spark.sql.catalog.{name}": CATALOG_IMPL,
        f"spark.sql.catalog.{name}.type": "rest",
        f"spark.sql.catalog.{name}.uri": uri,
    }
    if warehouse:
        conf[f"spark.sql.catalog.{name}.warehouse"] = warehouse
    for k, v in (extra or {}).items():
        conf[f"spark.sql.catalog.{name}.{k}"] = v
    return conf


def spark_catalogs():
    conf = {}
    for t in TARGETS.values():
        if t.available:
            conf.update(catalog_conf(f"lg_{t.name}", t.uri, t.warehouse, t.props))
    if POLICY.available:
        for client in ("reader", "writer"):
            conf.update(
                catalog_conf(f"pol_{client}", POLICY.uri, POLICY.warehouse,
                             {"credential": CREDENTIALS[client]})
            )
        conf.update(catalog_conf("pol_anonymous", POLICY.uri, POLICY.warehouse))
    return conf


@pytest.fixture(scope="module")
def spark():
    jars = os.environ.get("SPARK_JARS", "")
    if not jars:
        pytest.skip("SPARK_JARS is not set (run.sh fetches the Iceberg jars)")
    if not any(t.available for t in TARGETS.values()) and not POLICY.available:
        pytest.skip("no target is set (LAKEGATE_*_URI)")
    work = os.environ.get("INTEROP_WORK", "/tmp")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("lakegate-interop")
        .config("spark.jars", jars)
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.local.dir", os.path.join(work, "spark-local"))
        .config("spark.sql.warehouse.dir", os.path.join(work, "spark-warehouse"))
        .config("spark.sql.extensions",
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
    )
    for k, v in spark_catalogs().items():
        builder = builder.config(k, v)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


_namespaces = {}


# Where the unified target's Spark tests live: under `ns`, which
# interop/unified/Caddyfile routes to the member `second` (PyIceberg's live
# in `third`, Iceberg's Java suites' in all three).
UNIFIED_ROOT = "ns"


def namespace(spark, catalog):
    """A namespace of this run in `catalog`, created on first use."""
    if catalog not in _namespaces:
        ns = unique("spark")
        if catalog == "lg_unified":
            spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.{UNIFIED_ROOT}")
            ns = f"{UNIFIED_ROOT}.{ns}"
        spark.sql(f"CREATE NAMESPACE {catalog}.{ns}")
        _namespaces[catalog] = ns
    return f"{catalog}.{_namespaces[catalog]}"


@pytest.fixture
def ns(spark, target):
    return namespace(spark, f"lg_{target.name}")


def rows(spark, sql):
    return [tuple(r) for r in spark.sql(sql).collect()]


def java_chain(exc):
    """[(java class, message)] of a Spark error and its Java causes."""
    j = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    chain = []
    while j is not None and len(chain) < 20:
        chain.append((j.getClass().getName(), j.getMessage()))
        j = j.getCause()
    return chain


def local_path(location):
    u = urlparse(location)
    if u.scheme in ("", "file"):
        return u.path
    return None


# ---------------------------------------------------------------- basics


def test_create_partitioned_insert_select(spark, ns):
    t = f"{ns}.orders"
    spark.sql(
        f"CREATE TABLE {t} (id BIGINT, category STRING, amount DOUBLE, ts TIMESTAMP) "
        "USING iceberg PARTITIONED BY (category, days(ts))"
    )
    spark.sql(
        f"INSERT INTO {t} VALUES "
        "(1, 'a', 10.5, TIMESTAMP '2024-01-01 10:00:00'),"
        "(2, 'b', 20.0, TIMESTAMP '2024-01-01 11:00:00'),"
        "(3, 'a', 30.25, TIMESTAMP '2024-01-02 12:00:00'),"
        "(4, 'c', 40.0, TIMESTAMP '2024-01-03 13:00:00'),"
        "(5, 'b', 5.0, TIMESTAMP '2024-01-03 14:00:00')"
    )
    assert rows(spark, f"SELECT id, amount FROM {t} WHERE category = 'a' ORDER BY id") == [
        (1, 10.5), (3, 30.25)]
    assert rows(spark, f"SELECT id FROM {t} WHERE ts >= TIMESTAMP '2024-01-02 00:00:00' "
                       "AND amount > 10 ORDER BY id") == [(3,), (4,)]
    assert rows(spark, f"SELECT count(*), sum(amount) FROM {t}") == [(5, 105.75)]
    # The partition spec the catalog stored is the one asked for.
    assert rows(spark, f"SELECT partition.category, partition.ts_day, record_count "
                       f"FROM {t}.partitions ORDER BY 1, 2") == [
        ("a", date(2024, 1, 1), 1),
        ("a", date(2024, 1, 2), 1),
        ("b", date(2024, 1, 1), 1),
        ("b", date(2024, 1, 3), 1),
        ("c", date(2024, 1, 3), 1),
    ]


def test_partition_on_first_column(spark, ns):
    # Spark numbers a new table's columns from 0, so a partition on the first
    # column has source-id 0 in the CreateTableRequest (the catalog assigns
    # fresh ids).
    t = f"{ns}.by_first"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, name STRING) USING iceberg "
              "PARTITIONED BY (bucket(4, id))")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    assert rows(spark, f"SELECT name FROM {t} WHERE id > 2 ORDER BY id") == [("c",), ("d",)]
    assert rows(spark, f"SELECT spec_id, sum(record_count) FROM {t}.files GROUP BY 1") == [(0, 4)]


# ------------------------------------------------------- row-level changes


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_update_delete_merge(spark, ns, mode):
    t = f"{ns}.rowlevel_{mode.replace('-', '_')}"
    spark.sql(
        f"CREATE TABLE {t} (id INT, name STRING, qty INT, region STRING) USING iceberg "
        "PARTITIONED BY (region) TBLPROPERTIES ("
        "'format-version'='2', "
        f"'write.update.mode'='{mode}', 'write.delete.mode'='{mode}', "
        f"'write.merge.mode'='{mode}')"
    )
    spark.sql(f"INSERT INTO {t} VALUES (1,'a',10,'eu'),(2,'b',20,'us'),(3,'c',30,'eu'),"
              "(4,'d',40,'us'),(5,'e',50,'eu')")
    props = dict(rows(spark, f"SHOW TBLPROPERTIES {t}"))
    assert props["format-version"] == "2"
    assert (props["write.update.mode"], props["write.delete.mode"], props["write.merge.mode"]) == (
        mode, mode, mode)

    spark.sql(f"UPDATE {t} SET qty = qty + 100 WHERE id IN (2, 4)")
    assert rows(spark, f"SELECT * FROM {t} ORDER BY id") == [
        (1, "a", 10, "eu"), (2, "b", 120, "us"), (3, "c", 30, "eu"), (4, "d", 140, "us"),
        (5, "e", 50, "eu")]

    spark.sql(f"DELETE FROM {t} WHERE id = 3")
    assert rows(spark, f"SELECT * FROM {t} ORDER BY id") == [
        (1, "a", 10, "eu"), (2, "b", 120, "us"), (4, "d", 140, "us"), (5, "e", 50, "eu")]

    spark.sql(
        f"MERGE INTO {t} AS t USING (SELECT * FROM VALUES "
        "(1, 'a2', 11, 'eu'), (5, 'gone', 0, 'eu'), (6, 'f', 60, 'us') AS s(id, name, qty, region)) "
        "AS s "
        "ON t.id = s.id "
        "WHEN MATCHED AND s.qty = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET t.name = s.name, t.qty = s.qty "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    assert rows(spark, f"SELECT * FROM {t} ORDER BY id") == [
        (1, "a2", 11, "eu"), (2, "b", 120, "us"), (4, "d", 140, "us"), (6, "f", 60, "us")]
    assert rows(spark, f"SELECT id FROM {t} WHERE region = 'us' ORDER BY id") == [
        (2,), (4,), (6,)]

    # The mode took effect: merge-on-read leaves delete files (content 1),
    # copy-on-write only data files (content 0).
    contents = {r[0] for r in rows(spark, f"SELECT content FROM {t}.files")}
    assert contents == ({0, 1} if mode == "merge-on-read" else {0})


# ------------------------------------------------------- schema evolution


def test_alter_add_and_rename_column(spark, ns):
    t = f"{ns}.evolve"
    spark.sql(f"CREATE TABLE {t} (id INT, name STRING) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"ALTER TABLE {t} ADD COLUMN score DOUBLE")
    spark.sql(f"INSERT INTO {t} VALUES (3, 'c', 3.5)")
    assert rows(spark, f"SELECT * FROM {t} ORDER BY id") == [
        (1, "a", None), (2, "b", None), (3, "c", 3.5)]
    spark.sql(f"ALTER TABLE {t} RENAME COLUMN name TO label")
    assert spark.table(t).columns == ["id", "label", "score"]
    assert rows(spark, f"SELECT id, label, score FROM {t} WHERE label = 'b' OR score > 1 "
                       "ORDER BY id") == [(2, "b", None), (3, "c", 3.5)]
    # A fresh load from the catalog (not Spark's cached table) agrees.
    spark.sql(f"REFRESH TABLE {t}")
    assert [(r[0], r[1]) for r in rows(spark, f"DESCRIBE TABLE {t}")
            if r[0] and not r[0].startswith("#")][:3] == [
        ("id", "int"), ("label", "string"), ("score", "double")]


# ------------------------------------------------------------ time travel


def test_time_travel(spark, ns):
    t = f"{ns}.travel"
    spark.sql(f"CREATE TABLE {t} (id INT, v STRING) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'one'), (2, 'two')")
    spark.sql(f"INSERT INTO {t} VALUES (3, 'three')")
    spark.sql(f"DELETE FROM {t} WHERE id = 1")
    snaps = rows(
        spark,
        f"SELECT snapshot_id, date_format(committed_at, 'yyyy-MM-dd HH:mm:ss.SSS'), operation "
        f"FROM {t}.snapshots ORDER BY committed_at",
    )
    assert [s[2] for s in snaps] == ["append", "append", "delete"]
    (s1, ts1, _), (s2, ts2, _), (s3, _, _) = snaps
    assert ts1 < ts2

    assert rows(spark, f"SELECT * FROM {t} VERSION AS OF {s1} ORDER BY id") == [
        (1, "one"), (2, "two")]
    assert rows(spark, f"SELECT * FROM {t} VERSION AS OF {s2} ORDER BY id") == [
        (1, "one"), (2, "two"), (3, "three")]
    assert rows(spark, f"SELECT * FROM {t} VERSION AS OF {s3} ORDER BY id") == [
        (2, "two"), (3, "three")]
    assert rows(spark, f"SELECT * FROM {t} TIMESTAMP AS OF '{ts1}' ORDER BY id") == [
        (1, "one"), (2, "two")]
    assert rows(spark, f"SELECT * FROM {t} TIMESTAMP AS OF '{ts2}' ORDER BY id") == [
        (1, "one"), (2, "two"), (3, "three")]
    assert rows(spark, f"SELECT * FROM {t} ORDER BY id") == [(2, "two"), (3, "three")]


# -------------------------------------------------------- metadata tables


def test_snapshots_metadata_table(spark, ns):
    t = f"{ns}.meta_snapshots"
    spark.sql(f"CREATE TABLE {t} (id INT, category STRING) USING iceberg PARTITIONED BY (category)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'a')")
    spark.sql(f"INSERT INTO {t} VALUES (4, 'c')")
    snaps = rows(
        spark,
        f"SELECT snapshot_id, parent_id, operation, summary['added-records'], "
        f"summary['total-records'] FROM {t}.snapshots ORDER BY committed_at",
    )
    assert [s[2:] for s in snaps] == [("append", "3", "3"), ("append", "1", "4")]
    assert snaps[0][1] is None and snaps[1][1] == snaps[0][0]
    current = rows(spark, f"SELECT snapshot_id FROM {t}.history WHERE is_current_ancestor "
                          "ORDER BY made_current_at")
    assert current == [(snaps[0][0],), (snaps[1][0],)]


def test_files_metadata_table(spark, ns):
    t = f"{ns}.meta_files"
    spark.sql(f"CREATE TABLE {t} (id INT, category STRING) USING iceberg PARTITIONED BY (category)")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'a')")
    spark.sql(f"INSERT INTO {t} VALUES (4, 'c')")
    assert rows(
        spark,
        f"SELECT partition.category, content, file_format, sum(record_count) FROM {t}.files "
        "GROUP BY 1, 2, 3 ORDER BY 1",
    ) == [("a", 0, "PARQUET", 2), ("b", 0, "PARQUET", 1), ("c", 0, "PARQUET", 1)]
    location = [r[1] for r in rows(spark, f"DESCRIBE TABLE EXTENDED {t}") if r[0] == "Location"]
    paths = [r[0] for r in rows(spark, f"SELECT file_path FROM {t}.files")]
    assert len(location) == 1 and len(paths) == 3

    # Hadoop writes file:/x for file:///x; compare scheme and path.
    def norm(u):
        u = urlparse(u)
        return f"{u.scheme or 'file'}://{u.netloc}{u.path.rstrip('/')}"
    assert [p for p in paths if not norm(p).startswith(norm(location[0]) + "/")] == []


def test_create_table_as_select(spark, ns):
    # CTAS is a staged create over REST (stage-create, then a commit).
    src = f"{ns}.ctas_source"
    t = f"{ns}.ctas"
    spark.sql(f"CREATE TABLE {src} (id INT, category STRING, qty INT) USING iceberg")
    spark.sql(f"INSERT INTO {src} VALUES (1, 'a', 5), (2, 'b', 7), (3, 'a', 9)")
    spark.sql(f"CREATE TABLE {t} USING iceberg PARTITIONED BY (category) "
              f"AS SELECT category, sum(qty) AS total, count(*) AS n FROM {src} GROUP BY category")
    assert rows(spark, f"SELECT * FROM {t} ORDER BY category") == [("a", 14, 2), ("b", 7, 1)]
    assert rows(spark, f"SELECT partition.category, record_count FROM {t}.files ORDER BY 1") == [
        ("a", 1), ("b", 1)]
    spark.sql(f"REPLACE TABLE {t} USING iceberg AS SELECT id, qty FROM {src} WHERE qty > 6")
    assert rows(spark, f"SELECT * FROM {t} ORDER BY id") == [(2, 7), (3, 9)]
    assert spark.table(t).columns == ["id", "qty"]


def test_branches_tags_and_rollback(spark, ns):
    cat, ns_name = ns.split(".", 1)
    t = f"{ns}.with_refs"
    spark.sql(f"CREATE TABLE {t} (id INT) USING iceberg TBLPROPERTIES ('format-version'='2')")
    spark.sql(f"INSERT INTO {t} VALUES (1), (2)")
    (s1,) = rows(spark, f"SELECT snapshot_id FROM {t}.snapshots")[0]
    spark.sql(f"ALTER TABLE {t} CREATE TAG v1")
    spark.sql(f"ALTER TABLE {t} CREATE BRANCH dev")
    spark.sql(f"INSERT INTO {t}.branch_dev VALUES (3)")
    spark.sql(f"INSERT INTO {t} VALUES (4)")
    assert rows(spark, f"SELECT * FROM {t} VERSION AS OF 'v1' ORDER BY id") == [(1,), (2,)]
    assert rows(spark, f"SELECT * FROM {t}.branch_dev ORDER BY id") == [(1,), (2,), (3,)]
    assert rows(spark, f"SELECT * FROM {t} ORDER BY id") == [(1,), (2,), (4,)]
    assert rows(spark, f"SELECT name, type FROM {t}.refs ORDER BY name") == [
        ("dev", "BRANCH"), ("main", "BRANCH"), ("v1", "TAG")]
    spark.sql(f"CALL {cat}.system.rollback_to_snapshot('{ns_name}.with_refs', {s1})")
    assert rows(spark, f"SELECT * FROM {t} ORDER BY id") == [(1,), (2,)]
    assert rows(spark, f"SELECT * FROM {t}.branch_dev ORDER BY id") == [(1,), (2,), (3,)]


def test_rename_table_and_namespace_properties(spark, ns):
    t = f"{ns}.before_rename"
    spark.sql(f"CREATE TABLE {t} (id INT) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (7)")
    spark.sql(f"ALTER TABLE {t} RENAME TO {ns.split('.', 1)[1]}.after_rename")
    tables = [r[1] for r in rows(spark, f"SHOW TABLES IN {ns}")]
    assert "after_rename" in tables and "before_rename" not in tables
    assert rows(spark, f"SELECT * FROM {ns}.after_rename") == [(7,)]
    spark.sql(f"ALTER NAMESPACE {ns} SET PROPERTIES ('team' = 'interop', 'tier' = 'gold')")
    props = dict(r for r in rows(spark, f"DESCRIBE NAMESPACE EXTENDED {ns}"))
    assert "(team,interop)" in props["Properties"] and "(tier,gold)" in props["Properties"]


# ------------------------------------------------------------------ views


def test_create_view_and_select(spark, ns):
    t = f"{ns}.view_base"
    v = f"{ns}.big_orders"
    spark.sql(f"CREATE TABLE {t} (id INT, amount INT) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1, 5), (2, 50), (3, 500)")
    spark.sql(f"CREATE VIEW {v} AS SELECT id, amount * 2 AS doubled FROM {t} WHERE amount > 10")
    assert rows(spark, f"SELECT * FROM {v} ORDER BY id") == [(2, 100), (3, 1000)]
    views = [r[1] for r in rows(spark, f"SHOW VIEWS IN {ns}")]
    assert v.split(".")[-1] in views
    # The view reads the table's current state.
    spark.sql(f"INSERT INTO {t} VALUES (4, 11)")
    assert rows(spark, f"SELECT * FROM {v} ORDER BY id") == [(2, 100), (3, 1000), (4, 22)]
    spark.sql(f"DROP VIEW {v}")
    assert v.split(".")[-1] not in [r[1] for r in rows(spark, f"SHOW VIEWS IN {ns}")]


# ------------------------------------------------------------- drop purge


def test_drop_table_purge(spark, ns):
    from pyspark.errors import AnalysisException

    t = f"{ns}.purged"
    spark.sql(f"CREATE TABLE {t} (id INT) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1), (2)")
    assert rows(spark, f"SELECT * FROM {t} ORDER BY id") == [(1,), (2,)]
    files = [r[0] for r in rows(spark, f"SELECT file_path FROM {t}.files")]
    assert len(files) >= 1

    spark.sql(f"DROP TABLE {t} PURGE")
    assert t.split(".")[-1] not in [r[1] for r in rows(spark, f"SHOW TABLES IN {ns}")]
    with pytest.raises(AnalysisException) as e:
        spark.sql(f"SELECT * FROM {t}").collect()
    assert e.value.getCondition() == "TABLE_OR_VIEW_NOT_FOUND"
    # Purged: the data files are gone too (checked where they are local).
    local = [local_path(f) for f in files]
    if all(local):
        assert [p for p in local if os.path.exists(p)] == []


# ---------------------------------------------------------------- unified


def member_tables(target, member, namespace):
    """The tables member lists in namespace (its levels), over the REST API."""
    levels = "%1F".join(urllib.parse.quote(l, safe="") for l in namespace)
    with urllib.request.urlopen(f"{target.uri}/v1/{member}/namespaces/{levels}/tables") as r:
        return sorted(i["name"] for i in json.load(r)["identifiers"])


def test_unified_join_across_members(spark, target):
    """One query joins tables of two members of the unified catalog: orders
    under `newdb` (member first), customers under `ns` (member second)."""
    if target.name != "unified":
        pytest.skip("a unified catalog's test")
    c = "lg_unified"
    orders_ns, customers_ns = ["newdb", unique("join")], ["ns", unique("join")]
    for ns in (orders_ns, customers_ns):
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {c}.{ns[0]}")
        spark.sql(f"CREATE NAMESPACE {c}.{'.'.join(ns)}")
    orders, customers = f"{c}.{'.'.join(orders_ns)}.orders", f"{c}.{'.'.join(customers_ns)}.customers"
    spark.sql(f"CREATE TABLE {orders} (id INT, customer INT, amount INT) USING iceberg")
    spark.sql(f"CREATE TABLE {customers} (id INT, name STRING) USING iceberg")
    spark.sql(f"INSERT INTO {orders} VALUES (1, 10, 5), (2, 20, 7), (3, 10, 11), (4, 30, 13)")
    spark.sql(f"INSERT INTO {customers} VALUES (10, 'ada'), (20, 'grace')")

    assert rows(spark, f"""
        SELECT o.id, c.name, o.amount FROM {orders} o JOIN {customers} c ON o.customer = c.id
        ORDER BY o.id""") == [(1, "ada", 5), (2, "grace", 7), (3, "ada", 11)]
    assert rows(spark, f"""
        SELECT c.name, SUM(o.amount) FROM {orders} o JOIN {customers} c ON o.customer = c.id
        GROUP BY c.name ORDER BY c.name""") == [("ada", 16), ("grace", 7)]
    # Each table lives in its own member, under the same names.
    assert member_tables(target, "first", orders_ns) == ["orders"]
    assert member_tables(target, "second", customers_ns) == ["customers"]


# ------------------------------------------------ OAuth2 (examples/policy)


@pytest.fixture(scope="module")
def policy_table(spark):
    """A table in examples/policy's `local` catalog, created by writer."""
    if not POLICY.available:
        pytest.skip(f"target policy: {POLICY.env} is not set (run.sh did not start it)")
    ns = namespace(spark, "pol_writer")
    t = f"{ns}.secured"
    spark.sql(f"CREATE TABLE {t} (id INT, who STRING) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'writer'), (2, 'writer')")
    return t.split(".", 1)[1]  # without the Spark catalog name


def test_oauth2_reader_can_select(spark, policy_table):
    assert rows(spark, f"SELECT * FROM pol_reader.{policy_table} ORDER BY id") == [
        (1, "writer"), (2, "writer")]


def test_oauth2_reader_insert_is_forbidden(spark, policy_table):
    with pytest.raises(Exception) as e:
        spark.sql(f"INSERT INTO pol_reader.{policy_table} VALUES (3, 'reader')").collect()
    chain = java_chain(e.value)
    classes = [c for c, _ in chain]
    assert "org.apache.iceberg.exceptions.ForbiddenException" in classes, chain
    assert "org.apache.iceberg.exceptions.NotAuthorizedException" not in classes, chain
    # Nothing was committed.
    assert rows(spark, f"SELECT * FROM pol_writer.{policy_table} ORDER BY id") == [
        (1, "writer"), (2, "writer")]


def test_oauth2_writer_can_insert(spark, policy_table):
    ns = policy_table.split(".")[0]
    t = f"pol_writer.{ns}.by_writer"
    spark.sql(f"CREATE TABLE {t} (id INT, who STRING) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (10, 'writer')")
    spark.sql(f"INSERT INTO {t} VALUES (11, 'writer')")
    assert rows(spark, f"SELECT * FROM {t} ORDER BY id") == [(10, "writer"), (11, "writer")]
    assert rows(spark, f"SELECT * FROM pol_reader.{ns}.by_writer ORDER BY id") == [
        (10, "writer"), (11, "writer")]


def test_oauth2_anonymous_is_unauthorized(spark, policy_table):
    with pytest.raises(Exception) as e:
        spark.sql(f"SELECT * FROM pol_anonymous.{policy_table}").collect()
    classes = [c for c, _ in java_chain(e.value)]
    assert "org.apache.iceberg.exceptions.NotAuthorizedException" in classes, java_chain(e.value)
