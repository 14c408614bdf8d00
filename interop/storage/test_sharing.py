"""Delta Sharing's Python connector (delta-sharing 1.4.2 with pandas,
interop/sharing's virtualenv) reads a table of the storage catalog `lake`
through presigned S3 URLs on the same bucket (examples/storage/Caddyfile:
share `lake`, schema `shared` = namespace lake.shared), with no S3 keys.

The table is written by PyIceberg (pyarrow FileIO) with the writer's
vended credentials. The share's file URLs are presigned by the gateway with
the catalog's storage keys (GET, url_lifetime 15m). moto 5.2.6 cannot check
a query signature with its access control on: it reads only the
Authorization header and answers 500 without one, for a good presignature
as for a bad one. So this test shows moto refusing the URLs with its access
control on, then turns the access control off (POST /moto-api/reset-auth)
for the recipient's downloads only, and back on. That the presignatures
are S3's is checked by the Go tests (TestSharingPresignedWithStorageKeys*:
aws-sdk-go-v2's signer, and a guard that refuses a tampered URL over HTTP).

run.sh sets STORAGE_URI, STORAGE_ADMIN (moto) and leaves AWS_* out.
"""

import json
import os
import urllib.parse
import uuid

import delta_sharing
import pyarrow as pa
import pytest
import requests
from pyiceberg.catalog import load_catalog

from vended import MOTO, URI, assert_no_keys, token

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])
ROWS = [{"id": i, "name": f"n{i}"} for i in range(12)]
SHARE_TOKEN = "share-recipient-token"  # examples/storage's default


def moto_auth(on):
    """moto's access control: 0 actions without authentication (on), or
    a count no run reaches (off)."""
    r = requests.post(f"{MOTO}/moto-api/reset-auth", data=b"0" if on else b"1000000",
                      headers={"Content-Type": "text/plain"})
    r.raise_for_status()


@pytest.fixture(scope="module")
def table():
    """lake.shared.<random> with ROWS in two appends (two files)."""
    assert_no_keys()
    writer = load_catalog("writer", **{
        "type": "rest", "uri": URI, "warehouse": "lake", "credential": "writer:writer-secret",
        "oauth2-server-uri": f"{URI}/v1/oauth/tokens",
        "header.X-Iceberg-Access-Delegation": "vended-credentials",
        "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
    })
    if ("shared",) not in writer.list_namespaces():
        writer.create_namespace("shared")
    name = "e" + uuid.uuid4().hex[:8]
    tbl = writer.create_table(("shared", name), schema=SCHEMA)
    tbl.append(pa.Table.from_pylist(ROWS[:5], schema=SCHEMA))
    tbl.append(pa.Table.from_pylist(ROWS[5:], schema=SCHEMA))
    return name


def query(name):
    r = requests.post(f"{URI}/delta-sharing/shares/lake/schemas/shared/tables/{name}/query",
                      headers={"Authorization": f"Bearer {SHARE_TOKEN}"}, json={})
    r.raise_for_status()
    return [json.loads(line)["file"] for line in r.text.splitlines() if '"file"' in line]


def test_urls_are_presigned_with_the_storage_keys(table):
    files = query(table)
    assert len(files) == 2, files
    moto_key = urllib.parse.unquote(urllib.parse.urlsplit(os.environ["STORAGE_ADMIN"]).username)
    for f in files:
        u = urllib.parse.urlsplit(f["url"])
        q = urllib.parse.parse_qs(u.query)
        assert f"{u.scheme}://{u.netloc}" == MOTO, "on the catalog's store"
        assert u.path.startswith("/") and f"/shared.db/{table}/data/" in u.path, u.path
        assert q["X-Amz-Credential"][0].startswith(moto_key + "/"), "presigned with the storage key"
        assert q["X-Amz-Expires"] == ["900"], "url_lifetime 15m"
        assert q["X-Amz-SignedHeaders"] == ["host"]
        # moto with its access control on refuses it (and any presigned URL).
        assert requests.get(f["url"]).status_code in (403, 500)


def test_pandas_reads_the_rows(table, tmp_path):
    profile = tmp_path / "lake.share"
    profile.write_text(json.dumps({"shareCredentialsVersion": 1, "endpoint": f"{URI}/delta-sharing",
                                   "bearerToken": SHARE_TOKEN}))
    tables = delta_sharing.SharingClient(str(profile)).list_all_tables()
    assert any(t.name == table and t.schema == "shared" and t.share == "lake" for t in tables), tables
    moto_auth(False)
    try:
        df = delta_sharing.load_as_pandas(f"{profile}#lake.shared.{table}")
    finally:
        moto_auth(True)
    assert sorted(df.to_dict("records"), key=lambda r: r["id"]) == ROWS
