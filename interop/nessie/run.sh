#!/usr/bin/env bash
# The Nessie suite for interop/run: smoke.sh (examples/nessie/Caddyfile in
# front of Nessie, compared with Nessie directly, and PyIceberg and Iceberg
# Java round trips through it), summed into one line:
#   nessie/smoke: N passed, N failed
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
log="$INTEROP_WORK/nessie-smoke.out"
bash "$here/smoke.sh" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
read -r passed failed < <(sed -nE 's/^ *([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p' "$log" |
	awk '{p += $1; f += $2} END {print p + 0, f + 0}')
report "nessie/smoke: $passed passed, $failed failed"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
