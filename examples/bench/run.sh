#!/usr/bin/env bash
# LoadTable load through lakegate against the same backend straight,
# as a ratio measured in one run. Needs only Go; all traffic stays on
# 127.0.0.1.
#
#   backend  lakegate on the root Caddyfile (embedded catalog `local`)
#            at http://127.0.0.1:18181
#   gateway  lakegate on examples/remote/Caddyfile (catalog `remote` =
#            the backend) at http://127.0.0.1:18182
#
# A table with SNAPSHOTS snapshots is created on the backend, then
# ROUNDS rounds of DURATION closed-loop GETs of LoadTable at CONCURRENCY
# workers alternate: direct (backend, prefix local), then gateway
# (prefix remote), each after an unmeasured WARMUP. Prints a markdown
# table: rps, p50, p99, the throughput ratio gateway/direct and the
# added latency, and (on Linux) the backend's and the gateway's CPU time
# per request, which depends much less than rps on what else the
# machine is running.
#
#   bash examples/bench/run.sh
#   ROUNDS=5 DURATION=20s CONCURRENCY=32 bash examples/bench/run.sh
#   PROFILE_DIR=/tmp/prof bash examples/bench/run.sh
#   go tool pprof -top /tmp/prof/gateway-1.pb.gz
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONCURRENCY=${CONCURRENCY:-16}
SNAPSHOTS=${SNAPSHOTS:-32}
WARMUP=${WARMUP:-2s}
# examples/remote/Caddyfile's LoadTable cache: 0s (its default) revalidates
# every load with the backend (If-None-Match → 304, the body comes from
# the gateway's cache); a positive age answers from the cache without
# asking the backend, which measures the cache, not the hop.
LAKEGATE_CACHE_MAX_AGE=${LAKEGATE_CACHE_MAX_AGE:-0s}
# PROFILE_DIR=dir: also take a CPU profile (PROFILE_SECONDS, within each
# measured window) of the process serving each round, through its Caddy
# admin endpoint: dir/direct-N.pb.gz (backend), dir/gateway-N.pb.gz.
PROFILE_SECONDS=${PROFILE_SECONDS:-5}
BACKEND_PORT=18181
GATEWAY_PORT=18182
BACKEND_ADMIN=18191
GATEWAY_ADMIN=18192

cd "$(dirname "$0")/../.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lakegate-bench.XXXXXX")
backend_pid=""
gateway_pid=""
prof_pid=""

stop() { # pid
	if [ -n "$1" ] && kill -0 "$1" 2>/dev/null; then
		kill "$1" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$1" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$1" 2>/dev/null || true
		wait "$1" 2>/dev/null || true
	fi
}
cleanup() {
	stop "$prof_pid"
	stop "$gateway_pid"
	stop "$backend_pid"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "run.sh: $*" >&2
	for log in "$tmp"/backend.log "$tmp"/gateway.log; do
		if [ -s "$log" ]; then
			echo "--- tail of $(basename "$log")" >&2
			tail -n 20 "$log" >&2
		fi
	done
	exit 1
}

for port in $BACKEND_PORT $GATEWAY_PORT $BACKEND_ADMIN $GATEWAY_ADMIN; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		fail "port $port on 127.0.0.1 is already in use"
	fi
done

echo "building lakegate and loadgen into $tmp ..." >&2
go build -o "$tmp/lakegate" ./caddy
go build -o "$tmp/loadgen" ./examples/bench/loadgen

# Caddy keeps autosaved config and state under XDG dirs: keep them in tmp.
export XDG_CONFIG_HOME="$tmp/xdg-config" XDG_DATA_HOME="$tmp/xdg-data"
# Shared state stays in memory (no Redis, nothing off this machine), and
# the cache setting examples/remote/Caddyfile reads is explicit.
unset LAKEGATE_REDIS
export LAKEGATE_CACHE_MAX_AGE

LAKEGATE_ADDR=127.0.0.1:$BACKEND_PORT LAKEGATE_BIND=127.0.0.1 \
LAKEGATE_DATA="$tmp/backend" LAKEGATE_ADMIN_PORT=$BACKEND_ADMIN \
	"$tmp/lakegate" run --config Caddyfile >"$tmp/backend.log" 2>&1 &
backend_pid=$!

UPSTREAM_URL=http://127.0.0.1:$BACKEND_PORT UPSTREAM_WAREHOUSE=local \
LAKEGATE_ADDR=127.0.0.1:$GATEWAY_PORT LAKEGATE_BIND=127.0.0.1 \
LAKEGATE_DATA="$tmp/gateway" LAKEGATE_ADMIN_PORT=$GATEWAY_ADMIN \
	"$tmp/lakegate" run --config examples/remote/Caddyfile >"$tmp/gateway.log" 2>&1 &
gateway_pid=$!

backend=http://127.0.0.1:$BACKEND_PORT
gateway=http://127.0.0.1:$GATEWAY_PORT
"$tmp/loadgen" -wait -url "$backend" -timeout 60s || fail "backend did not come up"
"$tmp/loadgen" -wait -url "$gateway" -timeout 60s || fail "gateway did not come up"
kill -0 "$backend_pid" 2>/dev/null || fail "backend exited"
kill -0 "$gateway_pid" 2>/dev/null || fail "gateway exited"

echo "creating bench.events with $SNAPSHOTS snapshots on the backend ..." >&2
"$tmp/loadgen" -setup -url "$backend" -prefix local -snapshots "$SNAPSHOTS" || fail "setup failed"

# cpu_ticks PID: user+system CPU clock ticks the process used so far
# (Linux /proc; empty elsewhere).
cpu_ticks() {
	if [ -r "/proc/$1/stat" ]; then
		local stat
		stat=$(<"/proc/$1/stat")
		stat=${stat##*) } # past "pid (comm) "
		# shellcheck disable=SC2086
		set -- $stat
		echo $((${12} + ${13})) # utime, stime (fields 14, 15 of the line)
	fi
}
clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)

mkdir -p "$tmp/results"
if [ -n "${PROFILE_DIR:-}" ]; then
	mkdir -p "$PROFILE_DIR"
fi
for round in $(seq "$ROUNDS"); do
	for target in direct gateway; do
		if [ "$target" = direct ]; then url=$backend prefix=local; else url=$gateway prefix=remote; fi
		echo "round $round/$ROUNDS: $target ($CONCURRENCY workers, $WARMUP warm-up, $DURATION measured) ..." >&2
		"$tmp/loadgen" -url "$url" -prefix "$prefix" -concurrency "$CONCURRENCY" \
			-duration "$WARMUP" -warmup 0 >/dev/null || fail "$target warm-up failed"
		prof_pid=""
		if [ -n "${PROFILE_DIR:-}" ]; then
			# the process serving this target: backend for direct, gateway for gateway
			if [ "$target" = direct ]; then admin=$BACKEND_ADMIN; else admin=$GATEWAY_ADMIN; fi
			go tool pprof -proto -seconds "$PROFILE_SECONDS" -output "$PROFILE_DIR/$target-$round.pb.gz" \
				"http://localhost:$admin/debug/pprof/profile" >/dev/null 2>&1 &
			prof_pid=$!
		fi
		b0=$(cpu_ticks "$backend_pid") g0=$(cpu_ticks "$gateway_pid")
		"$tmp/loadgen" -url "$url" -prefix "$prefix" -concurrency "$CONCURRENCY" \
			-duration "$DURATION" -warmup 0 >"$tmp/results/$target-$round.json" ||
			fail "$target load failed"
		b1=$(cpu_ticks "$backend_pid") g1=$(cpu_ticks "$gateway_pid")
		if [ -n "$prof_pid" ]; then
			wait "$prof_pid" || echo "run.sh: profile $target-$round failed" >&2
		fi
		if [ -n "$b0" ] && [ -n "$b1" ] && [ -n "$g0" ] && [ -n "$g1" ]; then
			echo "$((b1 - b0)) $((g1 - g0)) $clk_tck" >"$tmp/results/cpu-$target-$round.txt"
		fi
		echo "  $(cat "$tmp/results/$target-$round.json")" >&2
	done
done

echo
echo "LoadTable, $SNAPSHOTS snapshots, $CONCURRENCY closed-loop workers, $ROUNDS × $DURATION per target" \
	"(alternating), gateway cache max_age $LAKEGATE_CACHE_MAX_AGE," \
	"$(nproc 2>/dev/null || echo '?') cores, $(go version | cut -d' ' -f3)"
echo
"$tmp/loadgen" -summarize "$tmp/results"
