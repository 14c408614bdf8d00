#!/usr/bin/env bash
# deploy/image/build.sh: builds lakegate's OCI image without a container
# daemon (docs/deploy.md, "Image"). One layer on an empty base: the static
# binary (CGO_ENABLED=0), the root Caddyfile at /etc/lakegate/Caddyfile, the
# policies at /etc/lakegate/policies, the build host's CA bundle, a passwd
# entry for uid 65532 and /data (owned by it) as the volume for
# LAKEGATE_DATA. crane (pinned, from the Go module proxy) assembles the
# image; its config (user, env, entrypoint, port, volume, labels) is then
# set with jq, since `crane mutate` works on registry images only.
#
# Usage: deploy/image/build.sh [OUTPUT.tar]   (default ./lakegate-image.tar)
# Environment: LAKEGATE_BIN=path (use this binary instead of building one;
# it must be static), VERSION (default: git describe), TAG (default
# lakegate:$VERSION), TOOLS (where crane is installed; default
# ~/.cache/lakegate-tools).
# The output is a docker-archive tarball (`docker load`, `podman load`,
# `crane push`).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "${1:-lakegate-image.tar}")
crane_version=v0.22.1
version=${VERSION:-$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo dev)}
tag=${TAG:-lakegate:$version}
arch=$(go env GOARCH)
check=build.sh
# shellcheck source=deploy/lib.sh disable=SC2034 # check is lib.sh's
. "$repo/deploy/lib.sh"

crane=$(go_tool crane "$crane_version" github.com/google/go-containerregistry/cmd/crane)

bin=${LAKEGATE_BIN:-}
if [ -z "$bin" ]; then
	bin=$work/lakegate
	echo "building lakegate $version (CGO_ENABLED=0)" >&2
	(cd "$repo" && CGO_ENABLED=0 go build -trimpath \
		-ldflags "-s -w -X github.com/lakegate/lakegate/modules/gateway.version=$version" \
		-o "$bin" ./caddy)
fi
# A static binary: no ELF interpreter (dynamic loader) to find in the image.
if readelf -l "$bin" 2>/dev/null | grep -q 'program interpreter'; then
	fail "$bin is dynamically linked; build it with CGO_ENABLED=0"
fi

# The layer's tree. Owners are set in the tar, not on disk, so no root is needed.
root=$work/root
mkdir -p "$root/usr/local/bin" "$root/etc/lakegate/policies" "$root/etc/ssl/certs" "$root/data" "$root/tmp"
install -m 0755 "$bin" "$root/usr/local/bin/lakegate"
install -m 0644 "$repo/Caddyfile" "$root/etc/lakegate/Caddyfile"
for f in "$repo"/policies/*.rego; do
	case $f in *_test.rego) continue ;; esac
	install -m 0644 "$f" "$root/etc/lakegate/policies/"
done
ca=/etc/ssl/certs/ca-certificates.crt
if [ -r "$ca" ]; then
	install -m 0644 "$ca" "$root/etc/ssl/certs/ca-certificates.crt"
else
	echo "build.sh: warning: no $ca; the image will not verify TLS peers" >&2
fi
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/data:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
chmod 0644 "$root/etc/passwd" "$root/etc/group"

# Reproducible: sorted names, fixed mtime, numeric owners (root, /data 65532).
tar --sort=name --mtime=@0 --numeric-owner --owner=0 --group=0 \
	--exclude=./data --exclude=./tmp -C "$root" -cf "$work/layer.tar" .
tar --sort=name --mtime=@0 --numeric-owner --owner=65532 --group=65532 --mode=0750 \
	-C "$root" -rf "$work/layer.tar" ./data
tar --sort=name --mtime=@0 --numeric-owner --owner=0 --group=0 --mode=1777 \
	-C "$root" -rf "$work/layer.tar" ./tmp
gzip -n -9 "$work/layer.tar"

"$crane" append --oci-empty-base -f "$work/layer.tar.gz" -t "$tag" -o "$work/base.tar" >/dev/null

# Set the config, then store it under its new digest.
img=$work/img
mkdir "$img"
tar -C "$img" -xf "$work/base.tar"
old=$(jq -r '.[0].Config' "$img/manifest.json")
created=$(git -C "$repo" log -1 --format=%cI 2>/dev/null || echo 1970-01-01T00:00:00Z)
revision=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
jq --arg arch "$arch" --arg version "$version" --arg created "$created" --arg revision "$revision" '
	.architecture = $arch | .os = "linux" | .created = $created |
	.config = {
		User: "65532:65532",
		Env: [
			"PATH=/usr/local/bin:/usr/bin:/bin",
			"LAKEGATE_DATA=/data",
			"LAKEGATE_BIND=0.0.0.0",
			"LAKEGATE_ADDR=:8181",
			"LAKEGATE_POLICIES=/etc/lakegate/policies",
			"XDG_DATA_HOME=/data",
			"XDG_CONFIG_HOME=/data",
			"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"
		],
		Entrypoint: ["/usr/local/bin/lakegate", "run", "--config", "/etc/lakegate/Caddyfile"],
		WorkingDir: "/data",
		ExposedPorts: {"8181/tcp": {}},
		Volumes: {"/data": {}},
		Labels: {
			"org.opencontainers.image.title": "lakegate",
			"org.opencontainers.image.description": "a gateway in front of lakehouse table catalogs",
			"org.opencontainers.image.version": $version,
			"org.opencontainers.image.revision": $revision,
			"org.opencontainers.image.source": "https://github.com/lakegate/lakegate"
		}
	}' "$img/$old" >"$work/config.json"
new=sha256:$(sha256sum "$work/config.json" | cut -d' ' -f1)
rm "$img/$old"
mv "$work/config.json" "$img/$new"
jq --arg c "$new" '.[0].Config = $c' "$img/manifest.json" >"$work/manifest.json"
mv "$work/manifest.json" "$img/manifest.json"
(cd "$img" && tar --sort=name --mtime=@0 --numeric-owner --owner=0 --group=0 -cf "$out" -- *)
"$crane" validate --tarball "$out" >&2
echo "built $tag -> $out (config $new)" >&2
