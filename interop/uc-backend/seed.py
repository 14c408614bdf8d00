#!/usr/bin/env python3
"""seed.py UC_API WAREHOUSE OUT_JSON: the uc-backend suite's tables in a
fresh Unity Catalog server (run.sh starts it).

UC's Iceberg REST endpoint serves only UniForm tables: Delta tables whose
UC entry carries `uniform.iceberg.metadata-location`, an Iceberg metadata
file UC reads (IcebergRestCatalogService.loadTable). So the Iceberg side is
written first, by PyIceberg into a SqlCatalog (SQLite) under WAREHOUSE,
and each table is then registered in UC through its Delta REST API
(`POST /delta/v1/catalogs/{c}/schemas/{s}/tables`) as an EXTERNAL table at
the Iceberg table's location, with what UC requires of a UniForm create
(DeltaCreateTableMapper, DeltaUniformUtils at c9ed6b14):

- `delta.universalFormat.enabledFormats` = `iceberg` in properties, and the
  `uniform` block, both or neither;
- `uniform.iceberg.metadata-location` strictly under the table location,
  `converted-delta-version` 0 or 1, `converted-delta-timestamp` set;
- name, location, table-type, columns (Delta types), protocol,
  last-commit-timestamp-ms. An EXTERNAL table skips the catalog-managed
  contract, and UC does not look for a _delta_log there.

loadTable then checks that the metadata's `location` equals the registered
location, so the UC location is PyIceberg's table location as it wrote it.

Made here (UC_API is http://host:port/api/2.1/unity-catalog):
  catalog  unity                 (POST /catalogs)
  schemas  unity.sales, unity.other   (POST /schemas; other stays empty)
  tables   sales.plain        UniForm, 2 snapshots (two appends)
           sales.partitioned  UniForm, identity-partitioned by region
           sales.delta_only   a plain Delta table (no uniform): UC's
                              Iceberg endpoint must neither list nor load it
OUT_JSON gets, per UniForm table, its rows (per snapshot), location,
metadata location, schema and partition fields, for the tests to compare
against.
"""

import datetime as dt
import json
import os
import sys
import time

import pyarrow as pa
import requests
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DateType, DoubleType, LongType, NestedField, StringType

CATALOG, SCHEMA, OTHER = "unity", "sales", "other"

PLAIN_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
)
PLAIN_ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string()),
                         pa.field("amount", pa.float64())])
# Two appends: two snapshots, read back whole and as of the first.
PLAIN_BATCHES = [
    [{"id": 1, "name": "alpha", "amount": 10.5}, {"id": 2, "name": "beta", "amount": None},
     {"id": 3, "name": None, "amount": -3.25}],
    [{"id": 4, "name": "delta", "amount": 1e9}, {"id": 5, "name": "épsilon ✓", "amount": 0.0}],
]

PART_SCHEMA = Schema(
    NestedField(1, "order_id", LongType(), required=True),
    NestedField(2, "region", StringType(), required=True),
    NestedField(3, "day", DateType(), required=False),
    NestedField(4, "total", DoubleType(), required=False),
)
PART_SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"))
PART_ARROW = pa.schema([pa.field("order_id", pa.int64(), nullable=False), pa.field("region", pa.string(), nullable=False),
                        pa.field("day", pa.date32()), pa.field("total", pa.float64())])
PART_ROWS = [
    {"order_id": i, "region": region, "day": dt.date(2026, 1, 1 + i % 28), "total": round(i * 1.5, 2)}
    for i, region in enumerate(["eu", "us", "apac", "eu", "us", "eu", "apac", "us", "eu"], start=100)
]

# Delta column types of the UC entries (UC keeps them as the table's columns).
DELTA_TYPES = {LongType(): "long", StringType(): "string", DoubleType(): "double", DateType(): "date"}


def delta_columns(schema):
    return {"type": "struct", "fields": [
        {"name": f.name, "type": DELTA_TYPES[f.field_type], "nullable": not f.required, "metadata": {}}
        for f in schema.fields]}


def post(url, body):
    r = requests.post(url, json=body, timeout=30)
    if r.status_code != 200:
        raise SystemExit(f"seed: POST {url} answered {r.status_code}: {r.text[:500]}")
    return r.json()


def register(api, name, schema, location, metadata_location, partition_columns=()):
    """The UC Delta API create of an EXTERNAL UniForm table (or, without
    metadata_location, a plain Delta one)."""
    now = int(time.time() * 1000)
    body = {
        "name": name, "location": location, "table-type": "EXTERNAL",
        "columns": delta_columns(schema), "partition-columns": list(partition_columns),
        "protocol": {"min-reader-version": 1, "min-writer-version": 2},
        "properties": {}, "last-commit-timestamp-ms": now,
    }
    if metadata_location:
        body["properties"] = {"delta.universalFormat.enabledFormats": "iceberg",
                              "delta.enableIcebergCompatV2": "true"}
        body["uniform"] = {"iceberg": {"metadata-location": metadata_location, "converted-delta-version": 0,
                                       "converted-delta-timestamp": now}}
    return post(f"{api}/delta/v1/catalogs/{CATALOG}/schemas/{SCHEMA}/tables", body)


def jsonable(rows):
    return [{k: (v.isoformat() if isinstance(v, dt.date) else v) for k, v in r.items()} for r in rows]


def main():
    api, warehouse, out = sys.argv[1].rstrip("/"), os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(warehouse, exist_ok=True)
    post(f"{api}/catalogs", {"name": CATALOG, "comment": "interop/uc-backend"})
    for s in (SCHEMA, OTHER):
        post(f"{api}/schemas", {"name": s, "catalog_name": CATALOG})

    ice = SqlCatalog("seed", uri=f"sqlite:///{warehouse}/seed.db", warehouse=f"file://{warehouse}")
    ice.create_namespace(SCHEMA)
    seeded = {}

    plain = ice.create_table(f"{SCHEMA}.plain", schema=PLAIN_SCHEMA)
    snapshots = []
    for batch in PLAIN_BATCHES:
        plain.append(pa.Table.from_pylist(batch, schema=PLAIN_ARROW))
        snapshots.append(plain.current_snapshot().snapshot_id)
    register(api, "plain", PLAIN_SCHEMA, plain.location(), plain.metadata_location)
    seeded["plain"] = {
        "rows": jsonable([r for b in PLAIN_BATCHES for r in b]),
        "snapshots": [{"snapshot_id": sid, "rows": jsonable([r for b in PLAIN_BATCHES[:i + 1] for r in b])}
                      for i, sid in enumerate(snapshots)],
        "location": plain.location(), "metadata_location": plain.metadata_location,
        "table_uuid": str(plain.metadata.table_uuid),
        "columns": [f.name for f in PLAIN_SCHEMA.fields], "partition_fields": [],
    }

    part = ice.create_table(f"{SCHEMA}.partitioned", schema=PART_SCHEMA, partition_spec=PART_SPEC)
    part.append(pa.Table.from_pylist(PART_ROWS, schema=PART_ARROW))
    register(api, "partitioned", PART_SCHEMA, part.location(), part.metadata_location, ["region"])
    seeded["partitioned"] = {
        "rows": jsonable(PART_ROWS),
        "snapshots": [{"snapshot_id": part.current_snapshot().snapshot_id, "rows": jsonable(PART_ROWS)}],
        "location": part.location(), "metadata_location": part.metadata_location,
        "table_uuid": str(part.metadata.table_uuid),
        "columns": [f.name for f in PART_SCHEMA.fields], "partition_fields": ["region"],
        "data_files": len(part.inspect.files()),
    }

    # A Delta table without UniForm: UC's Delta API has it, its Iceberg one must not.
    register(api, "delta_only", PLAIN_SCHEMA, f"file://{warehouse}/{SCHEMA}/delta_only", None)

    with open(out, "w") as f:
        json.dump({"catalog": CATALOG, "namespaces": [SCHEMA, OTHER], "namespace": SCHEMA,
                   "non_uniform": ["delta_only"], "tables": seeded, "warehouse": warehouse}, f, indent=1)
    print(f"seed: {CATALOG}.{SCHEMA}: plain ({len(seeded['plain']['rows'])} rows, 2 snapshots), "
          f"partitioned ({len(PART_ROWS)} rows, {seeded['partitioned']['data_files']} data files), "
          f"delta_only (not UniForm); {CATALOG}.{OTHER} empty", file=sys.stderr)


if __name__ == "__main__":
    main()
