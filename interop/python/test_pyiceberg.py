"""PyIceberg (with pyarrow) through lakegate's Iceberg REST API.

Every catalog is `load_catalog(name, **props)` with the properties built by
catalog_props(); every result is compared with the exact rows expected.
"""

import json
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime

import pyarrow as pa
import pytest
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import ForbiddenError, NoSuchTableError, UnauthorizedError
from pyiceberg.expressions import EqualTo, GreaterThan
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform, IdentityTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

from conftest import CREDENTIALS, unique


def catalog_props(target, credential=None):
    """load_catalog properties of one lakegate catalog."""
    props = {"type": "rest", "uri": target.uri}
    if target.warehouse:
        props["warehouse"] = target.warehouse
    if credential:
        props["credential"] = credential
    props.update(target.props)
    return props


_catalogs = {}


def catalog(target, credential=None):
    key = (target.name, credential)
    if key not in _catalogs:
        _catalogs[key] = load_catalog(f"lg_{target.name}", **catalog_props(target, credential))
    return _catalogs[key]


_namespaces = {}


def namespace(cat, name):
    if name not in _namespaces:
        ns = unique("pyice")
        cat.create_namespace(ns, {"owner": "interop"})
        _namespaces[name] = ns
    return _namespaces[name]


@pytest.fixture
def cat(target):
    return catalog(target)


@pytest.fixture
def ns(cat, target):
    return namespace(cat, target.name)


SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "category", StringType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
    NestedField(4, "ts", TimestampType(), required=False),
)
SPEC = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "category"))

ARROW = pa.schema([
    pa.field("id", pa.int64()),
    pa.field("category", pa.string()),
    pa.field("amount", pa.float64()),
    pa.field("ts", pa.timestamp("us")),
])


def arrow(rows, schema=ARROW):
    return pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema=schema)


def ts(day, hour=0):
    return datetime(2024, 1, day, hour)


def sorted_rows(table, *fields):
    """A scan's rows as sorted tuples of `fields` (all of them by default)."""
    data = table.to_pylist()
    fields = fields or tuple(table.schema.names)
    return sorted(tuple(r[f] for f in fields) for r in data)


ROWS1 = [
    (1, "a", 10.5, ts(1, 10)),
    (2, "b", 20.0, ts(1, 11)),
    (3, "a", 30.25, ts(2, 12)),
]
ROWS2 = [
    (4, "c", 40.0, ts(3, 13)),
    (5, "b", 5.0, ts(3, 14)),
]


def new_table(cat, ns, name, spec=SPEC):
    return cat.create_table(f"{ns}.{name}", schema=SCHEMA, partition_spec=spec)


# ---------------------------------------------------------------- tests


def test_namespace_and_table(cat, ns):
    assert (ns,) in cat.list_namespaces()
    assert cat.load_namespace_properties(ns)["owner"] == "interop"
    tbl = new_table(cat, ns, "created")
    assert (ns, "created") in cat.list_tables(ns)
    loaded = cat.load_table(f"{ns}.created")
    assert [(f.field_id, f.name, str(f.field_type)) for f in loaded.schema().fields] == [
        (1, "id", "long"), (2, "category", "string"), (3, "amount", "double"),
        (4, "ts", "timestamp")]
    assert [(f.source_id, f.name, str(f.transform)) for f in loaded.spec().fields] == [
        (2, "category", "identity")]
    assert loaded.metadata.table_uuid == tbl.metadata.table_uuid
    assert loaded.current_snapshot() is None
    assert loaded.scan().to_arrow().num_rows == 0


def test_catalog_operations(cat, ns):
    ns2 = unique("pyice_ops")
    cat.create_namespace(ns2, {"a": "1"})
    assert cat.namespace_exists(ns2)
    summary = cat.update_namespace_properties(ns2, removals={"a"}, updates={"b": "2"})
    assert (summary.removed, summary.updated, summary.missing) == (["a"], ["b"], [])
    props = cat.load_namespace_properties(ns2)
    assert props.get("b") == "2" and "a" not in props
    new_table(cat, ns2, "one")
    assert cat.table_exists(f"{ns2}.one")
    cat.rename_table(f"{ns2}.one", f"{ns2}.two")
    assert cat.list_tables(ns2) == [(ns2, "two")]
    assert not cat.table_exists(f"{ns2}.one")
    cat.drop_table(f"{ns2}.two")
    assert cat.list_tables(ns2) == []
    with pytest.raises(NoSuchTableError):
        cat.load_table(f"{ns2}.two")
    cat.drop_namespace(ns2)
    assert not cat.namespace_exists(ns2)
    assert (ns2,) not in cat.list_namespaces()


def test_append_and_overwrite(cat, ns):
    tbl = new_table(cat, ns, "appends")
    tbl.append(arrow(ROWS1))
    tbl.append(arrow(ROWS2))
    assert sorted_rows(tbl.scan().to_arrow()) == sorted(ROWS1 + ROWS2)

    # Overwrite the rows of category b only.
    tbl.overwrite(arrow([(6, "b", 60.0, ts(4))]), overwrite_filter=EqualTo("category", "b"))
    assert sorted_rows(tbl.scan().to_arrow()) == sorted(
        [r for r in ROWS1 + ROWS2 if r[1] != "b"] + [(6, "b", 60.0, ts(4))])

    # Overwrite everything.
    tbl.overwrite(arrow([(7, "z", 7.0, ts(5))]))
    assert sorted_rows(tbl.scan().to_arrow()) == [(7, "z", 7.0, ts(5))]

    # A fresh load sees the same state.
    fresh = cat.load_table(f"{ns}.appends")
    assert fresh.current_snapshot().snapshot_id == tbl.current_snapshot().snapshot_id
    assert sorted_rows(fresh.scan().to_arrow()) == [(7, "z", 7.0, ts(5))]


def test_staged_create_and_delete(cat, ns):
    # create_table_transaction is a staged create (stage-create, then a
    # commit that asserts the table does not exist yet).
    with cat.create_table_transaction(f"{ns}.staged", schema=SCHEMA, partition_spec=SPEC,
                                      properties={"origin": "staged"}) as tx:
        tx.append(arrow(ROWS1))
    tbl = cat.load_table(f"{ns}.staged")
    assert tbl.properties["origin"] == "staged"
    assert sorted_rows(tbl.scan().to_arrow()) == sorted(ROWS1)
    tbl.delete("id = 1")
    assert sorted_rows(cat.load_table(f"{ns}.staged").scan().to_arrow()) == sorted(ROWS1[1:])


def test_snapshot_history(cat, ns):
    tbl = new_table(cat, ns, "snap_history")
    tbl.append(arrow(ROWS1))
    tbl.append(arrow(ROWS2))
    tbl.overwrite(arrow([(7, "z", 7.0, ts(5))]))
    fresh = cat.load_table(f"{ns}.snap_history")
    snaps = fresh.snapshots()
    # PyIceberg's overwrite commits a delete and an append snapshot.
    assert [s.summary.operation.value for s in snaps] == ["append", "append", "delete", "append"]
    assert [s.snapshot_id for s in snaps] == [s.snapshot_id for s in tbl.snapshots()]
    assert [s.parent_snapshot_id for s in snaps[1:]] == [s.snapshot_id for s in snaps[:-1]]
    assert sorted_rows(fresh.scan(snapshot_id=snaps[0].snapshot_id).to_arrow()) == sorted(ROWS1)
    assert sorted_rows(fresh.scan(snapshot_id=snaps[1].snapshot_id).to_arrow()) == sorted(
        ROWS1 + ROWS2)
    assert sorted_rows(fresh.scan().to_arrow()) == [(7, "z", 7.0, ts(5))]


def test_commit_response_matches_load(cat, ns):
    # The metadata a commit answers is the one the next load returns.
    tbl = new_table(cat, ns, "committed")
    tbl.append(arrow(ROWS1))
    loaded = cat.load_table(f"{ns}.committed")
    assert loaded.metadata_location == tbl.metadata_location
    assert loaded.metadata == tbl.metadata


def test_scan_with_row_filter_and_selected_fields(cat, ns):
    tbl = new_table(cat, ns, "scans")
    tbl.append(arrow(ROWS1 + ROWS2))
    result = tbl.scan(row_filter="category = 'a' AND amount > 20", selected_fields=("id", "amount")).to_arrow()
    assert result.schema.names == ["id", "amount"]
    assert sorted_rows(result) == [(3, 30.25)]
    result = tbl.scan(row_filter=GreaterThan("ts", "2024-01-02T00:00:00"),
                      selected_fields=("id", "category")).to_arrow()
    assert sorted_rows(result) == [(3, "a"), (4, "c"), (5, "b")]
    # The partition filter prunes files: only category b's are planned.
    tasks = list(tbl.scan(row_filter="category = 'b'").plan_files())
    assert len(tasks) >= 1
    assert {t.file.partition[0] for t in tasks} == {"b"}
    assert sum(t.file.record_count for t in tasks) == 2


def test_schema_evolution(cat, ns):
    tbl = new_table(cat, ns, "schema_evo")
    tbl.append(arrow(ROWS1))
    with tbl.update_schema() as update:
        update.add_column("score", DoubleType())
        update.rename_column("amount", "price")
    assert [f.name for f in tbl.schema().fields] == ["id", "category", "price", "ts", "score"]
    assert tbl.schema().find_field("price").field_id == 3
    assert tbl.schema().find_field("score").field_id == 5

    new_schema = pa.schema([
        pa.field("id", pa.int64()), pa.field("category", pa.string()),
        pa.field("price", pa.float64()), pa.field("ts", pa.timestamp("us")),
        pa.field("score", pa.float64()),
    ])
    tbl.append(arrow([(9, "a", 99.0, ts(9), 0.5)], new_schema))

    reloaded = cat.load_table(f"{ns}.schema_evo")
    assert len(reloaded.schemas()) == 2
    assert reloaded.schema().schema_id == tbl.schema().schema_id
    assert sorted_rows(reloaded.scan().to_arrow()) == sorted(
        [r + (None,) for r in ROWS1] + [(9, "a", 99.0, ts(9), 0.5)])
    assert sorted_rows(reloaded.scan(row_filter="price > 20", selected_fields=("id", "price", "score"))
                       .to_arrow()) == [(3, 30.25, None), (9, 99.0, 0.5)]


def test_partition_spec_evolution(cat, ns):
    tbl = new_table(cat, ns, "spec_evo")
    tbl.append(arrow(ROWS1))
    with tbl.update_spec() as update:
        update.add_field("ts", DayTransform(), "ts_day")
    reloaded = cat.load_table(f"{ns}.spec_evo")
    assert [(f.source_id, f.name, str(f.transform)) for f in reloaded.spec().fields] == [
        (2, "category", "identity"), (4, "ts_day", "day")]
    assert sorted(s.spec_id for s in reloaded.specs().values()) == [0, 1]
    assert reloaded.spec().spec_id == 1

    reloaded.append(arrow(ROWS2))
    final = cat.load_table(f"{ns}.spec_evo")
    assert sorted_rows(final.scan().to_arrow()) == sorted(ROWS1 + ROWS2)
    files = final.inspect.files().to_pylist()
    assert sorted((f["spec_id"], f["record_count"]) for f in files) == [
        (0, 1), (0, 2), (1, 1), (1, 1)]
    assert sorted_rows(final.scan(row_filter="ts >= '2024-01-02T00:00:00'",
                                  selected_fields=("id",)).to_arrow()) == [(3,), (4,), (5,)]


def http_get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_load_twice_same_metadata(cat, ns, target):
    tbl = new_table(cat, ns, "loaded_twice")
    tbl.append(arrow(ROWS1))
    first = cat.load_table(f"{ns}.loaded_twice")
    second = cat.load_table(f"{ns}.loaded_twice")
    assert second.metadata_location == first.metadata_location
    assert second.metadata == first.metadata
    assert second.metadata.model_dump_json() == first.metadata.model_dump_json()

    # A commit after the cached loads is visible on the next load.
    first.append(arrow(ROWS2))
    third = cat.load_table(f"{ns}.loaded_twice")
    assert third.metadata_location != second.metadata_location
    assert third.current_snapshot().snapshot_id == first.current_snapshot().snapshot_id
    assert sorted_rows(third.scan().to_arrow()) == sorted(ROWS1 + ROWS2)

    # The same over plain HTTP, with the ETag when the gateway sends one.
    prefix = cat.properties.get("prefix")
    url = f"{target.uri}/v1/{prefix + '/' if prefix else ''}namespaces/{ns}/tables/loaded_twice"
    status, headers, body = http_get(url)
    assert status == 200
    assert json.loads(body)["metadata-location"] == third.metadata_location
    status2, headers2, body2 = http_get(url)
    assert status2 == 200
    assert json.loads(body2)["metadata"] == json.loads(body)["metadata"]
    etag = {k.lower(): v for k, v in headers.items()}.get("etag")
    if etag:
        status3, _, body3 = http_get(url, {"If-None-Match": etag})
        assert (status3, body3) == (304, b"")
        third.append(arrow([(8, "a", 8.0, ts(8))]))
        status4, _, body4 = http_get(url, {"If-None-Match": etag})
        assert status4 == 200
        assert json.loads(body4)["metadata-location"] == third.metadata_location


def test_location_outside_the_warehouse_is_forbidden(cat, ns, target, tmp_path):
    if target.name != "embedded":
        pytest.skip("lakegate's embedded catalog confines itself; a remote backend decides alone")
    with pytest.raises(ForbiddenError, match="outside the catalog's warehouse"):
        cat.create_table(f"{ns}.escapee", schema=SCHEMA, location=f"file://{tmp_path}/escapee")
    assert not cat.table_exists(f"{ns}.escapee")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ForbiddenError, match="outside the catalog's warehouse"):
        cat.register_table(f"{ns}.passwd", "file:///etc/passwd")


# ------------------------------------------------ OAuth2 (examples/policy)


@pytest.fixture(scope="module")
def policy_table():
    from conftest import POLICY

    POLICY.skip_unless_available()
    writer = catalog(POLICY, CREDENTIALS["writer"])
    ns = namespace(writer, "policy")
    tbl = writer.create_table(f"{ns}.secured", schema=SCHEMA, partition_spec=SPEC)
    tbl.append(arrow(ROWS1))
    return POLICY, ns


def test_oauth2_reader_loads_and_scans(policy_table):
    target, ns = policy_table
    reader = catalog(target, CREDENTIALS["reader"])
    assert (ns,) in reader.list_namespaces()
    assert (ns, "secured") in reader.list_tables(ns)
    tbl = reader.load_table(f"{ns}.secured")
    assert sorted_rows(tbl.scan().to_arrow()) == sorted(ROWS1)
    assert sorted_rows(tbl.scan(row_filter="category = 'a'", selected_fields=("id",)).to_arrow()) == [
        (1,), (3,)]


def test_oauth2_reader_writes_are_forbidden(policy_table):
    target, ns = policy_table
    reader = catalog(target, CREDENTIALS["reader"])
    tbl = reader.load_table(f"{ns}.secured")
    with pytest.raises(ForbiddenError):
        tbl.append(arrow(ROWS2))
    with pytest.raises(ForbiddenError):
        reader.create_table(f"{ns}.by_reader", schema=SCHEMA)
    with pytest.raises(ForbiddenError):
        reader.create_namespace(unique("by_reader"))
    with pytest.raises(ForbiddenError):
        reader.drop_table(f"{ns}.secured")
    # Nothing changed.
    writer = catalog(target, CREDENTIALS["writer"])
    after = writer.load_table(f"{ns}.secured")
    assert after.metadata_location == tbl.metadata_location
    assert sorted_rows(after.scan().to_arrow()) == sorted(ROWS1)
    with pytest.raises(NoSuchTableError):
        writer.load_table(f"{ns}.by_reader")


def test_oauth2_writer_appends(policy_table):
    target, ns = policy_table
    writer = catalog(target, CREDENTIALS["writer"])
    tbl = writer.create_table(f"{ns}.by_writer", schema=SCHEMA, partition_spec=SPEC)
    tbl.append(arrow(ROWS1))
    tbl.append(arrow(ROWS2))
    reader = catalog(target, CREDENTIALS["reader"])
    assert sorted_rows(reader.load_table(f"{ns}.by_writer").scan().to_arrow()) == sorted(ROWS1 + ROWS2)


def test_oauth2_anonymous_is_unauthorized(policy_table):
    target, ns = policy_table
    with pytest.raises(UnauthorizedError):
        load_catalog("lg_anonymous", **catalog_props(target)).load_table(f"{ns}.secured")


def http_post_form(url, form):
    data = urllib.parse.urlencode(form).encode()
    req = urllib.request.Request(url, data=data, headers={
        "Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_oauth2_token_endpoint_at_clients_default_url(policy_table):
    # Both clients post to {uri}/v1/oauth/tokens when oauth2-server-uri is
    # not set (what every configuration in docs/iceberg.md, "Clients",
    # relies on).
    target, _ = policy_table
    url = f"{target.uri}/v1/oauth/tokens"
    status, body = http_post_form(url, {
        "grant_type": "client_credentials", "client_id": "reader",
        "client_secret": "reader-secret", "scope": "catalog"})
    assert status == 200, body
    assert body["token_type"].lower() == "bearer" and body["access_token"]
    assert body["issued_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
    status, body = http_post_form(url, {
        "grant_type": "client_credentials", "client_id": "reader",
        "client_secret": "wrong", "scope": "catalog"})
    assert status == 401 and body.get("error") == "invalid_client", body
