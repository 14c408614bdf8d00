"""Shared setup of the oracle suite (test_oracle.py).

run.sh starts moto (S3), Delta Sharing's reference server and lakegate and
tells the tests where they are; without these variables every test skips
with the reason:

  ORACLE_LAKEGATE_URI      lakegate (Iceberg REST at /v1, warehouse `local`)
  ORACLE_LAKEGATE_PROFILE  lakegate's recipient profile (share `oracle`)
  ORACLE_REF_PROFILE       the reference server's profile (share `oracle`)
  ORACLE_S3                http://127.0.0.1:PORT/BUCKET, where the Delta tables go

Both servers share `oracle.sales.<table>` for the same four tables. The
`tables` fixture writes them, operation by operation, on both sides: with
delta-rs (deltalake) as Delta tables on S3 for the reference server, with
PyIceberg through lakegate's Iceberg REST door for lakegate, and records
each side's version after each operation.

Versions line up by construction: a Delta table created empty
(DeltaTable.create) is version 0 and every later commit is one version; an
Iceberg table created empty is lakegate's version 0 (its metadata file
00000) and every later commit writes one metadata file, which is one
lakegate version. Each operation below is one commit on each side, so the
Nth operation is version N on both (test_versions_align checks it).

expected-failures.txt lists what lakegate answers differently from the
reference server where the protocol does not allow it; conftest marks
those tests xfail(strict=True) (see interop/expected_failures.py).
"""

import datetime as dt
import os
import re
import sys
import urllib.parse

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)

LG_URI = os.environ.get("ORACLE_LAKEGATE_URI", "")
LG_PROFILE = os.environ.get("ORACLE_LAKEGATE_PROFILE", "")
REF_PROFILE = os.environ.get("ORACLE_REF_PROFILE", "")
S3 = os.environ.get("ORACLE_S3", "")
SHARE, NS = "oracle", "sales"
SIDES = {"reference": REF_PROFILE, "lakegate": LG_PROFILE}
REGIONS = ["a/b", "c d", "100%", "plain"]  # partition values: '/', space, '%' and a plain one
FORMATS = {"parquet": False, "delta": True}


def url(side, table):
    return f"{SIDES[side]}#{SHARE}.{NS}.{table}"


# --- the columns, as both writers see them

def columns(with_score=False):
    """[(name, iceberg type, arrow type)]; every column optional/nullable."""
    import pyarrow as pa
    from pyiceberg.types import DateType, DoubleType, LongType, StringType, TimestamptzType

    cols = [("id", LongType(), pa.int64()), ("region", StringType(), pa.string()),
            ("amount", DoubleType(), pa.float64()), ("day", DateType(), pa.date32()),
            ("ts", TimestamptzType(), pa.timestamp("us", tz="UTC"))]
    if with_score:
        cols.append(("score", DoubleType(), pa.float64()))
    return cols


def batch(ids, with_score=False):
    """Rows for ids: region cycles over REGIONS, every 7th amount is null."""
    import pyarrow as pa

    cols = columns(with_score)
    base = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    data = {
        "id": ids,
        "region": [REGIONS[i % len(REGIONS)] for i in ids],
        "amount": [None if i % 7 == 0 else i * 1.5 for i in ids],
        "day": [dt.date(2026, 1, 1) + dt.timedelta(days=i) for i in ids],
        "ts": [base + dt.timedelta(hours=i, microseconds=i) for i in ids],
    }
    if with_score:
        data["score"] = [i / 4 for i in ids]
    schema = pa.schema([pa.field(n, t, nullable=True) for n, _, t in cols])
    return pa.table({n: data[n] for n, _, _ in cols}, schema=schema)


# --- one table on both sides

class Pair:
    """A table written to both sides by the same operations. versions[side]
    is that side's version after each operation (creation first)."""

    def __init__(self, name, catalog, s3opts, partitioned, cdf=False):
        import pyarrow as pa
        from deltalake import DeltaTable
        from pyiceberg.partitioning import PartitionField, PartitionSpec
        from pyiceberg.schema import Schema
        from pyiceberg.transforms import IdentityTransform
        from pyiceberg.types import NestedField

        self.name, self.s3opts = name, s3opts
        self.uri = f"s3://{urllib.parse.urlparse(S3).path.strip('/')}/{name}"
        cols = columns()
        config = {"delta.enableChangeDataFeed": "true"} if cdf else None
        DeltaTable.create(self.uri, schema=pa.schema([pa.field(n, t, nullable=True) for n, _, t in cols]),
                          partition_by=["region"] if partitioned else None, configuration=config,
                          storage_options=s3opts)
        schema = Schema(*[NestedField(i + 1, n, t, required=False) for i, (n, t, _) in enumerate(cols)])
        spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region")) if partitioned else PartitionSpec()
        self.iceberg = catalog.create_table(f"{NS}.{name}", schema=schema, partition_spec=spec)
        self.versions = {"reference": [], "lakegate": []}
        self.record()

    def delta(self):
        from deltalake import DeltaTable

        return DeltaTable(self.uri, storage_options=self.s3opts)

    def record(self):
        self.versions["reference"].append(self.delta().version())
        self.iceberg = self.iceberg.refresh()
        self.versions["lakegate"].append(
            int(re.match(r"(\d+)-", os.path.basename(self.iceberg.metadata_location)).group(1)))

    @property
    def latest(self):
        return self.versions["reference"][-1]

    def append(self, tbl):
        from deltalake import write_deltalake

        write_deltalake(self.uri, tbl, mode="append", storage_options=self.s3opts)
        self.iceberg.append(tbl)
        self.record()

    def delete(self, predicate):
        """predicate: SQL both sides parse (delta-rs: DataFusion; PyIceberg: its parser)."""
        self.delta().delete(predicate)
        self.iceberg.delete(predicate)
        self.record()

    def add_column(self, name):
        from deltalake import Field
        from pyiceberg.types import DoubleType

        self.delta().alter.add_columns([Field(name, "double", nullable=True)])
        with self.iceberg.update_schema() as u:
            u.add_column(name, DoubleType())
        self.record()

    def update_amount(self, ident, factor):
        """amount *= factor for row id: delta-rs UPDATE; PyIceberg overwrite
        with a filter (delete the row, append its new version, one commit)."""
        import pyarrow.compute as pc

        self.delta().update(updates={"amount": f"amount * {factor}"}, predicate=f"id = {ident}")
        old = self.iceberg.scan(row_filter=f"id = {ident}").to_arrow()
        new = old.set_column(old.schema.get_field_index("amount"), old.schema.field("amount"),
                             pc.multiply(old["amount"], factor))
        self.iceberg.overwrite(new, overwrite_filter=f"id = {ident}")
        self.record()


@pytest.fixture(scope="session")
def servers():
    if not (LG_URI and LG_PROFILE and REF_PROFILE and S3):
        pytest.skip("ORACLE_* variables are not set (run.sh did not start the servers)")
    return True


@pytest.fixture(scope="session")
def tables(servers):
    """The four tables, written once: {name: Pair}."""
    from pyiceberg.catalog import load_catalog

    endpoint = f"{urllib.parse.urlparse(S3).scheme}://{urllib.parse.urlparse(S3).netloc}"
    s3opts = {"AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1",
              "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "oracle"),
              "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "oracle-secret"),
              "AWS_S3_ALLOW_UNSAFE_RENAME": "true", "AWS_FORCE_PATH_STYLE": "true"}
    cat = load_catalog("lakegate", type="rest", uri=LG_URI, warehouse="local")
    cat.create_namespace(NS)
    out = {}

    # (1) partitioned, four appends of 12 rows over four partitions: 16 files
    #     per side, partition values with '/', space and '%'.
    t = out["parts"] = Pair("parts", cat, s3opts, partitioned=True)
    for k in range(4):
        t.append(batch(list(range(k * 12, k * 12 + 12))))

    # (2) partitioned, two appends, then a delete of some rows (every
    #     partition keeps rows: both writers rewrite the files).
    t = out["deletes"] = Pair("deletes", cat, s3opts, partitioned=True)
    t.append(batch(list(range(0, 10))))
    t.append(batch(list(range(10, 20))))
    t.delete("id IN (1, 2, 5, 12, 13, 18)")

    # (3) unpartitioned: append, add a column, append with it.
    #     The Delta side has a change data feed, so that the reference
    #     server answers its /changes too (with includeHistoricalMetadata).
    t = out["evolve"] = Pair("evolve", cat, s3opts, partitioned=False, cdf=True)
    t.append(batch(list(range(0, 6))))
    t.add_column("score")
    t.append(batch(list(range(6, 12)), with_score=True))

    # (4) change data feed (Delta: delta.enableChangeDataFeed from creation;
    #     lakegate: its change_data_dir, every table has a feed): appends, a
    #     delete of some rows, an update of one row, an append.
    t = out["cdf"] = Pair("cdf", cat, s3opts, partitioned=True, cdf=True)
    t.append(batch(list(range(0, 8))))
    t.append(batch(list(range(8, 16))))
    t.delete("id IN (3, 9, 10)")
    t.update_amount(11, 2)
    t.append(batch(list(range(16, 20))))
    return out


# --- exact row comparison

def _norm(v):
    import pandas as pd

    if v is None or v is pd.NaT or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, pd.Timestamp):
        v = v.to_pydatetime()
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    if hasattr(v, "item") and not isinstance(v, (bytes, str)):  # numpy scalars
        return v.item()
    return v


def rows(df, cols=None):
    """The rows of a DataFrame as sorted tuples (None for every kind of null)."""
    cols = list(cols if cols is not None else df.columns)
    out = [tuple(_norm(v) for v in rec) for rec in df[cols].itertuples(index=False, name=None)]
    return sorted(out, key=lambda r: tuple((x is None, str(x)) for x in r))


# --- expected-failures.txt

def pytest_collection_modifyitems(config, items):
    listed = expected_failures.load(os.path.dirname(__file__))
    for item in items:
        params = getattr(item, "callspec", None) and item.callspec.params or {}
        key = expected_failures.key(item)
        if key not in listed:
            continue
        keys, reason, match = listed[key]
        # KEYS: `*`, or parameter values (tables, formats): the entry is for
        # the items with any of them.
        if "*" in keys or keys & {str(v) for v in params.values()}:
            expected_failures.mark(item, f"{reason[0] if reason else ''} (expected-failures.txt)", match)


# The report hook: only the listed failures are expected (see expected_failures.py).
from expected_failures import pytest_runtest_makereport  # noqa: E402,F401
