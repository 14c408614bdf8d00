"""Shared set-up of the Trino suite: a small client for Trino's HTTP API,
the targets, and the expected failures.

run.sh starts the gateways, the backends and one Trino server with a
catalog per target, and tells the tests where they are:

  TRINO_URI      Trino's HTTP API (http://127.0.0.1:base+40)
  TRINO_TARGETS  JSON: {target: PyIceberg catalog properties} for every
                 target that is up (the same REST URI and warehouse as the
                 target's Trino catalog, for the cross-reads)

Targets: embedded, refserver, nessie (through lakegate), direct-refserver,
direct-nessie (straight against the backend), and policy (examples/policy:
Trino catalogs policy_reader, policy_writer, policy_admin, each with its
OAuth2 client's credential). A target run.sh did not start is skipped.
"""

import json
import os
import sys
import time
import uuid

import pytest
import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)

DATA_TARGETS = ["embedded", "refserver", "nessie", "direct-refserver", "direct-nessie"]
TRINO_URI = os.environ.get("TRINO_URI", "")
TARGETS = json.loads(os.environ.get("TRINO_TARGETS") or "{}")

# One id per pytest run: names never collide with an earlier run's in a
# backend that keeps its state.
RUN_ID = uuid.uuid4().hex[:6]


def unique(prefix):
    return f"{prefix}_{RUN_ID}_{uuid.uuid4().hex[:6]}"


class TrinoError(Exception):
    """A query Trino answered with an error: its message, name and type."""

    def __init__(self, sql, error):
        self.error_name = error.get("errorName", "")
        self.error_type = error.get("errorType", "")
        self.message = error.get("message", "")
        cause = error.get("failureInfo", {})
        causes = []
        while cause:
            if cause.get("message") and cause.get("message") != self.message:
                causes.append(f"{cause.get('type', '')}: {cause['message']}")
            cause = cause.get("cause")
        text = f"{self.error_name} ({self.error_type}): {self.message}"
        if causes:
            text += "\n  caused by " + "\n  caused by ".join(causes[:4])
        super().__init__(f"{text}\n  in: {sql}")


class Trino:
    """Trino's client protocol (POST /v1/statement, then follow nextUri)."""

    def __init__(self, uri, user="interop"):
        self.uri = uri
        self.session = requests.Session()
        self.session.headers.update({"X-Trino-User": user, "X-Trino-Source": "lakegate-interop"})

    def _get(self, url):
        for attempt in range(50):
            r = self.session.get(url, timeout=120)
            if r.status_code in (429, 502, 503, 504):
                time.sleep(0.05 * (attempt + 1))
                continue
            r.raise_for_status()
            return r.json()
        r.raise_for_status()

    def query(self, sql, catalog=None, schema=None):
        """The rows of one statement, as lists; raises TrinoError."""
        headers = {}
        if catalog:
            headers["X-Trino-Catalog"] = catalog
        if schema:
            headers["X-Trino-Schema"] = schema
        r = self.session.post(f"{self.uri}/v1/statement", data=sql.encode(), headers=headers, timeout=120)
        r.raise_for_status()
        j = r.json()
        rows = []
        while True:
            rows.extend(j.get("data") or [])
            if j.get("error"):
                raise TrinoError(sql, j["error"])
            if "nextUri" not in j:
                return rows
            j = self._get(j["nextUri"])


@pytest.fixture(scope="session")
def trino():
    if not TRINO_URI:
        pytest.skip("TRINO_URI is not set (run.sh did not start Trino)")
    return Trino(TRINO_URI)


def catalog_name(target):
    return target.replace("-", "_")


def pytest_collection_modifyitems(config, items):
    expected_failures.mark_by_target(items, os.path.dirname(__file__))


from expected_failures import pytest_runtest_makereport  # noqa: E402,F401
