#!/usr/bin/env bash
# What remote signing costs a scan, whole processes: one client reads
# FILES objects of a table from an S3 store that checks every signature
# (moto), signing each GET itself with the storage keys ("static", the
# baseline) or asking lakegate's signRequest for each signature
# ("remote", as PyIceberg and Iceberg Java do), through
# examples/storage/Caddyfile (lakegate's issuer, the roles policy, the
# access log on). With BASE=REV the lakegate built from revision REV serves
# a third run ("remote-base") in the same rounds: before and after of one
# run.
#
#   eval "$(interop/storage/moto.sh start)"       # or any LAKEGATE_TEST_S3
#   bash examples/bench/sign-scan.sh
#   ROUNDS=5 FILES=1000 REPEAT=3 BASE=37f689b bash examples/bench/sign-scan.sh
#   OUT=/tmp/scan.tsv bash examples/bench/sign-scan.sh   # keep the raw figures
#
# Per run and round (examples/bench/signscan says how): wall time per file,
# the CPU per file of the client, of the gateway (0 for static: it signs
# nothing then) and of the store, each over the reads only (the token and
# the table load are outside). Rounds alternate the order of runs; a ratio
# is the median over rounds of the ratio within each round, against static.
# The objects (FILES × SIZE bytes) go to a bucket of the script's own on the
# store, deleted at the end.
# Needs Linux (/proc), Go, python3, LAKEGATE_TEST_S3=http://KEY:SECRET@host:port
# (loopback). Ports (127.0.0.1): PORT_BASE+1, +2 (gateways), +11, +12 (admin).
set -euo pipefail

ROUNDS=${ROUNDS:-3}
FILES=${FILES:-1000}
REPEAT=${REPEAT:-1}
SIZE=${SIZE:-4096}
BASE=${BASE:-}
PORT_BASE=${PORT_BASE:-23100}
: "${LAKEGATE_TEST_S3:?set LAKEGATE_TEST_S3 (eval \"\$(interop/storage/moto.sh start)\")}"

cd "$(dirname "$0")/../.."
. examples/bench/lib.sh
repo=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lakegate-signscan.XXXXXX")
bucket=lakegate-signscan-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
declare -A pid=() port=([lg]=$((PORT_BASE + 1)) [base]=$((PORT_BASE + 2))) admin=([lg]=$((PORT_BASE + 11)) [base]=$((PORT_BASE + 12)))
procs=()
made_bucket=""
cleanup() {
	local p
	for p in "${procs[@]}"; do kill "${pid[$p]}" 2>/dev/null || true; done
	wait 2>/dev/null || true
	[ -z "$made_bucket" ] || "$tmp/signscan" -cleanup -bucket "$bucket" >/dev/null || echo "sign-scan.sh: bucket $bucket left on the store" >&2
	[ -z "$BASE" ] || git -C "$repo" worktree remove --force "$tmp/base-tree" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "sign-scan.sh: $1" >&2
	[ -z "${2:-}" ] || tail -n 20 "$tmp/$2.log" >&2
	exit 1
}

echo "building into $tmp ..." >&2
go build -o "$tmp/lakegate" ./caddy
go build -o "$tmp/signscan" ./examples/bench/signscan
if [ -n "$BASE" ]; then
	git -C "$repo" worktree add -q --detach "$tmp/base-tree" "$BASE"
	(cd "$tmp/base-tree" && go build -o "$tmp/lakegate-base" ./caddy)
fi

# The store's endpoint and key, percent-decoded (a secret may hold a "/").
{ read -r s3_endpoint; read -r s3_key_id; read -r s3_secret; } < <(python3 -c '
import sys, urllib.parse as u
p = u.urlsplit(sys.argv[1])
print(f"{p.scheme}://{p.hostname}:{p.port}", u.unquote(p.username or ""), u.unquote(p.password or ""), sep="\n")' "$LAKEGATE_TEST_S3")
s3_host=${s3_endpoint#*://}
store_pid=$(ss -ltnpH "sport = :${s3_host##*:}" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n1)
export XDG_CONFIG_HOME="$tmp/xdg-config" XDG_DATA_HOME="$tmp/xdg-data"

url_of() { echo "http://127.0.0.1:${port[$1]}"; }
gateway() { # NAME BINARY
	local name=$1 bin=$2
	(exec 3<>"/dev/tcp/127.0.0.1/${port[$name]}") 2>/dev/null && fail "port ${port[$name]} is in use"
	mkdir -p "$tmp/$name"
	env LAKEGATE_ADDR="127.0.0.1:${port[$name]}" LAKEGATE_BIND=127.0.0.1 LAKEGATE_ADMIN_PORT="${admin[$name]}" \
		LAKEGATE_DATA="$tmp/$name" LAKEGATE_POLICIES="$repo/policies" \
		LAKEGATE_S3_ENDPOINT="$s3_endpoint" LAKEGATE_WAREHOUSE="s3://$bucket/$name" AWS_REGION=us-east-1 \
		AWS_ACCESS_KEY_ID="$s3_key_id" AWS_SECRET_ACCESS_KEY="$s3_secret" \
		"$bin" run --config examples/storage/Caddyfile >"$tmp/$name.log" 2>&1 &
	pid[$name]=$!
	procs+=("$name")
	for _ in $(seq 100); do # up when it answers at all (401: identity is required)
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$(url_of "$name")/v1/config")" = 000 ] || return 0
		sleep 0.2
	done
	fail "$name did not come up" "$name"
}

gateways=(lg)
runs=(static remote)
gateway lg "$tmp/lakegate"
if [ -n "$BASE" ]; then
	gateways+=(base)
	runs+=(remote-base)
	gateway base "$tmp/lakegate-base"
fi
made_bucket=yes
setup_args=(-bucket "$bucket")
for g in "${gateways[@]}"; do
	"$tmp/signscan" -setup -url "$(url_of "$g")" -files "$FILES" -size "$SIZE" "${setup_args[@]}" >&2 ||
		fail "setup through $g failed" "$g"
	setup_args=()
done

results=$tmp/results.tsv
for round in $(seq "$ROUNDS"); do
	mapfile -t order < <(round_order "$round" "${runs[@]}")
	for run in "${order[@]}"; do
		g=lg mode=static
		[ "$run" = static ] || mode=remote
		[ "$run" != remote-base ] || g=base
		cpu_of="gateway=${pid[$g]}"
		[ -z "$store_pid" ] || cpu_of+=",store=$store_pid"
		out=$("$tmp/signscan" -scan "$mode" -url "$(url_of "$g")" -files "$FILES" -repeat "$REPEAT" -cpu-of "$cpu_of") ||
			fail "$run scan failed" "$g"
		echo "round $round: $run $out" >&2
		printf '%s\t%s\t%s\n' "$run" "$round" "$out" >>"$results"
	done
done
[ -z "${OUT:-}" ] || cp "$results" "$OUT"

echo
echo "Scan of $FILES objects of $SIZE bytes (× $REPEAT per measurement), $ROUNDS rounds, $(nproc) cores," \
	"$(go version | cut -d' ' -f3); store $s3_endpoint${store_pid:+ (pid $store_pid)}${BASE:+; base $BASE}"
python3 - "$results" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    run, rnd, out = line.rstrip("\n").split("\t", 2)
    rows.setdefault(int(rnd), {})[run] = json.loads(out)
runs = list(next(iter(rows.values())).keys())
order = ["static"] + [r for r in runs if r != "static"]
def per_file(o, k):
    return o.get(k, 0.0) / o["files"] * 1e6
cols = [("wall", "seconds"), ("client CPU", "client_cpu_seconds"),
        ("gateway CPU", "gateway_cpu_seconds"), ("store CPU", "store_cpu_seconds")]
print("| run | " + " | ".join(f"{c} µs/file" for c, _ in cols) + " | wall ÷ static | client+gateway CPU ÷ static |")
print("| --- |" + " ---: |" * (len(cols) + 2))
for run in order:
    med = [statistics.median(per_file(r[run], k) for r in rows.values()) for _, k in cols]
    wall = [r[run]["seconds"] / r["static"]["seconds"] for r in rows.values()]
    cpu = [(r[run]["client_cpu_seconds"] + r[run].get("gateway_cpu_seconds", 0)) /
           (r["static"]["client_cpu_seconds"] + r["static"].get("gateway_cpu_seconds", 0)) for r in rows.values()]
    fmt = lambda xs: f"**{statistics.median(xs):.2f}×** (" + ", ".join(f"{x:.2f}" for x in xs) + ")"
    print(f"| {run} | " + " | ".join(f"{m:.0f}" for m in med) + f" | {fmt(wall)} | {fmt(cpu)} |")
EOF
