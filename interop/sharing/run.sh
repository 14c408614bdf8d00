#!/usr/bin/env bash
# The Python Delta Sharing connector (delta-sharing, pandas) through
# lakegate_sharing: test_pandas.py, see README.md next to this.
#
#   interop/sharing/run.sh
#
# Starts one lakegate on interop/sharing/Caddyfile (embedded catalog
# `local`, its Iceberg REST API for PyIceberg to write the tables, and
# Delta Sharing at /delta-sharing) on port base+85 (admin base+105), makes
# the recipient's profile file with `caddy sharing-profile`, and runs the
# tests (test_pandas.py on PyIceberg-written tables, test_delta_rs.py on
# delta-rs-written EXTERNAL ones). Prints per response format and then one
# line per file:
#   sharing/pandas: N passed, N failed, N skipped
#   sharing/delta-rs: N passed, N failed, N skipped
# (skipped includes the strict xfails of expected-failures.txt). Exits
# non-zero on any other failure or error.
# Logs: $INTEROP_WORK/sharing.log; pytest output and JUnit XML in
# $INTEROP_WORK/sharing/.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
trap interop_cleanup EXIT
renice -n 10 $$ >/dev/null 2>&1 || true

SH_WORK=$INTEROP_WORK/sharing
PORT_SHARING=$(port 85)
ADMIN_SHARING=$(port 105)
mkdir -p "$SH_WORK"
unset LAKEGATE_SHARING_URI LAKEGATE_SHARING_PROFILE LAKEGATE_SHARING_OTHER_TOKEN
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1

random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

started=$SECONDS
rc=0
echo "sharing: building lakegate and the virtualenv" >&2
build_lakegate || exit 1
PY=$(interop_venv sharing "$HERE/requirements.txt") || exit 1
echo "sharing: ready after $((SECONDS - started))s" >&2

if ! port_free "$PORT_SHARING" lakegate; then
	report "sharing/pandas: did not run (port $PORT_SHARING in use)"
	exit 1
fi

# Fresh secrets per run: the recipients' tokens (hashed at adapt time) and
# the key that signs file URLs and page tokens (read at run time).
SHARE_TOKEN=$(random_hex 24)
OTHER_TOKEN=$(random_hex 24)
if ! start_lakegate sharing interop/sharing/Caddyfile "$PORT_SHARING" "$ADMIN_SHARING" \
	SHARE_TOKEN="$SHARE_TOKEN" OTHER_TOKEN="$OTHER_TOKEN" \
	LAKEGATE_SHARING_KEY="$(head -c 32 /dev/urandom | base64)"; then
	report "sharing/pandas: did not run (lakegate did not start, see $INTEROP_WORK/sharing.log)"
	exit 1
fi
PROFILE=$SH_WORK/interop.share
if ! "$LAKEGATE_BIN" sharing-profile --endpoint "http://127.0.0.1:$PORT_SHARING/delta-sharing" \
	--token "$SHARE_TOKEN" --name pandas >"$PROFILE" 2>"$SH_WORK/profile.err"; then
	cat "$SH_WORK/profile.err" >&2
	report "sharing/pandas: did not run (sharing-profile failed)"
	exit 1
fi
export LAKEGATE_SHARING_URI="http://127.0.0.1:$PORT_SHARING" LAKEGATE_SHARING_PROFILE="$PROFILE" \
	LAKEGATE_SHARING_OTHER_TOKEN="$OTHER_TOKEN" \
	LAKEGATE_SHARING_WAREHOUSE="$INTEROP_WORK/data-sharing/local/warehouse" # start_lakegate's LAKEGATE_DATA

xml=$SH_WORK/pandas.xml
run_pytest sharing/pandas "$HERE" test_pandas.py "$xml" "$SH_WORK/pandas.out" "$PY" || rc=1
if ! "$PY" "$HERE/summarize.py" pandas "$xml" >"$SH_WORK/summary-pandas.txt"; then
	rc=1
fi
# delta-rs-written EXTERNAL tables (test_delta_rs.py), its own line.
xml=$SH_WORK/delta-rs.xml
run_pytest sharing/delta-rs "$HERE" test_delta_rs.py "$xml" "$SH_WORK/delta-rs.out" "$PY" || rc=1
if ! "$PY" "$HERE/summarize.py" delta-rs "$xml" >"$SH_WORK/summary-delta-rs.txt"; then
	rc=1
fi
echo "sharing: took $((SECONDS - started))s" >&2
for suite in pandas delta-rs; do
	sed '$d' "$SH_WORK/summary-$suite.txt"
	report "$(tail -n 1 "$SH_WORK/summary-$suite.txt" 2>/dev/null || echo "sharing/$suite: did not run")"
done
exit $rc
