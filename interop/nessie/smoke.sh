#!/usr/bin/env bash
# Smoke test of examples/nessie/Caddyfile: Nessie (Iceberg REST, in-memory,
# moto S3) on loopback, lakegate in front of it, then
#   1. the same Iceberg REST requests through lakegate and directly against
#      Nessie (smoke.py), with what differs;
#   2. a branch (NESSIE_PREFIX=dev) and a named warehouse (NESSIE_WAREHOUSE
#      with and without NESSIE_PREFIX) through the example;
#   3. a PyIceberg round trip (create, append, scan, drop) and an Iceberg
#      Java one (RESTCatalog + S3FileIO: file I/O, append, views; javacheck/)
#      through lakegate and directly, with NESSIE_CLIENT_PROPS;
#   4. Nessie restarted with NESSIE_CONFIG_CREDENTIALS=1: the same round
#      trip through lakegate with uri and warehouse only (the S3 keys come
#      from Nessie's /v1/config overrides, passed on by lakegate; lakegate
#      is restarted too, as it caches the backend's config).
# Steps 3 and 4 are skipped with NESSIE_SMOKE_PYICEBERG=0 (the Java part of
# step 3 alone with NESSIE_SMOKE_JAVA=0). Run from anywhere:
#   INTEROP_PORT_BASE=22100 INTEROP_WORK=/tmp/interop-nessie bash interop/nessie/smoke.sh
# Exit status 0 when every step passed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
. "$here/lib.sh"
trap interop_cleanup EXIT

gw="http://127.0.0.1:$PORT_GW_NESSIE"
build_lakegate || exit 1
start_nessie || exit 1
# start_gateway [VAR=VALUE...]: lakegate on examples/nessie/Caddyfile.
start_gateway() {
	start_lakegate nessie examples/nessie/Caddyfile "$PORT_GW_NESSIE" "$(port 103)" \
		NESSIE_URL="$NESSIE_ICEBERG_URL" "$@" || exit 1
	gw_pid=${INTEROP_PIDS[${#INTEROP_PIDS[@]} - 1]}
}
stop_gateway() { kill "$gw_pid" && { wait "$gw_pid" 2>/dev/null || true; }; }
start_gateway

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
schema='{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":true,"type":"long"}]}'
# placed NAMESPACE: creates NAMESPACE and a table in it through lakegate;
# prints the table's location and the path Nessie was asked for.
placed() {
	curl -s -o /dev/null -X POST "$gw/v1/nessie/namespaces" -H 'Content-Type: application/json' \
		-d "{\"namespace\":[\"$1\"]}"
	curl -s -X POST "$gw/v1/nessie/namespaces/$1/tables" -H 'Content-Type: application/json' \
		-d "{\"name\":\"t\",\"stage-create\":false,\"schema\":$schema}" |
		json 'd.get("metadata", {}).get("location", d)'
}
# check NAME GOT WANT_PATTERN
check() {
	if [[ $2 == $3 ]]; then
		echo "  ok   $1: $2"
		((pass++))
	else
		echo "  FAIL $1: got $2, want $3"
		((fail++))
	fi
}

rc=0
echo "== 1. REST requests: lakegate (examples/nessie) on $gw vs Nessie at $NESSIE_ICEBERG_URL"
python3 "$here/smoke.py" "$gw" nessie "$NESSIE_ICEBERG_URL" "" || rc=1

echo
echo "== 2. Nessie references and warehouses through examples/nessie/Caddyfile"
pass=0 fail=0
api="http://127.0.0.1:$PORT_NESSIE/api/v2"
ref=$(curl -s "$api/trees/main" | json 'json.dumps(d["reference"])')
curl -s -o /dev/null -X POST "$api/trees?name=dev&type=BRANCH" -H 'Content-Type: application/json' -d "$ref"
stop_gateway
start_gateway NESSIE_PREFIX=dev
placed lg_on_dev >/dev/null
check "NESSIE_PREFIX=dev: namespace on branch dev" \
	"$(curl -s "$NESSIE_ICEBERG_URL/v1/dev/namespaces" | json '[n[0] for n in d["namespaces"]]')" "*lg_on_dev*"
check "NESSIE_PREFIX=dev: not on main" \
	"$(curl -s "$NESSIE_ICEBERG_URL/v1/main/namespaces" | json '[n[0] for n in d["namespaces"]]')" "[]"
stop_gateway
start_gateway NESSIE_WAREHOUSE=second NESSIE_PREFIX='main%7Csecond'
check "NESSIE_WAREHOUSE=second NESSIE_PREFIX=main%7Csecond: table location" \
	"$(placed lg_second_a)" "s3://$NESSIE_BUCKET2/*"
stop_gateway
# The Caddyfile says prefix is optional (lakegate takes Nessie's
# defaults.prefix, main%7Csecond here), but its default `main` wins.
start_gateway NESSIE_WAREHOUSE=second
check "NESSIE_WAREHOUSE=second alone: config warehouse" \
	"$(curl -s "$gw/v1/config?warehouse=nessie" | json 'd["defaults"].get("warehouse")')" "s3://$NESSIE_BUCKET2"
check "NESSIE_WAREHOUSE=second alone: table location" "$(placed lg_second_b)" "s3://$NESSIE_BUCKET2/*"
stop_gateway
start_gateway
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] || rc=1

if [ "${NESSIE_SMOKE_PYICEBERG:-1}" = 1 ]; then
	py=$(nessie_venv "$here/pyiceberg-requirements.txt" pyiceberg)/python || exit 1
	echo
	echo "== 3a. PyIceberg through lakegate (uri=$gw warehouse=nessie + NESSIE_CLIENT_PROPS)"
	CLIENT_PROPS="$NESSIE_CLIENT_PROPS" "$py" "$here/pyiceberg_check.py" "$gw" nessie lg_py_gw || rc=1
	echo "== 3b. PyIceberg directly (uri=$NESSIE_ICEBERG_URL + NESSIE_CLIENT_PROPS)"
	CLIENT_PROPS="$NESSIE_CLIENT_PROPS" "$py" "$here/pyiceberg_check.py" "$NESSIE_ICEBERG_URL" "" lg_py_direct || rc=1

	if [ "${NESSIE_SMOKE_JAVA:-1}" = 1 ]; then
		cp="$INTEROP_WORK/javacheck.classpath"
		mvn_cached -f "$here/javacheck/pom.xml" dependency:build-classpath -Dmdep.outputFile="$cp" \
			>"$INTEROP_WORK/javacheck-mvn.log" 2>&1 || { cat "$INTEROP_WORK/javacheck-mvn.log"; exit 1; }
		jc() { CLIENT_PROPS="$NESSIE_CLIENT_PROPS" java -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
			-cp "$(cat "$cp")" "$here/javacheck/JavaCheck.java" "$@"; }
		echo "== 3c. Iceberg Java 1.10.0 (RESTCatalog, S3FileIO) through lakegate + NESSIE_CLIENT_PROPS"
		jc "$gw" nessie lg_java_gw || rc=1
		echo "== 3d. Iceberg Java 1.10.0 directly + NESSIE_CLIENT_PROPS"
		jc "$NESSIE_ICEBERG_URL" "" lg_java_direct || rc=1
	fi

	echo
	echo "== 4. Nessie with NESSIE_CONFIG_CREDENTIALS=1; PyIceberg through lakegate, uri + warehouse only"
	# lakegate too: it caches the backend's /v1/config (config_ttl, 5m).
	stop_gateway
	stop_nessie
	NESSIE_CONFIG_CREDENTIALS=1 start_nessie || exit 1
	start_gateway
	"$py" "$here/pyiceberg_check.py" "$gw" nessie lg_py_cfg || rc=1
fi
exit $rc
