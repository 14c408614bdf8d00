"""Spark (pyspark 4.1, Iceberg's Spark runtime and iceberg-aws-bundle 1.11.0)
with no S3 keys of its own, through lakegate's remote signing
(examples/storage/Caddyfile) on moto with every signature checked.

run.sh sets STORAGE_URI, STORAGE_S3, STORAGE_BUCKET, STORAGE_ADMIN as for
test_remote_signing.py, plus SPARK_JARS (interop/python/pom.xml's jars),
STORAGE_CLIENT_PY (the PyIceberg client's python, for pyiceberg_peer.py) and
STORAGE_LOG (the gateway's access log),
and leaves AWS_* out of this process's environment, so the JVM has no keys
either. Iceberg's S3FileIO builds its S3 client with AWS's anonymous
credentials provider when s3.remote-signing-enabled is true (the table
answer says so): no dummy keys are needed, and every request goes out with
the signature the gateway made.
"""

import json
import os
import subprocess
import uuid

import pytest
from pyspark.sql import SparkSession

URI = os.environ["STORAGE_URI"]
BUCKET = os.environ["STORAGE_BUCKET"]
HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")


def catalog_conf(who, delegation="remote-signing"):
    """One Iceberg REST catalog per OAuth2 client of examples/storage and
    access delegation: `writer`/`reader` sign remotely, `vwriter`/`vreader`
    (the same clients) take vended credentials, with the store's endpoint
    but no keys."""
    p = f"spark.sql.catalog.{who if delegation == 'remote-signing' else 'v' + who}"
    conf = {
        p: "org.apache.iceberg.spark.SparkCatalog",
        f"{p}.type": "rest",
        f"{p}.uri": URI,
        f"{p}.warehouse": "lake",
        f"{p}.rest.auth.type": "oauth2",
        f"{p}.credential": f"{who}:{who}-secret",
        # lakegate's issuer (examples/storage): the spec's default path,
        # named so Iceberg does not warn about the fallback.
        f"{p}.oauth2-server-uri": f"{URI}/v1/oauth/tokens",
        f"{p}.header.X-Iceberg-Access-Delegation": delegation,
        f"{p}.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
    }
    if delegation == "vended-credentials":
        conf.update({f"{p}.s3.endpoint": os.environ["STORAGE_S3"], f"{p}.s3.path-style-access": "true",
                     f"{p}.client.region": "us-east-1"})
    return conf


@pytest.fixture(scope="module")
def spark():
    assert not any(k in os.environ for k in KEYS), "the client must have no keys"
    work = os.environ.get("INTEROP_WORK", "/tmp")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("lakegate-storage")
        .config("spark.jars", os.environ["SPARK_JARS"])
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.local.dir", os.path.join(work, "spark-local"))
        .config("spark.sql.warehouse.dir", os.path.join(work, "spark-warehouse"))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
    )
    for who in ("writer", "reader"):
        for delegation in ("remote-signing", "vended-credentials"):
            for k, v in catalog_conf(who, delegation).items():
                builder = builder.config(k, v)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    yield session
    session.stop()


def peer(*args):
    """pyiceberg_peer.py's answer (PyIceberg, or the bucket from outside)."""
    out = subprocess.run([os.environ["STORAGE_CLIENT_PY"], os.path.join(HERE, "pyiceberg_peer.py"), *args],
                         cwd=HERE, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def ids(spark, sql):
    return sorted(r[0] for r in spark.sql(sql).collect())


@pytest.fixture(scope="module")
def ns(spark):
    name = "spark" + uuid.uuid4().hex[:8]
    spark.sql(f"CREATE NAMESPACE writer.{name}")
    return name


def table_keys(spark, table):
    """The keys under the table's location, seen from outside."""
    loc = [r[1] for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect() if r[0] == "Location"][0]
    prefix = f"s3://{BUCKET}/"
    assert loc.startswith(prefix), loc
    keys = set(peer("keys", loc[len(prefix):] + "/"))
    assert keys, f"nothing under {loc}"
    return keys


def test_writer_creates_inserts_reads_and_deletes(spark, ns):
    t = f"writer.{ns}.events"
    # merge-on-read: the DELETE writes a position delete file, a second
    # kind of file the writer's PUTs must be signed for.
    spark.sql(f"CREATE TABLE {t} (id BIGINT, name STRING) USING iceberg "
              "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {t} VALUES (0, 'n0'), (1, 'n1'), (2, 'n2'), (3, 'n3'), (4, 'n4')")
    spark.sql(f"INSERT INTO {t} VALUES (5, 'n5'), (6, 'n6'), (7, 'n7'), (8, 'n8')")
    assert ids(spark, f"SELECT id FROM {t}") == list(range(9))
    spark.sql(f"DELETE FROM {t} WHERE id < 3")
    assert ids(spark, f"SELECT id FROM {t}") == list(range(3, 9))
    keys = table_keys(spark, t)
    assert any("/data/" in k and k.endswith(".parquet") for k in keys), keys
    ops = [r[0] for r in spark.sql(f"SELECT operation FROM {t}.snapshots ORDER BY committed_at").collect()]
    assert ops == ["append", "append", "overwrite"] or ops == ["append", "append", "delete"], ops
    files = {r[0] for r in spark.sql(f"SELECT content FROM {t}.files").collect()}
    assert files == {0, 1}, f"data and position delete files: {files}"


def test_writer_expires_snapshots_deleting_files(spark, ns):
    """S3FileIO deletes in bulk (DeleteObjects, a POST whose body names the
    keys): the gateway signs it for the writer, only inside the table."""
    t = f"writer.{ns}.expiring"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, name STRING) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a')")
    spark.sql(f"INSERT OVERWRITE {t} VALUES (2, 'b')")
    before = table_keys(spark, t)
    latest = spark.sql(f"SELECT max(committed_at) FROM {t}.snapshots").collect()[0][0]
    spark.sql(f"CALL writer.system.expire_snapshots(table => '{ns}.expiring', "
              f"older_than => TIMESTAMP '{latest}', retain_last => 1)")
    after = table_keys(spark, t)
    gone = before - after
    assert any(k.endswith(".parquet") for k in gone), f"the overwritten data file is deleted: {gone}"
    assert ids(spark, f"SELECT id FROM {t}") == [2]


def test_reader_reads_but_writes_nothing(spark, ns):
    t = f"reader.{ns}.events"
    assert ids(spark, f"SELECT id FROM {t}") == list(range(3, 9))
    before = table_keys(spark, t)
    with pytest.raises(Exception) as err:
        spark.sql(f"INSERT INTO {t} VALUES (100, 'r')")
    # The signer's 403 (Iceberg's ForbiddenException), with the policy's reason.
    text = str(err.value)
    assert "reader may not signRequest for writing" in text, text[-2000:]
    assert table_keys(spark, t) == before, "no file of the reader's was written"
    assert ids(spark, f"SELECT id FROM {t}") == list(range(3, 9))


def test_vended_credentials(spark, ns):
    """Spark with vended credentials instead of signing: the writer's
    S3FileIO gets STS keys scoped to the table (storage-credentials) and
    creates, inserts and reads; under examples/storage's storage_roles a
    reader gets read-only keys and reads (STORAGE_READER_VENDED=1; the
    remote example's roles policy vends readers nothing)."""
    t = f"{ns}.vended"
    spark.sql(f"CREATE TABLE vwriter.{t} (id BIGINT, name STRING) USING iceberg")
    spark.sql(f"INSERT INTO vwriter.{t} VALUES (1, 'a'), (2, 'b')")
    spark.sql(f"INSERT INTO vwriter.{t} VALUES (3, 'c')")
    assert ids(spark, f"SELECT id FROM vwriter.{t}") == [1, 2, 3]
    assert any("/data/" in k and k.endswith(".parquet") for k in table_keys(spark, f"vwriter.{t}"))
    assert ids(spark, f"SELECT id FROM writer.{t}") == [1, 2, 3], "signed reads see the vended writes"
    if os.environ.get("STORAGE_READER_VENDED") == "1":
        assert ids(spark, f"SELECT id FROM vreader.{t}") == [1, 2, 3]


def test_pyiceberg_reads_what_spark_wrote(spark, ns):
    assert peer("read", ns, "events", "reader") == list(range(3, 9))


def test_spark_reads_what_pyiceberg_wrote(spark, ns):
    spark.sql(f"CREATE TABLE writer.{ns}.from_py (id BIGINT, name STRING) USING iceberg")
    assert peer("append", ns, "from_py", "20", "23") == [20, 21, 22]
    spark.sql(f"REFRESH TABLE reader.{ns}.from_py")
    assert ids(spark, f"SELECT id FROM reader.{ns}.from_py") == [20, 21, 22]


def test_access_log_names_who_touched_which_files(spark, ns):
    """Every S3 request of Spark's went through signRequest: the gateway's
    access log has the writer's reads and writes of the table's files and the
    reader's refused write, per table."""
    seen = set()
    with open(os.environ["STORAGE_LOG"]) as f:
        for line in f:
            lg = json.loads(line).get("lakegate", {}) if '"signRequest"' in line else {}
            if lg.get("operation") == "signRequest" and lg.get("table") == f"{ns}.events":
                seen.add((lg["principal"], lg["storage_access"], lg["decision"]))
    assert {("writer", "write", "allow"), ("writer", "read", "allow"), ("reader", "read", "allow"),
            ("reader", "write", "deny")} <= seen, seen
    assert ("reader", "write", "allow") not in seen
