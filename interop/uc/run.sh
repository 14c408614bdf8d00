#!/usr/bin/env bash
# Unity Catalog's Delta REST API (uc-delta-api.yaml) through lakegate_delta:
# test_conformance.py, see README.md next to this.
#
#   interop/uc/run.sh
#
# Starts one lakegate on interop/uc/Caddyfile (embedded catalog `local`,
# its Iceberg REST API at /v1 and the Delta API at
# /api/2.1/unity-catalog/delta/v1) on port base+86 (admin base+106), and
# runs the conformance cases: every operation of the spec over real HTTP,
# every answer checked against the spec's schemas. Prints per operation
# and then one line:
#   uc/conformance: N passed, N failed, N skipped
# (skipped includes the strict xfails of expected-failures.txt). Exits
# non-zero on any other failure or error.
# Logs: $INTEROP_WORK/uc.log; pytest output and JUnit XML in
# $INTEROP_WORK/uc/.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
trap interop_cleanup EXIT
renice -n 10 $$ >/dev/null 2>&1 || true

UC_WORK=$INTEROP_WORK/uc
PORT_UC=$(port 86)
ADMIN_UC=$(port 106)
mkdir -p "$UC_WORK"
unset LAKEGATE_UC_URI LAKEGATE_UC_WAREHOUSE
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1

started=$SECONDS
rc=0
echo "uc: building lakegate and the virtualenv" >&2
build_lakegate || exit 1
PY=$(interop_venv uc "$HERE/requirements.txt") || exit 1
echo "uc: ready after $((SECONDS - started))s" >&2

if ! port_free "$PORT_UC" lakegate; then
	report "uc/conformance: did not run (port $PORT_UC in use)"
	exit 1
fi
# A fresh test secret per run for what the catalog vends (read at run time).
if ! start_lakegate uc interop/uc/Caddyfile "$PORT_UC" "$ADMIN_UC" \
	UC_S3_SECRET="$(head -c 18 /dev/urandom | base64)"; then
	report "uc/conformance: did not run (lakegate did not start, see $INTEROP_WORK/uc.log)"
	exit 1
fi
# start_lakegate's data folder; catalog `local` keeps its warehouse there.
export LAKEGATE_UC_URI="http://127.0.0.1:$PORT_UC" \
	LAKEGATE_UC_WAREHOUSE="$INTEROP_WORK/data-uc/local/warehouse"

xml=$UC_WORK/conformance.xml
run_pytest uc/conformance "$HERE" test_conformance.py "$xml" "$UC_WORK/conformance.out" "$PY" || rc=1
if ! "$PY" "$HERE/summarize.py" "$xml" >"$UC_WORK/summary.txt"; then
	rc=1
fi
echo "uc: took $((SECONDS - started))s" >&2
sed '$d' "$UC_WORK/summary.txt"
report "$(tail -n 1 "$UC_WORK/summary.txt" 2>/dev/null || echo "uc/conformance: did not run")"
exit $rc
