"""Shared configuration of the Flink interop suite (test_flink.py).

run.sh starts the gateways and backends and tells the tests where they are
through environment variables; a target whose variable is unset is skipped
with a reason. Every target is one Iceberg REST catalog, chosen by its URI
and the Iceberg `warehouse` property:

  embedded          FLINK_URI_EMBEDDED          root Caddyfile, catalog `local`
  refserver         FLINK_URI_REFSERVER         examples/remote, catalog `remote`
                                                in front of Iceberg's reference
                                                REST server
  nessie            FLINK_URI_NESSIE            examples/nessie, catalog `nessie`
  direct-refserver  FLINK_URI_DIRECT_REFSERVER  the reference server itself
  direct-nessie     FLINK_URI_DIRECT_NESSIE     Nessie itself

The Nessie targets also take FLINK_NESSIE_PROPS, a JSON object of the
client's S3 properties (Iceberg names: io-impl, s3.endpoint, ...), which go
to Flink's CREATE CATALOG and to PyIceberg alike. run.sh puts Iceberg's
Flink runtime, its AWS bundle and Hadoop's client jars on the JVM's class
path (HADOOP_CLASSPATH, which PyFlink's gateway adds to it).

One JVM (PyFlink's gateway) serves the whole session: a batch and a
streaming TableEnvironment, each with one Iceberg catalog per target,
created on first use. Jobs run one at a time on Flink's local executor.
"""

import json
import os
import sys
import threading
import time
import uuid

import pytest
from py4j.protocol import Py4JJavaError

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)


class Target:
    def __init__(self, name, warehouse, props_env=None):
        self.name = name
        self.env = "FLINK_URI_" + name.upper().replace("-", "_")
        self.uri = os.environ.get(self.env, "")
        # The direct targets talk to the backend itself: no warehouse.
        self.warehouse = "" if name.startswith("direct-") else warehouse
        self.props = {}
        if props_env and os.environ.get(props_env):
            self.props = json.loads(os.environ[props_env])
        # Flink's catalog name for this target (no dashes in SQL names).
        self.catalog = "lake_" + name.replace("-", "_")

    def skip_unless_available(self):
        if not self.uri:
            pytest.skip(f"target {self.name}: {self.env} is not set (run.sh did not start it)")

    def catalog_props(self):
        """The Iceberg catalog properties, Flink's and PyIceberg's alike."""
        props = {"uri": self.uri}
        if self.warehouse:
            props["warehouse"] = self.warehouse
        props.update(self.props)
        return props

    def __repr__(self):
        return f"Target({self.name})"


TARGETS = {t.name: t for t in (
    Target("embedded", "local"),
    Target("refserver", "remote"),
    Target("nessie", "nessie", "FLINK_NESSIE_PROPS"),
    Target("direct-refserver", ""),
    Target("direct-nessie", "", "FLINK_NESSIE_PROPS"),
)}

# One id per pytest run, so that names never collide with those of an
# earlier run against a backend that keeps its state.
RUN_ID = uuid.uuid4().hex[:8]


def unique(prefix):
    return f"{prefix}_{RUN_ID}_{uuid.uuid4().hex[:6]}"


@pytest.fixture(params=list(TARGETS))
def target(request):  # request.param is the target's name (see expected-failures.txt)
    t = TARGETS[request.param]
    t.skip_unless_available()
    return t


def sql_string(s):
    return "'" + str(s).replace("'", "''") + "'"


# The longest a job may run (they take seconds; a hung one ends its test).
JOB_TIMEOUT = 180


class Flink:
    """PyFlink's batch and streaming TableEnvironments in one JVM."""

    def __init__(self):
        from pyflink.table import EnvironmentSettings, TableEnvironment

        if "iceberg-flink-runtime" not in os.environ.get("HADOOP_CLASSPATH", ""):
            pytest.exit("HADOOP_CLASSPATH lacks Iceberg's Flink runtime: run the suite with run.sh", returncode=3)
        self.batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        self.stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        for env in (self.batch, self.stream):
            conf = env.get_config()
            conf.set("parallelism.default", "1")
            conf.set("table.local-time-zone", "UTC")
            # A failing job fails its test at once (streaming jobs with
            # checkpoints would otherwise restart for ever).
            conf.set("restart-strategy.type", "none")
            # Every job here gets a fresh user-code class loader in the same
            # JVM, and S3FileIO's AWS SDK keeps the first job's loader (its
            # shared HTTP client); Flink's check then fails the next job that
            # writes to S3 ("Trying to access closed classloader"). Flink's
            # message names this switch for a third-party library that does so.
            conf.set("classloader.check-leaked-classloader", "false")
        # Streaming writes commit to Iceberg on each checkpoint.
        self.stream.get_config().set("execution.checkpointing.interval", "1s")
        self._catalogs = set()

    def catalog(self, target):
        """The target's catalog name, created in both environments once."""
        if target.name not in self._catalogs:
            opts = {"type": "iceberg", "catalog-type": "rest", **target.catalog_props()}
            with_ = ", ".join(f"{sql_string(k)}={sql_string(v)}" for k, v in opts.items())
            for env in (self.batch, self.stream):
                env.execute_sql(f"CREATE CATALOG {target.catalog} WITH ({with_})")
            self._catalogs.add(target.name)
        return target.catalog

    def execute(self, statement, streaming=False, timeout=JOB_TIMEOUT):
        """Runs a statement and waits for its job (if any) to end; a job
        still running after `timeout` seconds is cancelled and fails."""
        env = self.stream if streaming else self.batch
        result = env.execute_sql(statement)
        try:
            result.wait(timeout * 1000)
        except Py4JJavaError as e:
            if e.java_exception.getClass().getName() != "java.util.concurrent.TimeoutException":
                raise
            client = result.get_job_client()
            if client is not None:
                client.cancel()
            raise AssertionError(f"job still running after {timeout}s, cancelled: {statement}") from None
        return result

    def rows(self, query, streaming=False):
        """A bounded query's rows as sorted tuples."""
        env = self.stream if streaming else self.batch
        with env.execute_sql(query).collect() as results:
            return sorted(tuple(r) for r in results)

    def strings(self, statement):
        """The first column of a catalog statement's answer (SHOW ...)."""
        with self.batch.execute_sql(statement).collect() as results:
            return sorted(str(r[0]) for r in results)


class StreamingQuery:
    """An unbounded query on the streaming environment, read row by row
    with a deadline: take(n, timeout) returns the next n rows or fails the
    test, and close() cancels the job whatever state it is in."""

    def __init__(self, flink, query):
        self.result = flink.stream.execute_sql(query)
        self.iterator = self.result.collect()
        self.error = None

    def take(self, n, timeout):
        got, done = [], threading.Event()

        def read():
            try:
                for _ in range(n):
                    got.append(tuple(next(self.iterator)))
            except BaseException as e:  # noqa: BLE001 (reported below)
                self.error = e
            finally:
                done.set()

        threading.Thread(target=read, daemon=True).start()
        if not done.wait(timeout):
            raise AssertionError(f"streaming query: {len(got)} of {n} rows after {timeout}s: {got}")
        if self.error is not None:
            raise self.error
        return got

    def close(self):
        try:
            client = self.result.get_job_client()
            if client is not None:
                client.cancel()
        except Exception:  # noqa: BLE001 (a finished job cannot be cancelled)
            pass
        try:
            self.iterator.close()
        except Exception:  # noqa: BLE001
            pass


_flink = None


@pytest.fixture(scope="session")
def flink():
    global _flink
    if _flink is None:
        t0 = time.time()
        _flink = Flink()
        print(f"flink: environments ready after {time.time() - t0:.1f}s", file=sys.stderr)
    return _flink


def pytest_collection_modifyitems(config, items):
    expected_failures.mark_by_target(items, os.path.dirname(__file__))


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or expected_failures.unexpected(item, call, report):
        return
    expected_failures.shorten_jvm_failure(item, call, report)
