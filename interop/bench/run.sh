#!/usr/bin/env bash
# LoadTable and commit through lakegate against the same third-party backend
# straight, as ratios measured in one run: Iceberg's reference REST server
# (examples/remote in front of it) and Nessie (examples/nessie in front of
# it). Every round runs direct, then through the gateway, alternating, so
# both see the same machine.
#
#   interop/bench/run.sh                  # both backends, both operations
#   ROUNDS=5 DURATION=20s interop/bench/run.sh
#
# LoadTable: a table with SNAPSHOTS appends (iceberg-go through the gateway;
# Nessie keeps only the current snapshot in table metadata), CONCURRENCY
# closed-loop workers. examples/remote's cache is at its default max_age 0s:
# every load is revalidated with the backend (If-None-Match), so it measures
# the hop, not the cache. Commit: COMMIT_CONCURRENCY workers, each setting a
# property on its own table (no conflicts; each commit writes a new metadata
# file). CPU per request of the backend and the gateway comes from /proc.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
. "$HERE/../java/refserver.sh"
. "$HERE/../nessie/lib.sh"
trap interop_cleanup EXIT
trap 'exit 130' INT TERM

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONCURRENCY=${CONCURRENCY:-16}
COMMIT_CONCURRENCY=${COMMIT_CONCURRENCY:-4}
SNAPSHOTS=${SNAPSHOTS:-16}
BENCH=$INTEROP_WORK/bench
rm -rf "$BENCH" && mkdir -p "$BENCH"

fail() {
	echo "bench: $*" >&2
	exit 1
}

build_lakegate || fail "build failed"
(cd "$REPO_ROOT" && go build -o "$BENCH/loadgen" ./examples/bench/loadgen) || fail "loadgen build failed"
loadgen() { "$BENCH/loadgen" "$@"; }

refserver_classpath || fail "no classpath for the reference server"
start_refserver bench-refserver || fail "reference server did not start"
ref_pid=${INTEROP_PIDS[${#INTEROP_PIDS[@]} - 1]}
# Nessie hands the S3 keys out in /v1/config, so iceberg-go (loadgen's
# setup) needs nothing else.
NESSIE_CONFIG_CREDENTIALS=1 start_nessie || fail "Nessie did not start"

start_lakegate bench-ref examples/remote/Caddyfile "$PORT_GW_REF" "$(port 102)" \
	UPSTREAM_URL="http://127.0.0.1:$PORT_REF" || fail "gateway (reference server) did not start"
gw_ref_pid=${INTEROP_PIDS[${#INTEROP_PIDS[@]} - 1]}
start_lakegate bench-nessie examples/nessie/Caddyfile "$PORT_GW_NESSIE" "$(port 103)" \
	NESSIE_URL="$NESSIE_ICEBERG_URL" || fail "gateway (Nessie) did not start"
gw_nessie_pid=${INTEROP_PIDS[${#INTEROP_PIDS[@]} - 1]}

# cpu_ticks PID: user+system clock ticks the process used so far.
cpu_ticks() {
	local stat
	stat=$(<"/proc/$1/stat") || return
	stat=${stat##*) }
	# shellcheck disable=SC2086
	set -- $stat
	echo $((${12} + ${13}))
}
clk_tck=$(getconf CLK_TCK)

# measure NAME OP WORKERS BACKEND_PID GATEWAY_PID DIRECT_URL DIRECT_PREFIX GW_URL GW_PREFIX
measure() {
	local name=$1 op=$2 workers=$3 bpid=$4 gpid=$5 durl=$6 dpfx=$7 gurl=$8 gpfx=$9
	local out="$BENCH/$name" round target url pfx b0 g0 b1 g1 table=events
	[ "$op" = commit ] && table=commits
	mkdir -p "$out"
	for round in $(seq "$ROUNDS"); do
		for target in direct gateway; do
			if [ $target = direct ]; then url=$durl pfx=$dpfx; else url=$gurl pfx=$gpfx; fi
			loadgen -op "$op" -table "$table" -url "$url" -prefix "$pfx" -concurrency "$workers" \
				-duration "$WARMUP" -warmup 0 >/dev/null || fail "$name $target warm-up failed"
			b0=$(cpu_ticks "$bpid") g0=$(cpu_ticks "$gpid")
			loadgen -op "$op" -table "$table" -url "$url" -prefix "$pfx" -concurrency "$workers" \
				-duration "$DURATION" -warmup 0 >"$out/$target-$round.json" || fail "$name $target failed"
			b1=$(cpu_ticks "$bpid") g1=$(cpu_ticks "$gpid")
			echo "$((b1 - b0)) $((g1 - g0)) $clk_tck" >"$out/cpu-$target-$round.txt"
			echo "  $name round $round $target: $(cat "$out/$target-$round.json")" >&2
		done
	done
}

ref_gw=http://127.0.0.1:$PORT_GW_REF
nessie_gw=http://127.0.0.1:$PORT_GW_NESSIE
loadgen -setup -url "$ref_gw" -prefix remote -snapshots "$SNAPSHOTS" || fail "setup (reference server)"
loadgen -setup -op commit -url "$ref_gw" -prefix remote -table commits -concurrency "$COMMIT_CONCURRENCY" ||
	fail "commit setup (reference server)"
loadgen -setup -url "$nessie_gw" -prefix nessie -snapshots "$SNAPSHOTS" || fail "setup (Nessie)"
loadgen -setup -op commit -url "$nessie_gw" -prefix nessie -table commits -concurrency "$COMMIT_CONCURRENCY" ||
	fail "commit setup (Nessie)"

measure refserver-load load "$CONCURRENCY" "$ref_pid" "$gw_ref_pid" \
	"http://127.0.0.1:$PORT_REF" "" "$ref_gw" remote
measure refserver-commit commit "$COMMIT_CONCURRENCY" "$ref_pid" "$gw_ref_pid" \
	"http://127.0.0.1:$PORT_REF" "" "$ref_gw" remote
measure nessie-load load "$CONCURRENCY" "$NESSIE_PID" "$gw_nessie_pid" \
	"$NESSIE_ICEBERG_URL" main "$nessie_gw" nessie
measure nessie-commit commit "$COMMIT_CONCURRENCY" "$NESSIE_PID" "$gw_nessie_pid" \
	"$NESSIE_ICEBERG_URL" main "$nessie_gw" nessie

echo
echo "$ROUNDS rounds × $DURATION per target (alternating, $WARMUP warm-up each), $(nproc) cores," \
	"$(go version | cut -d' ' -f3), LoadTable: $CONCURRENCY workers, $SNAPSHOTS appends;" \
	"commit: $COMMIT_CONCURRENCY workers"
for name in refserver-load refserver-commit nessie-load nessie-commit; do
	echo
	echo "### $name"
	echo
	loadgen -summarize "$BENCH/$name"
done
