"""The Python Delta Sharing connector (`delta-sharing`, pandas) reading
tables delta-rs (`deltalake`) writes, as a Delta user shares them: an
EXTERNAL table in the gateway's warehouse, registered through Unity
Catalog's createTable without columns (its Delta log is its truth).

Delta writers keep partition columns out of the Parquet files, so the
partition column reaches the reader only through the answer's
partitionValues; versions are the Delta log's. Every read is compared,
row for row, with what delta-rs wrote at that version.
"""

import json
import os
import urllib.request

import delta_sharing
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from conftest import NS, URI, changes, expected, load, rows, table_url, unique

WAREHOUSE = os.environ.get("LAKEGATE_SHARING_WAREHOUSE", "")
FORMATS = ["parquet", "delta"]
COLUMNS = ["id", "region", "amount"]
ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("region", pa.string()), pa.field("amount", pa.float64())])
# Versions 0, 1, 2: three appends (the last one's region needs escaping
# in a partition directory name); version 3 deletes DELETED, rewriting its
# file, with change data files (the change data feed is on).
BATCHES = [
    [(1, "eu", 1.5), (2, "us", 2.5), (3, "eu", 3.5)],
    [(4, "ap", 4.5), (5, "us", None)],
    [(6, "x y", 6.5)],
]
DELETED = (1, "eu", 1.5)
ALL = [r for b in BATCHES for r in b]


def _arrow(batch):
    return pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in batch], schema=ARROW)


def _register(name, location):
    """UC's createTable: EXTERNAL, DELTA, a storage location, no columns."""
    body = json.dumps({"name": name, "catalog_name": "local", "schema_name": NS, "table_type": "EXTERNAL",
                       "data_source_format": "DELTA", "storage_location": "file://" + location,
                       "columns": []}).encode()
    req = urllib.request.Request(URI + "/api/2.1/unity-catalog/tables", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as resp:
        assert resp.status == 200, resp.read()


@pytest.fixture(scope="module")
def deltars(catalog):
    """A partitioned table delta-rs wrote in four versions, registered
    after its first, with the change data feed on."""
    if not WAREHOUSE:
        pytest.skip("LAKEGATE_SHARING_WAREHOUSE is not set (run.sh did not start lakegate)")
    name = unique("deltars")
    location = os.path.join(WAREHOUSE, NS, name)
    for i, batch in enumerate(BATCHES):
        write_deltalake(location, _arrow(batch), mode="append", partition_by=["region"],
                        configuration={"delta.enableChangeDataFeed": "true"} if i == 0 else None)
        if i == 0:
            _register(name, location)
    dt = DeltaTable(location)
    dt.delete(f"id = {DELETED[0]}")
    assert dt.version() == 3
    return name, dt


@pytest.mark.parametrize("fmt", FORMATS)
def test_partition_column_is_not_null(deltars, fmt):
    name, _ = deltars
    df = load(name, fmt)
    assert rows(df, COLUMNS) == expected([r for r in ALL if r != DELETED])


def test_metadata_declares_the_logs_partition_columns(deltars):
    name, dt = deltars
    meta = delta_sharing.get_table_metadata(table_url(name))
    assert meta.partition_columns == ["region"]
    assert meta.id == dt.metadata().id


def test_versions_are_the_logs(deltars):
    name, _ = deltars
    assert delta_sharing.get_table_version(table_url(name)) == 3


@pytest.mark.parametrize("fmt", FORMATS)
def test_time_travel_by_delta_version(deltars, fmt):
    name, dt = deltars
    for v in range(3):
        assert rows(load(name, fmt, version=v), COLUMNS) == expected([r for b in BATCHES[:v + 1] for r in b])
        dt.load_as_version(v)
        assert rows(dt.to_pandas(), COLUMNS) == expected([r for b in BATCHES[:v + 1] for r in b])


@pytest.mark.parametrize("fmt", FORMATS)
def test_change_feed_by_delta_version(deltars, fmt):
    name, _ = deltars
    df = changes(name, fmt, starting_version=0)
    want = [r + ("insert", v) for v, b in enumerate(BATCHES) for r in b] + [DELETED + ("delete", 3)]
    assert rows(df, COLUMNS + ["_change_type", "_commit_version"]) == expected(want)
