"""Spark with the Delta Sharing Spark connector (delta-sharing-spark, built
from source, prebuilt in $INTEROP_CACHE) reading lakegate_sharing, on
Iceberg tables PyIceberg writes through the same gateway's Iceberg REST API.

Every read is compared row for row with PyIceberg's scan of the same table
as of the same version (conftest.Versions).
"""

import datetime as dt
import time
from decimal import Decimal

import pyarrow as pa
import pytest
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType, IntegerType, LongType,
                             NestedField, StringType, TimestampType, TimestamptzType)

from conftest import NS, Versions, arrow_rows, multiset_minus, sort_rows, spark_rows, table_url, unique

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "region", StringType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
)
ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("region", pa.string()), pa.field("amount", pa.float64())])
BY_REGION = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
BATCH1 = [(1, "eu", 1.5), (2, "us", 2.5), (3, "eu", 3.5)]
BATCH2 = [(4, "ap", 4.5), (5, "us", None)]
BATCH3 = [(6, "eu", 6.5), (7, "us", 7.5)]


def arrow(batch, schema=ARROW):
    return pa.Table.from_pylist([dict(zip(schema.names, r)) for r in batch], schema=schema)


def create(catalog, batches=(), spec=None, schema=SCHEMA, prefix="t"):
    name = unique(prefix)
    kw = {"partition_spec": spec} if spec else {}
    v = Versions(catalog.create_table(f"{NS}.{name}", schema, **kw), name)
    for b in batches:
        v.table.append(arrow(b) if isinstance(b, list) else b)
        v.record()
    return v


def read(spark, name, **options):
    r = spark.read.format("deltaSharing")
    for k, val in options.items():
        r = r.option(k, str(val))
    return r.load(table_url(name))


def same(spark_df, arrow_tbl):
    """Same columns (names, in order) and the same rows."""
    assert spark_df.columns == arrow_tbl.column_names
    assert spark_rows(spark_df) == arrow_rows(arrow_tbl)


# --- snapshot reads


@pytest.fixture(scope="module")
def plain(catalog):
    return create(catalog, [BATCH1, BATCH2, BATCH3], prefix="plain")


def test_unpartitioned(spark, plain):
    df = read(spark, plain.name)
    same(df, plain.arrow())
    assert len(spark_rows(df)) == 7


def test_types(spark, catalog):
    schema = Schema(
        NestedField(1, "i", IntegerType(), required=False),
        NestedField(2, "l", LongType(), required=False),
        NestedField(3, "b", BooleanType(), required=False),
        NestedField(4, "d", DateType(), required=False),
        NestedField(5, "ts", TimestamptzType(), required=False),
        NestedField(6, "dec", DecimalType(10, 2), required=False),
        NestedField(7, "bin", BinaryType(), required=False),
        NestedField(8, "s", StringType(), required=False),
        NestedField(9, "f", DoubleType(), required=False),
    )
    data = pa.Table.from_pylist([
        {"i": 1, "l": 2**40, "b": True, "d": dt.date(2024, 2, 29),
         "ts": dt.datetime(2024, 2, 29, 12, 30, 15, 123456, tzinfo=dt.timezone.utc), "dec": Decimal("12345678.91"),
         "bin": b"\x00\xff", "s": "ünïcødé ✓", "f": -0.5},
        {"i": None, "l": None, "b": None, "d": None, "ts": None, "dec": None, "bin": None, "s": None, "f": None},
    ], schema=schema.as_arrow())
    v = create(catalog, [data], schema=schema, prefix="types")
    same(read(spark, v.name), v.arrow())


@pytest.fixture(scope="module")
def ntz(catalog):
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "ts", TimestampType(), required=False))
    data = pa.Table.from_pylist([{"id": 1, "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 6)}, {"id": 2, "ts": None}],
                                schema=schema.as_arrow())
    return create(catalog, [data], schema=schema, prefix="ntz")


def test_timestamp_without_zone(spark, ntz):
    same(read(spark, ntz.name), ntz.arrow())


def test_timestamp_without_zone_delta_format(spark, ntz):
    same(read(spark, ntz.name, responseFormat="delta"), ntz.arrow())


def test_empty_table(spark, catalog):
    v = create(catalog, prefix="empty")
    df = read(spark, v.name)
    assert df.columns == ["id", "region", "amount"]
    assert df.count() == 0


@pytest.fixture(scope="module")
def partitioned(catalog):
    return create(catalog, [BATCH1, BATCH2, BATCH3], spec=BY_REGION, prefix="parted")


def test_partitioned(spark, partitioned):
    df = read(spark, partitioned.name)
    same(df, partitioned.arrow())
    # A filter on the partition column: the connector prunes files by the
    # partitionValues lakegate sends.
    eu = df.where("region = 'eu'")
    assert spark_rows(eu) == sort_rows([r for r in arrow_rows(partitioned.arrow()) if r[1] == "eu"])


# Partition values that need escaping in a directory name: `/`, space, `%`,
# `+`, `=`, `#`, `?`, and non-ASCII.
SPECIAL = ["a/b", "x y", "50%", "p+q", "k=v", "h#1", "q?", "ünï"]


def test_partition_values_needing_escapes(spark, catalog):
    v = create(catalog, [[(i, s, float(i)) for i, s in enumerate(SPECIAL)] + [(99, "plain", 9.9)]],
               spec=BY_REGION, prefix="escaped")
    same(read(spark, v.name), v.arrow())


def test_many_files(spark, catalog):
    """One append spread over 40 partitions and 10 more appends: 50 files."""
    spec = PartitionSpec(PartitionField(1, 1000, IdentityTransform(), "id"))
    batches = [[(k, f"r{k % 3}", float(k)) for k in range(40) for _ in range(2)]]
    batches += [[(100 + j, "late", j * 1.0)] for j in range(10)]
    v = create(catalog, batches, spec=spec, prefix="many")
    assert len(list(v.static(v.latest).scan().plan_files())) == 50
    df = read(spark, v.name)
    same(df, v.arrow())
    assert len(df.inputFiles()) == 50


# --- time travel


def test_version_as_of(spark, plain):
    assert sorted(plain.files) == [0, 1, 2, 3]
    for version in plain.files:
        same(read(spark, plain.name, versionAsOf=version), plain.arrow(version))


def test_timestamp_as_of(spark, plain):
    for version in plain.files:
        same(read(spark, plain.name, timestampAsOf=plain.timestamp(version)), plain.arrow(version))


def test_version_as_of_partitioned(spark, partitioned):
    for version in partitioned.files:
        same(read(spark, partitioned.name, versionAsOf=version), partitioned.arrow(version))


# --- deletes and schema changes


@pytest.fixture(scope="module")
def deleted(catalog):
    """Appends, a copy-on-write delete of some rows, a whole-partition delete."""
    v = create(catalog, [BATCH1, BATCH2, BATCH3], spec=BY_REGION, prefix="deleted")
    v.table.delete(EqualTo("id", 3))  # rewrites a file of partition eu
    v.record()
    v.table.delete(EqualTo("region", "ap"))  # drops partition ap's file
    v.record()
    return v


def test_after_delete(spark, deleted):
    same(read(spark, deleted.name), deleted.arrow())
    ids = {r[0] for r in arrow_rows(deleted.arrow())}
    assert 3 not in ids and 4 not in ids
    for version in deleted.files:
        same(read(spark, deleted.name, versionAsOf=version), deleted.arrow(version))


def widened(catalog, prefix):
    """An append, a new column (a version without data), an append using it."""
    v = create(catalog, [BATCH1], prefix=prefix)
    with v.table.update_schema() as u:
        u.add_column("note", StringType())
    v.record()
    wide = pa.schema([*ARROW, pa.field("note", pa.string())])
    v.table.append(arrow([(10, "eu", 10.5, "new"), (11, "us", None, None)], wide))
    v.record()
    return v


@pytest.fixture(scope="module")
def evolved(catalog):
    """widened, then a renamed column."""
    v = widened(catalog, "evolved")
    with v.table.update_schema() as u:
        u.rename_column("amount", "total")
    v.record()
    return v


def test_schema_change_added_column(spark, evolved):
    """Versions 0-3: created, appended, a column added (a version of its own,
    the old rows read null there), appended with it."""
    assert sorted(evolved.files) == [0, 1, 2, 3, 4]
    for version in (0, 1, 2, 3):
        df = read(spark, evolved.name, versionAsOf=version)
        assert df.columns == (["id", "region", "amount"] if version < 2 else ["id", "region", "amount", "note"])
        same(df, evolved.arrow(version))


def test_change_feed_across_added_column(spark, catalog):
    v = widened(catalog, "widened")
    same(read(spark, v.name), v.arrow())
    cols = ["id", "region", "amount", "note", "_change_type", "_commit_version"]
    assert spark_rows(cdf(spark, v.name, startingVersion=0), cols) == expected_changes(v, 0, v.latest)


def test_schema_change_renamed_column(spark, evolved):
    df = read(spark, evolved.name)
    assert df.columns == ["id", "region", "total", "note"]
    same(df, evolved.arrow())


def test_schema_change_renamed_column_delta_format(spark, evolved):
    same(read(spark, evolved.name, responseFormat="delta"), evolved.arrow())


# --- the change feed


def expected_changes(v, start, end):
    """(row..., _change_type, _commit_version) per version in [start, end]:
    what PyIceberg's scans of consecutive versions differ by (a version
    before 0 is empty), in the columns of version end."""
    out = []
    cols = v.arrow(end).column_names
    for version in range(start, end + 1):
        after = arrow_rows(v.arrow(version), cols)
        before = arrow_rows(v.arrow(version - 1), cols) if version > 0 else []
        out += [r + ("insert", version) for r in multiset_minus(after, before)]
        out += [r + ("delete", version) for r in multiset_minus(before, after)]
    return sort_rows(out)


def cdf(spark, name, **options):
    return read(spark, name, readChangeFeed="true", **options)


def test_change_feed_appends(spark, plain):
    df = cdf(spark, plain.name, startingVersion=0)
    assert sorted(df.columns[-3:]) == ["_change_type", "_commit_timestamp", "_commit_version"]
    cols = [*plain.arrow().column_names, "_change_type", "_commit_version"]
    assert spark_rows(df, cols) == expected_changes(plain, 0, plain.latest)
    # Each change carries its version's time (this connector's
    # _commit_timestamp is a long: epoch milliseconds).
    times = {r["_commit_version"]: r["_commit_timestamp"] for r in df.collect()}
    assert sorted(times) == [1, 2, 3]
    for version, ts in times.items():
        assert ts == plain.files[version][1], version


def test_change_feed_between_versions(spark, plain):
    df = cdf(spark, plain.name, startingVersion=2, endingVersion=3)
    cols = [*plain.arrow().column_names, "_change_type", "_commit_version"]
    assert spark_rows(df, cols) == expected_changes(plain, 2, 3)


def test_change_feed_by_timestamp(spark, plain):
    df = cdf(spark, plain.name, startingTimestamp=plain.timestamp(2), endingTimestamp=plain.timestamp(3))
    cols = [*plain.arrow().column_names, "_change_type", "_commit_version"]
    assert spark_rows(df, cols) == expected_changes(plain, 2, 3)


def test_change_feed_across_deletes(spark, deleted):
    df = cdf(spark, deleted.name, startingVersion=1)
    cols = [*deleted.arrow().column_names, "_change_type", "_commit_version"]
    assert spark_rows(df, cols) == expected_changes(deleted, 1, deleted.latest)


# --- streaming


def stream_all(spark, name, out, **options):
    """One availableNow run of a streaming read into Parquet files under
    out/data (checkpoint out/cp: a later run goes on from there); all the
    rows written so far."""
    r = spark.readStream.format("deltaSharing")
    for k, val in options.items():
        r = r.option(k, str(val))
    q = (r.load(table_url(name)).writeStream.format("parquet").option("path", str(out / "data"))
         .option("checkpointLocation", str(out / "cp")).trigger(availableNow=True).start())
    q.awaitTermination(300)
    assert q.exception() is None, q.exception()
    return spark.read.parquet(str(out / "data"))


def test_streaming_appends(spark, catalog, tmp_path):
    v = create(catalog, [BATCH1, BATCH2], prefix="stream")
    got = stream_all(spark, v.name, tmp_path)
    same(got, v.arrow())
    # Later appends: a second run of the same query (same checkpoint) adds
    # only them, once.
    v.table.append(arrow(BATCH3))
    v.record()
    got = stream_all(spark, v.name, tmp_path)
    same(got, v.arrow())
    assert spark_rows(got) == sort_rows(BATCH1 + BATCH2 + BATCH3)


def test_streaming_from_version(spark, plain, tmp_path):
    got = stream_all(spark, plain.name, tmp_path, startingVersion=2)
    assert spark_rows(got) == sort_rows(BATCH2 + BATCH3)


def test_streaming_change_feed(spark, deleted, tmp_path):
    got = stream_all(spark, deleted.name, tmp_path, readChangeFeed="true", startingVersion=1)
    cols = [*deleted.arrow().column_names, "_change_type", "_commit_version"]
    assert spark_rows(got, cols) == expected_changes(deleted, 1, deleted.latest)
