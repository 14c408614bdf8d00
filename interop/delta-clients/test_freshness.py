"""The freshness promise through two replicas (docs/unity-delta.md: "a
reader always gets the log's latest version"): two lakegates on one
PostgreSQL catalog `fresh` and one warehouse, a delta-rs writer appending,
and right after each commit 4 concurrent loads on each replica through UC's
getTable, the Delta API's load and Delta Sharing's metadata. Every load
must show the commit just made.

Each commit is an append with schema_mode="merge" that adds a column
c<N>, so every API shows which commit it served by its columns, whatever
version numbers it reports (issue 37, finding 5, is about those).
"""

import concurrent.futures as cf
import json
import os

import pytest
import requests

from conftest import DELTA, NS, UC, Table, batch, http, register_uc, unique

REPLICAS = [u for u in os.environ.get("DC_REPLICAS", "").split(",") if u]
WAREHOUSE = os.environ.get("DC_REPLICA_WAREHOUSE", "")
TOKEN = os.environ.get("DC_SHARE_TOKEN", "")
CATALOG, SHARE = os.environ.get("DC_FRESH_CATALOG", "fresh"), "clients"
COMMITS = 13  # 13 commits x 4 loads x 2 replicas = 104 loads per API
LOADS = 4


def uc_columns(base, t):
    return [c["name"] for c in http("GET", f"{UC}/tables/{t.full}", base=base).json()["columns"]]


def delta_columns(base, t):
    md = http("GET", f"{DELTA}/catalogs/{CATALOG}/schemas/{NS}/tables/{t.name}", base=base).json()["metadata"]
    return [f["name"] for f in md["columns"]["fields"]]


def sharing_columns(base, t):
    """The columns of the metaData line of Sharing's metadata answer."""
    r = http("GET", f"/delta-sharing/shares/{SHARE}/schemas/{NS}/tables/{t.name}/metadata", base=base,
             headers={"Authorization": f"Bearer {TOKEN}"})
    for line in r.text.splitlines():
        md = json.loads(line).get("metaData")
        if md:
            return [f["name"] for f in json.loads(md["schemaString"])["fields"]]
    raise AssertionError(f"no metaData line in {r.text[:300]}")


APIS = {"uc_get_table": uc_columns, "delta_load": delta_columns, "sharing_metadata": sharing_columns}


@pytest.fixture(scope="module")
def loads():
    """{api: [(commit, replica, outcome)]}: outcome is "fresh", "stale" or an
    error, for each load after each commit."""
    if len(REPLICAS) != 2 or not WAREHOUSE or not TOKEN:
        pytest.skip("DC_REPLICAS / DC_REPLICA_WAREHOUSE / DC_SHARE_TOKEN are not set (no PostgreSQL for the replicas)")
    from deltalake import write_deltalake

    http("POST", f"{UC}/schemas", base=REPLICAS[0], json={"catalog_name": CATALOG, "name": NS}, expect=(200, 400))
    name = unique("fresh")
    t = Table(name, os.path.join(WAREHOUSE, name), catalog=CATALOG)
    write_deltalake(t.path, batch([0]))
    register_uc(t, base=REPLICAS[0])
    out = {api: [] for api in APIS}
    with cf.ThreadPoolExecutor(LOADS * len(REPLICAS) * len(APIS)) as pool:
        for n in range(1, COMMITS + 1):
            tbl = batch([n])
            tbl = tbl.append_column(f"c{n}", tbl.column("amount"))
            write_deltalake(t.path, tbl, mode="append", schema_mode="merge")
            futures = {pool.submit(fn, base, t): (api, base)
                       for api, fn in APIS.items() for base in REPLICAS for _ in range(LOADS)}
            for f, (api, base) in futures.items():
                try:
                    outcome = "fresh" if f"c{n}" in f.result() else "stale"
                except (AssertionError, requests.RequestException, ValueError, KeyError) as e:
                    outcome = f"error: {str(e)[:160]}"
                out[api].append((n, base, outcome))
    return out


@pytest.mark.parametrize("api", APIS)
def test_freshness(loads, api):
    got = loads[api]
    bad = [x for x in got if x[2] != "fresh"]
    per = {b: sum(1 for x in bad if x[1] == b) for b in REPLICAS}
    if bad:
        pytest.fail(f"{len(bad)} of {len(got)} loads did not serve the commit just made "
                     f"(per replica: {per}); first: {bad[:3]}", pytrace=False)
