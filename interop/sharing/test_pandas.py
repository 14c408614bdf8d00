"""The Python Delta Sharing connector (`delta-sharing`, pandas) through
lakegate_sharing, on Iceberg tables PyIceberg writes through the same
gateway's Iceberg REST API.

Every read is compared, row for row, with what was written.
"""

import json
import time
from datetime import date, datetime, timezone
from decimal import Decimal

import delta_sharing
import pyarrow as pa
import pytest
from delta_sharing.protocol import DeltaSharingProfile, Schema as DSchema, Share, Table
from delta_sharing.rest_client import DataSharingRestClient
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import (BinaryType, BooleanType, DateType, DecimalType, DoubleType, IntegerType, LongType,
                             NestedField, StringType, TimestampType, TimestamptzType)
from requests.exceptions import HTTPError

from conftest import ALIAS, ALIAS_SOURCE, NS, OTHER_NS, OTHER_TOKEN, PROFILE, SHARE, changes, expected, load, rows, \
    table_url, unique

SNAPSHOT_FORMATS = ["parquet", "delta"]
CHANGE_FORMATS = ["parquet", "delta"]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "region", StringType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
)
COLUMNS = ["id", "region", "amount"]
ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("region", pa.string()), pa.field("amount", pa.float64())])
BATCH1 = [(1, "eu", 1.5), (2, "us", 2.5), (3, "eu", 3.5)]
BATCH2 = [(4, "ap", 4.5), (5, "us", None)]
BATCH3 = [(6, "eu", 6.5)]


def arrow(batch, schema=ARROW):
    return pa.Table.from_pylist([dict(zip(schema.names, r)) for r in batch], schema=schema)


def create(catalog, name, batches=(), spec=None, ns=NS, schema=SCHEMA):
    tbl = catalog.create_table(f"{ns}.{name}", schema, partition_spec=spec) if spec else \
        catalog.create_table(f"{ns}.{name}", schema)
    for b in batches:
        tbl.append(arrow(b))
    return tbl


def client():
    return DataSharingRestClient(DeltaSharingProfile.read_from_file(PROFILE))


def http_status(exc_info):
    return exc_info.value.response.status_code, exc_info.value.response.json()


# --- listings


@pytest.fixture(scope="module")
def alias(catalog):
    """local.other.hidden_name, shared as extra.renamed_alias."""
    from pyiceberg.exceptions import NoSuchTableError

    try:
        catalog.drop_table(f"{OTHER_NS}.{ALIAS_SOURCE}")
    except NoSuchTableError:
        pass
    return create(catalog, ALIAS_SOURCE, [BATCH3], ns=OTHER_NS)


def test_list_shares_schemas_tables(catalog, alias):
    name = unique("listed")
    create(catalog, name, [BATCH1])
    sc = delta_sharing.SharingClient(PROFILE)
    # Only the recipient's own share: `other` belongs to another recipient.
    assert sc.list_shares() == [Share(SHARE)]
    assert sorted(s.name for s in sc.list_schemas(Share(SHARE))) == ["extra", "sales"]
    tables = sc.list_tables(DSchema(NS, SHARE))
    assert Table(name, SHARE, NS) in tables
    assert all(t.share == SHARE and t.schema == NS for t in tables)
    assert sc.list_tables(DSchema("extra", SHARE)) == [Table(ALIAS, SHARE, "extra")]
    everything = sc.list_all_tables()
    assert Table(name, SHARE, NS) in everything and Table(ALIAS, SHARE, "extra") in everything
    assert set(everything) == set(tables) | {Table(ALIAS, SHARE, "extra")}


def test_list_tables_paged(catalog):
    for _ in range(3):
        create(catalog, unique("paged"))
    rc = client()
    full = rc.list_tables(DSchema(NS, SHARE)).tables
    assert len(full) >= 3
    seen, token, pages = [], None, 0
    while True:
        page = rc.list_tables(DSchema(NS, SHARE), max_results=2, page_token=token)
        assert len(page.tables) <= 2
        seen += page.tables
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert pages >= 2
    assert seen == full


def test_other_share_is_hidden(gateway):
    sc = delta_sharing.SharingClient(PROFILE)
    with pytest.raises(HTTPError) as e:
        sc.list_schemas(Share("other"))
    status, body = http_status(e)
    assert (status, body["errorCode"]) == (404, "RESOURCE_DOES_NOT_EXIST")
    # ... while its own recipient sees it.
    profile = DeltaSharingProfile(share_credentials_version=1, endpoint=json.load(open(PROFILE))["endpoint"],
                                  bearer_token=OTHER_TOKEN)
    assert delta_sharing.SharingClient(profile).list_shares() == [Share("other")]


def test_wrong_token_is_401(gateway):
    profile = DeltaSharingProfile(share_credentials_version=1, endpoint=json.load(open(PROFILE))["endpoint"],
                                  bearer_token="not-a-recipient-token")
    with pytest.raises(HTTPError) as e:
        delta_sharing.SharingClient(profile).list_shares()
    status, body = http_status(e)
    assert (status, body["errorCode"]) == (401, "UNAUTHENTICATED")


def test_unknown_table_is_404(gateway):
    with pytest.raises(HTTPError) as e:
        delta_sharing.get_table_version(table_url("no_such_table"))
    status, body = http_status(e)
    assert (status, body["errorCode"]) == (404, "RESOURCE_DOES_NOT_EXIST")


# --- snapshot reads


@pytest.fixture(scope="module")
def plain(catalog):
    name = unique("plain")
    tbl = create(catalog, name, [BATCH1, BATCH2])
    return name, tbl


@pytest.mark.parametrize("fmt", SNAPSHOT_FORMATS)
def test_unpartitioned(plain, fmt):
    name, tbl = plain
    df = load(name, fmt)
    assert list(df.columns) == COLUMNS
    assert rows(df) == expected(BATCH1 + BATCH2)


def test_unpartitioned_metadata(plain):
    name, tbl = plain
    url = table_url(name)
    assert delta_sharing.get_table_version(url) == 2
    for use_delta in (False, True):
        meta = delta_sharing.get_table_metadata(url, use_delta_format=use_delta)
        assert meta.id == str(tbl.metadata.table_uuid)
        assert meta.partition_columns == []
        assert meta.num_files == 2
        fields = json.loads(meta.schema_string)["fields"]
        assert [(f["name"], f["type"], f["nullable"]) for f in fields] == \
            [("id", "long", True), ("region", "string", True), ("amount", "double", True)]
    # A parquet-only client gets reader version 1; delta+parquet for a table
    # without advanced features: the server may pick parquet (it does).
    assert delta_sharing.get_table_protocol(url, use_delta_format=False).min_reader_version == 1


def test_limit(plain):
    name, _ = plain
    df = delta_sharing.load_as_pandas(table_url(name), limit=2, use_delta_format=False)
    assert len(df) == 2
    assert set(rows(df)) <= set(BATCH1 + BATCH2)


def test_query_files_carry_stats(plain):
    name, tbl = plain
    r = client().list_files_in_table(Table(name, SHARE, NS))
    assert r.delta_table_version == 2
    counts = sorted(json.loads(f.stats)["numRecords"] for f in r.add_files)
    assert counts == [2, 3]
    for f in r.add_files:
        st = json.loads(f.stats)
        if st["numRecords"] == 3:
            assert st["minValues"]["id"] == 1 and st["maxValues"]["id"] == 3
            assert st["nullCount"] == {"id": 0, "region": 0, "amount": 0}
        else:
            assert st["nullCount"]["amount"] == 1


@pytest.fixture(scope="module")
def partitioned(catalog):
    name = unique("parts")
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
    tbl = create(catalog, name, [BATCH1, BATCH2], spec=spec)
    return name, tbl


@pytest.mark.parametrize("fmt", SNAPSHOT_FORMATS)
def test_partitioned(partitioned, fmt):
    name, _ = partitioned
    df = load(name, fmt)
    assert list(df.columns) == COLUMNS
    assert rows(df) == expected(BATCH1 + BATCH2)


def test_partitioned_metadata_and_files(partitioned):
    name, _ = partitioned
    meta = delta_sharing.get_table_metadata(table_url(name))
    assert meta.partition_columns == ["region"]
    r = client().list_files_in_table(Table(name, SHARE, NS))
    assert sorted(f.partition_values["region"] for f in r.add_files) == ["ap", "eu", "us", "us"]


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_partition_hint_prunes(partitioned, fmt):
    name, _ = partitioned
    hint = json.dumps({"op": "equal", "children": [
        {"op": "column", "name": "region", "valueType": "string"},
        {"op": "literal", "value": "eu", "valueType": "string"}]})
    df = load(name, fmt, jsonPredicateHints=hint)
    # Filtering is best effort, but lakegate prunes by partition: only the
    # eu file is listed.
    assert rows(df) == expected([r for r in BATCH1 + BATCH2 if r[1] == "eu"])


@pytest.fixture(scope="module")
def renamed(catalog):
    name = unique("renamed")
    tbl = create(catalog, name, [BATCH1])
    with tbl.update_schema() as u:
        u.rename_column("amount", "total")
    tbl = catalog.load_table(f"{NS}.{name}")
    tbl.append(arrow(BATCH3, pa.schema([ARROW.field("id"), ARROW.field("region"), pa.field("total", pa.float64())])))
    return name, tbl


@pytest.mark.parametrize("fmt", ["auto", "delta"])
def test_renamed_column(renamed, fmt):
    name, _ = renamed
    df = load(name, fmt)
    assert list(df.columns) == ["id", "region", "total"]
    assert rows(df) == expected(BATCH1 + BATCH3)


def test_renamed_column_parquet_refused(renamed):
    # Parquet readers match columns by name: files written before the rename
    # would read the column as nulls, so lakegate refuses parquet (400) and
    # a parquet-or-delta client gets delta (protocol: "must respond in delta
    # format if the table has advanced features ... not compatible with the
    # parquet format").
    name, _ = renamed
    with pytest.raises(HTTPError) as e:
        load(name, "parquet")
    status, body = http_status(e)
    assert (status, body["errorCode"]) == (400, "INVALID_PARAMETER_VALUE")
    proto = delta_sharing.get_table_protocol(table_url(name))
    assert (proto.min_reader_version, proto.reader_features) == (3, ["columnMapping"])


@pytest.fixture(scope="module")
def deleted(catalog):
    name = unique("deleted")
    tbl = create(catalog, name, [BATCH1 + BATCH2])
    tbl.delete(EqualTo("region", "eu"))
    return name, tbl


@pytest.mark.parametrize("fmt", SNAPSHOT_FORMATS)
def test_after_delete(deleted, fmt):
    name, tbl = deleted
    assert [s.summary.operation.value for s in tbl.snapshots()] == ["append", "overwrite"]
    assert delta_sharing.get_table_version(table_url(name)) == 2
    assert rows(load(name, fmt)) == expected([r for r in BATCH1 + BATCH2 if r[1] != "eu"])
    assert rows(load(name, fmt, version=1)) == expected(BATCH1 + BATCH2)


TYPES_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "i", IntegerType(), required=False),
    NestedField(3, "b", BooleanType(), required=False),
    NestedField(4, "d", DateType(), required=False),
    NestedField(5, "ts", TimestamptzType(), required=False),
    NestedField(6, "dec", DecimalType(10, 2), required=False),
    NestedField(7, "bin", BinaryType(), required=False),
)
TYPES_ARROW = pa.schema([
    pa.field("id", pa.int64(), nullable=False), pa.field("i", pa.int32()), pa.field("b", pa.bool_()),
    pa.field("d", pa.date32()), pa.field("ts", pa.timestamp("us", tz="UTC")), pa.field("dec", pa.decimal128(10, 2)),
    pa.field("bin", pa.binary()),
])
TYPES_ROWS = [
    (1, 7, True, date(2024, 1, 2), datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc), Decimal("12.34"),
     b"\x00\x01"),
    (2, None, None, None, None, None, None),
    (3, -1, False, date(1970, 1, 1), datetime(1999, 12, 31, 23, 59, 59, tzinfo=timezone.utc), Decimal("-0.01"), b""),
]


@pytest.fixture(scope="module")
def typed(catalog):
    name = unique("types")
    tbl = catalog.create_table(f"{NS}.{name}", TYPES_SCHEMA)
    tbl.append(arrow(TYPES_ROWS, TYPES_ARROW))
    return name, tbl


@pytest.mark.parametrize("fmt", SNAPSHOT_FORMATS)
def test_types(typed, fmt):
    name, _ = typed
    df = load(name, fmt)
    assert list(df.columns) == TYPES_ARROW.names
    assert rows(df) == expected(TYPES_ROWS)


@pytest.fixture(scope="module")
def ntz(catalog):
    name = unique("ntz")
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "at", TimestampType()))
    tbl = catalog.create_table(f"{NS}.{name}", schema)
    tbl.append(pa.table({"id": pa.array([1, 2], pa.int64()),
                         "at": pa.array([datetime(2024, 5, 6, 7, 8, 9), None], pa.timestamp("us"))}))
    return name, tbl


@pytest.mark.parametrize("fmt", ["auto", "delta"])
def test_timestamp_ntz(ntz, fmt):
    # Iceberg timestamp (no zone) is Delta timestamp_ntz: delta format only.
    name, _ = ntz
    df = load(name, fmt)
    assert rows(df) == expected([(1, datetime(2024, 5, 6, 7, 8, 9)), (2, None)])


@pytest.mark.parametrize("fmt", SNAPSHOT_FORMATS)
def test_empty_table(catalog, fmt):
    name = unique("empty")
    create(catalog, name)
    assert delta_sharing.get_table_version(table_url(name)) == 0
    df = load(name, fmt)
    assert (list(df.columns), len(df)) == (COLUMNS, 0)


def test_names_are_case_insensitive(plain):
    # Protocol: share, schema and table names are case-insensitive.
    name, _ = plain
    url = f"{PROFILE}#{SHARE.upper()}.{NS.upper()}.{name.upper()}"
    assert delta_sharing.get_table_version(url) == 2
    assert rows(delta_sharing.load_as_pandas(url, use_delta_format=False)) == expected(BATCH1 + BATCH2)


def test_timestamp_ntz_parquet_refused(ntz):
    name, _ = ntz
    with pytest.raises(HTTPError) as e:
        load(name, "parquet")
    status, body = http_status(e)
    assert (status, body["errorCode"]) == (400, "INVALID_PARAMETER_VALUE")
    proto = delta_sharing.get_table_protocol(table_url(name))
    assert proto.min_reader_version == 3 and "timestampNtz" in proto.reader_features


def test_alias_table(alias):
    # Schema `extra` shares one table of namespace `other` under another name.
    df = load(ALIAS, "parquet", schema="extra")
    assert rows(df) == expected(BATCH3)
    assert delta_sharing.get_table_metadata(table_url(ALIAS, "extra")).id == str(alias.metadata.table_uuid)


# --- history: time travel and the change feed


def _ts(ms):
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def _iso(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module")
def history(catalog):
    """Three appends, more than a second apart (the protocol's timestamps
    have whole seconds)."""
    name = unique("history")
    tbl = create(catalog, name)
    for i, b in enumerate((BATCH1, BATCH2, BATCH3)):
        if i:
            time.sleep(1.1)
        tbl.append(arrow(b))
    snaps = tbl.snapshots()
    assert [s.sequence_number for s in snaps] == [1, 2, 3]
    return name, [s.timestamp_ms for s in snaps]


@pytest.mark.parametrize("fmt", SNAPSHOT_FORMATS)
def test_time_travel_version(history, fmt):
    name, _ = history
    assert rows(load(name, fmt, version=1)) == expected(BATCH1)
    assert rows(load(name, fmt, version=2)) == expected(BATCH1 + BATCH2)
    assert rows(load(name, fmt, version=3)) == expected(BATCH1 + BATCH2 + BATCH3)
    assert rows(load(name, fmt)) == expected(BATCH1 + BATCH2 + BATCH3)


@pytest.mark.parametrize("fmt", SNAPSHOT_FORMATS)
def test_time_travel_timestamp(history, fmt):
    name, ts = history
    # The first whole second at or after version 2's commit is before version 3's.
    at2 = _iso(_ts((ts[1] // 1000 + 1) * 1000))
    assert rows(load(name, fmt, timestamp=at2)) == expected(BATCH1 + BATCH2)
    with pytest.raises(HTTPError) as e:
        load(name, fmt, timestamp="2000-01-01T00:00:00Z")
    assert http_status(e)[0] == 400  # before the first version


def test_version_at_timestamp(history):
    name, ts = history
    url = table_url(name)
    assert delta_sharing.get_table_version(url) == 3
    # The earliest version committed at or after the second version 2 began in.
    assert delta_sharing.get_table_version(url, starting_timestamp=_iso(_ts(ts[1] // 1000 * 1000))) == 2


def _feed(df):
    return rows(df, COLUMNS + ["_change_type", "_commit_version"])


def _commit_ms(df):
    """_commit_timestamp per version (ms; the kernel path answers datetimes)."""
    out = {}
    for v, t in zip(df["_commit_version"], df["_commit_timestamp"]):
        out[int(v)] = int(t.timestamp() * 1000) if hasattr(t, "timestamp") else int(t)
    return out


@pytest.mark.parametrize("fmt", CHANGE_FORMATS)
def test_change_feed(history, fmt):
    name, ts = history
    df = changes(name, fmt, starting_version=1, ending_version=2)
    assert _feed(df) == expected([r + ("insert", 1) for r in BATCH1] + [r + ("insert", 2) for r in BATCH2])
    commit = _commit_ms(df)
    # The parquet path carries the file's ms timestamp; the kernel path the
    # log file's mtime (whole seconds).
    assert abs(commit[1] - ts[0]) < 1000 and abs(commit[2] - ts[1]) < 1000


@pytest.mark.parametrize("fmt", CHANGE_FORMATS)
def test_change_feed_open_end_and_timestamp(history, fmt):
    name, ts = history
    df = changes(name, fmt, starting_version=2)
    assert _feed(df) == expected([r + ("insert", 2) for r in BATCH2] + [r + ("insert", 3) for r in BATCH3])
    df = changes(name, fmt, starting_timestamp=_iso(_ts((ts[0] // 1000 + 1) * 1000)))
    assert _feed(df) == expected([r + ("insert", 2) for r in BATCH2] + [r + ("insert", 3) for r in BATCH3])


@pytest.fixture(scope="module")
def whole_file_delete(catalog):
    """A partitioned table whose delete drops whole files (an Iceberg delete
    snapshot with no rewritten file)."""
    name = unique("dropfiles")
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
    tbl = create(catalog, name, [BATCH1 + BATCH2], spec=spec)
    tbl.delete(EqualTo("region", "eu"))
    assert tbl.snapshots()[-1].summary.operation.value == "delete"
    return name, tbl


@pytest.mark.parametrize("fmt", CHANGE_FORMATS)
def test_change_feed_whole_file_delete(whole_file_delete, fmt):
    name, _ = whole_file_delete
    df = changes(name, fmt, starting_version=2, ending_version=2)
    assert _feed(df) == expected([r + ("delete", 2) for r in BATCH1 + BATCH2 if r[1] == "eu"])
    assert rows(load(name, "parquet")) == expected([r for r in BATCH1 + BATCH2 if r[1] != "eu"])


@pytest.mark.parametrize("fmt", CHANGE_FORMATS)
def test_change_feed_partial_delete_net_effect(deleted, fmt):
    # Whatever form the feed takes, its inserts minus its deletes are the
    # rows the delete removed.
    name, _ = deleted
    df = changes(name, fmt, starting_version=2, ending_version=2)
    feed = _feed(df)
    ins = [r[:3] for r in feed if r[3] == "insert"]
    dele = [r[:3] for r in feed if r[3] == "delete"]
    for r in ins:
        dele.remove(r)
    assert expected(dele) == expected([r for r in BATCH1 + BATCH2 if r[1] == "eu"])


@pytest.mark.parametrize("fmt", CHANGE_FORMATS)
def test_change_feed_partial_delete(deleted, fmt):
    # A row-level change feed: the delete removed the eu rows, nothing else
    # changed (lakegate derives it from the rewritten files: a cdf file).
    name, _ = deleted
    df = changes(name, fmt, starting_version=2, ending_version=2)
    feed = _feed(df)
    removed = [r for r in BATCH1 + BATCH2 if r[1] == "eu"]
    spurious = [r for r in feed if r[:3] not in removed]
    assert spurious == [], f"rows the delete did not touch are in the feed: {spurious}"
    assert feed == expected([r + ("delete", 2) for r in removed])


@pytest.fixture(scope="module")
def updated(catalog):
    """An update as PyIceberg writes one: overwrite with a filter, a
    copy-on-write delete and an append in one commit (one version, two
    snapshots)."""
    name = unique("updated")
    tbl = create(catalog, name, [BATCH1])
    tbl.overwrite(arrow([(2, "us", 99.5)]), overwrite_filter=EqualTo("id", 2))
    return name, tbl


@pytest.mark.parametrize("fmt", CHANGE_FORMATS)
def test_change_feed_update(updated, fmt):
    name, _ = updated
    df = changes(name, fmt, starting_version=2)
    assert _feed(df) == expected([(2, "us", 2.5, "delete", 2), (2, "us", 99.5, "insert", 2)])


@pytest.mark.parametrize("fmt", CHANGE_FORMATS)
def test_change_feed_from_version_0(history, fmt):
    # Version 0 is the table before its first snapshot: no changes of its own.
    name, _ = history
    df = changes(name, fmt, starting_version=0, ending_version=1)
    assert _feed(df) == expected([r + ("insert", 1) for r in BATCH1])


# --- a table the UC Delta API created: Sharing shows the Delta client's types

UC = "/api/2.1/unity-catalog/delta/v1/catalogs/local/schemas/" + NS


def uc_create(gateway, name, cols):
    """createTable through the UC Delta API at a location the catalog allocates."""
    import requests

    staged = requests.post(f"{gateway}{UC}/staging-tables", json={"name": name})
    staged.raise_for_status()
    created = requests.post(f"{gateway}{UC}/tables", json={
        "name": name, "location": staged.json()["location"], "table-type": "MANAGED", "columns": cols,
        "protocol": {"min-reader-version": 1, "min-writer-version": 2}, "properties": {},
        "last-commit-timestamp-ms": int(time.time() * 1000)})
    assert created.status_code == 200, created.text
    return created.json()


NARROW_COLUMNS = {"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": False, "metadata": {}},
    {"name": "s", "type": "short", "nullable": True, "metadata": {}},
    {"name": "b", "type": "byte", "nullable": True, "metadata": {}}]}
NARROW_ROWS = [(1, -300, -128), (2, None, 5), (3, 32767, None)]


@pytest.fixture(scope="module")
def narrow(catalog, gateway):
    """A table a Delta client created with short and byte columns, and files
    as a Delta writer writes them (Parquet INT32 annotated INT(16)/INT(8)),
    added to the Iceberg table with PyIceberg's add_files."""
    import pyarrow.parquet as pq

    name = unique("narrow")
    created = uc_create(gateway, name, NARROW_COLUMNS)
    tbl = catalog.load_table(f"{NS}.{name}")
    path = tbl.location().removeprefix("file://") + "/data/delta-writer.parquet"
    import os
    os.makedirs(os.path.dirname(path), exist_ok=True)
    delta_schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.int16()),
                              pa.field("b", pa.int8())])
    pq.write_table(pa.Table.from_pylist([dict(zip(delta_schema.names, r)) for r in NARROW_ROWS], schema=delta_schema),
                   path)
    tbl.add_files(["file://" + path])
    return name, created


@pytest.fixture(scope="module")
def narrow_iceberg_written(catalog, gateway):
    """The same table shape, written by an Iceberg writer: PyIceberg writes
    the Iceberg int columns as plain Parquet INT32."""
    name = unique("narrow_ice")
    uc_create(gateway, name, NARROW_COLUMNS)
    tbl = catalog.load_table(f"{NS}.{name}")
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.int32()), pa.field("b", pa.int32())])
    tbl.append(pa.Table.from_pylist([dict(zip(schema.names, r)) for r in NARROW_ROWS], schema=schema))
    return name


def test_uc_types_agree_with_sharing(narrow):
    name, created = narrow
    uc_types = {f["name"]: f["type"] for f in created["metadata"]["columns"]["fields"]}
    assert uc_types == {"id": "long", "s": "short", "b": "byte"}
    for use_delta in (False, True):
        meta = delta_sharing.get_table_metadata(table_url(name), use_delta_format=use_delta)
        shared = {f["name"]: f["type"] for f in json.loads(meta.schema_string)["fields"]}
        assert shared == uc_types, use_delta


@pytest.mark.parametrize("fmt", SNAPSHOT_FORMATS)
def test_uc_narrow_types_read(narrow, fmt):
    name, _ = narrow
    df = load(name, fmt)
    assert rows(df) == expected(NARROW_ROWS)


@pytest.mark.parametrize("fmt", SNAPSHOT_FORMATS)
def test_uc_narrow_types_iceberg_written(narrow_iceberg_written, fmt):
    df = load(narrow_iceberg_written, fmt)
    assert rows(df) == expected(NARROW_ROWS)


# --- every metadata change is a version

@pytest.fixture(scope="module")
def evolved(catalog):
    """create (0), append (1), a property commit (2), a new column (3): no snapshot for 2 and 3."""
    name = unique("evolved")
    tbl = create(catalog, name, [BATCH1])
    with tbl.transaction() as tx:
        tx.set_properties(owner="sales")
    with tbl.update_schema() as upd:
        upd.add_column("note", StringType())
    return name, tbl


def test_metadata_only_commits_are_versions(evolved):
    name, _ = evolved
    url = table_url(name)
    assert delta_sharing.get_table_version(url) == 3
    for use_delta in (False, True):
        meta = delta_sharing.get_table_metadata(url, use_delta_format=use_delta)
        names = [f["name"] for f in json.loads(meta.schema_string)["fields"]]
        assert names == COLUMNS + ["note"], "the new column at once"
        assert meta.configuration.get("owner") == "sales"


@pytest.mark.parametrize("fmt", SNAPSHOT_FORMATS)
def test_metadata_only_versions_time_travel(evolved, fmt):
    name, _ = evolved
    assert list(load(name, fmt, version=2).columns) == COLUMNS, "before the new column"
    assert rows(load(name, fmt, version=2)) == expected(BATCH1)
    latest = load(name, fmt)
    assert list(latest.columns) == COLUMNS + ["note"]
    assert rows(latest) == expected([r + (None,) for r in BATCH1])
