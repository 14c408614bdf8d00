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
# Trino: $TRINO_VERSION's trino-server-core tarball and trino-iceberg plugin
# zip from Maven Central (sha256 pinned below), unpacked once into
# $INTEROP_CACHE/trino-$TRINO_VERSION with only the Iceberg plugin; run by a
# JDK >= 24 (Temurin 25 here) with a 2 GB heap, on 127.0.0.1:base+40.
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
trap interop_cleanup EXIT
renice -n 10 $$ >/dev/null 2>&1 || true

TRINO_VERSION=476
TRINO_CORE_SHA256=0f388f9967c177ae70a47c099082fc95387f0c3cb96d8000d1d41fc3a5223158
TRINO_ICEBERG_SHA256=99edba5b491ed94d599aeb61e0794272d3569d8b563f3bb8569e8a49daa87b6c
TRINO_HEAP=${TRINO_HEAP:-2G}
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

# trino_java: a java >= 24 (Trino 476's minimum): TRINO_JAVA, then the JDKs here.
trino_java() {
	local j v
	for j in "${TRINO_JAVA:-}" /usr/lib/jvm/temurin-25-jdk-amd64/bin/java "${JAVA_HOME:+$JAVA_HOME/bin/java}" \
		/usr/lib/jvm/*/bin/java java; do
		[ -n "$j" ] && command -v "$j" >/dev/null 2>&1 || continue
		v=$("$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
		if [ -n "$v" ] && [ "${v%%.*}" -ge 24 ] 2>/dev/null; then
			echo "$j"
			return 0
		fi
	done
	return 1
}

# trino_install: the server (core tarball + Iceberg plugin) in the cache;
# sets TRINO_HOME.
trino_install() {
	local m2="$INTEROP_CACHE/m2/io/trino" core iceberg
	TRINO_HOME="$INTEROP_CACHE/trino-$TRINO_VERSION"
	[ -e "$TRINO_HOME/.complete" ] && return 0
	core="$m2/trino-server-core/$TRINO_VERSION/trino-server-core-$TRINO_VERSION.tar.gz"
	iceberg="$m2/trino-iceberg/$TRINO_VERSION/trino-iceberg-$TRINO_VERSION.zip"
	[ -f "$core" ] || mvn_cached -Dstyle.color=never dependency:get -Dtransitive=false \
		-Dartifact="io.trino:trino-server-core:$TRINO_VERSION:tar.gz" >&2 || return 1
	[ -f "$iceberg" ] || mvn_cached -Dstyle.color=never dependency:get -Dtransitive=false \
		-Dartifact="io.trino:trino-iceberg:$TRINO_VERSION:zip" >&2 || return 1
	if ! echo "$TRINO_CORE_SHA256  $core" | sha256sum -c --status ||
		! echo "$TRINO_ICEBERG_SHA256  $iceberg" | sha256sum -c --status; then
		echo "checksum mismatch for Trino $TRINO_VERSION's downloads; removing them" >&2
		rm -f "$core" "$iceberg"
		return 1
	fi
	rm -rf "$TRINO_HOME" "$TRINO_HOME.tmp"
	mkdir -p "$TRINO_HOME.tmp"
	tar xzf "$core" -C "$TRINO_HOME.tmp" --strip-components=1 || return 1
	# The core's own plugins (exchange and spooling file systems, Python
	# functions, geospatial, authenticators, resource groups, session
	# properties, the keystore secrets plugin) are not needed here: only
	# the Iceberg connector, which keeps start-up and memory small.
	rm -rf "$TRINO_HOME.tmp/plugin" "$TRINO_HOME.tmp/secrets-plugin"
	mkdir -p "$TRINO_HOME.tmp/plugin"
	unzip -q "$iceberg" -d "$TRINO_HOME.tmp/plugin" || return 1
	mv "$TRINO_HOME.tmp/plugin/trino-iceberg-$TRINO_VERSION" "$TRINO_HOME.tmp/plugin/iceberg" || return 1
	mv "$TRINO_HOME.tmp" "$TRINO_HOME" && touch "$TRINO_HOME/.complete"
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
cat >"$ETC/config.properties" <<EOF
coordinator=true
node-scheduler.include-coordinator=true
http-server.http.port=$PORT_TRINO
discovery.uri=http://127.0.0.1:$PORT_TRINO
query.max-memory=1GB
query.max-memory-per-node=1GB
node.environment=interop
node.id=lakegate-interop
node.bind-ip=127.0.0.1
node.internal-address=127.0.0.1
catalog.config-dir=$ETC/catalog
plugin.dir=$TRINO_HOME/plugin
EOF
cat >"$ETC/log.properties" <<EOF
io.trino=INFO
io.airlift=WARN
org.apache.iceberg=WARN
EOF

start_trino() {
	local log=$TR_WORK/trino.log i pid
	port_free "$PORT_TRINO" Trino || return 1
	# exec: the recorded pid is the JVM itself, so interop_cleanup stops it.
	(cd "$TR_WORK" && exec "$TRINO_JAVA_BIN" -Xmx"$TRINO_HEAP" -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError \
		-XX:ReservedCodeCacheSize=256M -Djdk.attach.allowAttachSelf=true -XX:+EnableDynamicAgentLoading \
		-Dconfig="$ETC/config.properties" -Dlog.levels-file="$ETC/log.properties" \
		-cp "$TRINO_HOME/lib/*" io.trino.server.TrinoServer >"$log" 2>&1) &
	pid=$!
	INTEROP_PIDS+=($pid)
	for ((i = 0; i < 1800; i++)); do
		if curl -sf "http://127.0.0.1:$PORT_TRINO/v1/info" 2>/dev/null | grep -q '"starting":false'; then
			echo "Trino $TRINO_VERSION up on 127.0.0.1:$PORT_TRINO after $((SECONDS - started))s" >&2
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "Trino exited during start-up:" >&2
			grep -v '^[[:space:]]*at ' "$log" | tail -n 30 >&2
			return 1
		fi
		sleep 0.1
	done
	echo "Trino not up after 180s:" >&2
	tail -n 40 "$log" >&2
	return 1
}

if ! start_trino; then
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
