"""Shared setup of the Spark Delta Sharing suite (test_spark_sharing.py).

run.sh takes the connector's jars from $INTEROP_CACHE (prebuilt, see
interop/README.md "Peers built from source"), starts lakegate on
interop/sharing-spark/Caddyfile and tells the tests where everything is;
without these variables every test skips with the reason:

  LAKEGATE_SHARING_URI      the gateway (Iceberg REST at /v1, warehouse `local`)
  LAKEGATE_SHARING_PROFILE  the recipient profile file of share `spark`
  DSS_JARS                  the connector's jars (comma-separated), Spark's spark.jars

Every Spark read is compared row for row with PyIceberg's scan of the
table's metadata file of the same Delta version (a StaticTable on it: its
snapshot and its schema), which is what the version means on lakegate.

expected-failures.txt lists what fails with this client and why; conftest
marks those tests xfail(strict=True) (see interop/expected_failures.py).
"""

import datetime as dt
import decimal
import os
import re
import sys
import time
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)

# PySpark turns timestamps into the Python process's local time.
os.environ["TZ"] = "UTC"
time.tzset()

URI = os.environ.get("LAKEGATE_SHARING_URI", "")
PROFILE = os.environ.get("LAKEGATE_SHARING_PROFILE", "")
JARS = os.environ.get("DSS_JARS", "")
SHARE, NS = "spark", "sales"
RUN_ID = uuid.uuid4().hex[:8]


def unique(prefix):
    """A table name of this run (no dots: the connector's URL splits on them)."""
    return f"{prefix}_{RUN_ID}_{uuid.uuid4().hex[:4]}"


def table_url(table):
    return f"{PROFILE}#{SHARE}.{NS}.{table}"


@pytest.fixture(scope="session")
def gateway():
    if not URI or not PROFILE or not JARS:
        pytest.skip("LAKEGATE_SHARING_URI / LAKEGATE_SHARING_PROFILE / DSS_JARS are not set "
                    "(run.sh did not build the connector or start lakegate)")
    return URI


@pytest.fixture(scope="session")
def catalog(gateway):
    from pyiceberg.catalog import load_catalog
    from pyiceberg.exceptions import NamespaceAlreadyExistsError

    cat = load_catalog("lakegate", type="rest", uri=gateway, warehouse="local")
    try:
        cat.create_namespace(NS)
    except NamespaceAlreadyExistsError:
        pass
    return cat


@pytest.fixture(scope="session")
def spark(gateway):
    from pyspark.sql import SparkSession

    work = os.path.join(os.environ.get("INTEROP_WORK", "/tmp"), "sharing-spark")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("lakegate-sharing-spark")
        .config("spark.jars", JARS)
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.local.dir", os.path.join(work, "spark-local"))
        .config("spark.sql.warehouse.dir", os.path.join(work, "spark-warehouse"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


# --- versions: what PyIceberg committed, one Delta version per metadata file

class Versions:
    """A table and, per Delta version, the metadata file it was (its number
    is the version) and that file's time (last-updated-ms)."""

    def __init__(self, table, name):
        self.table, self.name = table, name
        self.files = {}  # version -> (metadata location, last-updated-ms)
        self.record()

    def record(self):
        self.table = self.table.refresh()
        loc = self.table.metadata_location
        v = int(re.match(r"(\d+)-", os.path.basename(loc)).group(1))
        self.files[v] = (loc, self.table.metadata.last_updated_ms)
        return v

    @property
    def latest(self):
        return max(self.files)

    def static(self, version):
        from pyiceberg.table import StaticTable

        return StaticTable.from_metadata(self.files[version][0])

    def arrow(self, version=None):
        """PyIceberg's scan of the table as of version (default latest)."""
        return self.static(self.latest if version is None else version).scan().to_arrow()

    def timestamp(self, version):
        """The version's time as the connector's timestampAsOf takes it (UTC, ms)."""
        ms = self.files[version][1]
        return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


# --- exact row comparison

def norm(v):
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.timezone.utc).replace(tzinfo=None)
    if isinstance(v, bytearray):
        return bytes(v)
    if isinstance(v, float) and v != v:
        return "NaN"
    return v


def sort_rows(rs):
    return sorted(rs, key=lambda r: tuple((x is None, str(x)) for x in r))


def spark_rows(df, columns=None):
    cols = list(columns or df.columns)
    return sort_rows([tuple(norm(r[c]) for c in cols) for r in df.select(*cols).collect()])


def arrow_rows(tbl, columns=None):
    """Rows of tbl in columns; a column the version did not have yet reads
    as null, as a reader of a newer schema reads that version's rows."""
    cols = list(columns or tbl.column_names)
    data = tbl.select([c for c in cols if c in tbl.column_names]).to_pylist()
    return sort_rows([tuple(norm(r.get(c)) for c in cols) for r in data])


def multiset_minus(a, b):
    """Rows of a not in b, duplicates counted."""
    from collections import Counter

    return list((Counter(a) - Counter(b)).elements())


# --- expected-failures.txt

def pytest_collection_modifyitems(config, items):
    listed = expected_failures.load(os.path.dirname(__file__))
    for item in items:
        key = expected_failures.key(item)
        if key in listed:
            _, reason, match = listed[key]
            expected_failures.mark(item, f"{reason[0] if reason else ''} (expected-failures.txt)", match)


# The report hook: only the listed failures are expected (see expected_failures.py).
from expected_failures import pytest_runtest_makereport  # noqa: E402,F401
