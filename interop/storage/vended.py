"""What the vended-credentials suites (test_duckdb.py, test_trino.py) check
beyond their engine's own answers, with the standard library and requests
only (each suite runs in its engine's virtualenv).

moto 5.2.6 does not enforce session policies (docs/storage.md), so a
reader's vended keys could write on moto. What makes them read-only on AWS
is the session policy the gateway sent to STS: these helpers read it from
the record of every AssumeRole the gateway sent (sts_recorder.py, in front
of moto's STS: STORAGE_STS_RECORD) and compare it with the exact read-only
or read-write policy for the table, and read the gateway's access log for
the access each vending was decided with.
"""

import json
import os
import urllib.parse

import requests

URI = os.environ["STORAGE_URI"]
ADMIN = urllib.parse.urlsplit(os.environ["STORAGE_ADMIN"])
MOTO = f"{ADMIN.scheme}://{ADMIN.hostname}:{ADMIN.port}"
KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")


def assert_no_keys():
    assert not any(k in os.environ for k in KEYS), "the client must have no S3 keys"
    assert not os.path.exists(os.path.expanduser("~/.aws")), "no shared AWS config either"


def token(who):
    r = requests.post(f"{URI}/v1/oauth/tokens", data={
        "grant_type": "client_credentials", "client_id": who, "client_secret": f"{who}-secret"})
    r.raise_for_status()
    return r.json()["access_token"]


def table_place(ns, table):
    """The table's location as (bucket, key prefix), from a plain
    loadTable (no delegation) as the writer."""
    r = requests.get(f"{URI}/v1/lake/namespaces/{ns}/tables/{table}",
                     headers={"Authorization": f"Bearer {token('writer')}"})
    r.raise_for_status()
    loc = urllib.parse.urlsplit(r.json()["metadata"]["location"])
    assert loc.scheme == "s3", loc
    return loc.hostname, loc.path.strip("/")


def session_policy(bucket, prefix, write):
    """The exact session policy storage.SessionPolicy writes for a table
    whose data and metadata paths lie under its location."""
    actions = ["s3:GetObject"] + (["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"] if write else [])
    return {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": actions, "Resource": [f"arn:aws:s3:::{bucket}/{prefix}/*"]},
        {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": [f"arn:aws:s3:::{bucket}"],
         "Condition": {"StringLike": {"s3:prefix": [f"{prefix}/*"]}}},
    ]}


def sessions(who, bucket, prefix):
    """The session policies STS was asked for as `lakegate-<who>` whose
    objects are the table's (other tables' sessions left out)."""
    out = []
    with open(os.environ["STORAGE_STS_RECORD"]) as f:
        for line in f:
            call = json.loads(line)
            if call.get("RoleSessionName") != f"lakegate-{who}" or "Policy" not in call:
                continue
            policy = json.loads(call["Policy"])
            if f"arn:aws:s3:::{bucket}/{prefix}/*" in policy["Statement"][0]["Resource"]:
                # examples/storage's role and duration (15m).
                assert call["RoleArn"] == "arn:aws:iam::123456789012:role/lakegate-tables", call
                assert call["DurationSeconds"] == "900", call
                out.append(policy)
    return out


def assert_vended(who, ns, table, write):
    """who was vended keys for the table, every time with exactly the
    read-write (write) or read-only session policy, and the gateway's
    access log has the vendings with that access."""
    bucket, prefix = table_place(ns, table)
    got = sessions(who, bucket, prefix)
    assert got, f"no AssumeRole for lakegate-{who} on s3://{bucket}/{prefix}"
    want = session_policy(bucket, prefix, write)
    assert all(p == want for p in got), json.dumps(got)
    access = "write" if write else "read"
    seen = set()
    with open(os.environ["STORAGE_LOG"]) as f:
        for line in f:
            if '"storage_access"' not in line:
                continue
            lg = json.loads(line).get("lakegate", {})
            if lg.get("table") == f"{ns}.{table}" and lg.get("principal") == who and \
                    lg.get("operation") in ("loadTable", "createTable", "loadCredentials"):
                seen.add((lg["operation"], lg["storage_access"], lg["decision"]))
    assert seen, f"no vending to {who} of {ns}.{table} in the access log"
    # A reader's vending asked for write and got read: decision "partial".
    assert {a for _, a, _ in seen} == {access}, seen
    assert {d for _, _, d in seen} == ({"allow"} if write else {"partial"}), seen
