#!/usr/bin/env bash
# PyIceberg and Spark with no S3 keys of their own through lakegate's remote
# signing, Trino and DuckDB through its vended credentials, and Delta
# Sharing's pandas connector through URLs it presigns (docs/storage.md), on
# moto with every SigV4 signature checked:
#
#   interop/storage/run.sh
#
# Starts, on loopback:
#   base+31  moto (moto.sh start: access control on, one IAM key)
#   base+32  lakegate on examples/storage/Caddyfile (admin base+129), the
#            warehouse s3://storage-<random>/warehouse on moto, moto's key
#            in the gateway's environment only
# and for the remote-* suites (a remote catalog):
#   base+33  Iceberg's reference REST server (../java/refserver.sh), its
#            warehouse s3://<same bucket>/ref on moto through S3FileIO with
#            an IAM key of its own, which it hands out in every table
#            answer (include-credentials); it signs and vends nothing
#   base+34  lakegate on examples/storage-remote/Caddyfile (admin base+130)
#            in front of it: the gateway's key, remote signing, and vended
#            credentials from moto's STS (an IAM role made here)
#   base+35  Trino 476 (../trino/lib.sh), for the trino suite only
#   base+36  sts_recorder.py: the gateway's STS, passing every call on to
#            moto's and recording each AssumeRole's session policy
#            ($RUN/sts-calls.jsonl), which moto does not enforce
# and runs, one after the other:
#   test_remote_signing.py  PyIceberg 0.12.0 (client-requirements.txt, fsspec
#                           FileIO, its REST signer)
#   test_spark.py           pyspark 4.1 (interop/python/requirements.txt's
#                           virtualenv) with Iceberg's Spark runtime and
#                           iceberg-aws-bundle (interop/python/pom.xml's jars),
#                           S3FileIO, Iceberg Java's REST signer
#   test_remote_catalog.py  (remote-pyiceberg) test_remote_signing.py's tests
#                           through the remote catalog, the backend's secret
#                           never passed on, the writer's vended credentials
#   test_spark.py           (remote-spark) the same through the remote catalog
#   test_duckdb.py          DuckDB 1.5.5 + iceberg extension (interop/engines'
#                           virtualenv), vended credentials
#   test_trino.py           Trino 476 (one server, catalogs lake_writer and
#                           lake_reader), native S3, vended credentials
#   test_sharing.py         delta-sharing 1.4.2 + pandas (interop/sharing's
#                           virtualenv): the share `lake`, presigned URLs
# Prints one line per suite:
#   storage/pyiceberg: N passed, N failed, N skipped
#   storage/spark: N passed, N failed, N skipped
#   storage/remote-pyiceberg: N passed, N failed, N skipped
#   storage/remote-spark: N passed, N failed, N skipped
#   storage/duckdb, storage/trino, storage/sharing: the same
# STORAGE_SUITES="pyiceberg" runs only that suite (default: all seven).
# Logs: $INTEROP_WORK/storage.log (lakegate), $INTEROP_WORK/storage/ (moto,
# pytest output, JUnit XML).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
RUN=$INTEROP_WORK/storage
mkdir -p "$RUN"
trap '"$HERE/moto.sh" stop; interop_cleanup' EXIT

SUITES=${STORAGE_SUITES:-pyiceberg spark duckdb trino sharing remote-pyiceberg remote-spark}
for suite in $SUITES; do
	case $suite in
	pyiceberg | spark | duckdb | trino | sharing | remote-pyiceberg | remote-spark) ;;
	*) echo "unknown suite: $suite (pyiceberg, spark, duckdb, trino, sharing, remote-pyiceberg, remote-spark)" >&2; exit 2 ;;
	esac
done
# wants PATTERN...: whether a suite to run matches one of the (glob)
# patterns.
wants() {
	local suite pat
	for suite in $SUITES; do
		for pat in "$@"; do
			# shellcheck disable=SC2254
			case $suite in $pat) return 0 ;; esac
		done
	done
	return 1
}
# not_run REASON: the summary line of every suite, when none can run.
not_run() {
	local suite
	for suite in $SUITES; do report "storage/$suite: not run: $1"; done
	exit 1
}

PORT_LG=$(port 32)
ADMIN_LG=$(port 129)
PORT_REF=$(port 33) # refserver.sh's start_refserver listens there
PORT_REMOTE=$(port 34)
ADMIN_REMOTE=$(port 130)
build_lakegate || exit 1
PY=$(interop_venv storage-client "$HERE/client-requirements.txt") || exit 1
for p in "$PORT_LG:lakegate" "$ADMIN_LG:lakegate admin" "$PORT_REF:reference server" \
	"$PORT_REMOTE:lakegate (remote)" "$ADMIN_REMOTE:lakegate (remote) admin"; do
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

if wants pyiceberg spark duckdb trino sharing; then
	PORT_STS=$(port 36)
	port_free "$PORT_STS" "the STS recorder" || not_run "port $PORT_STS in use"
	rm -f "$RUN/sts-calls.jsonl"
	"$PY" "$HERE/sts_recorder.py" "$PORT_STS" "$endpoint" "$RUN/sts-calls.jsonl" 2>"$RUN/sts-recorder.log" &
	INTEROP_PIDS+=($!)
	wait_port "$PORT_STS" 30 "$RUN/sts-recorder.log" || not_run "the STS recorder did not start"

	start_lakegate storage examples/storage/Caddyfile "$PORT_LG" "$ADMIN_LG" \
		LAKEGATE_S3_ENDPOINT="$endpoint" LAKEGATE_STS_ENDPOINT="http://127.0.0.1:$PORT_STS" LAKEGATE_WAREHOUSE="s3://$bucket/warehouse" AWS_REGION=us-east-1 \
		AWS_ACCESS_KEY_ID="$key_id" AWS_SECRET_ACCESS_KEY="$secret" ||
		not_run "lakegate did not start (see $INTEROP_WORK/storage.log)"
fi

# moto_iam ACTION [NAME=VALUE ...]: one IAM call to moto, signed with
# moto's key; prints moto's XML answer.
moto_iam() {
	local action=$1 kv
	shift
	local args=(-fsS -X POST --aws-sigv4 "aws:amz:us-east-1:iam" --user "$key_id:$secret"
		--data-urlencode "Action=$action" --data-urlencode "Version=2010-05-08")
	for kv in "$@"; do args+=(--data-urlencode "$kv"); done
	curl "${args[@]}" "$endpoint/"
}
# xml_field NAME: the first <NAME>...</NAME> of stdin.
xml_field() { tr -d '\n' | sed -n "s:.*<$1>\([^<]*\)</$1>.*:\1:p"; }

# start_remote: the reference server on moto with its own IAM key, an IAM
# role for the gateway to vend from, and lakegate (examples/storage-remote)
# in front of it. Sets REF_SECRET (the backend's secret, which the tests
# check never reaches a client).
start_remote() {
	local all='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}'
	local trust='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}'
	local user=refserver-$RANDOM key ref_key role_arn
	. "$INTEROP_ROOT/java/refserver.sh"
	refserver_classpath || return 1
	moto_iam CreateUser "UserName=$user" >/dev/null &&
		moto_iam PutUserPolicy "UserName=$user" PolicyName=all "PolicyDocument=$all" >/dev/null &&
		key=$(moto_iam CreateAccessKey "UserName=$user") || return 1
	ref_key=$(xml_field AccessKeyId <<<"$key")
	REF_SECRET=$(xml_field SecretAccessKey <<<"$key")
	role_arn=$(moto_iam CreateRole "RoleName=lakegate-vend-$RANDOM" "AssumeRolePolicyDocument=$trust" | xml_field Arn) &&
		moto_iam PutRolePolicy "RoleName=${role_arn##*/}" PolicyName=s3 "PolicyDocument=$all" >/dev/null || return 1
	[ -n "$ref_key" ] && [ -n "$REF_SECRET" ] && [ -n "$role_arn" ] || return 1
	# CATALOG_* are the server's catalog properties (refserver.sh):
	# io-impl, s3.*, client.region, include-credentials.
	CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO CATALOG_S3_ENDPOINT="$endpoint" \
		CATALOG_S3_PATH__STYLE__ACCESS=true CATALOG_CLIENT_REGION=us-east-1 AWS_REGION=us-east-1 \
		CATALOG_S3_ACCESS__KEY__ID="$ref_key" CATALOG_S3_SECRET__ACCESS__KEY="$REF_SECRET" \
		CATALOG_INCLUDE__CREDENTIALS=true REFSERVER_WAREHOUSE="s3://$bucket/ref" \
		start_refserver storage-ref || return 1
	start_lakegate storage-remote examples/storage-remote/Caddyfile "$PORT_REMOTE" "$ADMIN_REMOTE" \
		UPSTREAM_URL="http://127.0.0.1:$PORT_REF" LAKEGATE_WAREHOUSE="s3://$bucket/ref" \
		LAKEGATE_S3_ENDPOINT="$endpoint" LAKEGATE_ROLE_ARN="$role_arn" AWS_REGION=us-east-1 \
		AWS_ACCESS_KEY_ID="$key_id" AWS_SECRET_ACCESS_KEY="$secret"
}
remote_up=
if wants 'remote-*'; then
	start_remote && remote_up=1
fi

# run_suite SUITE TESTFILE PYTHON [VAR=VALUE ...]: one pytest file, its
# summary in $RUN/summary-SUITE.txt. The client's environment has no AWS_*
# keys: only what the gateway signs reaches moto.
run_suite() {
	local suite=$1 file=$2 py=$3 xml=$RUN/$1.xml
	shift 3
	env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_REGION -u AWS_PROFILE \
		STORAGE_URI="http://127.0.0.1:$PORT_LG" STORAGE_S3="$endpoint" STORAGE_BUCKET="$bucket" STORAGE_ADMIN="$admin_url" \
		STORAGE_STS_RECORD="$RUN/sts-calls.jsonl" "$@" \
		bash -c '. "$1/../lib.sh"; run_pytest "storage/$2" "$1" "$3" "$4" "$5" "$6"' _ \
		"$HERE" "$suite" "$file" "$xml" "$RUN/$suite.out" "$py" || return 1
	"$py" -c '
import sys
sys.path.insert(0, sys.argv[1])
import junit_summary
sys.exit(junit_summary.summarize("storage/" + sys.argv[2], "storage/" + sys.argv[2], sys.argv[3], lambda c: sys.argv[2], [sys.argv[2]]))
' "$INTEROP_ROOT" "$suite" "$xml" >"$RUN/summary-$suite.txt"
}

# not_ready SUITE WHY: the summary of a suite whose peers could not be made.
not_ready() {
	echo "storage/$1: not run: $2" >"$RUN/summary-$1.txt"
	return 1
}

# run_trino: one Trino for the suite, with a catalog per OAuth2 client on
# the gateway that asks for vended credentials and has the store's
# endpoint but no keys (neither in its catalogs nor in its environment).
run_trino() {
	local etc=$RUN/trino/etc who port
	port=$(port 35)
	. "$INTEROP_ROOT/trino/lib.sh"
	if ! TRINO_JAVA_BIN=$(trino_java) || ! trino_install; then
		not_ready trino "no Java >= 24, or Trino $TRINO_VERSION could not be installed"
		return
	fi
	local py
	py=$(interop_venv trino "$INTEROP_ROOT/trino/requirements.txt") || { not_ready trino "the virtualenv did not install"; return; }
	rm -rf "$RUN/trino"
	trino_config "$etc" "$port"
	for who in reader writer; do
		cat >"$etc/catalog/lake_$who.properties" <<-EOF
			connector.name=iceberg
			iceberg.catalog.type=rest
			iceberg.rest-catalog.uri=http://127.0.0.1:$PORT_LG
			iceberg.rest-catalog.warehouse=lake
			iceberg.rest-catalog.security=OAUTH2
			iceberg.rest-catalog.oauth2.credential=$who:$who-secret
			iceberg.rest-catalog.vended-credentials-enabled=true
			fs.native-s3.enabled=true
			s3.endpoint=$endpoint
			s3.path-style-access=true
			s3.region=us-east-1
		EOF
	done
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE
	start_trino "$RUN/trino" "$etc" "$port" || { not_ready trino "Trino did not start (see $RUN/trino/trino.log)"; return; }
	run_suite trino test_trino.py "$py" TRINO_URI="http://127.0.0.1:$port" STORAGE_LOG="$INTEROP_WORK/storage.log"
}

rc=0
for suite in $SUITES; do
	rm -f "$RUN/summary-$suite.txt"
	case $suite in
	pyiceberg) run_suite pyiceberg test_remote_signing.py "$PY" || rc=1 ;;
	remote-*)
		if [ -z "$remote_up" ]; then
			echo "storage/$suite: not run: the reference server or its lakegate did not start (see $INTEROP_WORK/java/storage-ref/server.log, $INTEROP_WORK/storage-remote.log)" >"$RUN/summary-$suite.txt"
			rc=1
			continue
		fi
		;;&
	remote-pyiceberg)
		run_suite remote-pyiceberg test_remote_catalog.py "$PY" STORAGE_URI="http://127.0.0.1:$PORT_REMOTE" \
			STORAGE_PREFIX=ref STORAGE_BACKEND="http://127.0.0.1:$PORT_REF" STORAGE_BACKEND_SECRET="$REF_SECRET" || rc=1
		;;
	spark | remote-spark)
		# The Python suites' virtualenv (pyspark) and Spark jars, shared with
		# interop/python through the cache; PyIceberg's side of the
		# cross-engine tests runs in $PY (pyiceberg_peer.py).
		if ! spark_py=$(interop_venv) || ! jars=$(mvn_jars "$INTEROP_ROOT/python/pom.xml"); then
			echo "storage/$suite: not run: the virtualenv or the Spark jars could not be made" >"$RUN/summary-$suite.txt"
			rc=1
			continue
		fi
		gw=(STORAGE_LOG="$INTEROP_WORK/storage.log" STORAGE_READER_VENDED=1)
		if [ "$suite" = remote-spark ]; then
			gw=(STORAGE_URI="http://127.0.0.1:$PORT_REMOTE" STORAGE_LOG="$INTEROP_WORK/storage-remote.log")
		fi
		run_suite "$suite" test_spark.py "$spark_py" SPARK_JARS="$(ls "$jars"/*.jar | paste -sd, -)" \
			STORAGE_CLIENT_PY="$PY" "${gw[@]}" INTEROP_WORK="$INTEROP_WORK" || rc=1
		;;
	duckdb)
		if eng_py=$(interop_venv engines "$INTEROP_ROOT/engines/requirements.txt"); then
			run_suite duckdb test_duckdb.py "$eng_py" STORAGE_LOG="$INTEROP_WORK/storage.log" || rc=1
		else
			not_ready duckdb "the virtualenv of interop/engines did not install" || rc=1
		fi
		;;
	trino) run_trino || rc=1 ;;
	sharing)
		if share_py=$(interop_venv sharing "$INTEROP_ROOT/sharing/requirements.txt"); then
			run_suite sharing test_sharing.py "$share_py" || rc=1
		else
			not_ready sharing "the virtualenv of interop/sharing did not install" || rc=1
		fi
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
