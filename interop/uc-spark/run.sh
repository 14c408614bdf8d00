#!/usr/bin/env bash
# Spark (pyspark 4.1.4) with delta-spark 4.3.1 and Unity Catalog's Spark
# connector (UCSingleCatalog) on a UC server: test_uc_spark.py, see
# README.md next to this. The connector and UC's server are built from
# Unity Catalog's source and taken from $INTEROP_CACHE/uc-spark-<commit>
# (interop/README.md, "Peers built from source").
#
#   interop/uc-spark/run.sh [lakegate] [unitycatalog]     (default: both)
#
# Targets, one after the other, each behind ucproxy.py (which records
# every UC call: $INTEROP_WORK/uc-spark/TARGET-calls.jsonl, and per test
# TARGET-calls.md):
#   lakegate      lakegate on interop/uc-spark/Caddyfile (embedded catalog
#                 `unity`, lakegate_iceberg + lakegate_delta) on port
#                 base+88 (admin base+108), the proxy on base+89. After
#                 each write the tests read the table through its Iceberg
#                 REST API with PyIceberg.
#   unitycatalog  Unity Catalog's own server (the same commit, from the
#                 same folder; fresh H2 database and file:// storage root under
#                 $INTEROP_WORK/uc-spark/ucserver) on base+91 (its Armeria
#                 port is base+92; base+91 is the URL transcoder it starts
#                 too), the proxy on base+93: the oracle. No Iceberg
#                 cross-read there (UC's Iceberg REST API serves only
#                 UniForm tables; these are plain Delta).
# Prints per area and then one line per target:
#   uc-spark/TARGET: N passed, N failed, N skipped
# (skipped includes the strict xfails of expected-failures.txt and the
# steps skipped because one they build on did not pass), or
#   uc-spark: not run: <why>
# Exits non-zero on any other failure or error, and when it could not run,
# except for a missing prebuilt connector, which is the "not run" line
# alone.
# Logs: $INTEROP_WORK/uc-spark.log (lakegate), $INTEROP_WORK/uc-spark/
# (ucserver/server.log, pytest output, JUnit XML, call logs).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
trap interop_cleanup EXIT
renice -n 10 $$ >/dev/null 2>&1 || true

US_WORK=$INTEROP_WORK/uc-spark
PORT_US=$(port 88)
ADMIN_US=$(port 108)
PORT_US_PROXY=$(port 89)
PORT_UC=$(port 91)
PORT_UC_HTTP=$(port 92)
PORT_UC_PROXY=$(port 93)
mkdir -p "$US_WORK"
unset UC_SPARK_TARGET UC_SPARK_URI UC_SPARK_CALLS UC_SPARK_JARS UC_SPARK_EXTERNAL UC_SPARK_ICEBERG_URI
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(lakegate unitycatalog)
for t in "${targets[@]}"; do
	case $t in lakegate | unitycatalog) ;; *)
		echo "uc-spark: unknown target $t (lakegate, unitycatalog)" >&2
		exit 2
		;;
	esac
done

started=$SECONDS
rc=0
if ! OUT=$(prebuilt "uc-spark-${UC_COMMIT:0:12}"); then
	report "uc-spark: not run: no prebuilt Unity Catalog connector and server (no registry serves them; see the message above)"
	exit 0
fi
echo "uc-spark: building lakegate, the virtualenv and the jars" >&2
case " ${targets[*]} " in *" lakegate "*) build_lakegate || exit 1 ;; esac
PY=$(interop_venv) || exit 1
JARS_DIR=$(mvn_jars "$HERE/pom.xml") || {
	report "uc-spark: not run: delta-spark's jars did not resolve"
	exit 1
}
UC_SPARK_JARS=$(ls "$OUT"/connector/*.jar "$JARS_DIR"/*.jar | paste -sd, -)
export UC_SPARK_JARS
echo "uc-spark: ready after $((SECONDS - started))s" >&2

# start_proxy PORT UPSTREAM LOG: ucproxy.py in front of a target.
start_proxy() {
	rm -f "$3"
	"$PY" "$HERE/ucproxy.py" "$1" "$2" "$3" >"$3.err" 2>&1 &
	INTEROP_PIDS+=($!)
	wait_port "$1" 30 "$3.err"
}

# run_tests TARGET: the tests against the target the variables name, its
# summary, and the calls it got per test.
run_tests() {
	local target=$1 xml=$US_WORK/$1.xml
	export UC_SPARK_TARGET=$target UC_SPARK_CALLS=$US_WORK/$target-calls.jsonl
	run_pytest "uc-spark/$target" "$HERE" test_uc_spark.py "$xml" "$US_WORK/$target.out" "$PY" || rc=1
	"$PY" "$HERE/summarize.py" "$xml" "$target" >"$US_WORK/$target-summary.txt" || rc=1
	"$PY" "$HERE/trace_summary.py" "$UC_SPARK_CALLS" "UC calls of uc-spark/$target" >"$US_WORK/$target-calls.md" ||
		rc=1
	sed '$d' "$US_WORK/$target-summary.txt"
	report "$(tail -n 1 "$US_WORK/$target-summary.txt" 2>/dev/null || echo "uc-spark/$target: not run: no summary")"
}

run_lakegate() {
	local t0=$SECONDS
	if ! port_free "$PORT_US" lakegate || ! port_free "$PORT_US_PROXY" "uc-spark proxy"; then
		report "uc-spark/lakegate: not run: port in use"
		rc=1
		return
	fi
	if ! start_lakegate uc-spark interop/uc-spark/Caddyfile "$PORT_US" "$ADMIN_US"; then
		report "uc-spark/lakegate: not run: lakegate did not start (see $INTEROP_WORK/uc-spark.log)"
		rc=1
		return
	fi
	if ! start_proxy "$PORT_US_PROXY" "http://127.0.0.1:$PORT_US" "$US_WORK/lakegate-calls.jsonl"; then
		report "uc-spark/lakegate: not run: the proxy did not start"
		rc=1
		return
	fi
	# Inside the catalog's allowed_locations (Caddyfile).
	export UC_SPARK_EXTERNAL=$INTEROP_WORK/data-uc-spark/external
	mkdir -p "$UC_SPARK_EXTERNAL"
	export UC_SPARK_URI=http://127.0.0.1:$PORT_US_PROXY UC_SPARK_ICEBERG_URI=http://127.0.0.1:$PORT_US
	run_tests lakegate
	interop_cleanup
	echo "  uc-spark/lakegate took $((SECONDS - t0))s" >&2
}

run_unitycatalog() {
	local t0=$SECONDS dir=$US_WORK/ucserver
	if ! port_free "$PORT_UC" "uc server" || ! port_free "$PORT_UC_HTTP" "uc server" ||
		! port_free "$PORT_UC_PROXY" "uc-spark proxy"; then
		report "uc-spark/unitycatalog: not run: port in use"
		rc=1
		return
	fi
	# The server reads etc/conf from its working directory; H2 database and
	# managed tables' storage root are fresh in there.
	rm -rf "$dir"
	mkdir -p "$dir/etc/db" "$dir/storage" "$dir/external"
	cp -r "$OUT/server/etc/conf" "$dir/etc/conf"
	echo "storage-root.tables=file://$dir/storage" >>"$dir/etc/conf/server.properties"
	(cd "$dir" && exec nice -n 10 java -Xmx1g -cp "$(ls "$OUT"/server/lib/*.jar | sort | paste -sd: -)" \
		io.unitycatalog.server.UnityCatalogServer -p "$PORT_UC" >"$dir/server.log" 2>&1) &
	INTEROP_PIDS+=($!)
	if ! wait_port "$PORT_UC_HTTP" 120 "$dir/server.log"; then
		report "uc-spark/unitycatalog: not run: the UC server did not start (see $dir/server.log)"
		rc=1
		interop_cleanup
		return
	fi
	if ! start_proxy "$PORT_UC_PROXY" "http://127.0.0.1:$PORT_UC_HTTP" "$US_WORK/unitycatalog-calls.jsonl"; then
		report "uc-spark/unitycatalog: not run: the proxy did not start"
		rc=1
		interop_cleanup
		return
	fi
	export UC_SPARK_URI=http://127.0.0.1:$PORT_UC_PROXY UC_SPARK_ICEBERG_URI= UC_SPARK_EXTERNAL=$dir/external
	# The connector cannot make catalogs: the UC catalog is the Spark catalog `unity`.
	curl -fsS -X POST "$UC_SPARK_URI/__mark__" -d 'setup: POST /catalogs (run.sh)' >/dev/null &&
		curl -fsS -X POST "$UC_SPARK_URI/api/2.1/unity-catalog/catalogs" -H 'Content-Type: application/json' \
			-d '{"name":"unity","comment":"interop/uc-spark"}' >"$dir/catalog.json" || {
		report "uc-spark/unitycatalog: not run: POST /catalogs failed"
		rc=1
		interop_cleanup
		return
	}
	run_tests unitycatalog
	interop_cleanup
	echo "  uc-spark/unitycatalog took $((SECONDS - t0))s" >&2
}

for t in "${targets[@]}"; do
	"run_$t"
done
echo "uc-spark: took $((SECONDS - started))s" >&2
exit $rc
