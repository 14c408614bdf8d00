#!/usr/bin/env bash
# moto's S3/STS (PyPI moto[server], pinned in requirements.txt next to this)
# with every SigV4 signature checked, for the storage tests (docs/storage.md).
#
#   interop/storage/moto.sh start   starts moto_server on 127.0.0.1:$STORAGE_MOTO_PORT
#                                   (default base+31, see interop/lib.sh), turns its
#                                   access control on (moto_setup.py: a wrong secret is
#                                   SignatureDoesNotMatch, an unknown key InvalidAccessKeyId,
#                                   an unsigned request 403; checked before it returns) and
#                                   prints `export LAKEGATE_TEST_S3=http://<key>:<secret>@host:port`
#   interop/storage/moto.sh stop    stops the moto this script started
#
# .ci/run: eval "$(interop/storage/moto.sh start)" before `go test ./...`.
# The virtualenv lives in $INTEROP_CACHE (interop_venv, keyed by the
# requirements' hash); moto's log and pid in $MOTO_RUN (default
# $INTEROP_WORK/storage/; another suite starting a moto of its own, as
# interop/delta-clients does, names its own folder and port).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"

RUN=${MOTO_RUN:-$INTEROP_WORK/storage}
PORT=${STORAGE_MOTO_PORT:-$(port 31)}
mkdir -p "$RUN"

stop() { stop_pidfile "$RUN/moto.pid"; }

start() {
	local py url
	py=$(interop_venv storage-moto "$HERE/requirements.txt") || return 1
	stop
	port_free "$PORT" "moto for the storage tests" || return 1
	# setsid: moto outlives this script (the caller stops it with `stop`).
	setsid "$(dirname "$py")/moto_server" -H 127.0.0.1 -p "$PORT" >"$RUN/moto.log" 2>&1 </dev/null &
	echo $! >"$RUN/moto.pid"
	wait_port "$PORT" 60 "$RUN/moto.log" >&2 || { stop; return 1; }
	if ! url=$("$py" "$HERE/moto_setup.py" "http://127.0.0.1:$PORT"); then
		stop
		return 1
	fi
	echo "export LAKEGATE_TEST_S3=$url"
}

case ${1:-} in
start) start ;;
stop) stop ;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
