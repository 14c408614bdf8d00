#!/usr/bin/env bash
# Delta Sharing's own reference server as the oracle for lakegate_sharing:
# test_oracle.py writes the same logical tables to both (Delta tables on S3
# through delta-rs for the reference server, Iceberg tables through
# lakegate's Iceberg door with PyIceberg for lakegate), runs the same
# connector calls against both and compares the answers; see README.md
# next to this.
#
#   interop/sharing-oracle/run.sh
#
# Starts, on loopback:
#   base+99  moto_server (moto-requirements.txt), the S3 the Delta tables live on
#   base+98  the reference server (delta-io/delta-sharing `server`, commit
#            5c1b00200dad), from the prebuilt folder
#            $INTEROP_CACHE/delta-sharing-server-5c1b00200dad (lib/*.jar;
#            see interop/README.md, "Peers built from source"), on a config
#            this script writes
#   base+97  lakegate on interop/sharing-oracle/Caddyfile (admin base+111)
# Prints per area and then one line:
#   sharing/oracle: N passed, N failed, N skipped
# (skipped includes the strict xfails of expected-failures.txt), or
#   sharing/oracle: not run: <why>
# which for a missing prebuilt server exits 0 (a fresh cache must not block
# every landing), for anything else non-zero.
# Logs: $INTEROP_WORK/sharing-oracle.log (lakegate), $INTEROP_WORK/sharing-oracle/
# (moto.log, reference.log, the configs, the profiles, pytest output, JUnit XML).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
trap interop_cleanup EXIT
renice -n 10 $$ >/dev/null 2>&1 || true

SO_WORK=$INTEROP_WORK/sharing-oracle
PORT_LG=$(port 97)
PORT_DSS=$(port 98)
PORT_S3O=$(port 99)
ADMIN_LG=$(port 111)
BUCKET=oracle
SERVER_NAME=delta-sharing-server-5c1b00200dad
rm -rf "$SO_WORK"
mkdir -p "$SO_WORK"
unset ORACLE_LAKEGATE_URI ORACLE_LAKEGATE_PROFILE ORACLE_REF_PROFILE ORACLE_S3
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1

random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

started=$SECONDS
rc=0
SERVER_DIR=$(prebuilt "$SERVER_NAME")
if [ $? -ne 0 ]; then
	report "sharing/oracle: not run: no prebuilt $SERVER_NAME in \$INTEROP_CACHE (see the message above)"
	exit 0
fi
echo "sharing-oracle: building lakegate and the virtualenvs" >&2
build_lakegate || exit 1
PY=$(interop_venv oracle "$HERE/requirements.txt") || exit 1
MOTO_PY=$(interop_venv moto "$HERE/moto-requirements.txt") || exit 1
echo "sharing-oracle: ready after $((SECONDS - started))s" >&2

for p in "$PORT_LG:lakegate" "$PORT_DSS:reference server" "$PORT_S3O:moto" "$ADMIN_LG:lakegate admin"; do
	if ! port_free "${p%%:*}" "${p#*:}"; then
		report "sharing/oracle: not run: port ${p%%:*} in use"
		exit 1
	fi
done

# --- S3: moto, one bucket. It accepts any key; the SDKs want one.
export AWS_ACCESS_KEY_ID=oracle AWS_SECRET_ACCESS_KEY=oracle-secret AWS_REGION=us-east-1
(exec "$(dirname "$MOTO_PY")/moto_server" -H 127.0.0.1 -p "$PORT_S3O" >"$SO_WORK/moto.log" 2>&1) &
INTEROP_PIDS+=($!)
if ! wait_port "$PORT_S3O" 60 "$SO_WORK/moto.log" ||
	! curl -fsS -X PUT "http://127.0.0.1:$PORT_S3O/$BUCKET" -o /dev/null; then
	report "sharing/oracle: not run: moto did not start (see $SO_WORK/moto.log)"
	exit 1
fi

# --- the reference server. Its classpath starts with CONF:
#  - core-site.xml: how its Hadoop S3A file system reads the Delta logs and
#    files (moto's endpoint, path-style, plain HTTP, the static key);
#  - com/amazonaws/partitions/override/endpoints.json: the AWS SDK v1 loads
#    this in place of its own endpoint table. The server's S3FileSigner
#    builds its S3 client with empty S3ClientCreationParameters, so
#    fs.s3a.endpoint never reaches it and its presigned URLs would name
#    http://oracle.s3.amazonaws.com/...; with S3 in us-east-1 (and the
#    global endpoint) at 127.0.0.1:PORT they name
#    http://127.0.0.1:PORT/oracle/<key>?X-Amz-... (an IP host is
#    path-style), which the connectors fetch from moto. The signer's
#    credentials come from the environment (AWS_ACCESS_KEY_ID above).
# Tables: fixed names (moto and lakegate start empty every run); the server
# reads each table's log on first use, after the tests wrote it.
CONF=$SO_WORK/reference-conf
mkdir -p "$CONF/com/amazonaws/partitions/override"
cat >"$CONF/core-site.xml" <<XML
<?xml version="1.0"?>
<configuration>
  <property><name>fs.s3a.endpoint</name><value>http://127.0.0.1:$PORT_S3O</value></property>
  <property><name>fs.s3a.endpoint.region</name><value>us-east-1</value></property>
  <property><name>fs.s3a.path.style.access</name><value>true</value></property>
  <property><name>fs.s3a.connection.ssl.enabled</name><value>false</value></property>
  <property><name>fs.s3a.aws.credentials.provider</name><value>org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider</value></property>
  <property><name>fs.s3a.access.key</name><value>$AWS_ACCESS_KEY_ID</value></property>
  <property><name>fs.s3a.secret.key</name><value>$AWS_SECRET_ACCESS_KEY</value></property>
</configuration>
XML
cat >"$CONF/com/amazonaws/partitions/override/endpoints.json" <<JSON
{"version": 3, "partitions": [{
  "partition": "aws", "partitionName": "loopback", "dnsSuffix": "amazonaws.com",
  "regionRegex": "^(us|eu|ap|sa|ca|me|af)\\\\-\\\\w+\\\\-\\\\d+\$",
  "defaults": {"hostname": "{service}.{region}.{dnsSuffix}", "protocols": ["http"], "signatureVersions": ["v4"]},
  "regions": {"us-east-1": {"description": "loopback"}},
  "services": {"s3": {"defaults": {"protocols": ["http"], "signatureVersions": ["s3v4"]},
    "endpoints": {"us-east-1": {"hostname": "127.0.0.1:$PORT_S3O"},
                  "aws-global": {"hostname": "127.0.0.1:$PORT_S3O", "credentialScope": {"region": "us-east-1"}}}}}
}]}
JSON
REF_TOKEN=$(random_hex 24)
{
	echo "version: 1"
	echo "shares:"
	echo "- name: oracle"
	echo "  schemas:"
	echo "  - name: sales"
	echo "    tables:"
	for t in parts deletes evolve cdf; do
		echo "    - name: $t"
		echo "      location: s3a://$BUCKET/$t"
		# Without an id the server answers its table listings with 500
		# (a null id); any unique one will do.
		echo "      id: $(cat /proc/sys/kernel/random/uuid)"
		echo "      historyShared: true"
	done
	echo "authorization:"
	echo "  bearerToken: $REF_TOKEN"
	echo "host: 127.0.0.1"
	echo "port: $PORT_DSS"
	echo "endpoint: /delta-sharing"
	echo "preSignedUrlTimeoutSeconds: 3600"
	echo "deltaTableCacheSize: 10"
	echo "stalenessAcceptable: false"
	echo "evaluatePredicateHints: false"
} >"$SO_WORK/reference.yaml"
(cd "$SO_WORK" && exec nice -n 10 java -Xmx1g -cp "$CONF:$SERVER_DIR/lib/*" \
	io.delta.sharing.server.DeltaSharingService -c "$SO_WORK/reference.yaml" >"$SO_WORK/reference.log" 2>&1) &
INTEROP_PIDS+=($!)
if ! wait_port "$PORT_DSS" 120 "$SO_WORK/reference.log"; then
	report "sharing/oracle: not run: the reference server did not start (see $SO_WORK/reference.log)"
	exit 1
fi
printf '{"shareCredentialsVersion": 1, "endpoint": "http://127.0.0.1:%s/delta-sharing", "bearerToken": "%s"}\n' \
	"$PORT_DSS" "$REF_TOKEN" >"$SO_WORK/reference.share"

# --- lakegate
SHARE_TOKEN=$(random_hex 24)
if ! start_lakegate sharing-oracle interop/sharing-oracle/Caddyfile "$PORT_LG" "$ADMIN_LG" \
	SHARE_TOKEN="$SHARE_TOKEN" LAKEGATE_SHARING_KEY="$(head -c 32 /dev/urandom | base64)"; then
	report "sharing/oracle: not run: lakegate did not start (see $INTEROP_WORK/sharing-oracle.log)"
	exit 1
fi
if ! "$LAKEGATE_BIN" sharing-profile --endpoint "http://127.0.0.1:$PORT_LG/delta-sharing" \
	--token "$SHARE_TOKEN" --name oracle >"$SO_WORK/lakegate.share" 2>"$SO_WORK/profile.err"; then
	cat "$SO_WORK/profile.err" >&2
	report "sharing/oracle: not run: sharing-profile failed"
	exit 1
fi
echo "sharing-oracle: servers up after $((SECONDS - started))s" >&2

export ORACLE_LAKEGATE_URI="http://127.0.0.1:$PORT_LG" ORACLE_LAKEGATE_PROFILE="$SO_WORK/lakegate.share" \
	ORACLE_REF_PROFILE="$SO_WORK/reference.share" ORACLE_S3="http://127.0.0.1:$PORT_S3O/$BUCKET"
xml=$SO_WORK/oracle.xml
run_pytest sharing/oracle "$HERE" test_oracle.py "$xml" "$SO_WORK/oracle.out" "$PY" || rc=1
if ! "$PY" "$HERE/summarize.py" "$xml" >"$SO_WORK/summary.txt"; then
	rc=1
fi
echo "sharing-oracle: took $((SECONDS - started))s" >&2
sed '$d' "$SO_WORK/summary.txt"
report "$(tail -n 1 "$SO_WORK/summary.txt" 2>/dev/null || echo "sharing/oracle: not run: no summary")"
exit $rc
