"""Trino 476 (its Iceberg connector, native S3 file system) with no S3 keys
of its own, through lakegate's vended credentials
(examples/storage/Caddyfile) on moto with every signature checked.

run.sh starts one Trino with two catalogs on the gateway, lake_writer and
lake_reader (OAuth2 client credentials writer and reader), each with
iceberg.rest-catalog.vended-credentials-enabled=true and the store's
s3.endpoint, s3.region and s3.path-style-access but no keys: Trino signs
with the keys each table answer vends. It sets TRINO_URI, STORAGE_URI,
STORAGE_ADMIN (moto, only to read back what its STS was asked) and
STORAGE_LOG (the gateway's access log), and starts Trino without AWS_*.
"""

import os
import sys
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "trino"))
from trino_client import Trino, TrinoError  # noqa: E402  (interop/trino)
from vended import assert_vended  # noqa: E402

ROWS = [[1, "a"], [2, "b"], [3, "c"]]


@pytest.fixture(scope="module")
def trino():
    return Trino(os.environ["TRINO_URI"])


@pytest.fixture(scope="module")
def ns():
    return "t" + uuid.uuid4().hex[:8]


def rows(trino, who, ns):
    return trino.query(f"SELECT id, name FROM lake_{who}.{ns}.events ORDER BY id")


def test_writer_creates_inserts_and_reads(trino, ns):
    trino.query(f"CREATE SCHEMA lake_writer.{ns}")
    trino.query(f"CREATE TABLE lake_writer.{ns}.events (id bigint, name varchar)")
    assert trino.query(f"INSERT INTO lake_writer.{ns}.events VALUES (1, 'a'), (2, 'b')") == [[2]]
    assert trino.query(f"INSERT INTO lake_writer.{ns}.events VALUES (3, 'c')") == [[1]]
    assert rows(trino, "writer", ns) == ROWS
    assert_vended("writer", ns, "events", write=True)


def test_reader_reads(trino, ns):
    assert rows(trino, "reader", ns) == ROWS
    assert_vended("reader", ns, "events", write=False)


def test_reader_write_refused(trino, ns):
    """The reader's INSERT fails at its commit (the policy); its vended
    keys are read-only by their session policy (assert_vended; on AWS S3
    would refuse the files it writes first: moto does not)."""
    with pytest.raises(TrinoError, match="reader may not updateTable"):
        trino.query(f"INSERT INTO lake_reader.{ns}.events VALUES (100, 'x')")
    assert rows(trino, "writer", ns) == ROWS
    assert_vended("reader", ns, "events", write=False)
