#!/usr/bin/env bash
# Trino's Iceberg connector through lakegate's Iceberg REST door:
# test_trino.py, see README.md next to this.
#
#   interop/trino/run.sh [--serve] [TARGET ...]
#       (default: embedded refserver nessie policy direct-refserver direct-nessie)
#
# Targets (each one Trino catalog of the same name, `-` written `_`):
#   embedded          lakegate on the root Caddyfile, embedded catalog `local`
#                     (file:// warehouse: Trino's native local file system)
#   refserver         lakegate on examples/remote/Caddyfile, catalog `remote`, in
#                     front of Iceberg's reference REST server (../java/refserver.sh)
#   nessie            lakegate on examples/nessie/Caddyfile, catalog `nessie`, in
#                     front of Nessie + its S3 store (../nessie/lib.sh; Trino's
#                     native S3 with the store's endpoint and keys)
#   policy            lakegate on examples/policy/Caddyfile (OAuth2 issuer, roles),
#                     catalog `local`: three Trino catalogs, policy_reader,
#                     policy_writer and policy_admin, each with its client's
#                     credential (iceberg.rest-catalog.security=OAUTH2)
#   direct-refserver  the same statements straight against the reference server
#   direct-nessie     the same statements straight against Nessie
#                     (the evidence for each backend's own failures)
# One Trino server (a catalog per target) runs them all, so the direct
# targets run in the same pass as the gateways in front of the same backend.
#
# Trino: $TRINO_VERSION's server with only the Iceberg plugin, pinned and
# run as lib.sh next to this says (shared with interop/storage), on
# 127.0.0.1:base+40.
# Gateways: base+41..44 (admin base+112..115).
#
# Prints one line per target: `trino/<target>: N passed, N failed, N skipped`
# (skipped includes the strict xfails of expected-failures.txt), or
# `trino: not run: <why>` when no JDK >= 24 is found (exit 0). Exits non-zero
# on any other failure, and when a target could not start.
# --serve: start everything, print the environment the tests read, and keep
# it running until interrupted (for running pytest by hand).
# Logs: $INTEROP_WORK/trino/ (trino.log, pytest output, JUnit XML, etc/),
# $INTEROP_WORK/trino-<target>.log (the gateways).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
. "$HERE/lib.sh"
trap interop_cleanup EXIT
renice -n 10 $$ >/dev/null 2>&1 || true

TR_WORK=$INTEROP_WORK/trino
PORT_TRINO=$(port 40)
PORT_GW_T_EMBEDDED=$(port 41)
PORT_GW_T_REF=$(port 42)
PORT_GW_T_NESSIE=$(port 43)
PORT_GW_T_POLICY=$(port 44)

SERVE=
if [ "${1:-}" = --serve ]; then
	SERVE=1
	shift
fi
ALL="embedded refserver nessie policy direct-refserver direct-nessie"
[ $# -eq 0 ] && set -- $ALL
declare -A WANT=()
for t in "$@"; do
	case " $ALL " in
	*" $t "*) WANT[$t]=1 ;;
	*) echo "unknown target: $t (${ALL// /, })" >&2; exit 2 ;;
	esac
done
TARGETS=("$@")

# The tests learn every URL from these; none may leak in from outside.
unset TRINO_URI TRINO_TARGETS TRINO_PYICEBERG
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1
mkdir -p "$TR_WORK"
started=$SECONDS

not_run() {
	local t
	for t in "${TARGETS[@]}"; do report "trino/$t: not run: $1"; done
}

echo "trino: Java, Trino $TRINO_VERSION, lakegate and the virtualenv" >&2
if ! TRINO_JAVA_BIN=$(trino_java); then
	not_run "Trino $TRINO_VERSION needs Java 24 or newer; none found (set TRINO_JAVA)"
	exit 0
fi
if ! trino_install; then
	not_run "Trino $TRINO_VERSION could not be fetched from Maven Central or unpacked (see above)"
	exit 1
fi
build_lakegate || { not_run "lakegate did not build"; exit 1; }
PY=$(interop_venv trino "$HERE/requirements.txt") || { not_run "the virtualenv did not install"; exit 1; }
echo "trino: ready after $((SECONDS - started))s" >&2

# --- backends and gateways. UP[target] is the Trino catalog's properties
# file body; PYI[target] the PyIceberg properties (JSON) for the cross-reads.
declare -A UP=() PYI=()
NOT_UP=()
REST_COMMON="connector.name=iceberg
iceberg.catalog.type=rest
iceberg.rest-catalog.nested-namespace-enabled=true
iceberg.register-table-procedure.enabled=true
iceberg.expire-snapshots.min-retention=0s
iceberg.remove-orphan-files.min-retention=0s"
LOCAL_FS="fs.native-local.enabled=true
local.location=/"

rest_catalog() { # URI WAREHOUSE FS_PROPS [EXTRA]
	printf '%s\niceberg.rest-catalog.uri=%s\n' "$REST_COMMON" "$1"
	[ -n "$2" ] && printf 'iceberg.rest-catalog.warehouse=%s\n' "$2"
	printf '%s\n' "$3"
	[ -n "${4:-}" ] && printf '%s\n' "$4"
}
pyi_props() { # URI WAREHOUSE [EXTRA_JSON_MEMBERS]
	printf '{"type": "rest", "uri": "%s"%s%s}' "$1" "${2:+, \"warehouse\": \"$2\"}" "${3:+, $3}"
}

if [ -n "${WANT[embedded]:-}" ]; then
	if port_free "$PORT_GW_T_EMBEDDED" "lakegate embedded" &&
		start_lakegate trino-embedded Caddyfile "$PORT_GW_T_EMBEDDED" "$(port 112)"; then
		u="http://127.0.0.1:$PORT_GW_T_EMBEDDED"
		UP[embedded]=$(rest_catalog "$u" local "$LOCAL_FS")
		PYI[embedded]=$(pyi_props "$u" local)
	else
		NOT_UP+=(embedded)
	fi
fi

if [ -n "${WANT[refserver]:-}${WANT[direct-refserver]:-}" ]; then
	REF_UP=
	. "$INTEROP_ROOT/java/refserver.sh"
	# Trino's file systems need a scheme in every location: the reference
	# server's warehouse is given as a file: URI.
	if refserver_classpath && port_free "$PORT_REF" "reference server" &&
		REFSERVER_WAREHOUSE_SCHEME=file: start_refserver trino-refserver; then
		REF_UP=1
	fi
	if [ -n "${WANT[direct-refserver]:-}" ]; then
		if [ -n "$REF_UP" ]; then
			u="http://127.0.0.1:$PORT_REF"
			UP[direct-refserver]=$(rest_catalog "$u" "" "$LOCAL_FS")
			PYI[direct-refserver]=$(pyi_props "$u" "")
		else
			NOT_UP+=(direct-refserver)
		fi
	fi
	if [ -n "${WANT[refserver]:-}" ]; then
		if [ -n "$REF_UP" ] && port_free "$PORT_GW_T_REF" "lakegate remote" &&
			start_lakegate trino-refserver examples/remote/Caddyfile "$PORT_GW_T_REF" "$(port 113)" \
				UPSTREAM_URL="http://127.0.0.1:$PORT_REF" LAKEGATE_CACHE_MAX_AGE=30s; then
			u="http://127.0.0.1:$PORT_GW_T_REF"
			UP[refserver]=$(rest_catalog "$u" remote "$LOCAL_FS")
			PYI[refserver]=$(pyi_props "$u" remote)
		else
			NOT_UP+=(refserver)
		fi
	fi
fi

if [ -n "${WANT[nessie]:-}${WANT[direct-nessie]:-}" ]; then
	NESSIE_UP=
	. "$INTEROP_ROOT/nessie/lib.sh"
	start_nessie && NESSIE_UP=1
	# Trino's native S3 file system on Nessie's object store (Nessie vends
	# no credentials: the client brings the keys), and PyIceberg's.
	S3_FS="fs.native-s3.enabled=true
s3.endpoint=$NESSIE_S3_ENDPOINT
s3.path-style-access=true
s3.region=$NESSIE_S3_REGION
s3.aws-access-key=$NESSIE_S3_ACCESS_KEY
s3.aws-secret-key=$NESSIE_S3_SECRET_KEY"
	S3_PYI="\"s3.endpoint\": \"$NESSIE_S3_ENDPOINT\", \"s3.path-style-access\": \"true\", \"s3.region\": \"$NESSIE_S3_REGION\", \"s3.access-key-id\": \"$NESSIE_S3_ACCESS_KEY\", \"s3.secret-access-key\": \"$NESSIE_S3_SECRET_KEY\""
	if [ -n "${WANT[direct-nessie]:-}" ]; then
		if [ -n "$NESSIE_UP" ]; then
			UP[direct-nessie]=$(rest_catalog "$NESSIE_ICEBERG_URL" "" "$S3_FS")
			PYI[direct-nessie]=$(pyi_props "$NESSIE_ICEBERG_URL" "" "$S3_PYI")
		else
			NOT_UP+=(direct-nessie)
		fi
	fi
	if [ -n "${WANT[nessie]:-}" ]; then
		if [ -n "$NESSIE_UP" ] && port_free "$PORT_GW_T_NESSIE" "lakegate nessie" &&
			start_lakegate trino-nessie examples/nessie/Caddyfile "$PORT_GW_T_NESSIE" "$(port 114)" \
				NESSIE_URL="$NESSIE_ICEBERG_URL"; then
			u="http://127.0.0.1:$PORT_GW_T_NESSIE"
			UP[nessie]=$(rest_catalog "$u" nessie "$S3_FS")
			PYI[nessie]=$(pyi_props "$u" nessie "$S3_PYI")
		else
			NOT_UP+=(nessie)
		fi
	fi
fi

if [ -n "${WANT[policy]:-}" ]; then
	# examples/policy needs an upstream for its `remote` catalog; the tests
	# use its `local` one.
	if port_free "$PORT_GW_T_POLICY" "lakegate policy" &&
		start_lakegate trino-policy examples/policy/Caddyfile "$PORT_GW_T_POLICY" "$(port 115)" \
			UPSTREAM_URL="http://127.0.0.1:$PORT_REF"; then
		u="http://127.0.0.1:$PORT_GW_T_POLICY"
		for role in reader writer admin; do
			# The token endpoint is lakegate's, at the client's default
			# {uri}/v1/oauth/tokens; no server-uri needed.
			UP[policy_$role]=$(rest_catalog "$u" local "$LOCAL_FS" "iceberg.rest-catalog.security=OAUTH2
iceberg.rest-catalog.oauth2.credential=$role:$role-secret")
		done
		PYI[policy]=$(pyi_props "$u" local '"credential": "admin:admin-secret"')
	else
		NOT_UP+=(policy)
	fi
fi

# --- Trino: one catalog per target that is up.
ETC=$TR_WORK/etc
rm -rf "$ETC"
mkdir -p "$ETC/catalog"
for t in "${!UP[@]}"; do
	printf '%s\n' "${UP[$t]}" >"$ETC/catalog/${t//-/_}.properties"
done
trino_config "$ETC" "$PORT_TRINO"

if ! start_trino "$TR_WORK" "$ETC" "$PORT_TRINO"; then
	not_run "Trino did not start (see $TR_WORK/trino.log)"
	exit 1
fi

export TRINO_URI="http://127.0.0.1:$PORT_TRINO"
TRINO_TARGETS=$(for t in "${!PYI[@]}"; do printf '%s\t%s\n' "$t" "${PYI[$t]}"; done | "$PY" -c '
import json, sys
print(json.dumps({l.split("\t")[0]: json.loads(l.split("\t")[1]) for l in sys.stdin if l.strip()}))')
export TRINO_TARGETS

if [ -n "$SERVE" ]; then
	echo "export TRINO_URI='$TRINO_URI' TRINO_TARGETS='$TRINO_TARGETS' INTEROP_WORK='$INTEROP_WORK'"
	echo "(cd $HERE && $PY -m pytest -x test_trino.py)   # Ctrl-C stops the servers" >&2
	while sleep 3600; do :; done
fi

rc=0
if [ ${#NOT_UP[@]} -gt 0 ]; then
	echo "trino: could not start target(s): ${NOT_UP[*]} (their tests skip; the run fails)" >&2
	rc=1
fi
xml=$TR_WORK/trino.xml
run_pytest trino "$HERE" test_trino.py "$xml" "$TR_WORK/trino.out" "$PY" || rc=1
if ! "$PY" "$HERE/summarize.py" "$xml" "${TARGETS[@]}" >"$TR_WORK/summary.txt"; then
	rc=1
fi
echo "trino: $* took $((SECONDS - started))s" >&2
while IFS= read -r line; do
	case $line in trino/*) report "$line" ;; *) echo "$line" ;; esac
done <"$TR_WORK/summary.txt"
exit $rc
