"""Shared setup of the Unity Catalog Spark suite (test_uc_spark.py).

run.sh takes the connector from $INTEROP_CACHE (prebuilt, see
interop/README.md "Peers built from source"), starts the target (lakegate on
interop/uc-spark/Caddyfile, or Unity Catalog's own server) behind
ucproxy.py, and tells the tests where everything is; without these
variables every test skips with the reason:

  UC_SPARK_TARGET       lakegate | unitycatalog
  UC_SPARK_URI          the UC server Spark talks to (the proxy in front of the target)
  UC_SPARK_CALLS        the proxy's log (JSON lines), read to name the calls that failed
  UC_SPARK_JARS         Spark's spark.jars (comma-separated): connector + delta-spark 4.3.1
  UC_SPARK_EXTERNAL     the folder the EXTERNAL tables' LOCATIONs are made in
  UC_SPARK_STATEMENT_TIMEOUT  seconds a statement may take (default 240)
  UC_SPARK_ICEBERG_URI  lakegate's Iceberg REST base (PyIceberg, warehouse = the
                        catalog); empty for unitycatalog, whose Iceberg REST API
                        serves only UniForm tables (these are plain Delta), so
                        there the Iceberg cross-reads are not made

The Spark catalog (and so the UC catalog) is `unity`, the schema `spark`.

expected-failures.txt lists what fails per target and why; conftest marks
those tests xfail(strict=True) (see interop/expected_failures.py), keyed by
`FILE::CLASS::TEST` (the same step runs for a MANAGED and an EXTERNAL table).
"""

import json
import os
import sys
import threading
import time
import urllib.request

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)

# PySpark turns timestamps into the Python process's local time.
os.environ["TZ"] = "UTC"
time.tzset()

TARGET = os.environ.get("UC_SPARK_TARGET", "")
URI = os.environ.get("UC_SPARK_URI", "")
CALLS = os.environ.get("UC_SPARK_CALLS", "")
JARS = os.environ.get("UC_SPARK_JARS", "")
EXTERNAL = os.environ.get("UC_SPARK_EXTERNAL", "")
ICEBERG_URI = os.environ.get("UC_SPARK_ICEBERG_URI", "")
CATALOG, SCHEMA = "unity", "spark"
# A statement that takes longer fails. Delta retries a commit the catalog
# answers with a status it takes for transient (a 5xx, e.g. lakegate's 501
# for add-commit without UniForm) for many minutes: 16 attempts of 3 HTTP
# tries with backoff up to 60 s, and then the whole commit again.
STATEMENT_TIMEOUT = int(os.environ.get("UC_SPARK_STATEMENT_TIMEOUT", "240"))
UC = "/api/2.1/unity-catalog"


def ready():
    if not TARGET or not URI or not JARS or not EXTERNAL:
        pytest.skip("UC_SPARK_TARGET / UC_SPARK_URI / UC_SPARK_JARS / UC_SPARK_EXTERNAL are not set "
                    "(run.sh did not build the connector or start the target)")


# --- the proxy's record: which test a call belongs to, and what failed

def mark(label):
    """Labels the calls the proxy records from now on."""
    req = urllib.request.Request(URI + "/__mark__", data=label.encode(), method="POST")
    urllib.request.urlopen(req, timeout=10).read()


def calls(label):
    """The calls recorded under label, in order."""
    if not CALLS or not os.path.exists(CALLS):
        return []
    out = []
    with open(CALLS, encoding="utf-8") as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("label") == label:
                out.append(r)
    return out


def failed_calls(label):
    """`METHOD path → status body` of every call under label that got an error status."""
    lines = []
    for r in calls(label):
        if r["status"] >= 400:
            body = " ".join((r.get("response") or "").split())[:400]
            lines.append(f"{r['method']} {r['path']}{'?' + r['query'] if r['query'] else ''} → {r['status']} {body}")
    return lines


class StatementFailed(AssertionError):
    """A Spark statement failed: its error, and the UC calls that failed meanwhile."""


@pytest.fixture(autouse=True)
def label_calls(request):
    """Each test's calls are recorded under its id (CLASS::TEST)."""
    if URI:
        label = request.node.nodeid.split("::", 1)[1]
        mark(label)
        request.node.uc_label = label
    yield


# --- Spark with UCSingleCatalog and delta-spark 4.3.1

@pytest.fixture(scope="session")
def spark():
    ready()
    from pyspark.sql import SparkSession

    work = os.path.join(os.environ.get("INTEROP_WORK", "/tmp"), "uc-spark", f"spark-{TARGET}")
    mark("spark session")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("lakegate-uc-spark")
        .config("spark.jars", JARS)
        .config("spark.driver.memory", "1g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.local.dir", os.path.join(work, "local"))
        .config("spark.sql.warehouse.dir", os.path.join(work, "warehouse"))
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        # Without it Delta refuses every statement (DELTA_CONFIGURE_SPARK_SESSION_WITH_EXTENSION_AND_CATALOG).
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config(f"spark.sql.catalog.{CATALOG}", "io.unitycatalog.spark.UCSingleCatalog")
        .config(f"spark.sql.catalog.{CATALOG}.uri", URI)
        # Neither target checks it; the connector requires one.
        .config(f"spark.sql.catalog.{CATALOG}.token", "uc-spark-interop")
        # The default, said out loud: the UC Delta REST API path (delta-spark >= 4.3.0).
        .config(f"spark.sql.catalog.{CATALOG}.deltaRestApi.enabled", "true")
        .config("spark.sql.defaultCatalog", CATALOG)
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def java_error(e):
    """A Py4JJavaError's Java exception and its causes, one `class: message`
    each (its own str() starts with "An error occurred while calling")."""
    j = getattr(e, "java_exception", None)
    if j is None:
        return ""
    parts = []
    while j is not None and len(parts) < 4:
        parts.append(" ".join(str(j.toString()).split()))
        j = j.getCause()
    return " <- caused by: ".join(parts)


@pytest.fixture
def sql(spark, request):
    """sql(statement) -> rows as dicts. A failure raises StatementFailed with
    Spark's error and the UC calls of this test that got an error status; a
    statement still running after STATEMENT_TIMEOUT fails too (Spark goes
    on with it in the background)."""

    def run(statement):
        label = getattr(request.node, "uc_label", "")
        done, box = threading.Event(), {}

        def work():
            try:
                box["rows"] = [r.asDict() for r in spark.sql(statement).collect()]
            except Exception as e:  # noqa: BLE001  (handed to the test's thread)
                box["error"] = e
            finally:
                done.set()

        threading.Thread(target=work, daemon=True, name="uc-spark-statement").start()
        if not done.wait(STATEMENT_TIMEOUT):
            failed = failed_calls(label)
            msg = f"{statement}\n  timed out after {STATEMENT_TIMEOUT}s (UC_SPARK_STATEMENT_TIMEOUT)"
            if failed:
                msg += f"\n  UC calls that failed ({len(failed)}), the last ones:\n    " + "\n    ".join(failed[-3:])
            raise StatementFailed(msg)
        if "error" not in box:
            return box["rows"]
        e = box["error"]
        first = java_error(e) or (str(e).strip().splitlines() or [repr(e)])[0]
        msg = f"{statement}\n  Spark: {type(e).__name__}: {first[:2000]}"
        failed = failed_calls(label)
        if failed:
            msg += "\n  UC calls that failed:\n    " + "\n    ".join(failed)
        raise StatementFailed(msg)

    return run


# --- the Iceberg door (lakegate only)

@pytest.fixture(scope="session")
def iceberg():
    """PyIceberg on lakegate's Iceberg REST API, or None (unitycatalog)."""
    ready()
    if not ICEBERG_URI:
        return None
    from pyiceberg.catalog import load_catalog

    return load_catalog("lakegate", type="rest", uri=ICEBERG_URI, warehouse=CATALOG)


@pytest.fixture(scope="session")
def schema(iceberg):
    """The schema the tables go in. On lakegate it is also made through
    the Iceberg door (a namespace), so that the table steps show what
    lakegate's Delta API does whether or not UC's schemas API is served
    (test_create_schema tests that API on its own)."""
    if iceberg is not None:
        from pyiceberg.exceptions import NamespaceAlreadyExistsError

        try:
            iceberg.create_namespace(SCHEMA)
        except NamespaceAlreadyExistsError:
            pass
    return SCHEMA


# --- exact row comparison

def sort_rows(rs):
    return sorted(rs, key=lambda r: tuple((x is None, str(x)) for x in r))


def rows_of(dicts, columns):
    return sort_rows([tuple(d.get(c) for c in columns) for d in dicts])


def arrow_rows(tbl, columns):
    """Rows of an Arrow table in columns; a column it lacks reads as null."""
    data = tbl.select([c for c in columns if c in tbl.column_names]).to_pylist()
    return sort_rows([tuple(r.get(c) for c in columns) for r in data])


# --- expected-failures.txt, keyed by CLASS::TEST and filtered by target

def pytest_collection_modifyitems(config, items):
    listed = expected_failures.load(os.path.dirname(__file__))
    for item in items:
        name = item.nodeid.split("::", 1)[1]
        name = name.split("[", 1)[0]
        entry = listed.get((os.path.basename(str(item.path)), name))
        if entry:
            targets, reason, match = entry
            if TARGET in targets or "*" in targets:
                expected_failures.mark(item, f"{reason[0] if reason else ''} (expected-failures.txt)", match)


# The report hook: only the listed failures are expected (see expected_failures.py).
from expected_failures import pytest_runtest_makereport  # noqa: E402,F401
