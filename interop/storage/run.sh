# PyIceberg and Spark with no S3 keys of their own through lakegate's remote
# signing (docs/storage.md), on moto with every SigV4 signature checked:
#
#   interop/storage/run.sh
#
# Starts, on loopback:
#   base+31  moto (moto.sh start: access control on, one IAM key)
#   base+32  lakegate on examples/storage/Caddyfile (admin base+129), the
#            warehouse s3://storage-<random>/warehouse on moto, moto's key
#            in the gateway's environment only
# and runs, one after the other:
#   test_remote_signing.py  PyIceberg 0.12.0 (client-requirements.txt, fsspec
#                           FileIO, its REST signer)
#   test_spark.py           pyspark 4.1 (interop/python/requirements.txt's
#                           virtualenv) with Iceberg's Spark runtime and
#                           iceberg-aws-bundle (interop/python/pom.xml's jars),
#                           S3FileIO, Iceberg Java's REST signer
# Prints one line per suite:
#   storage/pyiceberg: N passed, N failed, N skipped
#   storage/spark: N passed, N failed, N skipped
# STORAGE_SUITES="pyiceberg" runs only that suite (default: both).
# Logs: $INTEROP_WORK/storage.log (lakegate), $INTEROP_WORK/storage/ (moto,
# pytest output, JUnit XML).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
RUN=$INTEROP_WORK/storage
mkdir -p "$RUN"
trap '"$HERE/moto.sh" stop; interop_cleanup' EXIT

SUITES=${STORAGE_SUITES:-pyiceberg spark}
for suite in $SUITES; do
	case $suite in pyiceberg | spark) ;; *) echo "unknown suite: $suite (pyiceberg, spark)" >&2; exit 2 ;; esac
done
# not_run REASON: the summary line of every suite, when none can run.
not_run() {
	local suite
	for suite in $SUITES; do report "storage/$suite: not run: $1"; done
	exit 1
}

PORT_LG=$(port 32)
ADMIN_LG=$(port 129)
build_lakegate || exit 1
PY=$(interop_venv storage-client "$HERE/client-requirements.txt") || exit 1
for p in "$PORT_LG:lakegate" "$ADMIN_LG:lakegate admin"; do
	port_free "${p%%:*}" "${p#*:}" || not_run "port ${p%%:*} in use"
done

moto_env=$("$HERE/moto.sh" start) || not_run "moto did not start (see $RUN/moto.log)"
admin_url=${moto_env#export LAKEGATE_TEST_S3=}
# The key id and secret from the URL moto.sh printed (percent-decoded).
read -r key_id secret endpoint < <("$PY" -c '
import sys, urllib.parse as u
p = u.urlsplit(sys.argv[1])
print(u.unquote(p.username), u.unquote(p.password), p.scheme + "://" + p.hostname + ":" + str(p.port))' "$admin_url")
bucket=storage-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
sha_empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
curl -fsS -o /dev/null -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key_id:$secret" \
	-H "x-amz-content-sha256: $sha_empty" "$endpoint/$bucket" || not_run "could not create the bucket on moto"

start_lakegate storage examples/storage/Caddyfile "$PORT_LG" "$ADMIN_LG" \
	LAKEGATE_S3_ENDPOINT="$endpoint" LAKEGATE_WAREHOUSE="s3://$bucket/warehouse" AWS_REGION=us-east-1 \
	AWS_ACCESS_KEY_ID="$key_id" AWS_SECRET_ACCESS_KEY="$secret" ||
	not_run "lakegate did not start (see $INTEROP_WORK/storage.log)"

# run_suite SUITE TESTFILE PYTHON [VAR=VALUE ...]: one pytest file, its
# summary in $RUN/summary-SUITE.txt. The client's environment has no AWS_*
# keys: only what the gateway signs reaches moto.
run_suite() {
	local suite=$1 file=$2 py=$3 xml=$RUN/$1.xml
	shift 3
	env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_REGION -u AWS_PROFILE \
		STORAGE_URI="http://127.0.0.1:$PORT_LG" STORAGE_S3="$endpoint" STORAGE_BUCKET="$bucket" STORAGE_ADMIN="$admin_url" "$@" \
		bash -c '. "$1/../lib.sh"; run_pytest "storage/$2" "$1" "$3" "$4" "$5" "$6"' _ \
		"$HERE" "$suite" "$file" "$xml" "$RUN/$suite.out" "$py" || return 1
	"$py" -c '
import sys
sys.path.insert(0, sys.argv[1])
import junit_summary
sys.exit(junit_summary.summarize("storage/" + sys.argv[2], "storage/" + sys.argv[2], sys.argv[3], lambda c: sys.argv[2], [sys.argv[2]]))
' "$INTEROP_ROOT" "$suite" "$xml" >"$RUN/summary-$suite.txt"
}

rc=0
for suite in $SUITES; do
	rm -f "$RUN/summary-$suite.txt"
	case $suite in
	pyiceberg) run_suite pyiceberg test_remote_signing.py "$PY" || rc=1 ;;
	spark)
		# The Python suites' virtualenv (pyspark) and Spark jars, shared with
		# interop/python through the cache; PyIceberg's side of the
		# cross-engine tests runs in $PY (pyiceberg_peer.py).
		if ! spark_py=$(interop_venv) || ! jars=$(mvn_jars "$INTEROP_ROOT/python/pom.xml"); then
			echo "storage/spark: not run: the virtualenv or the Spark jars could not be made" >"$RUN/summary-spark.txt"
			rc=1
			continue
		fi
		run_suite spark test_spark.py "$spark_py" SPARK_JARS="$(ls "$jars"/*.jar | paste -sd, -)" \
			STORAGE_CLIENT_PY="$PY" STORAGE_LOG="$INTEROP_WORK/storage.log" INTEROP_WORK="$INTEROP_WORK" || rc=1
		;;
	esac
done
for suite in $SUITES; do
	sed '$d' "$RUN/summary-$suite.txt" 2>/dev/null
done
for suite in $SUITES; do
	report "$(tail -n 1 "$RUN/summary-$suite.txt" 2>/dev/null || echo "storage/$suite: did not run")"
done
exit $rc
