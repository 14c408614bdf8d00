# shellcheck shell=bash disable=SC2154 # check is set by the sourcing script
# deploy/lib.sh: what the package checks under deploy/ share; sourced,
# after `check=<name>` (the check's name in its messages). It gives them:
#   $work        a temporary folder, removed on exit
#   pids+=($!)   a process to kill (and reap) on exit; stop PID ends one early
#   on_exit+=()  commands to run first on the way out (e.g. a clean-up request)
#   fail MSG     prints "<check>: MSG" and exits 1
#   go_tool NAME VERSION PACKAGE
#                prints the path of a pinned Go tool, installed once into
#                $TOOLS (default ~/.cache/lakegate-tools)
#   wait_ready PID URL [CURL ARGS...]
#                waits (30 s) until URL answers 200 while PID runs; its
#                body is left in $work/ready; on failure shows the log
#                ($work/log) and fails

fail() {
	echo "$check: $*" >&2
	exit 1
}

work=$(mktemp -d)
pids=()
on_exit=()
deploy_cleanup() {
	local c p
	for c in "${on_exit[@]}"; do eval "$c" || true; done
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap deploy_cleanup EXIT

stop() {
	local p kept=()
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	for p in "${pids[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
	pids=("${kept[@]}")
}

go_tool() {
	local path=${TOOLS:-$HOME/.cache/lakegate-tools}/$1-$2/$1
	if ! [ -x "$path" ]; then
		echo "installing $1 $2 into $(dirname "$path")" >&2
		GOBIN=$(dirname "$path") go install "$3@$2" >&2
	fi
	echo "$path"
}

wait_ready() {
	local pid=$1 url=$2 code=""
	shift 2
	for _ in $(seq 1 150); do
		kill -0 "$pid" 2>/dev/null || { tail -20 "$work/log" >&2; fail "lakegate exited"; }
		code=$(curl -s -o "$work/ready" -w '%{http_code}' "$@" "$url" || true)
		[ "$code" = 200 ] && return 0
		sleep 0.2
	done
	tail -20 "$work/log" >&2
	fail "not ready: $url answered ${code:-nothing}"
}
