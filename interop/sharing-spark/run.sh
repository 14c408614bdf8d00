#!/usr/bin/env bash
# Spark's Delta Sharing connector (delta-sharing-spark, built from
# delta-io/delta-sharing's source and taken from $INTEROP_CACHE, see
# interop/README.md "Peers built from source") through lakegate_sharing:
# test_spark_sharing.py, see README.md next to this.
#
#   interop/sharing-spark/run.sh
#
# Starts one lakegate on interop/sharing-spark/Caddyfile (embedded catalog
# `local`, its Iceberg REST API for PyIceberg to write the tables, Delta
# Sharing at /delta-sharing) on port base+87 (admin base+107), makes the
# recipient's profile with `caddy sharing-profile`, and runs the tests with
# pyspark 4.1.4 (interop/python's virtualenv). Prints per area and then one
# line:
#   sharing/spark: N passed, N failed, N skipped
# (skipped includes the strict xfails of expected-failures.txt), or
#   sharing/spark: not run: <why>
# Exits non-zero on any other failure or error, and when it could not run,
# except for a missing prebuilt connector, which is the "not run" line alone.
# Logs: $INTEROP_WORK/sharing-spark.log (lakegate), $INTEROP_WORK/sharing-spark/
# (pytest output, JUnit XML, the profile).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
trap interop_cleanup EXIT
renice -n 10 $$ >/dev/null 2>&1 || true

SS_WORK=$INTEROP_WORK/sharing-spark
PORT_SS=$(port 87)
ADMIN_SS=$(port 107)
mkdir -p "$SS_WORK"
unset LAKEGATE_SHARING_URI LAKEGATE_SHARING_PROFILE DSS_JARS
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1

random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

started=$SECONDS
rc=0
# The connector's jars (delta-sharing-client and -spark 1.1.0, Spark 4.0).
if ! JARS_DIR=$(prebuilt "delta-sharing-spark-${DSS_COMMIT:0:12}-spark4.0.0"); then
	report "sharing/spark: not run: no prebuilt delta-sharing Spark connector (no registry serves it; see the message above)"
	exit 0
fi
echo "sharing-spark: building lakegate and the virtualenv" >&2
build_lakegate || exit 1
PY=$(interop_venv) || exit 1
DSS_JARS=$(ls "$JARS_DIR"/*.jar | paste -sd, -)
echo "sharing-spark: ready after $((SECONDS - started))s" >&2

if ! port_free "$PORT_SS" lakegate; then
	report "sharing/spark: not run: port $PORT_SS in use"
	exit 1
fi
SHARE_TOKEN=$(random_hex 24)
if ! start_lakegate sharing-spark interop/sharing-spark/Caddyfile "$PORT_SS" "$ADMIN_SS" \
	SHARE_TOKEN="$SHARE_TOKEN" LAKEGATE_SHARING_KEY="$(head -c 32 /dev/urandom | base64)"; then
	report "sharing/spark: not run: lakegate did not start (see $INTEROP_WORK/sharing-spark.log)"
	exit 1
fi
PROFILE=$SS_WORK/spark.share
if ! "$LAKEGATE_BIN" sharing-profile --endpoint "http://127.0.0.1:$PORT_SS/delta-sharing" \
	--token "$SHARE_TOKEN" --name spark >"$PROFILE" 2>"$SS_WORK/profile.err"; then
	cat "$SS_WORK/profile.err" >&2
	report "sharing/spark: not run: sharing-profile failed"
	exit 1
fi
export LAKEGATE_SHARING_URI="http://127.0.0.1:$PORT_SS" LAKEGATE_SHARING_PROFILE="$PROFILE" DSS_JARS

xml=$SS_WORK/spark.xml
run_pytest sharing/spark "$HERE" test_spark_sharing.py "$xml" "$SS_WORK/spark.out" "$PY" || rc=1
if ! "$PY" "$HERE/summarize.py" "$xml" >"$SS_WORK/summary.txt"; then
	rc=1
fi
echo "sharing-spark: took $((SECONDS - started))s" >&2
sed '$d' "$SS_WORK/summary.txt"
report "$(tail -n 1 "$SS_WORK/summary.txt" 2>/dev/null || echo "sharing/spark: not run: no summary")"
exit $rc
