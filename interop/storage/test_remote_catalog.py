"""PyIceberg with no S3 keys of its own through a remote catalog: lakegate
(examples/storage-remote/Caddyfile) in front of Iceberg's reference REST
server (RESTCatalogServer, S3FileIO) whose warehouse is on moto, every
signature checked. The backend neither signs nor vends; the gateway adds
both, with its own key.

run.sh sets, besides test_remote_signing.py's STORAGE_* (STORAGE_URI is this
gateway, STORAGE_PREFIX the backend's warehouse prefix):
  STORAGE_BACKEND         the reference server's URL (looked at directly)
  STORAGE_BACKEND_SECRET  the backend's own S3 secret, which it hands out in
                          every table answer (include-credentials): the
                          gateway must strip it
"""

import os

import requests
from pyiceberg.catalog import load_catalog

# The writer's and the reader's remote signing tests, as for the embedded
# catalog, run here against the remote one (same names, same checks).
# pytest runs them in the order they are bound here: the writer's first.
from test_remote_signing import PREFIX, SECRET, URI, bucket_keys, rows, table_name  # noqa: F401 (a fixture)
from test_remote_signing import test_writer_creates_appends_reads_and_deletes  # noqa: F401
from test_remote_signing import test_reader_reads_but_writes_nothing  # noqa: F401
from test_remote_signing import test_no_answer_carries_the_secret  # noqa: F401

BACKEND = os.environ["STORAGE_BACKEND"]
BACKEND_SECRET = os.environ["STORAGE_BACKEND_SECRET"]


def token(who):
    return requests.post(f"{URI}/v1/oauth/tokens", data={
        "grant_type": "client_credentials", "client_id": who, "client_secret": f"{who}-secret"}).json()["access_token"]


def test_backend_itself_hands_out_its_key(table_name):
    """The premise: asked directly, the reference server answers with its
    own S3 secret (and signs nothing: no signer in its config)."""
    ns, name = table_name
    r = requests.get(f"{BACKEND}/v1/namespaces/{ns}/tables/{name}")
    assert r.status_code == 200, r.text
    assert BACKEND_SECRET in r.text
    assert "s3.remote-signing-enabled" not in r.json().get("config", {})


def test_no_answer_carries_the_backends_secret(table_name):
    ns, name = table_name
    for who in ("writer", "reader"):
        auth = {"Authorization": f"Bearer {token(who)}"}
        for delegation in (None, "vended-credentials", "remote-signing", "vended-credentials,remote-signing"):
            h = dict(auth, **({"X-Iceberg-Access-Delegation": delegation} if delegation else {}))
            r = requests.get(f"{URI}/v1/lake/namespaces/{ns}/tables/{name}", headers=h)
            assert r.status_code == 200, r.text
            for secret in (BACKEND_SECRET, SECRET):
                assert secret not in r.text, (who, delegation)
        for path in ("/v1/config?warehouse=lake", f"/v1/lake/namespaces/{ns}/tables/{name}/credentials"):
            r = requests.get(URI + path, headers=auth)
            for secret in (BACKEND_SECRET, SECRET):
                assert secret not in r.text, (who, path)


def test_writer_vended_credentials_scoped_to_the_table(table_name):
    """The gateway vends what the backend does not: STS keys (moto) for
    the one table, with which PyIceberg's own FileIO appends and reads."""
    writer = load_catalog("writer-vended", **{
        "type": "rest", "uri": URI, "warehouse": "lake", "credential": "writer:writer-secret",
        "header.X-Iceberg-Access-Delegation": "vended-credentials",
    })
    tbl = writer.load_table(table_name)
    io = tbl.io.properties
    assert io.get("s3.session-token"), "temporary keys, from STS"
    assert io.get("s3.secret-access-key") not in (SECRET, BACKEND_SECRET)
    before = bucket_keys(PREFIX)
    tbl.append(rows(50, 52))
    got = writer.load_table(table_name).scan().to_arrow().column("id").to_pylist()
    assert sorted(got) == [3, 4, 5, 6, 7, 8, 50, 51]
    new = bucket_keys(PREFIX) - before
    assert new and all(k.startswith(f"{tbl.metadata.location.split('://', 1)[1]}/") for k in new), new
    r = requests.get(f"{URI}/v1/lake/namespaces/{table_name[0]}/tables/{table_name[1]}",
                     headers={"Authorization": f"Bearer {token('writer')}", "X-Iceberg-Access-Delegation": "vended-credentials"})
    creds = r.json()["storage-credentials"]
    assert [c["prefix"] for c in creds] == [tbl.metadata.location], creds


def test_reader_is_vended_nothing(table_name):
    """The roles policy withholds vended keys from readers
    (strip_credentials); they sign remotely instead."""
    ns, name = table_name
    h = {"Authorization": f"Bearer {token('reader')}", "X-Iceberg-Access-Delegation": "vended-credentials"}
    r = requests.get(f"{URI}/v1/lake/namespaces/{ns}/tables/{name}", headers=h)
    assert r.status_code == 200, r.text
    assert not r.json().get("storage-credentials")
    assert not any(k.startswith("s3.secret") or k == "s3.session-token" for k in r.json().get("config", {}))
    r = requests.get(f"{URI}/v1/lake/namespaces/{ns}/tables/{name}/credentials", headers=h)
    assert r.status_code == 403 and r.json()["error"]["type"] == "ForbiddenException", r.text
