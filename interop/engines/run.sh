#!/usr/bin/env bash
# Engines from the registries through lakegate's Iceberg REST door:
# ClickHouse (chdb), DuckDB 1.5.5 + its iceberg extension, iceberg-rust
# 0.10.1 (icerust/, a small cargo program) and Daft 0.7.26, on three
# lakegate setups. See README.md next to this.
#
#   interop/engines/run.sh
#
# Starts, on loopback:
#   base+70  lakegate on the root Caddyfile, embedded catalog `local` (admin base+126)
#   base+71  lakegate on interop/unified/Caddyfile, unified catalog `all` (admin base+127)
#   base+72  lakegate on examples/policy/Caddyfile, OAuth2 + roles, catalog
#            `local` (admin base+128); its `remote` catalog points at base+73,
#            where nothing listens (the tests use `local` only)
# Builds icerust once per Cargo.lock into $INTEROP_CACHE/icerust-<hash>
# (`cargo build --release --locked -j 2`; CARGO_TARGET_DIR in the cache), so
# a warm run does not rebuild.
# Prints per engine and then one line:
#   engines: N passed, N failed, N skipped
# (skipped includes the strict xfails of expected-failures.txt). Exits
# non-zero on any other failure or error.
# Logs: $INTEROP_WORK/engines-*.log; pytest output and JUnit XML in
# $INTEROP_WORK/engines/.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"
trap interop_cleanup EXIT
renice -n 10 $$ >/dev/null 2>&1 || true

ENG_WORK=$INTEROP_WORK/engines
rm -rf "$ENG_WORK"
mkdir -p "$ENG_WORK"
unset ENG_EMBEDDED_URI ENG_UNIFIED_URI ENG_POLICY_URI ENG_EMBEDDED_DATA ENG_UNIFIED_DATA ENG_POLICY_DATA ICERUST_BIN
export INTEROP_WORK PYTHONDONTWRITEBYTECODE=1

# build_icerust: the iceberg-rust program, built once per version of its
# Cargo.toml + Cargo.lock (the folder's name is their hash); prints the
# binary. Its target folder stays in the cache too, so a changed lock
# rebuilds only what changed.
build_icerust() {
	local src=$HERE/icerust sum out
	if ! command -v cargo >/dev/null; then
		echo "engines: cargo is not installed (.ci/run installs the pinned Rust toolchain)" >&2
		return 1
	fi
	sum=$(cat "$src/Cargo.toml" "$src/Cargo.lock" "$src/src/main.rs" | sha256sum | cut -c1-12)
	out=$INTEROP_CACHE/icerust-$sum
	if [ ! -e "$out/.complete" ]; then
		rm -rf "$out"
		mkdir -p "$out"
		(cd "$src" && CARGO_TARGET_DIR="$INTEROP_CACHE/icerust-target" nice -n 10 \
			cargo build --release --locked -j 2 -q) >&2 || return 1
		cp "$INTEROP_CACHE/icerust-target/release/icerust" "$out/icerust" || return 1
		touch "$out/.complete"
	fi
	echo "$out/icerust"
}

started=$SECONDS
rc=0
echo "engines: building lakegate, the virtualenv and icerust" >&2
build_lakegate || exit 1
PY=$(interop_venv engines "$HERE/requirements.txt") || exit 1
if ICERUST_BIN=$(build_icerust); then
	export ICERUST_BIN
else
	echo "engines: icerust did not build: the iceberg-rust tests fail" >&2
	unset ICERUST_BIN
	rc=1
fi
echo "engines: ready after $((SECONDS - started))s" >&2

start() { # start NAME CADDYFILE N ADMIN_N [VAR=VALUE ...]: a gateway on base+N
	local name=$1 caddyfile=$2 p
	p=$(port "$3")
	port_free "$p" "lakegate $name" &&
		start_lakegate "engines-$name" "$caddyfile" "$p" "$(port "$4")" "${@:5}" || {
		echo "engines: lakegate $name did not start (see $INTEROP_WORK/engines-$name.log)" >&2
		return 1
	}
	export "ENG_${name^^}_URI=http://127.0.0.1:$p" "ENG_${name^^}_DATA=$INTEROP_WORK/data-engines-$name"
}
start embedded Caddyfile 70 126 || rc=1
start unified interop/unified/Caddyfile 71 127 || rc=1
start policy examples/policy/Caddyfile 72 128 UPSTREAM_URL="http://127.0.0.1:$(port 73)" || rc=1
echo "engines: servers up after $((SECONDS - started))s" >&2

run_pytest engines "$HERE" test_engines.py "$ENG_WORK/engines.xml" "$ENG_WORK/engines.out" "$PY" || rc=1
if ! "$PY" "$HERE/summarize.py" "$ENG_WORK/engines.xml" >"$ENG_WORK/summary.txt"; then
	rc=1
fi
echo "engines: took $((SECONDS - started))s" >&2
sed '$d' "$ENG_WORK/summary.txt"
report "$(tail -n 1 "$ENG_WORK/summary.txt" 2>/dev/null || echo "engines: did not run")"
exit $rc
