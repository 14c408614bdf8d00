"""PyIceberg with no S3 keys of its own, through lakegate's remote signing
(examples/storage/Caddyfile) on moto with every signature checked.

run.sh sets:
  STORAGE_URI      the gateway (catalog `lake`, issuer clients reader/writer)
  STORAGE_S3       moto's endpoint
  STORAGE_BUCKET   the bucket the warehouse is in
  STORAGE_PREFIX   the warehouse's prefix in it (default warehouse)
  STORAGE_ADMIN    http://<key>:<secret>@host:port, used here only to look at
                   the bucket from outside (never given to PyIceberg)
and leaves AWS_* out of this process's environment.
"""

import os
import urllib.parse
import uuid

import pyarrow as pa
import pytest
import requests
import s3fs
from pyiceberg.catalog import load_catalog
from pyiceberg.exceptions import SignError

# PyIceberg 0.12's fsspec FileIO builds an S3FileSystem per thread and
# then swaps its REST signer on the client's event emitter (unregister,
# register). fsspec hands every such call the one cached instance of the
# process, so a scan's worker threads (and the writer's and the reader's
# catalogs) share one emitter: a request sent between another thread's
# unregister and register goes out unsigned (moto: 403 on a HEAD with no
# Authorization header, seen in 1 of 3 runs here), and the last catalog's
# signer signs for all of them. apache/iceberg-python#3896. Without the
# instance cache each FileIO thread has its own client and signer.
s3fs.S3FileSystem.cachable = False

URI = os.environ["STORAGE_URI"]
BUCKET = os.environ["STORAGE_BUCKET"]
PREFIX = os.environ.get("STORAGE_PREFIX", "warehouse")
ADMIN = urllib.parse.urlsplit(os.environ["STORAGE_ADMIN"])
SECRET = urllib.parse.unquote(ADMIN.password)
KEY_ID = urllib.parse.unquote(ADMIN.username)


def client(who):
    keys = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")
    assert not any(k in os.environ for k in keys), "the client must have no keys"
    return load_catalog(
        who,
        **{
            "type": "rest",
            "uri": URI,
            "warehouse": "lake",
            "credential": f"{who}:{who}-secret",
            "header.X-Iceberg-Access-Delegation": "remote-signing",
            # The fsspec FileIO is the one with PyIceberg's REST signer.
            "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
        },
    )


def bucket_keys(prefix):
    fs = s3fs.S3FileSystem(
        key=urllib.parse.unquote(ADMIN.username), secret=SECRET,
        client_kwargs={"endpoint_url": os.environ["STORAGE_S3"], "region_name": "us-east-1"},
    )
    fs.invalidate_cache()
    return set(fs.find(f"{BUCKET}/{prefix}"))


SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def rows(a, b):
    return pa.Table.from_pylist([{"id": i, "name": f"n{i}"} for i in range(a, b)], schema=SCHEMA)


@pytest.fixture(scope="module")
def table_name():
    writer = client("writer")
    ns = "s" + uuid.uuid4().hex[:8]
    writer.create_namespace(ns)
    return (ns, "events")


def test_writer_creates_appends_reads_and_deletes(table_name):
    writer = client("writer")
    tbl = writer.create_table(table_name, schema=SCHEMA)
    assert tbl.io.properties.get("s3.remote-signing-enabled") == "true"
    assert not any("secret" in k for k in tbl.io.properties), tbl.io.properties.keys()
    tbl.append(rows(0, 5))
    tbl.append(rows(5, 9))
    got = writer.load_table(table_name).scan().to_arrow().sort_by("id")
    assert got.column("id").to_pylist() == list(range(9))
    tbl = writer.load_table(table_name)
    tbl.delete("id < 3")
    got = writer.load_table(table_name).scan().to_arrow().sort_by("id")
    assert got.column("id").to_pylist() == list(range(3, 9))
    data = [k for k in bucket_keys(PREFIX) if "/data/" in k and k.endswith(".parquet")]
    assert data, "the data files are on moto"


def test_reader_reads_but_writes_nothing(table_name):
    reader = client("reader")
    tbl = reader.load_table(table_name)
    assert tbl.scan().to_arrow().num_rows == 6
    before = bucket_keys(PREFIX)
    with pytest.raises(SignError):
        tbl.append(rows(100, 101))
    assert bucket_keys(PREFIX) == before, "no file of the reader's was written"


def test_no_answer_carries_the_secret(table_name):
    tok = requests.post(f"{URI}/v1/oauth/tokens", data={
        "grant_type": "client_credentials", "client_id": "writer", "client_secret": "writer-secret"}).json()["access_token"]
    ns, name = table_name
    for delegation in ("vended-credentials", "remote-signing", "vended-credentials,remote-signing"):
        r = requests.get(f"{URI}/v1/lake/namespaces/{ns}/tables/{name}",
                         headers={"Authorization": f"Bearer {tok}", "X-Iceberg-Access-Delegation": delegation})
        assert r.status_code == 200
        assert SECRET not in r.text and KEY_ID not in r.text
        creds = r.json().get("storage-credentials") or []
        if delegation.startswith("vended-credentials"):
            # The writer's keys vended for this table: STS's, never the gateway's.
            assert [c["prefix"] for c in creds] == [r.json()["metadata"]["location"]], creds
            assert all(c["config"].get("s3.session-token") and c["config"]["s3.access-key-id"] != KEY_ID
                       for c in creds), creds
        else:
            assert not creds
    r = requests.get(f"{URI}/v1/config?warehouse=lake", headers={"Authorization": f"Bearer {tok}"})
    assert SECRET not in r.text
