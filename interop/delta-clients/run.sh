#!/usr/bin/env bash
# Delta clients from PyPI through lakegate: delta-rs (uc://), DuckDB's
# unity_catalog + delta extensions, Daft (Unity Catalog and Iceberg),
# unitycatalog-client and delta-sharing reading tables delta-rs writes,
# each compared row by row with the Delta log; then the freshness check
# through two replicas on one PostgreSQL catalog. See README.md next to this.
#
#   interop/delta-clients/run.sh
#
# Starts, on loopback:
#   base+60  lakegate on interop/delta-clients/Caddyfile (admin base+123)
#   base+61, base+62  two lakegates on Caddyfile.replicas (admin base+124,
#            base+125), one catalog `fresh` in the PostgreSQL of
#            $LAKEGATE_TEST_POSTGRES (.ci/run exports it); without it the
#            freshness tests skip and the report says so
#   base+64  moto (interop/storage/moto.sh, signatures checked) with a
#            bucket and an IAM role of this run's for catalog `s3` of
#            Caddyfile (test_s3.py); stopped on exit
# Prints per client and then one line:
#   delta-clients: N passed, N failed, N skipped
# (skipped includes the strict xfails of expected-failures.txt). Exits
# non-zero on any other failure or error.
# Logs: $INTEROP_WORK/delta-clients*.log; pytest output and JUnit XML in
# $INTEROP_WORK/delta-clients/.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
MOTO_RUN=$INTEROP_WORK/delta-clients-moto
export MOTO_RUN
trap '"$HERE/../storage/moto.sh" stop; interop_cleanup' EXIT
renice -n 10 $$ >/dev/null 2>&1 || true

DC_WORK=$INTEROP_WORK/delta-clients
PORT_DC=$(port 60)
PORT_R1=$(port 61)
PORT_R2=$(port 62)
PORT_MOTO=$(port 64)
rm -rf "$DC_WORK"
mkdir -p "$DC_WORK"
unset DC_URI DC_WAREHOUSE DC_PROFILE DC_REPLICAS DC_REPLICA_WAREHOUSE DC_SHARE_TOKEN \
	DC_S3_ENDPOINT DC_S3_BUCKET DC_S3_KEY_ID DC_S3_SECRET DC_S3_ROLE_ARN DC_S3_WAREHOUSE
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1

random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

started=$SECONDS
rc=0
echo "delta-clients: building lakegate and the virtualenv" >&2
build_lakegate || exit 1
PY=$(interop_venv delta-clients "$HERE/requirements.txt") || exit 1
echo "delta-clients: ready after $((SECONDS - started))s" >&2

for p in "$PORT_DC:lakegate" "$PORT_R1:replica 1" "$PORT_R2:replica 2"; do
	if ! port_free "${p%%:*}" "${p#*:}"; then
		report "delta-clients: did not run (port ${p%%:*} in use)"
		exit 1
	fi
done

# moto for catalog s3: a bucket and an IAM role the storage keys assume
# to vend (any S3 action; each vending's session policy narrows it to one
# table). Without it catalog s3 still loads (Caddyfile defaults) and
# test_s3.py fails in its setup, naming the reason.
sigv4() { # sigv4 SERVICE CURL-ARGS...: a request signed with moto's key
	local svc=$1
	shift
	curl -fsS --aws-sigv4 "aws:amz:us-east-1:$svc" --user "$DC_S3_KEY_ID:$DC_S3_SECRET" "$@"
}
start_moto() {
	local env_line admin role out
	env_line=$(STORAGE_MOTO_PORT=$PORT_MOTO "$HERE/../storage/moto.sh" start) || return 1
	admin=${env_line#export LAKEGATE_TEST_S3=}
	read -r DC_S3_KEY_ID DC_S3_SECRET DC_S3_ENDPOINT < <("$PY" -c '
import sys, urllib.parse as u
p = u.urlsplit(sys.argv[1])
print(u.unquote(p.username), u.unquote(p.password), p.scheme + "://" + p.hostname + ":" + str(p.port))' "$admin")
	DC_S3_BUCKET=delta-clients-$(random_hex 6)
	role=delta-clients-$(random_hex 4)
	sigv4 s3 -o /dev/null -X PUT -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" \
		"$DC_S3_ENDPOINT/$DC_S3_BUCKET" || return 1
	out=$(sigv4 iam --data-urlencode Action=CreateRole --data-urlencode Version=2010-05-08 \
		--data-urlencode RoleName="$role" --data-urlencode \
		'AssumeRolePolicyDocument={"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}' \
		"$DC_S3_ENDPOINT/") || return 1
	DC_S3_ROLE_ARN=$(sed -n 's:.*<Arn>\(arn[^<]*\)</Arn>.*:\1:p' <<<"$out")
	[ -n "$DC_S3_ROLE_ARN" ] || return 1
	sigv4 iam -o /dev/null --data-urlencode Action=PutRolePolicy --data-urlencode Version=2010-05-08 \
		--data-urlencode RoleName="$role" --data-urlencode PolicyName=s3 --data-urlencode \
		'PolicyDocument={"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}' \
		"$DC_S3_ENDPOINT/" || return 1
	DC_S3_WAREHOUSE=s3://$DC_S3_BUCKET/warehouse
	export DC_S3_KEY_ID DC_S3_SECRET DC_S3_ENDPOINT DC_S3_BUCKET DC_S3_ROLE_ARN DC_S3_WAREHOUSE
}
if ! start_moto; then
	echo "delta-clients: moto did not start or could not be set up (see $MOTO_RUN/moto.log): test_s3.py will fail" >&2
	unset DC_S3_KEY_ID DC_S3_SECRET DC_S3_ENDPOINT DC_S3_BUCKET DC_S3_ROLE_ARN DC_S3_WAREHOUSE
fi

# Fresh secrets per run: the recipient's token and the key that signs
# Sharing's file URLs (the replicas share one, as replicas must).
SHARE_TOKEN=$(random_hex 24)
SHARING_KEY=$(head -c 32 /dev/urandom | base64)
if ! start_lakegate delta-clients interop/delta-clients/Caddyfile "$PORT_DC" "$(port 123)" \
	SHARE_TOKEN="$SHARE_TOKEN" LAKEGATE_SHARING_KEY="$SHARING_KEY"; then
	report "delta-clients: did not run (lakegate did not start, see $INTEROP_WORK/delta-clients.log)"
	exit 1
fi
profile() { # profile PORT FILE: the recipient's profile for the gateway on PORT
	"$LAKEGATE_BIN" sharing-profile --endpoint "http://127.0.0.1:$1/delta-sharing" \
		--token "$SHARE_TOKEN" --name pandas >"$2" 2>"$DC_WORK/profile.err" || { cat "$DC_WORK/profile.err" >&2; return 1; }
}
if ! profile "$PORT_DC" "$DC_WORK/clients.share"; then
	report "delta-clients: did not run (sharing-profile failed)"
	exit 1
fi
export DC_URI="http://127.0.0.1:$PORT_DC" DC_WAREHOUSE="$INTEROP_WORK/data-delta-clients/local/warehouse" \
	DC_PROFILE="$DC_WORK/clients.share" DC_SHARE_TOKEN="$SHARE_TOKEN"

# The replicas: one PostgreSQL catalog, one warehouse folder.
xmls=("$DC_WORK/clients.xml")
if [ -n "${LAKEGATE_TEST_POSTGRES:-}" ]; then
	FRESH_WH=$DC_WORK/fresh-warehouse
	mkdir -p "$FRESH_WH"
	# A catalog of its own per run: the PostgreSQL database outlives the
	# run, and a namespace an earlier run created there has its location
	# in that run's warehouse.
	FRESH_CATALOG=fresh_$(date +%s)_$$
	for n in 1 2; do
		p=$(port $((60 + n)))
		if ! start_lakegate "delta-clients-r$n" interop/delta-clients/Caddyfile.replicas "$p" "$(port $((123 + n)))" \
			SHARE_TOKEN="$SHARE_TOKEN" LAKEGATE_SHARING_KEY="$SHARING_KEY" FRESH_WAREHOUSE="$FRESH_WH" FRESH_CATALOG="$FRESH_CATALOG" \
			LAKEGATE_CATALOG_DSN="$LAKEGATE_TEST_POSTGRES"; then
			report "delta-clients: did not run (replica $n did not start, see $INTEROP_WORK/delta-clients-r$n.log)"
			exit 1
		fi
	done
	export DC_REPLICAS="http://127.0.0.1:$PORT_R1,http://127.0.0.1:$PORT_R2" DC_REPLICA_WAREHOUSE=$FRESH_WH \
		DC_FRESH_CATALOG=$FRESH_CATALOG
	xmls+=("$DC_WORK/freshness.xml")
else
	echo "delta-clients: LAKEGATE_TEST_POSTGRES is not set: the freshness check through two replicas does not run (.ci/run sets it)" >&2
fi
echo "delta-clients: servers up after $((SECONDS - started))s" >&2

run_pytest delta-clients/clients "$HERE" test_clients.py "$DC_WORK/clients.xml" "$DC_WORK/clients.out" "$PY" || rc=1
# The S3 readers hold no S3 keys: AWS_* is not passed (conftest's producer
# writes with DC_S3_KEY_ID / DC_S3_SECRET).
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE \
	bash -c '. "$1/../lib.sh"; run_pytest delta-clients/s3 "$1" test_s3.py "$2/s3.xml" "$2/s3.out" "$3"' _ \
	"$HERE" "$DC_WORK" "$PY" || rc=1
xmls+=("$DC_WORK/s3.xml")
if [ -n "${DC_REPLICAS:-}" ]; then
	run_pytest delta-clients/freshness "$HERE" test_freshness.py "$DC_WORK/freshness.xml" "$DC_WORK/freshness.out" "$PY" || rc=1
fi
if ! "$PY" "$HERE/summarize.py" "${xmls[@]}" >"$DC_WORK/summary.txt"; then
	rc=1
fi
echo "delta-clients: took $((SECONDS - started))s" >&2
sed '$d' "$DC_WORK/summary.txt"
line=$(tail -n 1 "$DC_WORK/summary.txt" 2>/dev/null || echo "delta-clients: did not run")
[ -n "${DC_REPLICAS:-}" ] || line="$line (freshness not run: no LAKEGATE_TEST_POSTGRES)"
report "$line"
exit $rc
