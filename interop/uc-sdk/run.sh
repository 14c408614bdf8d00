#!/usr/bin/env bash
# Unity Catalog's own Delta SDK tests (server/src/test/java/io/unitycatalog/
# server/sdk/delta/*, 11 classes, built from UC's source) against lakegate's
# `lakegate_delta` door, and against UC's own server as the oracle. See
# README.md next to this.
#
#   interop/uc-sdk/run.sh [TARGET ...]    (default: $UC_SDK_TARGETS, else lakegate direct)
#
# Targets:
#   lakegate   a fresh lakegate on interop/uc-sdk/Caddyfile (embedded catalogs
#              uc_testcatalog, uc_testcatalog2; port base+89, admin base+109)
#              for every test class, the class pointed at it through the
#              harness patch (-Duc.sdk.serverUrl=http://127.0.0.1:PORT)
#   direct     the same classes unpatched in their URL: each starts UC's own
#              in-process server (H2 in memory), as `sbt server/testOnly` does
#   all        both
#
# UC_SDK_CLASSES='SdkRenameTableTest SdkDeltaConfigTest' runs only those classes.
# UC_SDK_PROBE=1 is a diagnostic run, never a verdict: probe.patch turns the
# error-case assertions of some classes into printed `PROBE same|DIFF` lines
# and gives the shared fixture the domainMetadata writer feature, so a class
# goes past its first mismatch (see README.md); no summary line is reported.
#
# The source: $INTEROP_CACHE/unitycatalog-src-<commit>.tar.gz (no registry
# serves it; when it is missing this prints how to make it and exits 0).
# The first run unpacks it into $INTEROP_CACHE/uc-sdk-<commit>-<patch>/src,
# applies harness.patch and compiles the server's tests with sbt 1.9.9
# (Maven Central only, caches in $INTEROP_CACHE/sbt, as
# ../sharing-spark/build.sh); it keeps that tree and the test classpath, so
# later runs start no sbt: JUnit's console launcher runs the classes.
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
# Everything started here (sbt, the test JVMs, the gateways) runs at low
# priority: the machine is shared.
renice -n 10 $$ >/dev/null 2>&1 || true

UC_COMMIT=${UC_COMMIT:-c9ed6b142f851b4d32c56eed9e85e917f27d7b7a}
# sha256 of `sha256sum` over every file of the tree, sorted by path (as
# ../sharing-spark/build.sh), so it does not depend on how it was packed.
UC_TREE_SHA256=${UC_TREE_SHA256:-174495d89c8c9a2da8d271cb54ef9e8fafd10142626f19868bc71722c14ef172}
SBT_VERSION=1.9.9
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

TARBALL=$INTEROP_CACHE/unitycatalog-src-$UC_COMMIT.tar.gz
if [ ! -s "$TARBALL" ]; then
	cat >&2 <<MSG
uc-sdk: no source for unitycatalog/unitycatalog $UC_COMMIT: $TARBALL is missing.
  No registry serves it; make it from any clone or mirror holding that commit
  (docs/ is left out: the mirror misses one of its blobs):
    git --git-dir=<unitycatalog mirror> archive --prefix=unitycatalog-$UC_COMMIT/ $UC_COMMIT -- . ':(exclude)docs' | gzip -n > $TARBALL
MSG
	for t in "$@"; do
		say "uc-sdk/$t: not run (no Unity Catalog source: $TARBALL is missing; see the message above)"
	done
	exit 0
fi

# The built tree: per source commit and harness patch.
KEY=${UC_COMMIT:0:12}-$(sha256sum "$HERE/harness.patch" | cut -c1-12)
BUILT=$INTEROP_CACHE/uc-sdk-$KEY
SRC=$BUILT/src
CLASSPATH_FILE=$BUILT/classpath.txt

# classpath_ok: every entry of the cached classpath is still there (the sbt
# caches it points into may have been cleaned).
classpath_ok() {
	local entry
	[ -s "$CLASSPATH_FILE" ] || return 1
	while IFS= read -r entry; do
		[ -e "$entry" ] || return 1
	done < <(tr ':' '\n' <"$CLASSPATH_FILE")
}

# build_tests: unpacks the source into $SRC, applies harness.patch and
# compiles the server's tests with sbt; writes their classpath.
build_tests() {
	local log=$UCW/sbt.log tree t0=$SECONDS brc
	rm -rf "$BUILT"
	mkdir -p "$SRC"
	if ! tar -xzf "$TARBALL" -C "$SRC" --strip-components=1; then
		echo "uc-sdk: $TARBALL does not unpack" >&2
		return 1
	fi
	tree=$(cd "$SRC" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
	if [ "$tree" != "$UC_TREE_SHA256" ]; then
		echo "uc-sdk: $TARBALL is not the tree of $UC_COMMIT (files digest $tree, want $UC_TREE_SHA256)" >&2
		return 1
	fi
	if ! (cd "$SRC" && patch -p1 --quiet --no-backup-if-mismatch <"$HERE/harness.patch"); then
		echo "uc-sdk: harness.patch does not apply to $UC_COMMIT" >&2
		return 1
	fi
	local launcher=$INTEROP_CACHE/m2/org/scala-sbt/sbt-launch/$SBT_VERSION/sbt-launch-$SBT_VERSION.jar
	if [ ! -s "$launcher" ]; then
		mvn_cached -Dstyle.color=never dependency:get -Dartifact=org.scala-sbt:sbt-launch:$SBT_VERSION \
			-Dtransitive=false >&2 || return 1
	fi
	local sbt_home=$INTEROP_CACHE/sbt
	mkdir -p "$sbt_home"
	cat >"$sbt_home/repositories" <<'REPOS'
[repositories]
  local
  maven-central: https://repo1.maven.org/maven2/
REPOS
	echo "uc-sdk: compiling Unity Catalog ${UC_COMMIT:0:12}'s server tests with sbt $SBT_VERSION, log $log" >&2
	(cd "$SRC" && nice -n 10 java -Xmx3g -Xss4m \
		-Dsbt.override.build.repos=true -Dsbt.repository.config="$sbt_home/repositories" \
		-Dsbt.boot.directory="$sbt_home/boot" -Dsbt.ivy.home="$sbt_home/ivy2" \
		-Dsbt.global.base="$sbt_home/global" -Dsbt.coursier.home="$sbt_home/coursier" \
		-Dsbt.server.autostart=false -Dsbt.ci=true -Dsbt.log.noformat=true -Dsbt.supershell=false \
		-jar "$launcher" server/Test/compile "export server/Test/fullClasspath" </dev/null) >"$log" 2>&1
	brc=$?
	# `export` prints the classpath as one line of its own.
	grep "^$SRC/server/target/test-classes:" "$log" | tail -n 1 >"$CLASSPATH_FILE"
	if [ $brc -ne 0 ] || ! classpath_ok; then
		grep -E '^\[error\]' "$log" | head -n 30 >&2
		echo "uc-sdk: sbt failed (exit $brc) after $((SECONDS - t0))s; log $log" >&2
		return 1
	fi
	echo "uc-sdk: compiled in $((SECONDS - t0))s" >&2
	touch "$BUILT/.complete"
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
	if [ -n "$PROBE" ]; then
		echo "uc-sdk/$target (probe, diagnostic only): $(tail -n 1 "$UCW/$target.summary" | sed 's/^[^:]*: //')"
		return 0
	fi
	say "$(tail -n 1 "$UCW/$target.summary")"
	return $rc
}

# probe_lines LOG: the PROBE lines a probe run printed.
probe_lines() {
	[ -n "$PROBE" ] && grep '^PROBE' "$1" | cut -c1-400 | sed 's/^/    /'
	return 0
}

# build_probe: probe.patch over copies of the files it changes, compiled
# against the tests' classpath into $UCW/probe/classes (put first on the
# classpath, so those classes replace the built ones).
build_probe() {
	local dir=$UCW/probe f files
	rm -rf "$dir"
	mkdir -p "$dir/src" "$dir/classes"
	files=$(sed -n 's|^+++ b/||p' "$HERE/probe.patch")
	for f in $files; do
		mkdir -p "$dir/src/$(dirname "$f")"
		cp "$SRC/$f" "$dir/src/$f" || return 1
	done
	(cd "$dir/src" && patch -p1 --quiet --no-backup-if-mismatch <"$HERE/probe.patch") || return 1
	# shellcheck disable=SC2086 # a list of paths without spaces
	(cd "$dir/src" && javac -nowarn -d "$dir/classes" -cp "$(cat "$CLASSPATH_FILE")" $files) \
		>"$dir/javac.log" 2>&1 || {
		cat "$dir/javac.log" >&2
		return 1
	}
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
		probe_lines "$UCW/lakegate/$cls.junit.log"
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
	probe_lines "$UCW/direct.junit.log"
	summarize direct
	local rc=$?
	echo "  test output: $UCW/direct.junit.log" >&2
	return $rc
}

rc=0
started=$SECONDS
echo "uc-sdk: building lakegate and Unity Catalog's tests" >&2
if [[ " $* " == *" lakegate "* ]]; then
	build_lakegate || exit 1
fi
if [ ! -e "$BUILT/.complete" ] || ! classpath_ok; then
	if ! build_tests; then
		for t in "$@"; do say "uc-sdk/$t: did not run (Unity Catalog's tests did not build, see $UCW/sbt.log)"; done
		exit 1
	fi
fi
if ! JUNIT_CP=$(junit_classpath); then
	for t in "$@"; do say "uc-sdk/$t: did not run (no JUnit console launcher $JUNIT_PLATFORM)"; done
	exit 1
fi
PROBE=
if [ "${UC_SDK_PROBE:-0}" = 1 ]; then
	build_probe || exit 1
	PROBE=1
	JUNIT_CP=$UCW/probe/classes:$JUNIT_CP
	echo "uc-sdk: PROBE run (probe.patch): diagnostic output only, no summary lines" >&2
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
