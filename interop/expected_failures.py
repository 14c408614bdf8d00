"""expected-failures.txt, shared by the pytest suites (python, sharing).

Format: an entry's reason as comment lines (the first is its title), then
`KEYS FILE::TEST match: REGEX` (KEYS comma-separated: backends for the
python suite, response formats for sharing); a blank line ends a reason.
Each listed test is marked xfail(strict=True), and its failure counts as
expected only when REGEX is found in the error, so another failure cannot
hide behind an entry.
"""

import os
import re

import pytest

MATCH = pytest.StashKey[str]()


def load(folder):
    """{(file, test): (keys, reason lines, match)} from folder/expected-failures.txt."""
    out, reason = {}, []
    with open(os.path.join(folder, "expected-failures.txt")) as f:
        for line in f:
            line = line.strip()
            if not line:
                reason = []
            elif line.startswith("#"):
                reason.append(line.lstrip("# "))
            else:
                line, _, match = line.partition(" match: ")
                keys, test = line.split(None, 1)
                file, name = test.strip().split("::", 1)
                out[(file, name)] = (set(keys.split(",")), list(reason), match.strip())
    return out


def key(item):
    """The (file, test) an item is listed under."""
    return os.path.basename(str(item.path)), item.originalname


def mark(item, reason, match):
    item.add_marker(pytest.mark.xfail(strict=True, reason=reason))
    if match:
        item.stash[MATCH] = match


def unexpected(item, call, report):
    """Turns an expected failure whose error does not match its entry into a
    failure; reports whether it did."""
    match = item.stash.get(MATCH, "")
    if getattr(report, "wasxfail", None) and match and not re.search(match, str(call.excinfo.value)):
        report.outcome = "failed"
        del report.wasxfail
        report.longrepr = (f"failed, but not as expected-failures.txt expects "
                           f"(no match for {match!r}):\n{report.longrepr}")
        return True
    return False


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """The report hook of a suite whose failures are only the listed ones:
    a conftest imports it (`from expected_failures import
    pytest_runtest_makereport`), and pytest runs it from there."""
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None:
        return
    unexpected(item, call, report)
