#!/usr/bin/env bash
# deploy/image/smoke.sh: smoke-tests the image deploy/image/build.sh made,
# without a container runtime (docs/deploy.md, "Image"). Reads the config
# from the tarball and asserts user 65532, the entrypoint, env, volume and
# port; then unpacks the layer and runs the entrypoint from it as uid 65532
# (setpriv; needs root) with LAKEGATE_DATA in a temporary directory, and
# waits for /lakegate/health/ready on the admin port and GET /v1/config on
# the gateway; with podman, loads it into a throwaway store and inspects it.
# The container's file system is not isolated: the binary runs
# on the host with the layer's paths rewritten to the unpacked tree.
#
# Usage: deploy/image/smoke.sh lakegate-image.tar
# Ports: SMOKE_ADDR (default 127.0.0.1:18311), SMOKE_ADMIN_PORT (18312).
set -euo pipefail
image=$(realpath "${1:?usage: smoke.sh IMAGE.tar}")
addr=${SMOKE_ADDR:-127.0.0.1:18311}
admin_port=${SMOKE_ADMIN_PORT:-18312}
check="image smoke"
# shellcheck source=deploy/lib.sh disable=SC2034 # check is lib.sh's
. "$(dirname "$0")/../lib.sh"
chmod 0755 "$work"

tar -C "$work" -xf "$image" manifest.json
cfgname=$(jq -r '.[0].Config' "$work/manifest.json")
[ "$(jq '.[0].Layers | length' "$work/manifest.json")" = 1 ] || fail "expected one layer"
layer=$(jq -r '.[0].Layers[0]' "$work/manifest.json")
tar -C "$work" -xf "$image" "$cfgname" "$layer"
cfg=$work/$cfgname
# The config's digest is its name.
[ "sha256:$(sha256sum "$cfg" | cut -d' ' -f1)" = "$cfgname" ] || fail "config digest does not match its name"

check() { # check <jq expression that must be true> <what>
	jq -e "$1" "$cfg" >/dev/null || fail "config: $2 ($(jq -c '.config' "$cfg"))"
	echo "  config: $2"
}
check '.os == "linux"' 'os linux'
check '.config.User == "65532:65532"' 'user 65532:65532'
check '.config.Entrypoint == ["/usr/local/bin/lakegate","run","--config","/etc/lakegate/Caddyfile"]' 'entrypoint lakegate run --config /etc/lakegate/Caddyfile'
check '.config.Env | index("LAKEGATE_DATA=/data") != null' 'env LAKEGATE_DATA=/data'
check '.config.Env | index("LAKEGATE_BIND=0.0.0.0") != null' 'env LAKEGATE_BIND=0.0.0.0'
check '.config.Volumes == {"/data": {}}' 'volume /data'
check '.config.ExposedPorts == {"8181/tcp": {}}' 'exposed port 8181/tcp'
check '.rootfs.diff_ids | length == 1' 'one layer in rootfs'

# The layer: tree, owners, a static binary.
root=$work/root
mkdir "$root"
tar -C "$root" --same-owner -xzf "$work/$layer"
[ "sha256:$(gunzip -c "$work/$layer" | sha256sum | cut -d' ' -f1)" = "$(jq -r '.rootfs.diff_ids[0]' "$cfg")" ] ||
	fail "layer diff_id does not match"
for f in usr/local/bin/lakegate etc/lakegate/Caddyfile etc/lakegate/policies/demo.rego etc/passwd etc/ssl/certs/ca-certificates.crt; do
	[ -e "$root/$f" ] || fail "layer lacks /$f"
done
[ "$(stat -c %u "$root/data")" = 65532 ] || fail "/data is not owned by 65532"
grep -q '^nonroot:x:65532:65532:' "$root/etc/passwd" || fail "/etc/passwd has no uid 65532"
if readelf -l "$root/usr/local/bin/lakegate" | grep -q 'program interpreter'; then
	fail "the binary is not static"
fi
echo "  layer: /usr/local/bin/lakegate (static), /etc/lakegate/Caddyfile, policies, CA bundle, /data owned by 65532"

# Run the entrypoint as uid 65532, with the image's env, paths moved into
# the unpacked tree, and the ports moved off the defaults.
[ "$(id -u)" = 0 ] || fail "running the binary as uid 65532 needs root (setpriv)"
data=$work/data
mkdir "$data"
chown 65532:65532 "$data"
# The Caddyfile from the image, pointed at the tree.
mapfile -t env < <(jq -r '.config.Env[]' "$cfg")
env+=("LAKEGATE_DATA=$data" "XDG_DATA_HOME=$data" "XDG_CONFIG_HOME=$data"
	"LAKEGATE_POLICIES=$root/etc/lakegate/policies" "LAKEGATE_ADDR=$addr"
	"LAKEGATE_ADMIN_PORT=$admin_port" "HOME=$data"
	"LAKEGATE_BIND=127.0.0.1") # the image binds 0.0.0.0; here, loopback only
mapfile -t entry < <(jq -r '.config.Entrypoint[]' "$cfg")
entry[0]=$root${entry[0]}
for i in "${!entry[@]}"; do
	[ "${entry[$i]}" = /etc/lakegate/Caddyfile ] && entry[i]=$root/etc/lakegate/Caddyfile
done
(cd "$data" && exec env -i "${env[@]}" setpriv --reuid 65532 --regid 65532 --clear-groups \
	"${entry[@]}") >"$work/log" 2>&1 &
pid=$!
pids+=("$pid")
wait_ready "$pid" "http://127.0.0.1:$admin_port/lakegate/health/ready"
jq -e '.status == "ready"' "$work/ready" >/dev/null || fail "ready: $(cat "$work/ready")"
echo "  run: /lakegate/health/ready on admin :$admin_port: $(jq -c . "$work/ready")"
curl -fsS "http://$addr/v1/config" >"$work/config" || fail "GET /v1/config failed"
jq -e '.defaults and .overrides' "$work/config" >/dev/null || fail "/v1/config: $(cat "$work/config")"
echo "  run: GET http://$addr/v1/config: overrides $(jq -c .overrides "$work/config")"
owner=$(ps -o uid= -p "$pid" | tr -d ' ')
[ "$owner" = 65532 ] || fail "the process runs as uid $owner"
[ -e "$data/local/catalog.db" ] || fail "no catalog database under LAKEGATE_DATA"
[ "$(stat -c %u "$data/local/catalog.db")" = 65532 ] || fail "catalog.db is not owned by 65532"
echo "  run: process uid 65532, catalog database created under LAKEGATE_DATA"
stop "$pid"

# With podman installed: load the archive into a throwaway store and read
# the config back as podman sees it. Running the container is not tried:
# in the sandbox this was written in, crun cannot set RLIMIT_NOFILE.
if command -v podman >/dev/null; then
	p=(podman --root "$work/podman/root" --runroot "$work/podman/run" --storage-driver vfs)
	name=$("${p[@]}" load -q -i "$image" | sed -n 's/^Loaded image: //p' | head -1)
	[ -n "$name" ] || fail "podman load"
	seen=$("${p[@]}" image inspect "$name" --format '{{.Config.User}} {{json .Config.Entrypoint}} {{json .Config.Volumes}}')
	[ "$seen" = '65532:65532 ["/usr/local/bin/lakegate","run","--config","/etc/lakegate/Caddyfile"] {"/data":{}}' ] ||
		fail "podman sees: $seen"
	echo "  podman $("${p[@]}" version --format '{{.Client.Version}}'): load ok, $name: user, entrypoint and volume as built (not run)"
	"${p[@]}" rmi -a -f >/dev/null 2>&1 || true
else
	echo "  podman: not installed, load not checked"
fi
echo "image smoke: ok"
