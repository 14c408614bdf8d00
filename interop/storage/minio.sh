#!/usr/bin/env bash
# MinIO (Go module github.com/minio/minio, pinned below) for the storage
# test that moto cannot serve: moto does not evaluate STS session
# policies, MinIO does (AssumeRole's Policy narrows the temporary keys), so
# TestVendedCredentialsOnMinIO proves a reader's vended keys cannot write.
#
#   interop/storage/minio.sh start  builds MinIO once into $INTEROP_CACHE
#                                   (go install; minutes, once per machine),
#                                   starts `minio server` on 127.0.0.1:$STORAGE_MINIO_PORT
#                                   (default base+37, see interop/lib.sh) with a fresh
#                                   root user and password and an empty data folder,
#                                   checks that it refuses a wrong secret and answers
#                                   the right one, and prints
#                                   `export LAKEGATE_TEST_MINIO=http://<user>:<password>@host:port`
#   interop/storage/minio.sh stop   stops the MinIO this script started
#
# .ci/run: eval "$(interop/storage/minio.sh start)" before `go test ./...`.
# Log, pid and data live in $MINIO_RUN (default $INTEROP_WORK/storage/).
# The test creates a bucket of its own per run (as on moto).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"

MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
BIN=$INTEROP_CACHE/minio-$MINIO_VERSION/minio
RUN=${MINIO_RUN:-$INTEROP_WORK/storage}
PORT=${STORAGE_MINIO_PORT:-$(port 37)}
mkdir -p "$RUN"

stop() { stop_pidfile "$RUN/minio.pid"; }

# install: the pinned MinIO from the Go module proxy, built once (nice:
# it is a large build) into its own folder of the cache.
install() {
	[ -x "$BIN" ] && return 0
	echo "building MinIO $MINIO_VERSION into $(dirname "$BIN") (once)" >&2
	GOBIN=$(dirname "$BIN") nice go install "github.com/minio/minio@$MINIO_VERSION" >&2
}

# s3_status KEY SECRET: the HTTP status of a SigV4-signed ListBuckets.
s3_status() {
	curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" \
		--user "$1:$2" "http://127.0.0.1:$PORT/"
}

start() {
	local user password status
	install || return 1
	stop
	port_free "$PORT" "MinIO for the storage tests" || return 1
	rm -rf "$RUN/minio-data"
	user=lakegate
	password=$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')
	# setsid: MinIO outlives this script (the caller stops it with `stop`);
	# no console (MINIO_BROWSER=off), no update checks.
	MINIO_ROOT_USER=$user MINIO_ROOT_PASSWORD=$password MINIO_BROWSER=off \
		MINIO_UPDATE=off CI=true \
		setsid "$BIN" server --quiet --address "127.0.0.1:$PORT" "$RUN/minio-data" \
		>"$RUN/minio.log" 2>&1 </dev/null &
	echo $! >"$RUN/minio.pid"
	wait_port "$PORT" 60 "$RUN/minio.log" >&2 || { stop; return 1; }
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$PORT/minio/health/ready" && break
		sleep 0.1
	done
	status=$(s3_status "$user" "${password}x")
	if [ "$status" != 403 ]; then
		echo "MinIO answered $status to a wrong secret, not 403" >&2
		stop
		return 1
	fi
	status=$(s3_status "$user" "$password")
	if [ "$status" != 200 ]; then
		echo "MinIO answered $status to its root user, not 200" >&2
		tail -n 40 "$RUN/minio.log" >&2
		stop
		return 1
	fi
	echo "export LAKEGATE_TEST_MINIO=http://$user:$password@127.0.0.1:$PORT"
}

case ${1:-} in
start) start ;;
stop) stop ;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
