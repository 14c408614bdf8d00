#!/usr/bin/env bash
# Spark SQL (pyspark 4.1 + Iceberg's Spark runtime) and PyIceberg through
# lakegate: test_spark.py and test_pyiceberg.py, see README.md next to this.
#
#   interop/python/run.sh [TARGET ...]     (default: embedded unified refserver nessie policy)
#
# Targets:
#   embedded          lakegate on the root Caddyfile, embedded catalog `local`
#   unified           lakegate on interop/unified/Caddyfile, catalog `all` (a
#                     unified catalog over three embedded members)
#   refserver         lakegate on examples/remote/Caddyfile, catalog `remote`, in
#                     front of Iceberg's reference REST server (../java/refserver.sh)
#   nessie            lakegate on examples/nessie/Caddyfile, catalog `nessie`, in
#                     front of Nessie + an S3 store (../nessie/lib.sh)
#   policy            lakegate on examples/policy/Caddyfile (OAuth2 issuer, roles),
#                     catalog `local`: the OAuth2 tests
#   direct-refserver  the refserver tests straight against the reference server
#   direct-nessie     the nessie tests straight against Nessie
#                     (to tell a backend's own failures from lakegate's; not
#                     together with refserver / nessie in one run)
#
# Prints one line per suite: `python/<suite>: N passed, N failed, N skipped`
# (and per target above it). Exits non-zero on any failure or error.
# Logs: $INTEROP_WORK/<gateway>.log, pytest output and JUnit XML in
# $INTEROP_WORK/python/.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
trap interop_cleanup EXIT
# Everything started from here (Spark, servers, Maven) runs at low priority.
renice -n 10 $$ >/dev/null 2>&1 || true

PY_WORK=$INTEROP_WORK/python
# PY_SUITES="pyiceberg" runs only that suite (default: both).
SUITES=${PY_SUITES:-spark pyiceberg}
for suite in $SUITES; do
	case $suite in spark | pyiceberg) ;; *) echo "unknown suite: $suite (spark, pyiceberg)" >&2; exit 2 ;; esac
done
mkdir -p "$PY_WORK"

if [ $# -eq 0 ]; then
	set -- embedded unified refserver nessie policy
fi
declare -A WANT=()
for t in "$@"; do
	case $t in
	embedded | unified | refserver | nessie | policy | direct-refserver | direct-nessie) WANT[$t]=1 ;;
	*)
		echo "unknown target: $t (embedded, unified, refserver, nessie, policy, direct-refserver, direct-nessie)" >&2
		exit 2
		;;
	esac
done
for b in refserver nessie; do
	if [ -n "${WANT[$b]:-}" ] && [ -n "${WANT[direct-$b]:-}" ]; then
		echo "$b and direct-$b share the tests' $b target: run them separately" >&2
		exit 2
	fi
done

# The tests learn every URL from these; none may leak in from outside.
unset LAKEGATE_EMBEDDED_URI LAKEGATE_UNIFIED_URI LAKEGATE_REFSERVER_URI LAKEGATE_REFSERVER_WAREHOUSE \
	LAKEGATE_NESSIE_URI LAKEGATE_NESSIE_WAREHOUSE LAKEGATE_NESSIE_PROPS LAKEGATE_POLICY_URI
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1

started=$SECONDS
rc=0
NOT_RUN=()

echo "python: building lakegate, the virtualenv and the Spark jars" >&2
build_lakegate || exit 1
PY=$(interop_venv) || exit 1
SPARK_JARS_DIR=$(mvn_jars "$HERE/pom.xml") || exit 1
SPARK_JARS=$(ls "$SPARK_JARS_DIR"/*.jar | paste -sd, -)
export SPARK_JARS
echo "python: ready after $((SECONDS - started))s" >&2

# --- backends and gateways
if [ -n "${WANT[embedded]:-}" ]; then
	if port_free "$PORT_EMBEDDED" "lakegate embedded" &&
		start_lakegate python-embedded Caddyfile "$PORT_EMBEDDED" "$(port 101)"; then
		export LAKEGATE_EMBEDDED_URI="http://127.0.0.1:$PORT_EMBEDDED"
	else
		NOT_RUN+=(embedded)
	fi
fi

# unified: the catalog `all` over three embedded members (interop/unified/Caddyfile).
if [ -n "${WANT[unified]:-}" ]; then
	if port_free "$(port 62)" "lakegate unified" &&
		start_lakegate python-unified interop/unified/Caddyfile "$(port 62)" "$(port 63)"; then
		export LAKEGATE_UNIFIED_URI="http://127.0.0.1:$(port 62)"
	else
		NOT_RUN+=(unified)
	fi
fi

REF_UP=
# examples/remote's response cache (cache max_age): on, so that the load-twice
# and commit-then-load tests go through cache hits and their invalidation.
REFSERVER_CACHE_MAX_AGE=${REFSERVER_CACHE_MAX_AGE:-30s}
if [ -n "${WANT[refserver]:-}${WANT[direct-refserver]:-}" ]; then
	if [ -f "$INTEROP_ROOT/java/refserver.sh" ]; then
		. "$INTEROP_ROOT/java/refserver.sh"
		if refserver_classpath && port_free "$PORT_REF" "reference server" && start_refserver python-refserver; then
			REF_UP=1
		fi
	else
		echo "interop/java/refserver.sh is missing: no reference server" >&2
	fi
	if [ -z "$REF_UP" ]; then
		NOT_RUN+=(refserver)
	elif [ -n "${WANT[direct-refserver]:-}" ]; then
		export LAKEGATE_REFSERVER_URI="http://127.0.0.1:$PORT_REF" LAKEGATE_REFSERVER_WAREHOUSE=""
	elif port_free "$PORT_GW_REF" "lakegate remote" &&
		start_lakegate python-refserver examples/remote/Caddyfile "$PORT_GW_REF" "$(port 102)" \
			UPSTREAM_URL="http://127.0.0.1:$PORT_REF" LAKEGATE_CACHE_MAX_AGE="$REFSERVER_CACHE_MAX_AGE"; then
		export LAKEGATE_REFSERVER_URI="http://127.0.0.1:$PORT_GW_REF"
	else
		NOT_RUN+=(refserver)
	fi
fi

if [ -n "${WANT[nessie]:-}${WANT[direct-nessie]:-}" ]; then
	NESSIE_UP=
	if [ -f "$INTEROP_ROOT/nessie/lib.sh" ]; then
		. "$INTEROP_ROOT/nessie/lib.sh"
		start_nessie && NESSIE_UP=1
	else
		echo "interop/nessie/lib.sh is missing: no Nessie" >&2
	fi
	if [ -n "$NESSIE_UP" ] && [ "${NESSIE_CONFIG_CREDENTIALS:-0}" != 1 ]; then
		# The client's S3 properties, as a JSON object for the tests. (With
		# NESSIE_CONFIG_CREDENTIALS=1 Nessie hands them out in /v1/config
		# overrides: then the clients get uri and warehouse only.)
		LAKEGATE_NESSIE_PROPS=$(nessie_client_props | "$PY" -c \
			'import json,sys; print(json.dumps(dict(l.rstrip("\n").split("=",1) for l in sys.stdin if "=" in l)))')
		export LAKEGATE_NESSIE_PROPS
	fi
	if [ -z "$NESSIE_UP" ]; then
		NOT_RUN+=(nessie)
	elif [ -n "${WANT[direct-nessie]:-}" ]; then
		export LAKEGATE_NESSIE_URI="$NESSIE_ICEBERG_URL" LAKEGATE_NESSIE_WAREHOUSE=""
	elif port_free "$PORT_GW_NESSIE" "lakegate nessie" &&
		start_lakegate python-nessie examples/nessie/Caddyfile "$PORT_GW_NESSIE" "$(port 103)" \
			NESSIE_URL="$NESSIE_ICEBERG_URL"; then
		export LAKEGATE_NESSIE_URI="http://127.0.0.1:$PORT_GW_NESSIE"
	else
		NOT_RUN+=(nessie)
	fi
fi

if [ -n "${WANT[policy]:-}" ]; then
	# examples/policy needs an upstream for its `remote` catalog; the tests
	# use its `local` one, so the reference server when it runs, else a
	# port where nothing listens.
	if port_free "$PORT_GW_POLICY" "lakegate policy" &&
		start_lakegate python-policy examples/policy/Caddyfile "$PORT_GW_POLICY" "$(port 104)" \
			UPSTREAM_URL="http://127.0.0.1:$PORT_REF"; then
		export LAKEGATE_POLICY_URI="http://127.0.0.1:$PORT_GW_POLICY"
	else
		NOT_RUN+=(policy)
	fi
fi

if [ ${#NOT_RUN[@]} -gt 0 ]; then
	echo "python: could not start target(s): ${NOT_RUN[*]} (their tests skip; the run fails)" >&2
	rc=1
fi

# --- the suites, one after the other (one Spark JVM at a time)
run_suite() {
	local suite=$1 xml="$PY_WORK/$1.xml"
	rm -f "$PY_WORK/summary-$suite.txt"
	run_pytest "python/$suite" "$HERE" "test_$suite.py" "$xml" "$PY_WORK/$suite.out" "$PY" || rc=1
	if ! "$PY" "$HERE/summarize.py" "$suite" "$xml" >"$PY_WORK/summary-$suite.txt"; then
		rc=1
	fi
	cat "$PY_WORK/summary-$suite.txt"
}

for suite in $SUITES; do
	run_suite "$suite"
done
echo "python: $* took $((SECONDS - started))s" >&2
# The closing lines: per target, then one per suite.
for suite in $SUITES; do
	cat "$PY_WORK/summary-$suite.txt" 2>/dev/null | sed '$d'
done
for suite in $SUITES; do
	report "$(tail -n 1 "$PY_WORK/summary-$suite.txt" 2>/dev/null || echo "python/$suite: did not run")"
done
exit $rc
