"""Shared configuration of the Python interop suites (Spark SQL, PyIceberg).

run.sh starts the gateways and tells the tests where they are through
environment variables; a target whose variable is unset is skipped with a
reason. Every target is one lakegate gateway and one of its catalogs,
chosen by the Iceberg `warehouse` property:

  embedded   LAKEGATE_EMBEDDED_URI   root Caddyfile, embedded catalog `local`
  unified    LAKEGATE_UNIFIED_URI    interop/unified/Caddyfile, catalog `all`: a
                                     unified catalog over three embedded members
                                     (namespaces under `newdb` live in `first`,
                                     under `ns` in `second`, the rest in `third`)
  refserver  LAKEGATE_REFSERVER_URI  examples/remote, catalog `remote` in front
                                     of Iceberg's reference REST server
                                     (LAKEGATE_REFSERVER_WAREHOUSE overrides the
                                     warehouse; empty: none)
  nessie     LAKEGATE_NESSIE_URI     examples/nessie, catalog `nessie`
                                     (LAKEGATE_NESSIE_PROPS: JSON object of the
                                     client's S3 properties, Iceberg names;
                                     LAKEGATE_NESSIE_WAREHOUSE as above)
  policy     LAKEGATE_POLICY_URI     examples/policy, catalog `local`, OAuth2
                                     clients reader, writer and admin
"""

import json
import os
import sys
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)


class Target:
    def __init__(self, name, env, warehouse, props_env=None):
        self.name = name
        self.env = env
        self.uri = os.environ.get(env, "")
        # run.sh's direct-* targets point a target straight at its backend,
        # with an empty warehouse (then none is sent).
        self.warehouse = os.environ.get(env.replace("_URI", "_WAREHOUSE"), warehouse)
        self.props = {}
        if props_env and os.environ.get(props_env):
            self.props = json.loads(os.environ[props_env])

    @property
    def available(self):
        return bool(self.uri)

    def skip_unless_available(self):
        if not self.available:
            pytest.skip(f"target {self.name}: {self.env} is not set (run.sh did not start it)")

    def __repr__(self):
        return f"Target({self.name})"


TARGETS = {
    "embedded": Target("embedded", "LAKEGATE_EMBEDDED_URI", "local"),
    "unified": Target("unified", "LAKEGATE_UNIFIED_URI", "all"),
    "refserver": Target("refserver", "LAKEGATE_REFSERVER_URI", "remote"),
    "nessie": Target("nessie", "LAKEGATE_NESSIE_URI", "nessie", "LAKEGATE_NESSIE_PROPS"),
}
# The catalog tests run on every data target; the OAuth2 tests on this one.
DATA_TARGETS = ["embedded", "unified", "refserver", "nessie"]
POLICY = Target("policy", "LAKEGATE_POLICY_URI", "local")

# examples/policy's clients (its Caddyfile's defaults).
CREDENTIALS = {
    "reader": "reader:reader-secret",
    "writer": "writer:writer-secret",
    "admin": "admin:admin-secret",
}

# One id per pytest run, so that namespaces never collide with those of an
# earlier run against a backend that keeps its state.
RUN_ID = uuid.uuid4().hex[:8]


def unique(prefix):
    return f"{prefix}_{RUN_ID}_{uuid.uuid4().hex[:6]}"


@pytest.fixture(params=DATA_TARGETS)
def target(request):  # request.param is the target's name (see expected-failures.txt)
    t = TARGETS[request.param]
    t.skip_unless_available()
    return t


@pytest.fixture
def policy_target():
    POLICY.skip_unless_available()
    return POLICY


def pytest_collection_modifyitems(config, items):
    expected_failures.mark_by_target(items, os.path.dirname(__file__), label=lambda t: f"{t}'s own failure")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or expected_failures.unexpected(item, call, report):
        return
    expected_failures.shorten_jvm_failure(item, call, report)
