"""expected-failures.txt, shared by the pytest suites, and the report
hooks the JVM-driving ones (python, flink) share.

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


def mark_by_target(items, folder, label=lambda target: target):
    """Marks the items of a suite parametrized by `target` whose test and
    target expected-failures.txt (in folder) lists; the reason is
    "<label(target)>: <reason>"."""
    expected = load(folder)
    for item in items:
        target = getattr(item, "callspec", None) and item.callspec.params.get("target")
        k = key(item)
        if target and k in expected and target in expected[k][0]:
            _, reason, match = expected[k]
            mark(item, f"{label(target)}: {' '.join(reason)}", match)


def short_jvm_error(text, limit=14):
    """A JVM error's message and causes without the stack frames."""
    keep = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("Suppressed:") or s == "JVM stacktrace:":
            break
        if s.startswith("at ") or (s.startswith("...") and s.endswith("more")) or not s:
            continue
        keep.append(line)
    return "\n".join(keep[:limit])


def shorten_jvm_failure(item, call, report):
    """Failures raised from a JVM (Spark, Flink) carry a stack trace of
    hundreds of lines in their message: report the test's line and the Java
    message and causes instead."""
    text = str(call.excinfo.value)
    if not report.failed or "\tat " not in text:
        return
    where = [e for e in call.excinfo.traceback if str(e.path) == str(item.path)]
    loc = f"{where[-1].path}:{where[-1].lineno + 1}" if where else item.nodeid
    source = str(where[-1].statement).strip() if where else ""
    report.longrepr = f"{loc}: {source}\n{call.excinfo.typename}: {short_jvm_error(text)}"


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
