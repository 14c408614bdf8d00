#!/usr/bin/env bash
# Cost-growth curves (issue 26): three in-process Go benchmarks measured
# at growing sizes, and one log-log plot of each, per-op time and bytes
# allocated, one line per variant. BENCHMARKS.md's "Cost-growth curves"
# section reads them.
#
#   bash examples/bench/curves.sh                  # all three, about 10 minutes
#   CURVES=policy bash examples/bench/curves.sh    # one of them
#   PLOT_ONLY=1 bash examples/bench/curves.sh      # redraw from OUT's outputs
#
#   loadtable  BenchmarkLoadTableCurve (modules/gateway): LoadTable of 10 KB
#              to 10 MB of metadata; direct, miss, l1, not-modified,
#              revalidated, l2
#   sharing    BenchmarkSharingQueryCurve (modules/gateway): a Delta Sharing
#              query of 1k, 10k, 100k data files; planning local and auto
#   policy     BenchmarkDecideCurve (policies): a first decision with 10 to
#              10,000 principals, rules or groups, and the policy's load time
#
# Environment:
#   CURVES              which curves (default: loadtable sharing policy)
#   COUNT               runs of each benchmark; the plot takes the median (3)
#   LOADTABLE_BENCHTIME -benchtime of the LoadTable curve (20x)
#   SHARING_BENCHTIME   -benchtime of the sharing curve (5x)
#   POLICY_BENCHTIME    -benchtime of the policy curve (1s)
#   OUT                 where the raw `go test` outputs go
#                       (default: $INTEROP_CACHE/curves)
#   PLOTS               where the PNGs go (default: the repository root,
#                       next to BENCHMARKS.md)
#   LAKEGATE_TEST_REDIS the L2 Redis. Unset: a redis-server on 127.0.0.1:
#                       REDIS_PORT (6390) is used, started (and stopped at
#                       the end) by this script if none answers there and
#                       redis-server is installed; without one the
#                       benchmark falls back to an in-process miniredis.
#
# Plotting needs python3 (venv); matplotlib, pinned in
# curves-requirements.txt, is installed into $INTEROP_CACHE/venv-curves
# (default ~/.cache/lakegate-interop). All traffic stays on 127.0.0.1.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${INTEROP_CACHE:-$HOME/.cache/lakegate-interop}
CURVES=${CURVES:-loadtable sharing policy}
COUNT=${COUNT:-3}
LOADTABLE_BENCHTIME=${LOADTABLE_BENCHTIME:-20x}
SHARING_BENCHTIME=${SHARING_BENCHTIME:-5x}
POLICY_BENCHTIME=${POLICY_BENCHTIME:-1s}
OUT=${OUT:-$CACHE/curves}
PLOTS=${PLOTS:-$REPO}
REDIS_PORT=${REDIS_PORT:-6390}
mkdir -p "$OUT" "$PLOTS"

redis_pid=
cleanup() {
	if [ -n "$redis_pid" ]; then
		kill "$redis_pid" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# answers PORT: something on 127.0.0.1:PORT answers a Redis PING.
answers() {
	local reply
	exec 3<>"/dev/tcp/127.0.0.1/$1" 2>/dev/null || return 1
	printf 'PING\r\n' >&3
	read -r -t 2 reply <&3 || true
	exec 3<&- 3>&-
	[[ $reply == +PONG* ]]
}

need_redis() {
	[ -n "${LAKEGATE_TEST_REDIS:-}" ] && return
	if ! answers "$REDIS_PORT"; then
		if ! command -v redis-server >/dev/null; then
			echo "curves: no redis-server (apt-get install redis-server): L2 is measured against miniredis" >&2
			return
		fi
		redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
			--pidfile "$OUT/redis.pid" --logfile "$OUT/redis.log"
		for _ in $(seq 50); do
			answers "$REDIS_PORT" && break
			sleep 0.1
		done
		redis_pid=$(cat "$OUT/redis.pid")
	fi
	export LAKEGATE_TEST_REDIS=redis://127.0.0.1:$REDIS_PORT/0
}

# bench NAME PACKAGE REGEX BENCHTIME: runs one curve into $OUT/NAME.txt.
bench() {
	local name=$1 pkg=$2 re=$3 benchtime=$4
	echo "curves: $name ($re, -benchtime $benchtime -count $COUNT)" >&2
	{
		echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')" \
			"$(go version | cut -d' ' -f3-4), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "# go test $pkg -run '^\$' -bench '$re' -benchmem -benchtime $benchtime -count $COUNT${LAKEGATE_TEST_REDIS:+ (LAKEGATE_TEST_REDIS=$LAKEGATE_TEST_REDIS)}"
		(cd "$REPO" && go test "$pkg" -run '^$' -bench "$re" -benchmem -benchtime "$benchtime" -count "$COUNT" -timeout 120m)
		echo "# done $(date -u +%Y-%m-%dT%H:%M:%SZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
	} | tee "$OUT/$name.txt.part"
	mv "$OUT/$name.txt.part" "$OUT/$name.txt"
}

if [ -z "${PLOT_ONLY:-}" ]; then
	for curve in $CURVES; do
		case $curve in
		loadtable)
			need_redis
			bench loadtable ./modules/gateway '^BenchmarkLoadTableCurve$' "$LOADTABLE_BENCHTIME"
			;;
		sharing) bench sharing ./modules/gateway '^BenchmarkSharingQueryCurve$' "$SHARING_BENCHTIME" ;;
		policy) bench policy ./policies '^BenchmarkDecideCurve$' "$POLICY_BENCHTIME" ;;
		*)
			echo "curves: unknown curve $curve (loadtable, sharing, policy)" >&2
			exit 2
			;;
		esac
	done
fi

# The plotting venv, rebuilt when the requirements change.
req=$HERE/curves-requirements.txt
venv=$CACHE/venv-curves
sum=$(sha256sum "$req" | cut -c1-16)
if [ "$(cat "$venv/.complete" 2>/dev/null)" != "$sum" ]; then
	rm -rf "$venv"
	python3 -m venv "$venv"
	"$venv/bin/python" -m pip install -q --cache-dir "$CACHE/pip" -r "$req"
	echo "$sum" >"$venv/.complete"
fi
inputs=()
for curve in $CURVES; do
	[ -e "$OUT/$curve.txt" ] && inputs+=("$curve=$OUT/$curve.txt")
done
[ ${#inputs[@]} -gt 0 ] || {
	echo "curves: no outputs in $OUT to plot" >&2
	exit 1
}
"$venv/bin/python" "$HERE/curves_plot.py" --out "$PLOTS" "${inputs[@]}"
