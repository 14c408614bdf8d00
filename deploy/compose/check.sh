#!/usr/bin/env bash
# deploy/compose/check.sh: checks deploy/compose offline, without a
# container runtime (docs/deploy.md, "Compose"): compose.yaml is loaded
# with compose-go against the Compose schema (deploy/compose/validate),
# and the compose Caddyfile is adapted and validated by the lakegate
# binary. With COMPOSE_CHECK_POSTGRES (a PostgreSQL URL whose database may
# hold a catalog named `lake`) and redis-server installed, the stack is
# also run: the binary with the compose Caddyfile, that PostgreSQL and a
# private redis-server, as the compose file wires them; it must get ready
# and create, list and drop a namespace; the healthcheck's `lakegate
# health` must pass while it runs and fail once it is stopped; the ops
# site serves ready, metrics and the status (to a loopback Host only).
#
# Usage: deploy/compose/check.sh LAKEGATE_BINARY
# Ports: COMPOSE_CHECK_PORT (default 18341, and the next three for the
# admin endpoint, Redis and the ops site).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:?usage: check.sh LAKEGATE_BINARY}")
port=${COMPOSE_CHECK_PORT:-18341}
admin_port=$((port + 1))
redis_port=$((port + 2))
ops_port=$((port + 3))

check="compose check"
# shellcheck source=deploy/lib.sh disable=SC2034 # check is lib.sh's
. "$here/../lib.sh"

(cd "$here/validate" && go build -o "$work/validate" .)
echo "  $("$work/validate" "$here/compose.yaml")"

# The environment compose.yaml gives the gateway, plus the image's.
env_compose=(LAKEGATE_CATALOG_DSN='postgres://lakegate:lakegate@postgres:5432/lakegate?sslmode=disable'
	LAKEGATE_REDIS=redis://redis:6379/0 LAKEGATE_DATA=/data
	LAKEGATE_POLICIES="$here/../../policies")
env "${env_compose[@]}" "$bin" adapt --config "$here/Caddyfile" >"$work/adapted.json" 2>"$work/log" ||
	{ cat "$work/log" >&2; fail "lakegate adapt"; }
jq -e '.apps.lakegate.catalogs[0].embedded.database == "postgres"' "$work/adapted.json" >/dev/null ||
	fail "the adapted config's catalog is not on postgres"
jq -e '.apps.lakegate.catalogs[0].embedded.dsn == "{env.LAKEGATE_CATALOG_DSN}"' "$work/adapted.json" >/dev/null ||
	fail "the adapted config carries the DSN itself, not its run-time placeholder"
jq -e '[.apps.http.servers[] | select(any(.listen[]; endswith(":9180"))) | .. | .handler? // empty] | index("metrics") and index("lakegate_status")' \
	"$work/adapted.json" >/dev/null || fail "no :9180 site with metrics and lakegate_status"
env "${env_compose[@]}" "$bin" validate --config "$here/Caddyfile" >"$work/log" 2>&1 ||
	{ tail -5 "$work/log" >&2; fail "lakegate validate"; }
echo "  Caddyfile: lakegate adapt and validate ok (catalog lake on postgres, redis {env.LAKEGATE_REDIS})"

if [ -z "${COMPOSE_CHECK_POSTGRES:-}" ] || ! command -v redis-server >/dev/null; then
	echo "  run: skipped (needs COMPOSE_CHECK_POSTGRES and redis-server)"
	echo "compose check: ok"
	exit 0
fi
redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no \
	--maxmemory-policy noeviction >"$work/redis.log" 2>&1 &
pids+=($!)
mkdir "$work/data"
(cd "$work" && exec env LAKEGATE_CATALOG_DSN="$COMPOSE_CHECK_POSTGRES" \
	LAKEGATE_REDIS="redis://127.0.0.1:$redis_port/0" LAKEGATE_DATA="$work/data" \
	LAKEGATE_POLICIES="$here/../../policies" LAKEGATE_ADDR="127.0.0.1:$port" LAKEGATE_BIND=127.0.0.1 \
	LAKEGATE_ADMIN_PORT="$admin_port" LAKEGATE_OPS_ADDR=":$ops_port" \
	XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/data" \
	"$bin" run --config "$here/Caddyfile") >"$work/log" 2>&1 &
gateway=$!
pids+=("$gateway")
wait_ready "$gateway" "http://127.0.0.1:$admin_port/lakegate/health/ready"
# The healthcheck, as compose.yaml runs it: the admin address from the config.
healthcheck() {
	env LAKEGATE_ADMIN_PORT="$admin_port" LAKEGATE_POLICIES="$here/../../policies" \
		"$bin" health --config "$here/Caddyfile" --timeout 5s
}
healthcheck >"$work/health" 2>"$work/health.err" || { cat "$work/health.err" >&2; fail "healthcheck: lakegate health failed on a ready gateway"; }
jq -e '.status == "ready"' "$work/health" >/dev/null || fail "healthcheck: printed $(head -c 200 "$work/health")"
ops=http://127.0.0.1:$ops_port
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code -H "Host: 172.18.0.5:9180" "$ops/lakegate/health/ready")" = 200 ] || fail "ops site: ready is not 200 to a container's Host"
[ "$(code -H "Host: 172.18.0.5:9180" "$ops/lakegate/status")" = 403 ] || fail "ops site: the status is not refused to a non-loopback Host"
[ "$(code -H "Host: localhost:9180" "$ops/lakegate/status")" = 200 ] || fail "ops site: the status is not served to localhost"
[ "$(code "$ops/config/")" = 404 ] || fail "ops site: /config/ is not a 404 (the admin API must not be there)"
# To a file first: grep -q stops reading at the first match, and curl,
# still writing a page larger than the pipe, then fails (exit 23).
curl -fsS "$ops/metrics" >"$work/metrics" || fail "ops site: /metrics failed"
grep -q '^lakegate_build_info{' "$work/metrics" || fail "ops site: no lakegate_build_info at /metrics"
base=http://127.0.0.1:$port/v1/lake
ns=compose_check_$$_$(date +%s)
curl -fsS -X POST -H 'Content-Type: application/json' -d "{\"namespace\":[\"$ns\"]}" "$base/namespaces" >/dev/null ||
	{ tail -20 "$work/log" >&2; fail "create namespace"; }
on_exit+=("curl -s -o /dev/null -X DELETE '$base/namespaces/$ns'") # the database is shared
curl -fsS "$base/namespaces" | tee "$work/list" | jq -e --arg ns "$ns" 'any(.namespaces[]; . == [$ns])' >/dev/null ||
	fail "the namespace is not listed: $(head -c 300 "$work/list")"
curl -fsS -X DELETE "$base/namespaces/$ns" >/dev/null || fail "drop namespace"
on_exit=()
redis=$(curl -fsS "http://127.0.0.1:$admin_port/lakegate/status" | jq -c '.redis // empty')
stop "$gateway"
if healthcheck >/dev/null 2>&1; then
	fail "healthcheck: lakegate health passed with the gateway stopped"
fi
echo "  run: ready; namespace created, listed, dropped in PostgreSQL; redis $redis"
echo "  healthcheck (lakegate health --config): passes while ready, fails once stopped; ops site :9180: ready 200, status to localhost only, /metrics, 404 elsewhere"
echo "compose check: ok"
