#!/usr/bin/env bash
# Unity Catalog OSS as a remote Iceberg REST backend of lakegate:
# test_uc_backend.py, see README.md next to this.
#
#   interop/uc-backend/run.sh
#
# Starts Unity Catalog's server (built from its source into
# $INTEROP_CACHE/uc-spark-<commit>/server, interop/README.md "Peers built
# from source"; fresh H2
# database and storage root under $INTEROP_WORK/uc-backend/ucserver) with
# `-p base+95` (its Armeria server, which serves the API, is on base+96),
# seeds it (seed.py: catalog `unity`, schemas `sales` and `other`, two
# UniForm tables written by PyIceberg and one plain Delta table), starts
# lakegate on interop/uc-backend/Caddyfile (catalog `unity`: remote, UC's
# Iceberg REST endpoint) on base+94 (admin base+110), and runs the tests
# with PyIceberg 0.12 through lakegate and directly against UC.
#
# Prints per target, what each side answered the writes (findings.md),
# then one line:
#   uc-backend/lakegate: N passed, N failed, N skipped
# or, when that folder is missing,
#   uc-backend: not run (no prebuilt Unity Catalog server ...)
# and exits 0 (no registry this machine reaches serves it). Exits
# non-zero on a failure not in expected-failures.txt, and when it could not
# run otherwise ("uc-backend: not run (<why>)").
# Logs: $INTEROP_WORK/uc-backend.log (lakegate), $INTEROP_WORK/uc-backend/
# (ucserver/server.log, seed.log, pytest output, JUnit XML, findings).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
trap interop_cleanup EXIT
trap "exit 130" INT TERM
renice -n 10 $$ >/dev/null 2>&1 || true

UC_JAVA=${UC_JAVA:-java}
UCB_WORK=$INTEROP_WORK/uc-backend
PORT_UCB=$(port 94)
ADMIN_UCB=$(port 110)
PORT_UC=$(port 95)
PORT_UC_HTTP=$(port 96)
mkdir -p "$UCB_WORK"
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1
unset UCB_LAKEGATE UCB_UC UCB_ADMIN UCB_SEED UCB_FINDINGS

started=$SECONDS
not_run() {
	report "uc-backend: not run ($*)"
}

# Unity Catalog's server: the uc-spark suite's prebuilt folder.
if ! UC_OUT=$(prebuilt "uc-spark-${UC_COMMIT:0:12}"); then
	not_run "no prebuilt Unity Catalog server: no registry serves it; see the message above"
	exit 0
fi
if ! "$UC_JAVA" -version >/dev/null 2>&1; then
	not_run "no java ($UC_JAVA) to run Unity Catalog's server"
	exit 1
fi

echo "uc-backend: building lakegate and the virtualenv" >&2
build_lakegate || {
	not_run "lakegate did not build"
	exit 1
}
PY=$(interop_venv uc-backend "$HERE/requirements.txt") || {
	not_run "the virtualenv did not install (interop/uc-backend/requirements.txt)"
	exit 1
}
echo "uc-backend: ready after $((SECONDS - started))s" >&2

for p in "$PORT_UCB:lakegate" "$PORT_UC:uc server" "$PORT_UC_HTTP:uc server"; do
	if ! port_free "${p%%:*}" "${p#*:}"; then
		not_run "port ${p%%:*} in use"
		exit 1
	fi
done

# The server reads etc/conf from its working directory: a fresh H2
# database (etc/db) and storage root there.
UCDIR=$UCB_WORK/ucserver
rm -rf "$UCDIR" "$UCB_WORK/warehouse"
mkdir -p "$UCDIR/etc/db" "$UCDIR/storage"
cp -r "$UC_OUT/server/etc/conf" "$UCDIR/etc/conf"
echo "storage-root.tables=file://$UCDIR/storage" >>"$UCDIR/etc/conf/server.properties"
t0=$SECONDS
(cd "$UCDIR" && exec nice -n 10 "$UC_JAVA" -Xmx1g -XX:+UseSerialGC \
	-cp "$(ls "$UC_OUT"/server/lib/*.jar | sort | paste -sd: -)" \
	io.unitycatalog.server.UnityCatalogServer -p "$PORT_UC" >"$UCDIR/server.log" 2>&1) &
INTEROP_PIDS+=($!)
UC_API=http://127.0.0.1:$PORT_UC_HTTP/api/2.1/unity-catalog
up=
for ((i = 0; i < 240; i++)); do
	if curl -fsS -o /dev/null "$UC_API/catalogs" 2>/dev/null; then
		up=1
		break
	fi
	sleep 0.5
done
if [ -z "$up" ]; then
	tail -n 30 "$UCDIR/server.log" >&2
	not_run "Unity Catalog's server did not answer within 120s, see $UCDIR/server.log"
	exit 1
fi
echo "uc-backend: Unity Catalog's server up in $((SECONDS - t0))s" >&2

if ! "$PY" "$HERE/seed.py" "$UC_API" "$UCB_WORK/warehouse" "$UCB_WORK/seed.json" 2>"$UCB_WORK/seed.log"; then
	cat "$UCB_WORK/seed.log" >&2
	not_run "seeding Unity Catalog failed, see $UCB_WORK/seed.log"
	exit 1
fi
tail -n 1 "$UCB_WORK/seed.log" >&2

if ! start_lakegate uc-backend interop/uc-backend/Caddyfile "$PORT_UCB" "$ADMIN_UCB" \
	UC_ICEBERG_URL="$UC_API/iceberg" UC_CATALOG=unity; then
	not_run "lakegate did not start, see $INTEROP_WORK/uc-backend.log"
	exit 1
fi

export UCB_LAKEGATE=http://127.0.0.1:$PORT_UCB UCB_UC=$UC_API/iceberg UCB_ADMIN=http://127.0.0.1:$ADMIN_UCB \
	UCB_SEED=$UCB_WORK/seed.json UCB_FINDINGS=$UCB_WORK/findings.jsonl
rm -f "$UCB_FINDINGS"
rc=0
xml=$UCB_WORK/uc-backend.xml
run_pytest uc-backend "$HERE" test_uc_backend.py "$xml" "$UCB_WORK/pytest.out" "$PY" || rc=1
if [ -s "$UCB_FINDINGS" ]; then
	"$PY" "$HERE/findings.py" "$UCB_FINDINGS" >"$UCB_WORK/findings.md"
	{
		echo "uc-backend: UC's Iceberg REST endpoint is read-only; all findings: $UCB_WORK/findings.md"
		"$PY" "$HERE/findings.py" "$UCB_FINDINGS" raw orphans status
	} >&2
fi
"$PY" "$HERE/summarize.py" "$xml" >"$UCB_WORK/summary.txt" || rc=1
sed '$d' "$UCB_WORK/summary.txt"
report "$(tail -n 1 "$UCB_WORK/summary.txt" 2>/dev/null || echo "uc-backend: not run (no summary)")"
echo "uc-backend: took $((SECONDS - started))s" >&2
exit $rc
