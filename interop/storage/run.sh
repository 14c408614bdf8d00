#!/usr/bin/env bash
# PyIceberg with no S3 keys of its own through lakegate's remote signing
# (docs/storage.md), on moto with every SigV4 signature checked:
#
#   interop/storage/run.sh
#
# Starts, on loopback:
#   base+31  moto (moto.sh start: access control on, one IAM key)
#   base+32  lakegate on examples/storage/Caddyfile (admin base+129), the
#            warehouse s3://storage-<random>/warehouse on moto, moto's key
#            in the gateway's environment only
# and runs test_remote_signing.py (client-requirements.txt: PyIceberg 0.12.0,
# fsspec FileIO, its REST signer). Prints one line:
#   storage/pyiceberg: N passed, N failed, N skipped
# Logs: $INTEROP_WORK/storage.log (lakegate), $INTEROP_WORK/storage/ (moto,
# pytest output, JUnit XML).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
RUN=$INTEROP_WORK/storage
mkdir -p "$RUN"
trap '"$HERE/moto.sh" stop; interop_cleanup' EXIT

PORT_LG=$(port 32)
ADMIN_LG=$(port 129)
build_lakegate || exit 1
PY=$(interop_venv storage-client "$HERE/client-requirements.txt") || exit 1
for p in "$PORT_LG:lakegate" "$ADMIN_LG:lakegate admin"; do
	if ! port_free "${p%%:*}" "${p#*:}"; then
		report "storage/pyiceberg: not run: port ${p%%:*} in use"
		exit 1
	fi
done

if ! moto_env=$("$HERE/moto.sh" start); then
	report "storage/pyiceberg: not run: moto did not start (see $RUN/moto.log)"
	exit 1
fi
admin_url=${moto_env#export LAKEGATE_TEST_S3=}
# The key id and secret from the URL moto.sh printed (percent-decoded).
read -r key_id secret endpoint < <("$PY" -c '
import sys, urllib.parse as u
p = u.urlsplit(sys.argv[1])
print(u.unquote(p.username), u.unquote(p.password), p.scheme + "://" + p.hostname + ":" + str(p.port))' "$admin_url")
bucket=storage-$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')
sha_empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
if ! curl -fsS -o /dev/null -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key_id:$secret" \
	-H "x-amz-content-sha256: $sha_empty" "$endpoint/$bucket"; then
	report "storage/pyiceberg: not run: could not create the bucket on moto"
	exit 1
fi

if ! start_lakegate storage examples/storage/Caddyfile "$PORT_LG" "$ADMIN_LG" \
	LAKEGATE_S3_ENDPOINT="$endpoint" LAKEGATE_WAREHOUSE="s3://$bucket/warehouse" AWS_REGION=us-east-1 \
	AWS_ACCESS_KEY_ID="$key_id" AWS_SECRET_ACCESS_KEY="$secret"; then
	report "storage/pyiceberg: not run: lakegate did not start (see $INTEROP_WORK/storage.log)"
	exit 1
fi

xml=$RUN/pyiceberg.xml
# The client's environment has no AWS_* keys: only what the gateway signs
# reaches moto.
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_REGION -u AWS_PROFILE \
	STORAGE_URI="http://127.0.0.1:$PORT_LG" STORAGE_S3="$endpoint" STORAGE_BUCKET="$bucket" STORAGE_ADMIN="$admin_url" \
	bash -c '. "$1/../lib.sh"; run_pytest storage/pyiceberg "$1" test_remote_signing.py "$2" "$3" "$4"' _ \
	"$HERE" "$xml" "$RUN/pyiceberg.out" "$PY" || exit 1
"$PY" -c '
import sys
sys.path.insert(0, sys.argv[1])
import junit_summary
sys.exit(junit_summary.summarize("storage/pyiceberg", "storage/pyiceberg", sys.argv[2], lambda c: "pyiceberg", ["pyiceberg"]))
' "$INTEROP_ROOT" "$xml" >"$RUN/summary.txt"
rc=$?
sed '$d' "$RUN/summary.txt"
report "$(tail -n 1 "$RUN/summary.txt")"
exit $rc
