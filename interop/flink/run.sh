#!/usr/bin/env bash
# Flink SQL (PyFlink + Iceberg's Flink connector) through lakegate, each
# result cross-read with PyIceberg: test_flink.py, see README.md next to this.
#
#   interop/flink/run.sh [TARGET ...]
#       (default: embedded refserver nessie direct-refserver direct-nessie)
#
# Targets:
#   embedded          lakegate on the root Caddyfile, embedded catalog `local`
#   refserver         lakegate on examples/remote/Caddyfile, catalog `remote`, in
#                     front of Iceberg's reference REST server (../java/refserver.sh)
#   nessie            lakegate on examples/nessie/Caddyfile, catalog `nessie`, in
#                     front of Nessie + an S3 store (../nessie/lib.sh)
#   direct-refserver  the same tests straight against the reference server
#   direct-nessie     the same tests straight against Nessie
#                     (the evidence that a listed failure is the backend's own)
#
# One pytest run, one Flink JVM, jobs one at a time (Flink's local executor).
# Prints one line per target: `flink/<target>: N passed, N failed, N skipped`.
# Exits non-zero on any failure, or when a requested target could not start.
# Logs: $INTEROP_WORK/flink/ (pytest output, JUnit XML, Flink's log), the
# gateways' $INTEROP_WORK/flink-<target>.log.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
trap interop_cleanup EXIT
renice -n 10 $$ >/dev/null 2>&1 || true

FL_WORK=$INTEROP_WORK/flink
mkdir -p "$FL_WORK"
# Ports (lib.sh's table): gateways base+50..52 (admin base+120..122), the
# reference server base+53. Nessie and its S3 store keep lib.sh's shared
# ports (the suites run one after the other).
PORT_FL_EMBEDDED=$(port 50)
PORT_FL_GW_REF=$(port 51)
PORT_FL_GW_NESSIE=$(port 52)
PORT_REF=$(port 53)

ALL_TARGETS="embedded refserver nessie direct-refserver direct-nessie"
if [ $# -eq 0 ]; then
	set -- $ALL_TARGETS
fi
declare -A WANT=()
for t in "$@"; do
	case " $ALL_TARGETS " in
	*" $t "*) WANT[$t]=1 ;;
	*) echo "unknown target: $t ($ALL_TARGETS)" >&2; exit 2 ;;
	esac
done
TARGETS=("$@")

# The tests learn every URL from these; none may leak in from outside.
unset FLINK_URI_EMBEDDED FLINK_URI_REFSERVER FLINK_URI_NESSIE FLINK_URI_DIRECT_REFSERVER \
	FLINK_URI_DIRECT_NESSIE FLINK_NESSIE_PROPS
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1

started=$SECONDS
rc=0
NOT_RUN=()

echo "flink: building lakegate, the virtualenv and the Flink jars" >&2
build_lakegate || exit 1
PY=$(interop_venv flink "$HERE/requirements.txt") || exit 1
JARS=$(mvn_jars "$HERE/pom.xml") || exit 1
# Every jar goes on the JVM's class path, where a Flink installation has its
# lib/ folder (PyFlink's own lib/ is inside the virtualenv): PyFlink's
# gateway adds HADOOP_CLASSPATH to it. (With pipeline.jars instead, which
# PyFlink adds to a gateway thread's context class loader only, CREATE
# CATALOG under pytest found no 'iceberg' factory.)
HADOOP_CLASSPATH=$(ls "$JARS"/*.jar | paste -sd: -)
export HADOOP_CLASSPATH
# PyFlink's JVM: a small heap, serial GC, its log in $FL_WORK.
export JVM_ARGS="-Xmx1g -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.io.tmpdir=$FL_WORK/tmp"
export FLINK_LOG_DIR="$FL_WORK" LOG4J_PROPERTIES="$FL_WORK/log4j.properties"
rm -rf "$FL_WORK/tmp" && mkdir -p "$FL_WORK/tmp"
cat >"$LOG4J_PROPERTIES" <<EOF
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = File
logger.iceberg.name = org.apache.iceberg
logger.iceberg.level = INFO
appender.file.name = File
appender.file.type = File
appender.file.append = false
appender.file.fileName = $FL_WORK/flink.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p %-50c{1.} - %m%n
EOF
echo "flink: ready after $((SECONDS - started))s" >&2

# --- backends and gateways
if [ -n "${WANT[embedded]:-}" ]; then
	if port_free "$PORT_FL_EMBEDDED" "lakegate embedded" &&
		start_lakegate flink-embedded Caddyfile "$PORT_FL_EMBEDDED" "$(port 120)"; then
		export FLINK_URI_EMBEDDED="http://127.0.0.1:$PORT_FL_EMBEDDED"
	else
		NOT_RUN+=(embedded)
	fi
fi

if [ -n "${WANT[refserver]:-}${WANT[direct-refserver]:-}" ]; then
	REF_UP=
	. "$INTEROP_ROOT/java/refserver.sh"
	if refserver_classpath && port_free "$PORT_REF" "reference server" && start_refserver flink-refserver; then
		REF_UP=1
	fi
	if [ -n "${WANT[direct-refserver]:-}" ]; then
		if [ -n "$REF_UP" ]; then
			export FLINK_URI_DIRECT_REFSERVER="http://127.0.0.1:$PORT_REF"
		else
			NOT_RUN+=(direct-refserver)
		fi
	fi
	if [ -n "${WANT[refserver]:-}" ]; then
		if [ -n "$REF_UP" ] && port_free "$PORT_FL_GW_REF" "lakegate remote" &&
			start_lakegate flink-refserver examples/remote/Caddyfile "$PORT_FL_GW_REF" "$(port 121)" \
				UPSTREAM_URL="http://127.0.0.1:$PORT_REF"; then
			export FLINK_URI_REFSERVER="http://127.0.0.1:$PORT_FL_GW_REF"
		else
			NOT_RUN+=(refserver)
		fi
	fi
fi

if [ -n "${WANT[nessie]:-}${WANT[direct-nessie]:-}" ]; then
	NESSIE_UP=
	. "$INTEROP_ROOT/nessie/lib.sh"
	start_nessie && NESSIE_UP=1
	if [ -n "$NESSIE_UP" ]; then
		# The clients' S3 properties (Nessie vends none), as a JSON object.
		FLINK_NESSIE_PROPS=$(nessie_client_props | "$PY" -c \
			'import json,sys; print(json.dumps(dict(l.rstrip("\n").split("=",1) for l in sys.stdin if "=" in l)))')
		export FLINK_NESSIE_PROPS
	fi
	if [ -n "${WANT[direct-nessie]:-}" ]; then
		if [ -n "$NESSIE_UP" ]; then
			export FLINK_URI_DIRECT_NESSIE="$NESSIE_ICEBERG_URL"
		else
			NOT_RUN+=(direct-nessie)
		fi
	fi
	if [ -n "${WANT[nessie]:-}" ]; then
		if [ -n "$NESSIE_UP" ] && port_free "$PORT_FL_GW_NESSIE" "lakegate nessie" &&
			start_lakegate flink-nessie examples/nessie/Caddyfile "$PORT_FL_GW_NESSIE" "$(port 122)" \
				NESSIE_URL="$NESSIE_ICEBERG_URL"; then
			export FLINK_URI_NESSIE="http://127.0.0.1:$PORT_FL_GW_NESSIE"
		else
			NOT_RUN+=(nessie)
		fi
	fi
fi

if [ ${#NOT_RUN[@]} -gt 0 ]; then
	echo "flink: could not start target(s): ${NOT_RUN[*]} (their tests skip; the run fails)" >&2
	rc=1
fi

# --- the tests: only the requested targets (-k on the parameter ids)
sel=$(printf ' or [%s]' "${TARGETS[@]}" | sed 's/^ or //')
XML=$FL_WORK/flink.xml
rm -f "$XML"
echo "--- flink (${TARGETS[*]})" >&2
t0=$SECONDS
(cd "$HERE" && nice -n 10 "$PY" -m pytest -rA -p no:cacheprovider --tb=short \
	--junitxml="$XML" -o junit_family=xunit2 -k "$sel" test_flink.py) >"$FL_WORK/flink.out" 2>&1
prc=$?
sed -n '/^=* FAILURES =*$/,/^=* \(warnings summary\|PASSES\|short test summary info\) =*$/p' "$FL_WORK/flink.out" | sed '$d'
sed -n '/^=* short test summary info =*$/,$p' "$FL_WORK/flink.out"
echo "  flink: pytest took $((SECONDS - t0))s; output: $FL_WORK/flink.out, Flink's log: $FL_WORK/flink.log" >&2
case $prc in 0 | 1) ;; *) echo "flink: pytest exited $prc" >&2; rc=1 ;; esac

"$PY" "$HERE/summarize.py" "$XML" "${TARGETS[@]}" >"$FL_WORK/summary.txt" || rc=1
echo "flink: $* took $((SECONDS - started))s" >&2
while IFS= read -r line; do report "$line"; done <"$FL_WORK/summary.txt"
exit $rc
