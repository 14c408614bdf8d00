"""Shared setup of the Delta Sharing interop suite (test_pandas.py).

run.sh starts lakegate on interop/sharing/Caddyfile and tells the tests
where it is; without these variables every test skips with the reason:

  LAKEGATE_SHARING_URI      the gateway (Iceberg REST at /v1, warehouse `local`)
  LAKEGATE_SHARING_PROFILE  the recipient profile file of share `interop`
                            (written by `caddy sharing-profile`)
  LAKEGATE_SHARING_OTHER_TOKEN  the token of share `other`'s recipient

Tests that read a table take a `fmt` parameter, how the connector is asked
to read it:

  parquet       use_delta_format=False: responseformat=parquet, pyarrow reads
                each file URL
  delta         use_delta_format=True: responseformat=delta, delta-kernel-rust
                (delta-kernel-rust-sharing-wrapper) replays the answer as a
                Delta log and reads the files
  auto          use_delta_format=None: the connector asks the metadata
                endpoint with responseformat=delta,parquet and follows the
                server's choice

expected-failures.txt lists what lakegate answers wrongly for this client;
conftest marks those tests xfail(strict=True) for the listed fmt values.
"""

import contextlib
import json
import os
import sys
import uuid

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import expected_failures  # noqa: E402  (interop/expected_failures.py)

URI = os.environ.get("LAKEGATE_SHARING_URI", "")
PROFILE = os.environ.get("LAKEGATE_SHARING_PROFILE", "")
OTHER_TOKEN = os.environ.get("LAKEGATE_SHARING_OTHER_TOKEN", "")
SHARE = "interop"
# Namespaces of catalog `local`: `sales` is schema `sales` of both shares;
# `other` holds the one table schema `extra` shares under another name.
NS, OTHER_NS = "sales", "other"
ALIAS_SOURCE, ALIAS = "hidden_name", "renamed_alias"

RUN_ID = uuid.uuid4().hex[:8]


def unique(prefix):
    """A table name of this run (no dots: the connector's URL splits on them)."""
    return f"{prefix}_{RUN_ID}_{uuid.uuid4().hex[:4]}"


def table_url(table, schema=NS, share=SHARE):
    return f"{PROFILE}#{share}.{schema}.{table}"


@pytest.fixture(scope="session")
def gateway():
    if not URI or not PROFILE:
        pytest.skip("LAKEGATE_SHARING_URI / LAKEGATE_SHARING_PROFILE are not set (run.sh did not start lakegate)")
    return URI


@pytest.fixture(scope="session")
def catalog(gateway):
    from pyiceberg.catalog import load_catalog
    from pyiceberg.exceptions import NamespaceAlreadyExistsError

    cat = load_catalog("lakegate", type="rest", uri=gateway, warehouse="local")
    for ns in (NS, OTHER_NS):
        try:
            cat.create_namespace(ns)
        except NamespaceAlreadyExistsError:
            pass
    return cat


USE_DELTA = {"parquet": False, "delta": True, "auto": None}


def load(table, fmt, schema=NS, **kwargs):
    """delta_sharing.load_as_pandas of one shared table, read as fmt says."""
    import delta_sharing

    return delta_sharing.load_as_pandas(table_url(table, schema), use_delta_format=USE_DELTA[fmt], **kwargs)


def changes(table, fmt, **kwargs):
    import delta_sharing

    return delta_sharing.load_table_changes_as_pandas(table_url(table), use_delta_format=USE_DELTA[fmt], **kwargs)


# --- exact row comparison

def _norm(v):
    try:
        import pandas as pd

        if v is None or v is pd.NaT or (isinstance(v, float) and v != v):
            return None
        if isinstance(v, pd.Timestamp):
            return v.to_pydatetime()
    except (TypeError, ValueError):
        pass
    if hasattr(v, "item") and not isinstance(v, (bytes, str)):  # numpy scalars
        return v.item()
    return v


def rows(df, columns=None):
    """The rows of a DataFrame as sorted tuples (None for every kind of null)."""
    cols = list(columns or df.columns)
    out = [tuple(_norm(v) for v in rec) for rec in df[cols].itertuples(index=False, name=None)]
    return sorted(out, key=lambda r: tuple((x is None, str(x)) for x in r))


def expected(rows_):
    return sorted(rows_, key=lambda r: tuple((x is None, str(x)) for x in r))


# --- expected-failures.txt

def pytest_collection_modifyitems(config, items):
    expected = expected_failures.load(os.path.dirname(__file__))
    for item in items:
        params = getattr(item, "callspec", None) and item.callspec.params or {}
        fmt = params.get("fmt", "*")
        key = expected_failures.key(item)
        if key in expected and (fmt in expected[key][0] or "*" in expected[key][0]):
            _, reason, match = expected[key]
            # The entry's first comment line is its title (the xfail reason).
            expected_failures.mark(item, f"{reason[0] if reason else ''} (expected-failures.txt)", match)


# The report hook: only the listed failures are expected (see expected_failures.py).
from expected_failures import pytest_runtest_makereport  # noqa: E402,F401
