#!/usr/bin/env bash
# Unity Catalog's own Delta SDK tests (server/src/test/java/io/unitycatalog/
# server/sdk/delta/*, 11 classes) against lakegate's `lakegate_delta` door,
# and against UC's own server as the oracle. See README.md next to this.
#
#   interop/uc-sdk/run.sh [TARGET ...]    (default: $UC_SDK_TARGETS, else lakegate direct)
#
# Targets:
#   lakegate   a fresh lakegate on interop/uc-sdk/Caddyfile (embedded catalogs
#              uc_testcatalog, uc_testcatalog2; port base+89, admin base+109)
#              for every test class, the class pointed at it with
#              -Duc.sdk.serverUrl=http://127.0.0.1:PORT (README.md, "Pointing
#              the tests at a server")
#   direct     the same classes without that property: each starts UC's own
#              in-process server (H2 in memory), as `sbt server/testOnly` does
#   all        both
#
# UC_SDK_CLASSES='SdkRenameTableTest SdkDeltaConfigTest' runs only those classes.
#
# The tests are UC's, compiled from its source into
# $INTEROP_CACHE/uc-sdk-<commit> (src/: the compiled tree, classpath.txt:
# their test classpath; interop/README.md, "Peers built from source"); when
# that folder is missing this says so and exits 0. JUnit's console launcher
# (Maven Central) runs the classes.
#
# One summary line per target, `uc-sdk/TARGET: N passed, N failed, N skipped
# (...)`; exits non-zero if a class fails that expected-failures.txt does not
# list for the target, or fails otherwise than its entry says, or a target
# could not run. Logs and JUnit XML: $INTEROP_WORK/uc-sdk/.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
trap interop_cleanup EXIT
trap "exit 130" INT TERM
# Everything started here (the test JVMs, the gateways) runs at low
# priority: the machine is shared.
renice -n 10 $$ >/dev/null 2>&1 || true

# JUnit's console launcher, the platform version of the build's
# junit-jupiter 5.10.3 (the build's own launcher, 1.9.1 from
# jupiter-interface, is dropped from the classpath).
JUNIT_PLATFORM=1.10.3
PACKAGE=io.unitycatalog.server.sdk.delta
ALL_CLASSES="RawCreateTableTest SdkCreateStagingTableTest SdkCreateTableTest SdkDeleteTableTest
SdkDeltaConfigTest SdkDeltaCredentialsTest SdkLoadTableTest SdkRenameTableTest SdkReportMetricsTest
SdkUpdateTableTest SdkUseDeltaApiOnlyFlagTest"
# A class's JUnit run may take this long before it is stopped.
CLASS_TIMEOUT=${UC_SDK_CLASS_TIMEOUT:-600}

UCW=$INTEROP_WORK/uc-sdk
PORT_UCSDK=$(port 89)
ADMIN_UCSDK=$(port 109)
EXPECTED=$HERE/expected-failures.txt
mkdir -p "$UCW"

if [ $# -eq 0 ]; then
	# shellcheck disable=SC2086 # a list of target names
	set -- ${UC_SDK_TARGETS:-lakegate direct}
fi
[ "$*" = all ] && set -- lakegate direct
for t in "$@"; do
	case $t in
	lakegate | direct) ;;
	*)
		echo "unknown target: $t (lakegate, direct, all)" >&2
		exit 2
		;;
	esac
done
# shellcheck disable=SC2086
CLASSES=$(echo ${UC_SDK_CLASSES:-$ALL_CLASSES})

say() { report "$*"; }

# classpath_ok: every entry of the cached classpath is still there (the sbt
# caches it points into may have been cleaned).
classpath_ok() {
	local entry
	[ -s "$CLASSPATH_FILE" ] || return 1
	while IFS= read -r entry; do
		[ -e "$entry" ] || return 1
	done < <(tr ':' '\n' <"$CLASSPATH_FILE")
}

# junit_classpath: the console launcher's jars, then the tests' classpath
# without the build's older launcher.
junit_classpath() {
	local m2=$INTEROP_CACHE/m2/org/junit/platform a jars=""
	for a in console reporting launcher; do
		local jar=$m2/junit-platform-$a/$JUNIT_PLATFORM/junit-platform-$a-$JUNIT_PLATFORM.jar
		if [ ! -s "$jar" ]; then
			mvn_cached -Dstyle.color=never dependency:get \
				-Dartifact=org.junit.platform:junit-platform-console:$JUNIT_PLATFORM >&2 || return 1
		fi
		[ -s "$jar" ] || return 1
		jars=$jars$jar:
	done
	echo "$jars$(tr ':' '\n' <"$CLASSPATH_FILE" | grep -v '/junit-platform-launcher-' | paste -sd:)"
}

# run_junit REPORTS LOG [JVM options ...] -- SELECTORS...: one test JVM in
# the built tree (the build's own Test/javaOptions: -ea, user.dir).
run_junit() {
	local reports=$1 log=$2
	shift 2
	local -a jvm=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		jvm+=("$1")
		shift
	done
	shift
	rm -rf "$reports"
	mkdir -p "$reports"
	(cd "$SRC" && timeout "$CLASS_TIMEOUT" nice -n 10 java -ea -Xmx1g -XX:+UseSerialGC \
		-Duser.dir="$SRC" "${jvm[@]}" -cp "$JUNIT_CP" org.junit.platform.console.ConsoleLauncher execute \
		--disable-banner --disable-ansi-colors --details=tree --reports-dir="$reports" "$@") >"$log" 2>&1
	local jrc=$?
	# 0: all passed, 1: a test failed; anything else (124: timeout) is the
	# JVM's own trouble, which the summary reports as a missing report.
	case $jrc in 0 | 1) return 0 ;; esac
	echo "uc-sdk: the test JVM exited $jrc, see $log" >&2
	return 1
}

summarize() {
	local target=$1 rc
	python3 "$HERE/summarize.py" "$target" "$UCW/reports/$target" "$EXPECTED" >"$UCW/$target.summary"
	rc=$?
	sed '$d' "$UCW/$target.summary"
	say "$(tail -n 1 "$UCW/$target.summary")"
	return $rc
}

# lakegate: a fresh gateway per class (UC's harness starts a fresh server per
# class; an external one is never cleaned), then the class against it.
target_lakegate() {
	local cls
	rm -rf "$UCW/reports/lakegate" "$UCW/lakegate"
	mkdir -p "$UCW/lakegate"
	for cls in $CLASSES; do
		port_free "$PORT_UCSDK" "lakegate uc-sdk" || return 1
		start_lakegate "uc-sdk/lakegate/$cls" interop/uc-sdk/Caddyfile "$PORT_UCSDK" "$ADMIN_UCSDK" || return 1
		echo "  $cls" >&2
		run_junit "$UCW/reports/lakegate/$cls" "$UCW/lakegate/$cls.junit.log" \
			-Duc.sdk.serverUrl="http://127.0.0.1:$PORT_UCSDK" -- --select-class="$PACKAGE.$cls"
		interop_cleanup
	done
	summarize lakegate
	local rc=$?
	echo "  gateway logs: $UCW/lakegate/*.log; test output: $UCW/lakegate/*.junit.log" >&2
	return $rc
}

# direct: UC's own in-process server, every class in one JVM (as sbt does).
target_direct() {
	local -a sel=()
	local cls
	for cls in $CLASSES; do
		sel+=(--select-class="$PACKAGE.$cls")
	done
	rm -rf "$UCW/reports/direct"
	run_junit "$UCW/reports/direct/all" "$UCW/direct.junit.log" -- "${sel[@]}"
	summarize direct
	local rc=$?
	echo "  test output: $UCW/direct.junit.log" >&2
	return $rc
}

rc=0
started=$SECONDS
if ! BUILT=$(prebuilt "uc-sdk-${UC_COMMIT:0:12}"); then
	for t in "$@"; do say "uc-sdk/$t: not run (no prebuilt Unity Catalog tests: no registry serves them; see the message above)"; done
	exit 0
fi
SRC=$BUILT/src
CLASSPATH_FILE=$BUILT/classpath.txt
if ! classpath_ok; then
	# The classpath points into the sbt caches of the build; one was cleaned.
	for t in "$@"; do say "uc-sdk/$t: not run (the prebuilt tests' classpath $CLASSPATH_FILE names files that are gone)"; done
	exit 0
fi
if [[ " $* " == *" lakegate "* ]]; then
	build_lakegate || exit 1
fi
if ! JUNIT_CP=$(junit_classpath); then
	for t in "$@"; do say "uc-sdk/$t: did not run (no JUnit console launcher $JUNIT_PLATFORM)"; done
	exit 1
fi
echo "uc-sdk: ready after $((SECONDS - started))s" >&2

for t in "$@"; do
	t0=$SECONDS
	echo "--- uc-sdk/$t" >&2
	rm -f "$UCW/$t.summary"
	if ! "target_$t"; then
		rc=1
		if [ ! -s "$UCW/$t.summary" ]; then
			say "uc-sdk/$t: did not run (see the messages above)"
		fi
	fi
	interop_cleanup
	echo "  uc-sdk/$t took $((SECONDS - t0))s" >&2
done
echo "uc-sdk: $* took $((SECONDS - started))s" >&2
exit $rc
