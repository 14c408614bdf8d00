"""Shared setup of the uc-backend suite (test_uc_backend.py).

run.sh starts Unity Catalog's server, seeds it (seed.py), starts lakegate
on interop/uc-backend/Caddyfile and tells the tests where everything is;
without these variables every test skips, saying so:

  UCB_LAKEGATE   lakegate's Iceberg REST base URL (catalog `unity`)
  UCB_UC         UC's Iceberg REST base URL (…/api/2.1/unity-catalog/iceberg)
  UCB_ADMIN      lakegate's admin endpoint (health and status)
  UCB_SEED       seed.py's JSON: the tables and the rows written
  UCB_FINDINGS   a JSON-lines file the write tests add what each side
                 answered to (run.sh prints it as a table)

Each read test runs twice, `[lakegate]` (PyIceberg through lakegate) and
`[direct]` (PyIceberg against UC itself: the evidence for any difference).

expected-failures.txt lists what fails and why; conftest marks those tests
xfail(strict=True) (see interop/expected_failures.py).
"""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)

URLS = {"lakegate": os.environ.get("UCB_LAKEGATE", ""), "direct": os.environ.get("UCB_UC", "")}
ADMIN = os.environ.get("UCB_ADMIN", "")
SEED = os.environ.get("UCB_SEED", "")
FINDINGS = os.environ.get("UCB_FINDINGS", "")
WAREHOUSE = "unity"  # the UC catalog; lakegate's catalog has the same name
TARGETS = ("lakegate", "direct")


@pytest.fixture(scope="session")
def seed():
    if not all(URLS.values()) or not SEED:
        pytest.skip("UCB_LAKEGATE / UCB_UC / UCB_SEED are not set (run.sh did not start UC and lakegate)")
    with open(SEED) as f:
        return json.load(f)


@pytest.fixture(params=TARGETS)
def target(request):
    return request.param


def make_catalog(target):
    from pyiceberg.catalog.rest import RestCatalog

    return RestCatalog(f"ucb-{target}", uri=URLS[target], warehouse=WAREHOUSE)


@pytest.fixture
def catalog(seed, target):
    return make_catalog(target)


def record(**finding):
    """Adds one answer to the findings file (what a side answered a write)."""
    if FINDINGS:
        with open(FINDINGS, "a") as f:
            f.write(json.dumps(finding, ensure_ascii=False) + "\n")


# --- expected-failures.txt

def pytest_collection_modifyitems(config, items):
    listed = expected_failures.load(os.path.dirname(__file__))
    for item in items:
        key = expected_failures.key(item)
        if key not in listed:
            continue
        keys, reason, match = listed[key]
        target = item.callspec.params.get("target") if hasattr(item, "callspec") else None
        if "*" in keys or target in keys:
            expected_failures.mark(item, f"{reason[0] if reason else ''} (expected-failures.txt)", match)


# The report hook: only the listed failures are expected (see expected_failures.py).
from expected_failures import pytest_runtest_makereport  # noqa: E402,F401
