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
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)
from trino_client import Trino, TrinoError  # noqa: E402,F401  (next to this file)

DATA_TARGETS = ["embedded", "refserver", "nessie", "direct-refserver", "direct-nessie"]
TRINO_URI = os.environ.get("TRINO_URI", "")
TARGETS = json.loads(os.environ.get("TRINO_TARGETS") or "{}")

# One id per pytest run: names never collide with an earlier run's in a
# backend that keeps its state.
RUN_ID = uuid.uuid4().hex[:6]


def unique(prefix):
    return f"{prefix}_{RUN_ID}_{uuid.uuid4().hex[:6]}"


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
