#!/usr/bin/env bash
# deploy/helm/check.sh: checks the Helm chart deploy/helm/lakegate offline
# (docs/deploy.md, "Helm"): `helm lint`, `helm template` with the default
# values, with Redis, PostgreSQL and 3 replicas, and with the Ingress and
# the ServiceMonitor, a strict decode of every rendered manifest into its
# k8s.io/api (or Prometheus Operator) type (deploy/helm/validate), the
# values the chart must refuse (replicas on SQLite or on a per-pod
# warehouse, among others), and a run of the rendered Caddyfile (default
# values) with the lakegate binary: the health port answers the probes'
# paths to a pod-IP Host and refuses the status page to it, the metrics
# port serves /metrics and nothing else. No cluster is involved.
#
# Usage: deploy/helm/check.sh LAKEGATE_BINARY
# Environment: TOOLS (where helm is installed; default
# ~/.cache/lakegate-tools); ports HELM_CHECK_PORT (default 18321, and the
# next three for health, admin and metrics).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:?usage: check.sh LAKEGATE_BINARY}")
check="helm check"
# shellcheck source=deploy/lib.sh disable=SC2034 # check is lib.sh's
. "$here/../lib.sh"
helm_version=v3.22.0
port=${HELM_CHECK_PORT:-18321}
health_port=$((port + 1))
admin_port=$((port + 2))
metrics_port=$((port + 3))

helm=$(go_tool helm "$helm_version" helm.sh/helm/v3/cmd/helm) # a few minutes the first time

chart=$here/lakegate
ha=(--set replicaCount=3 --set redis.url=redis://:pw@redis:6379/0
	--set catalog.database=postgres --set catalog.postgresDSN=postgres://lakegate:pw@postgres:5432/lakegate
	--set catalog.warehouse=s3://lake/warehouse
	--set identity.issuer=true --set 'identity.clients=client_secret spark spark-secret writer')
"$helm" lint --strict "$chart" >"$work/lint" 2>&1 || { cat "$work/lint" >&2; fail "helm lint"; }
"$helm" lint --strict "$chart" "${ha[@]}" >"$work/lint" 2>&1 || { cat "$work/lint" >&2; fail "helm lint (redis, postgres, 3 replicas)"; }
echo "  helm $helm_version lint --strict: ok (default values; redis + postgres + 3 replicas)"

(cd "$here/validate" && go build -o "$work/validate" .)
"$helm" template lg "$chart" >"$work/default.yaml"
"$helm" template lg "$chart" "${ha[@]}" >"$work/ha.yaml"
"$helm" template lg "$chart" --set identity.existingSecret=mine --set replicaCount=2 \
	--set catalog.database=postgres --set catalog.postgresDSN=postgres://lakegate:pw@postgres:5432/lakegate \
	--set catalog.warehouse=s3://lake/warehouse \
	--set identity.issuer=true --set 'identity.clients=client_secret spark spark-secret writer' >"$work/existing.yaml"
"$helm" template lg "$chart" --set ingress.enabled=true --set ingress.className=nginx \
	--set 'ingress.tls[0].secretName=lg-tls' --set 'ingress.tls[0].hosts[0]=lakegate.example.com' \
	--set metrics.serviceMonitor.enabled=true --set metrics.serviceMonitor.labels.release=prom >"$work/exposed.yaml"
"$helm" template lg "$chart" --set metrics.enabled=false >"$work/nometrics.yaml"
echo "  $("$work/validate" -name 'template (default)' <"$work/default.yaml")"
echo "  $("$work/validate" -name 'template (redis, postgres, replicas=3)' -caddyfile "$work/Caddyfile.ha" <"$work/ha.yaml")"
# `lakegate validate` opens nothing: no Redis or PostgreSQL needed (the
# policies must be there: the image's, from the repository).
mkdir -p "$work/data" "$work/policies"
cp "$here"/../../policies/*.rego "$work/policies/"
sed -i "s#/etc/lakegate/policies#$work/policies#g" "$work/Caddyfile.ha"
env LAKEGATE_SIGNING_SECRET=helm-check-secret-0123456789abcdef LAKEGATE_REDIS=redis://:pw@redis:6379/0 \
	LAKEGATE_CATALOG_DSN=postgres://lakegate:pw@postgres:5432/lakegate \
	"$bin" validate --config "$work/Caddyfile.ha" >"$work/log" 2>&1 ||
	{ tail -20 "$work/log" >&2; fail "lakegate validate rejects the rendered Caddyfile (redis, postgres)"; }
echo "  lakegate validate: the Caddyfile rendered with redis + postgres is valid"
echo "  $("$work/validate" -name 'template (existingSecret, issuer, replicas=2)' <"$work/existing.yaml" | tail -1)"
echo "  $("$work/validate" -name 'template (ingress, servicemonitor)' <"$work/exposed.yaml")"
echo "  $("$work/validate" -name 'template (metrics off)' <"$work/nometrics.yaml")"
grep -q '^kind: PodDisruptionBudget' "$work/ha.yaml" || fail "no PodDisruptionBudget with 3 replicas"
for kind in Ingress ServiceMonitor; do
	grep -q "^kind: $kind\$" "$work/exposed.yaml" || fail "no $kind with ingress.enabled and metrics.serviceMonitor.enabled"
done
grep -q '^kind: ServiceMonitor$\|^kind: Ingress$' "$work/default.yaml" && fail "the default values render an Ingress or a ServiceMonitor"
grep -q 'name: lg-lakegate-metrics$' "$work/default.yaml" || fail "no metrics Service with the default values"
grep -q 'metrics' "$work/nometrics.yaml" && fail "metrics.enabled=false still renders a metrics port or Service"
# refuses MESSAGE ARGS...: helm template with ARGS must fail, saying MESSAGE.
refuses() {
	local want=$1
	shift
	if "$helm" template lg "$chart" "$@" >/dev/null 2>"$work/refused"; then
		fail "rendered, but must not: $*"
	fi
	grep -qF -- "$want" "$work/refused" || { cat "$work/refused" >&2; fail "refused without saying \"$want\": $*"; }
}
refuses 'catalog.database=sqlite: each pod would open a SQLite file of its own' --set replicaCount=2
refuses 'catalog.warehouse=/data/local/warehouse on /data, an emptyDir per pod' --set replicaCount=2 \
	--set catalog.database=postgres --set catalog.postgresDSN=postgres://lakegate:pw@postgres:5432/lakegate
refuses 'catalog.warehouse=file:///data/wh on /data' --set replicaCount=2 --set catalog.warehouse=file:///data/wh \
	--set catalog.database=postgres --set catalog.postgresDSN=postgres://lakegate:pw@postgres:5432/lakegate
refuses 'catalog.database=sqlite' --set replicaCount=2 --set persistence.existingClaim=shared
refuses 'metrics.serviceMonitor.enabled needs metrics.enabled' --set metrics.enabled=false --set metrics.serviceMonitor.enabled=true
"$helm" template lg "$chart" --set replicaCount=2 --set persistence.existingClaim=shared --set catalog.database=postgres \
	--set catalog.postgresDSN=postgres://lakegate:pw@postgres:5432/lakegate >/dev/null ||
	fail "replicas on postgres with a warehouse on a shared claim did not render"
echo "  refused: replicas on sqlite (emptyDir or claim), on a warehouse in a per-pod emptyDir; a ServiceMonitor without metrics"
if "$helm" template lg "$chart" --set catalog.database=postgres >/dev/null 2>&1; then
	fail "database postgres without a DSN rendered"
fi
if "$helm" template lg "$chart" --set identity.signingSecret=short >/dev/null 2>&1; then
	fail "a signing secret under 32 bytes rendered"
fi
if "$helm" template lg "$chart" --set identity.issuer=true >/dev/null 2>&1; then
	fail "an issuer without clients rendered"
fi

# Run the rendered Caddyfile: its /data and /etc/lakegate/policies moved
# into the work directory, ports moved off the defaults.
"$helm" template lg "$chart" --set service.port="$port" --set health.port="$health_port" \
	--set adminPort="$admin_port" --set metrics.port="$metrics_port" --set identity.issuer=true \
	--set 'identity.clients=client_secret spark spark-secret writer' | "$work/validate" -name run -caddyfile "$work/Caddyfile.rendered" >/dev/null
sed -e "s#/data/#$work/data/#g" -e "s#/etc/lakegate/policies#$work/policies#g" \
	"$work/Caddyfile.rendered" >"$work/Caddyfile"
env LAKEGATE_SIGNING_SECRET=helm-check-secret-0123456789abcdef XDG_DATA_HOME="$work/data" \
	XDG_CONFIG_HOME="$work/data" "$bin" validate --config "$work/Caddyfile" >"$work/log" 2>&1 ||
	{ tail -20 "$work/log" >&2; fail "lakegate validate rejects the rendered Caddyfile"; }
(cd "$work" && exec env LAKEGATE_SIGNING_SECRET=helm-check-secret-0123456789abcdef \
	XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/data" \
	"$bin" run --config "$work/Caddyfile") >"$work/log" 2>&1 &
pids+=($!)
wait_ready $! "http://127.0.0.1:$health_port/lakegate/health/ready" -H "Host: 10.1.2.3:$health_port"
live=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: 10.1.2.3:$health_port" "http://127.0.0.1:$health_port/lakegate/health/live")
[ "$live" = 200 ] || fail "health port: live answered $live"
status=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: 10.1.2.3:$health_port" "http://127.0.0.1:$health_port/lakegate/status")
[ "$status" != 200 ] || fail "health port: /lakegate/status answered 200 to a pod-IP Host"
curl -fsS -H "Host: 10.1.2.3:$metrics_port" "http://127.0.0.1:$metrics_port/metrics" >"$work/metrics" ||
	fail "metrics port: GET /metrics"
grep -q '^lakegate_build_info{' "$work/metrics" || fail "metrics port: no lakegate_build_info"
other=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: localhost:$metrics_port" "http://127.0.0.1:$metrics_port/lakegate/status")
[ "$other" = 404 ] || fail "metrics port: /lakegate/status answered $other, not 404"
curl -fsS "http://127.0.0.1:$port/v1/config" >/dev/null || fail "gateway: GET /v1/config"
curl -fsS "http://127.0.0.1:$admin_port/lakegate/health/ready" >/dev/null || fail "admin: ready"
# The issuer signs with the Secret's signing_secret ({env.LAKEGATE_SIGNING_SECRET}).
curl -fsS -d grant_type=client_credentials -d client_id=spark -d client_secret=spark-secret \
	"http://127.0.0.1:$port/v1/oauth/tokens" | jq -e '.access_token' >/dev/null || fail "issuer: no token"
echo "  rendered Caddyfile: lakegate validate ok; run: probes (Host 10.1.2.3) live 200, ready 200, /lakegate/status $status; metrics port /metrics 200 (lakegate_build_info), other paths $other; /v1/config 200; issuer token 200; admin on localhost"
echo "helm check: ok"
