#!/usr/bin/env bash
# Apache Iceberg's own catalog suites (CatalogTests, ViewCatalogTests from
# iceberg-core 1.11.0) through RESTCatalog, against lakegate and, to tell
# lakegate's failures from a backend's own, straight against the backend.
#
#   interop/java/run.sh [TARGET ...]     (default: $JAVA_TARGETS, else
#                                         embedded refserver)
#
# Targets:
#   embedded          lakegate on the root Caddyfile (its embedded catalog `local`)
#   unified           lakegate on interop/unified/Caddyfile: the unified catalog
#                     `all` over three embedded members (newdb → first, ns →
#                     second, everything else → third)
#   refserver         lakegate on examples/remote/Caddyfile (catalog `remote`) in
#                     front of Iceberg's reference REST server (RESTCatalogServer,
#                     JDBC catalog on SQLite, local warehouse)
#   direct-refserver  the same tests straight against the reference server
#   nessie            lakegate on examples/nessie/Caddyfile in front of Nessie's
#                     Iceberg REST API (S3 object store), see ../nessie/lib.sh
#   direct-nessie     the same tests straight against Nessie
#   policy            RESTCatalog with OAuth2 (credential=id:secret) against
#                     lakegate on examples/policy/Caddyfile (LakegateOAuth2Test)
#   all               every target above
#
# Debugging: JAVA_TESTS='LakegateCatalogTest#testRenameTable+testDropTable'
# runs only those tests (surefire -Dtest syntax); JAVA_WIRE=1 writes every
# HTTP request and answer the client exchanges into the reports' *-output.txt.
#
# Each target gets fresh, empty backends (started here, stopped at its end)
# and its own surefire reports under $INTEROP_WORK/java/reports/TARGET. One
# summary line per target: `java/TARGET: N passed, N failed, N skipped`.
# Exits non-zero if a target has a failure not listed for its backend in
# expected-failures.txt (failures the backend has on its own, shown by the
# direct-* targets), or could not run.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
. "$HERE/refserver.sh"
trap interop_cleanup EXIT
trap "exit 130" INT TERM
# Everything this script starts (Maven, the test JVM, the servers) runs at low
# priority: the machine is shared.
renice -n 10 $$ >/dev/null 2>&1 || true

JAVA_WORK=$INTEROP_WORK/java
EXPECTED=$HERE/expected-failures.txt
mkdir -p "$JAVA_WORK"

if [ $# -eq 0 ]; then
	# shellcheck disable=SC2086 # a list of target names
	set -- ${JAVA_TARGETS:-embedded refserver}
fi
if [ "$*" = all ]; then
	set -- embedded unified refserver direct-refserver nessie direct-nessie policy
fi
for t in "$@"; do
	case $t in
	embedded | unified | refserver | direct-refserver | nessie | direct-nessie | policy) ;;
	*)
		echo "unknown target: $t (embedded, unified, refserver, direct-refserver, nessie, direct-nessie, policy, all)" >&2
		exit 2
		;;
	esac
done

say() {
	if declare -F report >/dev/null; then report "$*"; else echo "$*"; fi
}

# run_suites TARGET BACKEND URI WAREHOUSE LOCATION [NAME=VALUE ...]: both
# suites in one test JVM, then the summary of their reports. Each NAME=VALUE
# becomes -Dlakegate.NAME=VALUE: catalog.KEY=VALUE is a client catalog
# property, capability.NAME=BOOL a capability hook (see Capabilities.java).
run_suites() {
	local target=$1 backend=$2 uri=$3 warehouse=$4 location=$5
	shift 5
	local reports="$JAVA_WORK/reports/$target" log="$JAVA_WORK/$target.mvn.log" kv
	local -a props=(
		-Dlakegate.uri="$uri"
		-Dlakegate.warehouse="$warehouse"
		-Dlakegate.location="$location"
		-Dlakegate.reports="$reports"
	)
	for kv in "$@"; do
		props+=("-Dlakegate.$kv")
	done
	if [ -n "${JAVA_TESTS:-}" ]; then
		props+=(-Dtest="$JAVA_TESTS" -Dsurefire.failIfNoSpecifiedTests=false)
	fi
	if [ "${JAVA_WIRE:-0}" = 1 ]; then
		props+=(-Dorg.slf4j.simpleLogger.log.org.apache.hc.client5.http.wire=debug)
	fi
	rm -rf "$reports"
	if ! mvn_cached -f "$HERE/pom.xml" test "${props[@]}" >"$log" 2>&1; then
		echo "java/$target: Maven failed (not a test failure), see $log:" >&2
		grep -E '^\[ERROR\]' "$log" | head -n 20 >&2
	fi
	python3 "$HERE/summarize.py" "$target" "$backend" "$reports" "$EXPECTED" >"$JAVA_WORK/$target.summary"
	local rc=$?
	sed '$d' "$JAVA_WORK/$target.summary"
	say "$(tail -n 1 "$JAVA_WORK/$target.summary")"
	return $rc
}

gateway_log_hint() {
	echo "  gateway log: $INTEROP_WORK/$1.log; reports: $JAVA_WORK/reports/$2"
}

target_embedded() {
	port_free "$PORT_EMBEDDED" "lakegate embedded" || return 1
	start_lakegate java-embedded Caddyfile "$PORT_EMBEDDED" "$(port 101)" || return 1
	run_suites embedded embedded "http://127.0.0.1:$PORT_EMBEDDED" local \
		"file:$INTEROP_WORK/data-java-embedded/local/warehouse/locations"
	local rc=$?
	gateway_log_hint java-embedded embedded
	return $rc
}

# unified: the same suites against a catalog whose namespaces live in three
# members; client-chosen locations go under a root every member allows.
target_unified() {
	local port admin
	port=$(port 60) admin=$(port 61)
	port_free "$port" "lakegate unified" || return 1
	start_lakegate java-unified interop/unified/Caddyfile "$port" "$admin" || return 1
	run_suites unified unified "http://127.0.0.1:$port" all \
		"file:$INTEROP_WORK/data-java-unified/locations"
	local rc=$?
	gateway_log_hint java-unified unified
	return $rc
}

target_refserver() {
	port_free "$PORT_REF" "reference server" || return 1
	port_free "$PORT_GW_REF" "lakegate remote" || return 1
	start_refserver refserver || return 1
	start_lakegate java-refserver examples/remote/Caddyfile "$PORT_GW_REF" "$(port 102)" \
		UPSTREAM_URL="http://127.0.0.1:$PORT_REF" || return 1
	run_suites refserver refserver "http://127.0.0.1:$PORT_GW_REF" remote \
		"file:$JAVA_WORK/locations/refserver"
	local rc=$?
	gateway_log_hint java-refserver refserver
	return $rc
}

# policy: Iceberg's RESTCatalog with OAuth2 client credentials against
# examples/policy (lakegate's issuer, policies/roles.rego): only the oauth2
# tagged class. Its `remote` catalog is unused; UPSTREAM_URL names a port
# where nothing listens.
target_policy() {
	port_free "$PORT_GW_POLICY" "lakegate policy" || return 1
	start_lakegate java-policy examples/policy/Caddyfile "$PORT_GW_POLICY" "$(port 104)" \
		UPSTREAM_URL="http://127.0.0.1:$(port 99)" || return 1
	JAVA_TESTS=LakegateOAuth2Test run_suites policy embedded "http://127.0.0.1:$PORT_GW_POLICY" local \
		"file:$INTEROP_WORK/data-java-policy/local/warehouse/locations" excludedGroups=none
	local rc=$?
	gateway_log_hint java-policy policy
	return $rc
}

target_direct-refserver() {
	port_free "$PORT_REF" "reference server" || return 1
	start_refserver direct-refserver || return 1
	run_suites direct-refserver refserver "http://127.0.0.1:$PORT_REF" "" \
		"file:$JAVA_WORK/locations/direct-refserver"
}

# What Nessie does that the REST protocol allows and the suites ask about
# (a capability hook, not a failure to hide): Nessie puts every table at
# <warehouse>/<namespace>/<name>_<uuid> whatever location the client asks
# for, so the suites must not expect the requested location back.
NESSIE_CAPABILITIES=(capability.overrides-requested-location=true)

nessie_ready() {
	if [ ! -f "$INTEROP_ROOT/nessie/lib.sh" ]; then
		echo "interop/nessie/lib.sh is missing: no Nessie targets" >&2
		return 1
	fi
	. "$INTEROP_ROOT/nessie/lib.sh"
	start_nessie || return 1
	local line
	NESSIE_PROPS=()
	while IFS= read -r line; do
		[ -n "$line" ] && NESSIE_PROPS+=("$line")
	done < <(nessie_client_props catalog.)
}

target_nessie() {
	port_free "$PORT_GW_NESSIE" "lakegate nessie" || return 1
	nessie_ready || return 1
	start_lakegate java-nessie examples/nessie/Caddyfile "$PORT_GW_NESSIE" "$(port 103)" \
		NESSIE_URL="$NESSIE_ICEBERG_URL" || return 1
	run_suites nessie nessie "http://127.0.0.1:$PORT_GW_NESSIE" nessie \
		"s3://$NESSIE_BUCKET/locations/nessie" "${NESSIE_PROPS[@]}" "${NESSIE_CAPABILITIES[@]}"
	local rc=$?
	gateway_log_hint java-nessie nessie
	stop_nessie
	return $rc
}

target_direct-nessie() {
	nessie_ready || return 1
	run_suites direct-nessie nessie "$NESSIE_ICEBERG_URL" "" \
		"s3://$NESSIE_BUCKET/locations/direct-nessie" "${NESSIE_PROPS[@]}" "${NESSIE_CAPABILITIES[@]}"
	local rc=$?
	stop_nessie
	return $rc
}

rc=0
started=$SECONDS
echo "java: building lakegate and the test classes" >&2
build_lakegate || exit 1
mvn_cached -f "$HERE/pom.xml" test-compile dependency:build-classpath \
	-Dmdep.includeScope=test -Dmdep.outputFile="$JAVA_WORK/classpath.txt" \
	>"$JAVA_WORK/prepare.mvn.log" 2>&1 || {
	cat "$JAVA_WORK/prepare.mvn.log" >&2
	exit 1
}
REFSERVER_CLASSPATH=$(cat "$JAVA_WORK/classpath.txt")
echo "java: ready after $((SECONDS - started))s" >&2

for t in "$@"; do
	t0=$SECONDS
	echo "--- java/$t" >&2
	rm -f "$JAVA_WORK/$t.summary"
	if ! "target_$t"; then
		rc=1
		if [ ! -s "$JAVA_WORK/$t.summary" ]; then
			say "java/$t: did not run (see the messages above)"
		fi
	fi
	interop_cleanup
	echo "  java/$t took $((SECONDS - t0))s" >&2
done
echo "java: $* took $((SECONDS - started))s" >&2
exit $rc
