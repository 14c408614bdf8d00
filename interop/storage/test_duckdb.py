"""DuckDB 1.5.5 (its iceberg extension, interop/engines' virtualenv) with no
S3 keys of its own, through lakegate's vended credentials
(examples/storage/Caddyfile) on moto with every signature checked.

DuckDB asks for vended credentials (ACCESS_DELEGATION_MODE
'vended_credentials') and makes an S3 secret of each table answer's
storage-credentials: keys, session token, region, endpoint and path style,
so it needs no S3 settings of its own. run.sh sets STORAGE_URI,
STORAGE_ADMIN (moto, only to read back what its STS was asked) and
STORAGE_LOG (the gateway's access log), and leaves AWS_* out.
"""

import os
import sys
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "engines"))
import duckdb_ext  # noqa: E402  (interop/engines)
from vended import URI, assert_no_keys, assert_vended  # noqa: E402

ROWS = [(1, "a"), (2, "b"), (3, "c")]


def connect(who):
    assert_no_keys()
    con = duckdb_ext.connect()
    con.execute(f"ATTACH 'lake' AS lake (TYPE ICEBERG, ENDPOINT '{URI}', "
                f"CLIENT_ID '{who}', CLIENT_SECRET '{who}-secret', OAUTH2_SERVER_URI '{URI}/v1/oauth/tokens', "
                "ACCESS_DELEGATION_MODE 'vended_credentials')")
    return con


@pytest.fixture(scope="module")
def ns():
    return "d" + uuid.uuid4().hex[:8]


def rows(con, ns):
    return con.execute(f"SELECT id, name FROM lake.{ns}.events ORDER BY id").fetchall()


def test_writer_creates_inserts_and_reads(ns):
    w = connect("writer")
    w.execute(f"CREATE SCHEMA lake.{ns}")
    w.execute(f"CREATE TABLE lake.{ns}.events (id BIGINT, name VARCHAR)")
    w.execute(f"INSERT INTO lake.{ns}.events VALUES (1, 'a'), (2, 'b')")
    w.execute(f"INSERT INTO lake.{ns}.events VALUES (3, 'c')")
    assert rows(w, ns) == ROWS
    assert rows(connect("writer"), ns) == ROWS, "a fresh connection reads what was committed"
    assert_vended("writer", ns, "events", write=True)


def test_reader_reads(ns):
    assert rows(connect("reader"), ns) == ROWS
    assert_vended("reader", ns, "events", write=False)


def test_reader_write_refused(ns):
    """The reader's INSERT fails at its commit (the policy); its vended
    keys are read-only by their session policy (assert_vended; on AWS S3
    would refuse the files it writes first: moto does not)."""
    r = connect("reader")
    with pytest.raises(Exception, match="reader may not commitTransaction"):
        r.execute(f"INSERT INTO lake.{ns}.events VALUES (100, 'x')")
    assert rows(connect("writer"), ns) == ROWS
    assert_vended("reader", ns, "events", write=False)
