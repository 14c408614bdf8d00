"""lakegate against Delta Sharing's reference server, same tables, same calls.

Every test asks both servers the same thing (through the pandas connector,
delta-sharing 1.4.2, or raw HTTP) and compares. Where the protocol lets the
two answers differ, the test compares only what must agree and its
docstring or a comment says why the rest may differ.
"""

import json

import pytest
import requests

from conftest import FORMATS, NS, SHARE, SIDES, REGIONS, rows, url

TABLES = ["parts", "deletes", "evolve", "cdf"]


def both(fn):
    """{side: fn(side)} for both servers."""
    return {side: fn(side) for side in SIDES}


# --- raw protocol helpers

def profile(side):
    with open(SIDES[side]) as f:
        return json.load(f)


def call(side, method, path, **kw):
    p = profile(side)
    headers = {"Authorization": f"Bearer {p['bearerToken']}", **kw.pop("headers", {})}
    r = requests.request(method, p["endpoint"].rstrip("/") + path, headers=headers, timeout=60, **kw)
    return r


def table_path(table):
    return f"/shares/{SHARE}/schemas/{NS}/tables/{table}"


def ndjson(r):
    return [json.loads(line) for line in r.text.splitlines() if line.strip()]


def fields(schema_string):
    """(name, type, nullable) of each top-level field. Field metadata may
    differ: lakegate may carry Iceberg field ids there (the protocol leaves
    metadata to the server); names, types and nullability may not."""
    return [(f["name"], f["type"], f["nullable"]) for f in json.loads(schema_string)["fields"]]


# --- listings

def test_list_shares(servers):
    import delta_sharing

    got = both(lambda s: sorted(x.name for x in delta_sharing.SharingClient(SIDES[s]).list_shares()))
    assert got["lakegate"] == got["reference"] == [SHARE]


def test_list_schemas(servers):
    import delta_sharing

    def names(side):
        c = delta_sharing.SharingClient(SIDES[side])
        return sorted(x.name for sh in c.list_shares() for x in c.list_schemas(sh))

    got = both(names)
    assert got["lakegate"] == got["reference"] == [NS]


def test_list_all_tables(tables):
    import delta_sharing

    got = both(lambda s: sorted((t.share, t.schema, t.name)
                                for t in delta_sharing.SharingClient(SIDES[s]).list_all_tables()))
    assert got["lakegate"] == got["reference"]
    assert [t for _, _, t in got["reference"]] == sorted(TABLES)


def test_list_tables_raw(tables):
    """GET .../schemas/sales/tables: same names, shares and schemas. The
    optional `id` and `shareId` may differ (each server's own ids)."""
    got = both(lambda s: sorted((i["share"], i["schema"], i["name"])
                                for i in call(s, "GET", f"/shares/{SHARE}/schemas/{NS}/tables").json()["items"]))
    assert got["lakegate"] == got["reference"]


# --- versions

@pytest.mark.parametrize("table", TABLES)
def test_versions_align(tables, table):
    """Each operation of conftest.py is one version on both sides (the
    mapping the time-travel and change-feed tests rely on)."""
    t = tables[table]
    assert t.versions["lakegate"] == t.versions["reference"] == list(range(len(t.versions["reference"])))


@pytest.mark.parametrize("table", TABLES)
def test_table_version(tables, table):
    import delta_sharing

    got = both(lambda s: delta_sharing.get_table_version(url(s, table)))
    assert got["lakegate"] == got["reference"] == tables[table].latest


@pytest.mark.parametrize("table", TABLES)
def test_version_headers_raw(tables, table):
    """Delta-Table-Version of /version, /metadata and /query: the latest
    version on both."""
    def headers(side):
        return [call(side, "GET", table_path(table) + "/version").headers.get("Delta-Table-Version"),
                call(side, "GET", table_path(table) + "/metadata").headers.get("Delta-Table-Version"),
                call(side, "POST", table_path(table) + "/query", json={}).headers.get("Delta-Table-Version")]

    got = both(headers)
    assert got["lakegate"] == got["reference"] == [str(tables[table].latest)] * 3


# --- metadata

@pytest.mark.parametrize("table", TABLES)
def test_metadata(tables, table):
    """Schema (names, types, nullability), partition columns and format of
    get_table_metadata. id differs (each server's table id); see
    test_metadata_configuration for configuration."""
    import delta_sharing

    got = both(lambda s: delta_sharing.get_table_metadata(url(s, table)))
    ref, lg = got["reference"], got["lakegate"]
    assert fields(lg.schema_string) == fields(ref.schema_string)
    assert lg.partition_columns == ref.partition_columns
    assert lg.format.provider == ref.format.provider == "parquet"


@pytest.mark.parametrize("table", TABLES)
def test_metadata_configuration(tables, table):
    """metaData.configuration. Allowed to differ: it is the table's
    properties, and the two tables are different tables (Delta's and
    Iceberg's properties); lakegate declares delta.enableChangeDataFeed=true
    on every table when it has a change folder (docs/sharing.md, "Changes"), the
    reference server only where the Delta table set it. Must agree: a table
    whose feed the reference server shares is declared with one by lakegate."""
    import delta_sharing

    got = both(lambda s: delta_sharing.get_table_metadata(url(s, table)).configuration)
    if got["reference"].get("delta.enableChangeDataFeed") == "true":
        assert got["lakegate"].get("delta.enableChangeDataFeed") == "true"


@pytest.mark.parametrize("table", TABLES)
def test_metadata_raw(tables, table):
    """GET .../metadata, parquet format: the protocol line is the same
    (reader version 1: neither table needs a reader feature) and the
    metaData line has the same schema, partition columns and format.
    Allowed to differ: id, name/description (optional), configuration (see
    test_metadata_configuration), and the optional size/numFiles (the
    writers lay out files differently)."""
    got = both(lambda s: ndjson(call(s, "GET", table_path(table) + "/metadata")))
    ref, lg = got["reference"], got["lakegate"]
    assert [list(x) for x in lg] == [list(x) for x in ref] == [["protocol"], ["metaData"]]
    assert lg[0] == ref[0]
    rm, lm = ref[1]["metaData"], lg[1]["metaData"]
    assert fields(lm["schemaString"]) == fields(rm["schemaString"])
    assert lm["partitionColumns"] == rm["partitionColumns"]
    assert lm["format"] == rm["format"]


@pytest.mark.parametrize("table", ["evolve"])
def test_metadata_as_of_version(tables, table):
    """get_table_metadata at every version: the schema each version had
    (evolve: no `score` before its version 2)."""
    import delta_sharing

    for v in tables[table].versions["reference"]:
        got = both(lambda s: ndjson(call(s, "GET", table_path(table) + f"/metadata?version={v}")))
        assert fields(got["lakegate"][1]["metaData"]["schemaString"]) == \
            fields(got["reference"][1]["metaData"]["schemaString"]), f"version {v}"
    assert delta_sharing.get_table_metadata  # the connector has no version argument for metadata


# --- rows

@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("table", TABLES)
def test_rows(tables, table, fmt):
    """load_as_pandas, latest version: same columns, same rows (sorted)."""
    import delta_sharing

    got = both(lambda s: delta_sharing.load_as_pandas(url(s, table), use_delta_format=FORMATS[fmt]))
    ref, lg = got["reference"], got["lakegate"]
    assert list(lg.columns) == list(ref.columns)
    assert rows(lg) == rows(ref)
    assert len(ref) > 0


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("table", TABLES)
def test_rows_as_of_version(tables, table, fmt):
    """load_as_pandas(version=v) for every version (0 = the empty table as
    created on both sides; see conftest for why the numbers line up)."""
    import delta_sharing

    diffs = []
    for v in tables[table].versions["reference"]:
        got = both(lambda s: delta_sharing.load_as_pandas(url(s, table), version=v,
                                                         use_delta_format=FORMATS[fmt]))
        ref, lg = got["reference"], got["lakegate"]
        if list(lg.columns) != list(ref.columns) or rows(lg) != rows(ref):
            diffs.append(f"version {v}: lakegate {list(lg.columns)} {len(lg)} rows, "
                         f"reference {list(ref.columns)} {len(ref)} rows")
    assert not diffs, "; ".join(diffs)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("table", ["parts", "cdf"])
def test_limit(tables, table, fmt):
    """load_as_pandas(limit=5): the connector sends limitHint and cuts the
    rows itself. Which 5 rows is not defined (the protocol's limitHint is a
    hint, file order is the server's), so: 5 rows on both, each a row of
    the table."""
    import delta_sharing

    full = rows(delta_sharing.load_as_pandas(url("reference", table), use_delta_format=FORMATS[fmt]))
    got = both(lambda s: delta_sharing.load_as_pandas(url(s, table), limit=5, use_delta_format=FORMATS[fmt]))
    for side, df in got.items():
        assert len(df) == 5, side
        assert set(rows(df)) <= set(full), side


# --- raw query answers

def file_summary(lines):
    """{partitionValues (as a sorted tuple): total numRecords} of the file
    lines of a parquet-format query answer."""
    out = {}
    for x in lines:
        if "file" in x:
            f = x["file"]
            key = tuple(sorted(f["partitionValues"].items()))
            out[key] = out.get(key, 0) + json.loads(f["stats"])["numRecords"]
    return out


@pytest.mark.parametrize("table", TABLES)
def test_query_files_raw(tables, table):
    """POST .../query, parquet format: the same partitions with the same
    record counts (from each file's stats). Allowed to differ: how many
    files (each writer splits rows its own way), file ids, urls, sizes,
    expirationTimestamp, and the stats' min/max/nullCount details (Delta
    writers and Iceberg metrics may truncate or omit columns)."""
    got = both(lambda s: ndjson(call(s, "POST", table_path(table) + "/query", json={})))
    ref, lg = got["reference"], got["lakegate"]
    assert lg[0] == ref[0]  # protocol
    assert file_summary(lg) == file_summary(ref)
    if table in ("parts", "deletes", "cdf"):
        assert {dict(k)["region"] for k in file_summary(ref)} == set(REGIONS)
    for x in lg:
        if "file" in x:
            assert {"url", "id", "partitionValues", "size"} <= set(x["file"])


@pytest.mark.parametrize("table", ["parts"])
def test_limit_hint_raw(tables, table):
    """limitHint=1: a hint. Both must answer files holding at least one
    record; the reference server stops after the first file, lakegate once
    the files listed hold that many records, so the count may differ."""
    got = both(lambda s: ndjson(call(s, "POST", table_path(table) + "/query", json={"limitHint": 1})))
    for side, lines in got.items():
        assert sum(file_summary(lines).values()) >= 1, side


@pytest.mark.parametrize("table", ["parts"])
def test_starting_version_raw(tables, table):
    """POST .../query with startingVersion=2: add lines of versions 2..latest
    with their version; same (version, partition, records) totals."""
    def summary(side):
        out = {}
        for x in ndjson(call(side, "POST", table_path(table) + "/query", json={"startingVersion": 2})):
            for kind in ("add", "remove"):
                if kind in x:
                    a = x[kind]
                    key = (kind, a["version"], tuple(sorted(a["partitionValues"].items())))
                    out[key] = out.get(key, 0) + json.loads(a.get("stats") or '{"numRecords": 0}')["numRecords"]
        return out

    got = both(summary)
    assert got["lakegate"] == got["reference"]
    assert {k[1] for k in got["reference"]} == set(range(2, tables[table].latest + 1))


def metadata_lines(lines):
    """(version, fields) of every metaData line of an answer, either format."""
    out = []
    for x in lines:
        if "metaData" in x:
            m = x["metaData"]
            out.append((m.get("version"), fields(m.get("deltaMetadata", m)["schemaString"])))
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_starting_version_metadata_raw(tables, fmt):
    """POST .../query with startingVersion=1 on `evolve` (a column added at
    version 2): the protocol says such a query returns the data change
    files since startingVersion "including historical metadata if seen in
    the delta log". The reference server answers the starting version's
    metaData (version 1) and a metaData line at version 2, where the schema
    changed; so must lakegate (its /changes with includeHistoricalMetadata
    does)."""
    h = {"delta-sharing-capabilities": "responseformat=" + fmt}
    got = both(lambda s: metadata_lines(ndjson(call(s, "POST", table_path("evolve") + "/query",
                                                     json={"startingVersion": 1}, headers=h))))
    assert [v for v, _ in got["reference"]] == [1, 2]
    assert got["lakegate"] == got["reference"], \
        f"lakegate metaData versions {[v for v, _ in got['lakegate']]}, reference {[v for v, _ in got['reference']]}"


@pytest.mark.parametrize("fmt", FORMATS)
def test_changes_historical_metadata_raw(tables, fmt):
    """GET .../changes?startingVersion=1&includeHistoricalMetadata=true on
    `evolve`: the starting version's metaData, then one at version 2."""
    h = {"delta-sharing-capabilities": "responseformat=" + fmt}
    got = both(lambda s: metadata_lines(ndjson(call(
        s, "GET", table_path("evolve") + "/changes?startingVersion=1&includeHistoricalMetadata=true", headers=h))))
    assert [v for v, _ in got["reference"]] == [1, 2]
    assert got["lakegate"] == got["reference"]


@pytest.mark.parametrize("table", ["parts", "deletes", "cdf"])
def test_starting_version_replay_raw(tables, table):
    """POST .../query with startingVersion=0 is what a streaming reader
    replays: the table's data change files as in its log, every add and
    remove. Applying them in order (an add makes its file id live, a remove
    with that id ends it) must give the latest snapshot: the same records
    per partition as the plain query. The reference server answers a
    rewrite (delete, update) with its remove and add lines. Allowed to
    differ: file ids, urls, how many files (compared: records per
    partition after the replay)."""
    kinds = {}

    def replay(side):
        live = {}
        for x in ndjson(call(side, "POST", table_path(table) + "/query", json={"startingVersion": 0})):
            for k in ("add", "remove", "cdf"):
                if k in x:
                    kinds.setdefault(side, {}).setdefault(k, 0)
                    kinds[side][k] += 1
            if "add" in x:
                a = x["add"]
                live[a["id"]] = (tuple(sorted(a["partitionValues"].items())), json.loads(a["stats"])["numRecords"])
            elif "remove" in x:
                live.pop(x["remove"]["id"], None)
        out = {}
        for key, n in live.values():
            out[key] = out.get(key, 0) + n
        return out

    got = both(replay)
    snapshot = file_summary(ndjson(call("reference", "POST", table_path(table) + "/query", json={})))
    assert got["reference"] == snapshot
    lk = kinds.get("lakegate", {})
    assert got["lakegate"] == got["reference"], \
        (f"lakegate answered {lk.get('remove', 0)} remove lines and {lk.get('cdf', 0)} cdf lines, "
         f"the reference server {kinds['reference']}")


# --- change data feed

def normalized_changes(df, updates_as_delete_insert):
    """Rows of a change feed without _commit_timestamp (each side's own
    commit time). With updates_as_delete_insert, update_preimage reads as
    delete and update_postimage as insert (see test_changes)."""
    cols = [c for c in df.columns if c != "_commit_timestamp"]
    out = rows(df, cols)
    if updates_as_delete_insert:
        i = cols.index("_change_type")
        m = {"update_preimage": "delete", "update_postimage": "insert"}
        out = sorted((tuple(m.get(v, v) if j == i else v for j, v in enumerate(r)) for r in out),
                     key=lambda r: tuple((x is None, str(x)) for x in r))
    return cols, out


@pytest.mark.parametrize("fmt", FORMATS)
def test_changes(tables, fmt):
    """load_table_changes_as_pandas over the whole history of `cdf` (version
    0 to the latest): same columns, same rows, _change_type and
    _commit_version included, _commit_timestamp ignored.

    One allowed difference: the row delta-rs's UPDATE changed is
    update_preimage/update_postimage on the reference server (the writer
    recorded it in its change files), delete/insert on lakegate: an Iceberg
    copy-on-write overwrite does not say which removed row became which
    added one (no row lineage or identifier fields), and the protocol
    takes _change_type from the change files the server serves, so
    lakegate's derivation (docs/sharing.md, "Row-level changes of rewrites") is
    compared with the update's images read as delete/insert. The
    unnormalized feeds are compared too (test_changes_update_images)."""
    import delta_sharing

    t = tables["cdf"]
    got = both(lambda s: delta_sharing.load_table_changes_as_pandas(
        url(s, "cdf"), starting_version=0, ending_version=t.latest, use_delta_format=FORMATS[fmt]))
    ref_cols, ref = normalized_changes(got["reference"], True)
    lg_cols, lg = normalized_changes(got["lakegate"], True)
    assert lg_cols == ref_cols
    assert lg == ref
    assert {"insert", "delete"} <= {r[ref_cols.index("_change_type")] for r in ref}


def test_changes_update_images(tables):
    """The reference server's feed carries update_preimage/postimage for
    delta-rs's UPDATE; lakegate's carries delete/insert (see test_changes:
    allowed). This pins the difference, so a change on either side shows."""
    import delta_sharing

    t = tables["cdf"]
    got = both(lambda s: delta_sharing.load_table_changes_as_pandas(
        url(s, "cdf"), starting_version=0, ending_version=t.latest))
    types = {s: set(df["_change_type"]) for s, df in got.items()}
    assert {"update_preimage", "update_postimage"} <= types["reference"]
    assert not {"update_preimage", "update_postimage"} & types["lakegate"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_changes_range(tables, fmt):
    """A middle range (versions 2..3: an append and the delete) on both."""
    import delta_sharing

    got = both(lambda s: delta_sharing.load_table_changes_as_pandas(
        url(s, "cdf"), starting_version=2, ending_version=3, use_delta_format=FORMATS[fmt]))
    assert normalized_changes(got["lakegate"], False) == normalized_changes(got["reference"], False)


def test_changes_raw(tables):
    """GET .../changes, parquet format: the same action kinds per version
    (add for appends; cdf for the delete and the update, whose rows both
    servers serve from change files). Allowed to differ: how many files of
    each kind, ids, urls, sizes. The version header is the starting
    version on both."""
    t = tables["cdf"]

    def kinds(side):
        r = call(side, "GET", table_path("cdf") + f"/changes?startingVersion=0&endingVersion={t.latest}")
        out = set()
        for x in ndjson(r):
            for kind in ("add", "remove", "cdf"):
                if kind in x:
                    out.add((x[kind]["version"], kind))
        return r.headers.get("Delta-Table-Version"), sorted(out)

    got = both(kinds)
    assert got["lakegate"] == got["reference"]


def test_changes_refused_without_feed(tables):
    """Allowed difference, pinned: `parts` has no change data feed on the
    Delta side, so the reference server refuses its changes; lakegate
    declares a feed on every table (change folder configured) and answers."""
    t = tables["parts"]
    got = both(lambda s: call(s, "GET", table_path("parts") + f"/changes?startingVersion=0&endingVersion={t.latest}"))
    assert got["reference"].status_code == 400
    assert got["lakegate"].status_code == 200

