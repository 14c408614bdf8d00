#!/usr/bin/env bash
# LoadTable through lakegate and through other proxies and servers in
# front of THE SAME backend, each target as a ratio against a baseline
# measured in the same run. Needs Go and, for the proxy and revalidate
# targets, nginx (Debian: apt-get install nginx-light); the l2 target
# needs a Redis at REDIS_URL (run.sh does not start one; without one it
# skips l2 and says why), bash 4 or later; CPU figures need Linux
# (/proc). All traffic stays on 127.0.0.1.
#
# The backend, behind everything: lakegate on the root Caddyfile
# (embedded catalog `local`) at 127.0.0.1:18181, which gives LoadTable a
# weak ETag and answers If-None-Match with 304. A table bench.events with
# SNAPSHOTS snapshots is created on it.
#
# Targets (TARGETS, default all) and what each is measured against:
#
#   proxy       lakegate on examples/bench/lakegate-nocache.Caddyfile
#               (examples/remote/Caddyfile without cache and idempotency:
#               every load goes to the backend) at :18182, against
#                 direct  the backend itself
#                 nginx   nginx proxy_pass at :18104 (upstream keepalive,
#                         HTTP/1.1, Connection "", access_log off,
#                         worker_processes NGINX_WORKERS, default auto)
#                 caddy   stock Caddy reverse_proxy at :18101
#                         (examples/bench/caddy-reverse-proxy.Caddyfile)
#               goal: rps ≥ 0.95× nginx's, CPU/request ≤ 1.5× nginx's.
#   revalidate  lakegate on examples/remote/Caddyfile as shipped with
#               LAKEGATE_CACHE_MAX_AGE=0s: every load revalidates with the
#               backend. Twice:
#                 reval         at :18183 → the backend (ETags: 304s),
#                               against nginx (:18104 → the backend)
#                 reval-noetag  at :18184 → a backend WITHOUT ETags,
#                               against nginx-noetag (nginx :18105 → the
#                               same). That backend is a stock Caddy at
#                               :18102 (examples/bench/strip-etag.Caddyfile:
#                               reverse_proxy to the backend with
#                               header_down -ETag), so lakegate fetches
#                               every LoadTable in full and both sides
#                               pay for the extra hop alike.
#               goal: rps ≥ 0.9× nginx's in each case.
#   l1          lakegate on examples/remote/Caddyfile with max_age 1h at
#               :18185 (every load after the first an L1 hit), against
#               mem: `loadgen -serve` at :18103, a plain net/http server
#               answering every GET with the backend's LoadTable answer
#               (body, Content-Type, ETag) fetched once, from memory.
#               goal: rps ≥ 0.8× mem's.
#   l2          lakegate on examples/bench/lakegate-l2.Caddyfile at :18186:
#               Redis at REDIS_URL as L2, max_age 1h, and the app-wide
#               `cache { max_bytes 1 }` so L1 never holds an entry: every
#               load after the first is an L2 hit. run.sh drops the table's
#               entry from that Redis first (it would be an earlier run's),
#               then checks the first load says `Lakegate-Cache: miss` and
#               the next `hit-l2`. Against direct. goal: rps ≥ 10× direct's.
#
# Every lakegate run counts its answers by Lakegate-Cache (none, miss,
# revalidated, hit-l1, hit-l2, stale); an answer not the one the target
# is about (proxy: none, reval: revalidated, reval-noetag: miss, l1:
# hit-l1, l2: hit-l2) makes the target's "met?" a no.
#
# ROUNDS rounds: in each, every run the targets need gets an unmeasured
# WARMUP, then DURATION of closed-loop GETs from CONCURRENCY workers; the
# order is reversed every other round so drift affects all runs alike.
# CPU per request is the user+system time (Linux /proc) each process
# (nginx: master and workers) used in the measured window over the
# requests: it depends much less than rps on what else the machine runs.
# Prints one markdown table of the targets, then the proxies side by side,
# every run's medians and every round.
#
#   bash examples/bench/run.sh
#   ROUNDS=1 DURATION=3s WARMUP=1s TARGETS=proxy,l1 bash examples/bench/run.sh
#   ROUNDS=5 DURATION=20s CONCURRENCY=32 bash examples/bench/run.sh
#   PROFILE_DIR=/tmp/prof bash examples/bench/run.sh
#   go tool pprof -top /tmp/prof/proxy-1.pb.gz
#
# Ports (127.0.0.1): backend 18181 (admin 18191); lakegate proxy 18182
# (18192), reval 18183 (18193), reval-noetag 18184 (18194), l1 18185
# (18195), l2 18186 (18196); stock Caddy 18101 (18111), ETag-stripping
# Caddy 18102 (18112); mem 18103; nginx 18104 and 18105.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONCURRENCY=${CONCURRENCY:-16}
SNAPSHOTS=${SNAPSHOTS:-32}
WARMUP=${WARMUP:-2s}
# TARGETS: any of proxy revalidate l1 l2, comma- or space-separated.
TARGETS=${TARGETS:-proxy revalidate l1 l2}
# REDIS_URL: the l2 target's Redis (loopback only); l2 is skipped, with
# the reason, when it does not answer PING.
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
# NGINX_WORKERS: nginx's worker_processes (auto: one per core, as the Go
# processes use every core).
NGINX_WORKERS=${NGINX_WORKERS:-auto}
# PROFILE_DIR=dir: also take a CPU profile (PROFILE_SECONDS, within each
# measured window) of the Caddy process serving each run (lakegate or
# stock Caddy; not nginx or mem), through its Caddy admin endpoint:
# dir/RUN-N.pb.gz (direct-N: the backend).
PROFILE_SECONDS=${PROFILE_SECONDS:-5}

cd "$(dirname "$0")/../.."
. examples/bench/lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lakegate-bench.XXXXXX")
declare -A pid=() port=() admin=()
procs=() # started, in order
watch=() # whose CPU is measured: procs, and a Redis on this machine
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
	local i
	for ((i = ${#procs[@]} - 1; i >= 0; i--)); do
		stop "${pid[${procs[$i]}]}"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# fail MESSAGE [PROCESS...]: the message, then the tails of the logs of
# the processes named and of every started process that exited.
fail() {
	local msg=$1 p
	shift
	echo "run.sh: $msg" >&2
	for p in "${procs[@]}"; do
		if [[ " $* " == *" $p "* ]] || ! kill -0 "${pid[$p]}" 2>/dev/null; then
			if [ -s "$tmp/$p.log" ]; then
				echo "--- tail of $p.log" >&2
				tail -n 20 "$tmp/$p.log" >&2
			fi
		fi
	done
	exit 1
}

# --- which runs the targets need
want_proxy="" want_reval="" want_l1="" want_l2=""
for t in ${TARGETS//,/ }; do
	case $t in
	proxy) want_proxy=1 ;;
	revalidate) want_reval=1 ;;
	l1) want_l1=1 ;;
	l2) want_l2=1 ;;
	*) fail "unknown target $t in TARGETS (proxy, revalidate, l1, l2)" ;;
	esac
done
[ -n "$want_proxy$want_reval$want_l1$want_l2" ] || fail "TARGETS is empty"
if [ -n "$want_proxy$want_reval" ] && ! command -v nginx >/dev/null; then
	fail "nginx not found: the proxy and revalidate targets need it (Debian: apt-get install nginx-light, or nginx), or leave them out of TARGETS"
fi

echo "building lakegate and loadgen into $tmp ..." >&2
go build -o "$tmp/lakegate" ./caddy || fail "go build ./caddy failed"
go build -o "$tmp/loadgen" ./examples/bench/loadgen || fail "go build ./examples/bench/loadgen failed"
mkdir -p "$tmp/results"

if [ -n "$want_l2" ]; then
	if redis_pid=$("$tmp/loadgen" -redis "$REDIS_URL" 2>"$tmp/redis-ping.err"); then
		# Redis's CPU counts too when it runs here (its process id from INFO).
		redis_pid=${redis_pid%%$'\n'*}
		if [ -n "$redis_pid" ] && [[ $(cat "/proc/$redis_pid/comm" 2>/dev/null) == redis* ]]; then
			pid[redis]=$redis_pid
			watch+=(redis)
		fi
	else
		why=$(<"$tmp/redis-ping.err")
		why=${why#loadgen: }
		echo "run.sh: skipping target l2: no Redis answers at $REDIS_URL ($why)" >&2
		printf 'l2\tno Redis answers at %s (%s)\n' "$REDIS_URL" "$why" >>"$tmp/results/skipped.tsv"
		want_l2=""
	fi
fi

# Runs in measuring order: name, process serving it, other processes
# whose CPU is reported (redis: when it runs on this machine), expected
# Lakegate-Cache (- for none checked), label.
all_runs=(
	"direct backend - - direct: the backend, no proxy"
	"nginx nginx backend - nginx proxy_pass (worker_processes $NGINX_WORKERS)"
	"caddy caddy backend - stock Caddy reverse_proxy"
	"proxy lg-proxy backend none lakegate remote, no cache"
	"reval lg-reval backend revalidated lakegate remote, max_age 0s"
	"nginx-noetag nginx strip,backend - nginx proxy_pass → backend without ETags"
	"reval-noetag lg-reval-noetag strip,backend miss lakegate remote, max_age 0s → backend without ETags"
	"mem mem - - Go net/http server answering from memory"
	"l1 lg-l1 backend hit-l1 lakegate remote, max_age 1h (L1)"
	"l2 lg-l2 redis,backend hit-l2 lakegate remote, Redis L2, L1 of 1 byte"
)
declare -A need=()
[ -n "$want_proxy" ] && need[direct]=1 need[nginx]=1 need[caddy]=1 need[proxy]=1
[ -n "$want_reval" ] && need[nginx]=1 need[reval]=1 need[nginx-noetag]=1 need[reval-noetag]=1
[ -n "$want_l1" ] && need[mem]=1 need[l1]=1
[ -n "$want_l2" ] && need[direct]=1 need[l2]=1
runs=()
declare -A front=() expect=()
declare -A needproc=([backend]=1)
for line in "${all_runs[@]}"; do
	read -r name fr others exp label <<<"$line"
	[ -n "${need[$name]:-}" ] || continue
	runs+=("$name")
	front[$name]=$fr expect[$name]=$exp
	needproc[$fr]=1
	for p in ${others//,/ }; do
		[ "$p" = - ] || [ "$p" = redis ] || needproc[$p]=1
	done
	printf '%s\t%s\t%s\t%s\n' "$name" "$fr" "$others" "$label" >>"$tmp/results/runs.tsv"
done
[ ${#runs[@]} -gt 0 ] || fail "nothing left to measure"

port=([backend]=18181 [lg-proxy]=18182 [lg-reval]=18183 [lg-reval-noetag]=18184 [lg-l1]=18185 [lg-l2]=18186
	[caddy]=18101 [strip]=18102 [mem]=18103 [nginx]=18104)
admin=([backend]=18191 [lg-proxy]=18192 [lg-reval]=18193 [lg-reval-noetag]=18194 [lg-l1]=18195 [lg-l2]=18196
	[caddy]=18111 [strip]=18112)
NGINX_NOETAG_PORT=18105
ports=()
for p in "${!needproc[@]}"; do
	ports+=("${port[$p]}")
	[ -z "${admin[$p]:-}" ] || ports+=("${admin[$p]}")
done
[ -z "${needproc[nginx]:-}" ] || ports+=("$NGINX_NOETAG_PORT")
for p in "${ports[@]}"; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		fail "port $p on 127.0.0.1 is already in use"
	fi
done

# Caddy keeps autosaved config and state under XDG dirs: keep them in tmp.
export XDG_CONFIG_HOME="$tmp/xdg-config" XDG_DATA_HOME="$tmp/xdg-data"
# Shared state stays in memory except where a target sets Redis.
unset LAKEGATE_REDIS LAKEGATE_CACHE_MAX_AGE UPSTREAM_URL UPSTREAM_WAREHOUSE

backend=http://127.0.0.1:${port[backend]}
url_of() { echo "http://127.0.0.1:${port[$1]}"; }

# start NAME COMMAND...: run it in the background, logging to tmp/NAME.log.
start() {
	local name=$1
	shift
	"$@" >"$tmp/$name.log" 2>&1 &
	pid[$name]=$!
	procs+=("$name")
	watch+=("$name")
}
# up NAME [URL]: wait until it answers GET /v1/config.
up() {
	"$tmp/loadgen" -wait -url "${2:-$(url_of "$1")}" -timeout 60s >/dev/null 2>&1 ||
		fail "$1 did not come up" "$1"
	kill -0 "${pid[$1]}" 2>/dev/null || fail "$1 exited" "$1"
}
# caddy_at NAME CONFIG UPSTREAM [VAR=VALUE...]: the lakegate binary (a
# Caddy) on CONFIG at NAME's ports, in front of UPSTREAM.
caddy_at() {
	local name=$1 config=$2 upstream=$3
	shift 3
	start "$name" env "$@" UPSTREAM_URL="$upstream" UPSTREAM_WAREHOUSE=local \
		LAKEGATE_ADDR="127.0.0.1:${port[$name]}" LAKEGATE_BIND=127.0.0.1 \
		LAKEGATE_DATA="$tmp/$name" LAKEGATE_ADMIN_PORT="${admin[$name]}" \
		"$tmp/lakegate" run --config "$config"
}

caddy_at backend Caddyfile ""
up backend
echo "creating bench.events with $SNAPSHOTS snapshots on the backend ..." >&2
"$tmp/loadgen" -setup -url "$backend" -prefix local -snapshots "$SNAPSHOTS" || fail "setup failed" backend
backend_etag=$("$tmp/loadgen" -probe -url "$backend" -prefix local | sed -n 's/^Etag: //p') ||
	fail "LoadTable on the backend failed" backend
if [ -n "${needproc[lg-reval]:-}" ] && [ -z "$backend_etag" ]; then
	echo "run.sh: the backend sends no ETag on LoadTable: reval measures full fetches, not 304s" >&2
fi

if [ -n "${needproc[strip]:-}" ]; then
	caddy_at strip examples/bench/strip-etag.Caddyfile "$backend"
fi
if [ -n "${needproc[caddy]:-}" ]; then
	caddy_at caddy examples/bench/caddy-reverse-proxy.Caddyfile "$backend"
fi
if [ -n "${needproc[nginx]:-}" ]; then
	mkdir -p "$tmp/nginx"
	user_line=""
	# As root, nginx would run its workers as nobody: keep the current user.
	[ "$(id -u)" != 0 ] || user_line="user $(id -un) $(id -gn);"
	cat >"$tmp/nginx/nginx.conf" <<-EOF
		$user_line
		worker_processes $NGINX_WORKERS;
		error_log stderr warn;
		pid $tmp/nginx/nginx.pid;
		events {
		    worker_connections 1024;
		}
		http {
		    access_log off;
		    client_body_temp_path $tmp/nginx/client_body;
		    proxy_temp_path $tmp/nginx/proxy;
		    fastcgi_temp_path $tmp/nginx/fastcgi;
		    uwsgi_temp_path $tmp/nginx/uwsgi;
		    scgi_temp_path $tmp/nginx/scgi;
		    # never spool an answer to disk
		    proxy_max_temp_file_size 0;
		    proxy_http_version 1.1;
		    proxy_set_header Connection "";
		    upstream backend {
		        server 127.0.0.1:${port[backend]};
		        keepalive 64;
		    }
		    upstream noetag {
		        server 127.0.0.1:${port[strip]};
		        keepalive 64;
		    }
		    # The Host the upstream's Caddy site answers (another gets an empty 200).
		    server {
		        listen 127.0.0.1:${port[nginx]};
		        location / {
		            proxy_pass http://backend;
		            proxy_set_header Host 127.0.0.1:${port[backend]};
		        }
		    }
		    server {
		        listen 127.0.0.1:$NGINX_NOETAG_PORT;
		        location / {
		            proxy_pass http://noetag;
		            proxy_set_header Host 127.0.0.1:${port[strip]};
		        }
		    }
		}
	EOF
	start nginx nginx -e stderr -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;'
fi
if [ -n "${needproc[lg-proxy]:-}" ]; then
	caddy_at lg-proxy examples/bench/lakegate-nocache.Caddyfile "$backend"
fi
if [ -n "${needproc[lg-reval]:-}" ]; then
	caddy_at lg-reval examples/remote/Caddyfile "$backend" LAKEGATE_CACHE_MAX_AGE=0s
fi
if [ -n "${needproc[lg-reval-noetag]:-}" ]; then
	caddy_at lg-reval-noetag examples/remote/Caddyfile "$(url_of strip)" LAKEGATE_CACHE_MAX_AGE=0s
fi
if [ -n "${needproc[lg-l1]:-}" ]; then
	caddy_at lg-l1 examples/remote/Caddyfile "$backend" LAKEGATE_CACHE_MAX_AGE=1h
fi
if [ -n "${needproc[lg-l2]:-}" ]; then
	# An entry an earlier run left in Redis would answer this run's loads.
	"$tmp/loadgen" -redis "$REDIS_URL" -forget-table -prefix remote >/dev/null ||
		fail "could not drop bench.events from lakegate's L2 cache in $REDIS_URL"
	caddy_at lg-l2 examples/bench/lakegate-l2.Caddyfile "$backend" LAKEGATE_CACHE_MAX_AGE=1h \
		LAKEGATE_REDIS="$REDIS_URL"
fi
if [ -n "${needproc[mem]:-}" ]; then
	start mem "$tmp/loadgen" -serve "127.0.0.1:${port[mem]}" -from "$backend/v1/local/namespaces/bench/tables/events"
fi
for p in "${procs[@]}"; do
	case $p in
	backend) ;;
	nginx)
		up nginx
		[ -z "${need[nginx-noetag]:-}" ] || up nginx "http://127.0.0.1:$NGINX_NOETAG_PORT"
		;;
	*) up "$p" ;;
	esac
done

# probe NAME: the curl-style answer of one LoadTable through NAME's port.
probe() {
	local pfx=local
	[[ $1 != lg-* ]] || pfx=remote
	"$tmp/loadgen" -probe -url "$(url_of "$1")" -prefix "$pfx" || fail "LoadTable through $1 failed" "$1"
}
header() { sed -n "s/^$1: //p"; } # HEADER (Go's canonical form): its value in probe's output
if [ -n "${needproc[strip]:-}" ]; then
	strip_etag=$(probe strip | header Etag)
	[ -z "$strip_etag" ] || fail "strip (examples/bench/strip-etag.Caddyfile) still sends an ETag" strip
fi
if [ -n "${needproc[lg-l2]:-}" ]; then
	first=$(probe lg-l2 | header Lakegate-Cache)
	second=$(probe lg-l2 | header Lakegate-Cache)
	if [ "$first" != miss ] || [ "$second" != hit-l2 ]; then
		fail "lg-l2 answered Lakegate-Cache '$first' then '$second', not miss then hit-l2 (L1 holding the entry? Redis not used?)" lg-l2
	fi
fi

clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
declare -A t0=()

if [ -n "${PROFILE_DIR:-}" ]; then
	mkdir -p "$PROFILE_DIR"
fi
for round in $(seq "$ROUNDS"); do
	mapfile -t order < <(round_order "$round" "${runs[@]}")
	for run in "${order[@]}"; do
		fr=${front[$run]}
		url=$(url_of "$fr") prefix=local
		[ "$run" != nginx-noetag ] || url=http://127.0.0.1:$NGINX_NOETAG_PORT
		[[ $fr != lg-* ]] || prefix=remote
		exp=()
		[ "${expect[$run]}" = - ] || exp=(-expect-cache "${expect[$run]}")
		echo "round $round/$ROUNDS: $run ($CONCURRENCY workers, $WARMUP warm-up, $DURATION measured) ..." >&2
		"$tmp/loadgen" -url "$url" -prefix "$prefix" -concurrency "$CONCURRENCY" \
			-duration "$WARMUP" -warmup 0 >/dev/null || fail "$run warm-up failed" "$fr"
		prof_pid=""
		if [ -n "${PROFILE_DIR:-}" ] && [ -n "${admin[$fr]:-}" ]; then
			go tool pprof -proto -seconds "$PROFILE_SECONDS" -output "$PROFILE_DIR/$run-$round.pb.gz" \
				"http://localhost:${admin[$fr]}/debug/pprof/profile" >/dev/null 2>&1 &
			prof_pid=$!
		fi
		for p in "${watch[@]}"; do t0[$p]=$(cpu_ticks "${pid[$p]}"); done
		"$tmp/loadgen" -url "$url" -prefix "$prefix" -concurrency "$CONCURRENCY" "${exp[@]}" \
			-duration "$DURATION" -warmup 0 >"$tmp/results/$run-$round.json" || fail "$run load failed" "$fr"
		{
			echo "hz $clk_tck"
			for p in "${watch[@]}"; do
				t1=$(cpu_ticks "${pid[$p]}")
				if [ -n "${t0[$p]}" ] && [ -n "$t1" ]; then echo "$p $((t1 - t0[$p]))"; fi
			done
		} >"$tmp/results/cpu-$run-$round.txt"
		if [ -n "$prof_pid" ]; then
			wait "$prof_pid" || echo "run.sh: profile $run-$round failed" >&2
		fi
		echo "  $(cat "$tmp/results/$run-$round.json")" >&2
	done
done

versions=$(go version | cut -d' ' -f3)
[ -z "${needproc[nginx]:-}" ] || versions+=", $(nginx -v 2>&1 | sed 's/.*: //')"
echo
echo "LoadTable, $SNAPSHOTS snapshots, $CONCURRENCY closed-loop workers, $ROUNDS × $DURATION per run" \
	"(order reversed every other round), targets: ${TARGETS//,/ }," \
	"$(nproc 2>/dev/null || echo '?') cores, $versions; backend LoadTable ETag: ${backend_etag:-none}"
echo
"$tmp/loadgen" -report "$tmp/results"
