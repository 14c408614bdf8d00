#!/usr/bin/env bash
# What lakegate costs over the proxy it is built on: a plain proxied
# LoadTable through lakegate (a remote catalog, no cache, no idempotency:
# examples/bench/lakegate-nocache.Caddyfile) against stock Caddy's
# reverse_proxy run by the same binary (caddy-reverse-proxy.Caddyfile), in
# front of the same backend, a Go server answering from memory
# (`loadgen -serve`), at two answer sizes; and lakegate's L1 hits
# (examples/remote/Caddyfile, max_age 1h) against that memory server itself.
# With BASE=REV the lakegate built from revision REV runs beside this
# tree's in the same rounds ("before" and "after" of one run).
#
#   bash examples/bench/proxy-cost.sh
#   ROUNDS=5 DURATION=20s BASE=7d06e17 bash examples/bench/proxy-cost.sh
#   OUT=/tmp/cost.tsv bash examples/bench/proxy-cost.sh     # keep the raw figures
#   PROFILE_DIR=/tmp/prof bash examples/bench/proxy-cost.sh   # CPU profiles
#   go tool pprof -top /tmp/prof/lg-small-1.pb.gz             # of each Caddy run
#   TARGETS=l1 PIN=1 ROUNDS=7 BASE=37f689b bash examples/bench/proxy-cost.sh
#
# The answers: table bench.events with SNAPSHOTS snapshots, created on the
# root Caddyfile's embedded catalog (about 21 KB with 22), served as is by
# mem-small and grown with repeated snapshots to LARGE bytes by mem-large.
# Per run: CPU per request of the proxy process (user+system from /proc
# over the measured window, divided by the requests) and requests per
# second; per large-answer proxy, its peak RSS (VmHWM) at the end, after
# LARGE_CONCURRENCY concurrent loads. Rounds alternate the order of runs;
# a ratio is the median over rounds of the ratio within each round.
# TARGETS (default "small large l1") picks the comparisons: small (20 KB
# through lakegate and stock Caddy), large (the same at LARGE bytes), l1
# (L1 hits against the memory server). PIN=1 runs the load generator on
# CPU 0 and every server on CPU 1 (taskset; Go sizes GOMAXPROCS to the
# CPUs it may use), so the client's CPU never competes with the server's:
# the same for every run, baseline and lakegate alike.
# Needs Linux (/proc), Go, python3 (and taskset for PIN). Ports
# (127.0.0.1): PORT_BASE (default 18280) to PORT_BASE+19.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
SNAPSHOTS=${SNAPSHOTS:-22}
LARGE=${LARGE:-10000000}
CONCURRENCY=${CONCURRENCY:-16}
LARGE_CONCURRENCY=${LARGE_CONCURRENCY:-32}
BASE=${BASE:-}
TARGETS=${TARGETS:-small large l1}
PORT_BASE=${PORT_BASE:-18280}
PIN=${PIN:-}

cd "$(dirname "$0")/../.."
. examples/bench/lib.sh
repo=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lakegate-cost.XXXXXX")
declare -A pid=() port=() admin=()
procs=()
cleanup() {
	local p
	for p in "${procs[@]}"; do kill "${pid[$p]}" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -z "$BASE" ] || git -C "$repo" worktree remove --force "$tmp/base" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "proxy-cost.sh: $1" >&2
	[ -z "${2:-}" ] || tail -n 20 "$tmp/$2.log" >&2
	exit 1
}

want_small="" want_large="" want_l1=""
for t in ${TARGETS//,/ }; do
	case $t in
	small) want_small=1 ;;
	large) want_large=1 ;;
	l1) want_l1=1 ;;
	*) fail "unknown target $t in TARGETS (small, large, l1)" ;;
	esac
done
[ -n "$want_small$want_large$want_l1" ] || fail "TARGETS is empty"
load_cpu=() serve_cpu=()
if [ -n "$PIN" ]; then
	command -v taskset >/dev/null || fail "PIN needs taskset (util-linux)"
	[ "$(nproc)" -ge 2 ] || fail "PIN needs two CPUs"
	load_cpu=(taskset -c 0) serve_cpu=(taskset -c 1)
fi

echo "building into $tmp ..." >&2
go build -o "$tmp/lakegate" ./caddy
go build -o "$tmp/loadgen" ./examples/bench/loadgen
if [ -n "$BASE" ]; then
	git -C "$repo" worktree add -q --detach "$tmp/base" "$BASE"
	(cd "$tmp/base" && go build -o "$tmp/lakegate-base" ./caddy)
fi

b=$PORT_BASE
port=([backend]=$((b + 1)) [mem-small]=$((b + 2)) [mem-large]=$((b + 3))
	[caddy-small]=$((b + 4)) [caddy-large]=$((b + 5)) [lg-small]=$((b + 6)) [lg-large]=$((b + 7))
	[base-small]=$((b + 8)) [base-large]=$((b + 9)) [lg-l1]=$((b + 10)) [base-l1]=$((b + 11)))
admin=([backend]=$((b + 12)) [caddy-small]=$((b + 13)) [caddy-large]=$((b + 14)) [lg-small]=$((b + 15))
	[lg-large]=$((b + 16)) [base-small]=$((b + 17)) [base-large]=$((b + 18)) [lg-l1]=$((b + 19)) [base-l1]=$b)
for p in "${port[@]}" "${admin[@]}"; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then fail "port $p is in use"; fi
done
export XDG_CONFIG_HOME="$tmp/xdg-config" XDG_DATA_HOME="$tmp/xdg-data"
unset LAKEGATE_REDIS LAKEGATE_CACHE_MAX_AGE UPSTREAM_URL UPSTREAM_WAREHOUSE

url_of() { echo "http://127.0.0.1:${port[$1]}"; }
start() { # NAME COMMAND...
	local name=$1
	shift
	"${serve_cpu[@]}" "$@" >"$tmp/$name.log" 2>&1 &
	pid[$name]=$!
	procs+=("$name")
}
up() { "$tmp/loadgen" -wait -url "$(url_of "$1")" -timeout 60s >/dev/null 2>&1 || fail "$1 did not come up" "$1"; }
gateway() { # NAME BINARY CONFIG UPSTREAM [VAR=VALUE...]
	local name=$1 bin=$2 config=$3 upstream=$4
	shift 4
	start "$name" env "$@" UPSTREAM_URL="$upstream" UPSTREAM_WAREHOUSE=local \
		LAKEGATE_ADDR="127.0.0.1:${port[$name]}" LAKEGATE_BIND=127.0.0.1 \
		LAKEGATE_DATA="$tmp/$name" LAKEGATE_ADMIN_PORT="${admin[$name]}" "$bin" run --config "$config"
}

gateway backend "$tmp/lakegate" Caddyfile ""
up backend
"$tmp/loadgen" -setup -url "$(url_of backend)" -prefix local -snapshots "$SNAPSHOTS" >/dev/null ||
	fail "setup failed" backend
table=$(url_of backend)/v1/local/namespaces/bench/tables/events
start mem-small "$tmp/loadgen" -serve "127.0.0.1:${port[mem-small]}" -from "$table"
up mem-small
if [ -n "$want_large" ]; then
	start mem-large "$tmp/loadgen" -serve "127.0.0.1:${port[mem-large]}" -from "$table" -inflate "$LARGE"
	up mem-large
fi

# gateway runs: NAME CONFIG UPSTREAM [VAR=VALUE...], of this tree's binary
# and, with BASE, of the base's (NAME with base- for lg-)
runs=()
nocache=examples/bench/lakegate-nocache.Caddyfile
both() {
	local name=$1
	shift
	gateway "$name" "$tmp/lakegate" "$@"
	runs+=("$name")
	if [ -n "$BASE" ]; then
		gateway "base-${name#lg-}" "$tmp/lakegate-base" "$@"
		runs+=("base-${name#lg-}")
	fi
}
[ -z "$want_small$want_l1" ] || runs+=(mem-small)
if [ -n "$want_small" ]; then
	gateway caddy-small "$tmp/lakegate" examples/bench/caddy-reverse-proxy.Caddyfile "$(url_of mem-small)"
	runs+=(caddy-small)
	both lg-small "$nocache" "$(url_of mem-small)"
fi
if [ -n "$want_large" ]; then
	gateway caddy-large "$tmp/lakegate" examples/bench/caddy-reverse-proxy.Caddyfile "$(url_of mem-large)"
	runs+=(caddy-large)
	both lg-large "$nocache" "$(url_of mem-large)"
fi
[ -z "$want_l1" ] || both lg-l1 examples/remote/Caddyfile "$(url_of mem-small)" LAKEGATE_CACHE_MAX_AGE=1h
for r in "${runs[@]}"; do up "$r"; done

results=$tmp/results.tsv
for round in $(seq "$ROUNDS"); do
	mapfile -t order < <(round_order "$round" "${runs[@]}")
	for run in "${order[@]}"; do
		prefix=local conc=$CONCURRENCY
		[[ $run != lg-* && $run != base-* ]] || prefix=remote
		[[ $run != *-large ]] || conc=$LARGE_CONCURRENCY
		args=(-url "$(url_of "$run")" -prefix "$prefix" -concurrency "$conc" -warmup 0)
		"${load_cpu[@]}" "$tmp/loadgen" "${args[@]}" -duration "$WARMUP" >/dev/null || fail "$run warm-up failed" "$run"
		prof=""
		if [ -n "${PROFILE_DIR:-}" ] && [ -n "${admin[$run]:-}" ]; then
			mkdir -p "$PROFILE_DIR"
			curl -s -o "$PROFILE_DIR/$run-$round.pb.gz" \
				"http://localhost:${admin[$run]}/debug/pprof/profile?seconds=${PROFILE_SECONDS:-3}" &
			prof=$!
		fi
		t0=$(cpu_ticks "${pid[$run]}")
		out=$("${load_cpu[@]}" "$tmp/loadgen" "${args[@]}" -duration "$DURATION") || fail "$run load failed" "$run"
		t1=$(cpu_ticks "${pid[$run]}")
		[ -z "$prof" ] || wait "$prof"
		echo "round $round: $run $out" >&2
		printf '%s\t%s\t%s\t%s\n' "$run" "$round" "$((t1 - t0))" "$out" >>"$results"
	done
done
for run in "${runs[@]}"; do
	printf '%s\trss\t%s\n' "$run" "$(sed -n 's/^VmHWM:[[:space:]]*//p' "/proc/${pid[$run]}/status")" >>"$results"
done

[ -z "${OUT:-}" ] || cp "$results" "$OUT" # the raw figures, for the record
echo
echo "LoadTable, $ROUNDS × $DURATION per run, $(nproc) cores${PIN:+ (load generator pinned to CPU 0, servers to CPU 1)}, $(go version | cut -d' ' -f3);" \
	"small answer: $SNAPSHOTS snapshots, large: ≥ $LARGE bytes; $CONCURRENCY workers ($LARGE_CONCURRENCY on large)"
python3 - "$results" "$(getconf CLK_TCK)" "$BASE" <<'EOF'
import json, statistics, sys
path, hz, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cpu, rps, rss, size = {}, {}, {}, {}  # cpu and rps: run -> round -> figure
for line in open(path):
    f = line.rstrip("\n").split("\t")
    if f[1] == "rss":
        rss[f[0]] = f[2]
        continue
    r = json.loads(f[3])
    cpu.setdefault(f[0], {})[f[1]] = int(f[2]) / hz / max(r["requests"], 1) * 1e6
    rps.setdefault(f[0], {})[f[1]] = r["rps"]
    size[f[0]] = r["bytes"] // max(r["requests"], 1)
med = lambda d, k: statistics.median(d[k].values())
print()
print("| run | answer bytes | CPU µs/request (median) | rps (median) | peak RSS |")
print("| --- | ---: | ---: | ---: | ---: |")
for k in cpu:
    print(f"| {k} | {size[k]:,} | {med(cpu, k):,.0f} | {med(rps, k):,.0f} | {rss.get(k, '')} |")
print()
print("| ratio (median over rounds of the ratio within a round) | median | rounds |")
print("| --- | ---: | --- |")
pairs = [("CPU/request lakegate ÷ stock Caddy, small", cpu, "lg-small", "caddy-small"),
         ("CPU/request lakegate ÷ stock Caddy, large", cpu, "lg-large", "caddy-large"),
         ("rps L1 hit ÷ memory server", rps, "lg-l1", "mem-small")]
if base:
    pairs += [(f"CPU/request {base} ÷ stock Caddy, small", cpu, "base-small", "caddy-small"),
              (f"CPU/request {base} ÷ stock Caddy, large", cpu, "base-large", "caddy-large"),
              (f"rps L1 hit at {base} ÷ memory server", rps, "base-l1", "mem-small")]
for label, d, a, b in pairs:
    if a not in d or b not in d:
        continue  # not among TARGETS
    per = [d[a][r] / d[b][r] for r in sorted(d[a]) if r in d[b]]
    print(f"| {label} | {statistics.median(per):.2f}× | {', '.join(f'{x:.2f}' for x in per)} |")
EOF
