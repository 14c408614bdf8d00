# Shared shell functions for the interop suites. Source it from bash:
#   . "$(dirname "$0")/../lib.sh"     (or interop/lib.sh from the repo root)
#
# Every port comes from INTEROP_PORT_BASE (default 18100) so two runs on one
# machine (or two people's suites) do not collide:
#   base+81  lakegate, root Caddyfile (embedded catalog `local`)
#   base+82  lakegate, examples/remote in front of the reference server
#   base+83  lakegate, examples/nessie in front of Nessie
#   base+84  lakegate, examples/policy (identity + roles) in front of the reference server
#   base+85  lakegate, interop/sharing; base+86 interop/uc; base+87 interop/sharing-spark
#   base+88  lakegate, interop/uc-spark; base+89 its recording proxy (ucproxy.py),
#            and interop/uc-sdk's lakegate (the suites run one after the other)
#   base+90  Iceberg's reference REST server (RESTCatalogServer, JDBC on SQLite)
#   base+91  Unity Catalog's own server (interop/uc-spark): base+91 its URL transcoder,
#            base+92 its HTTP API; base+93 the recording proxy in front of it
#   base+94  lakegate, interop/uc-backend (admin base+110); base+95 its Unity Catalog
#            server's URL transcoder, base+96 that server's HTTP API
#   base+97  lakegate, interop/sharing-oracle (admin base+111); base+98 Delta
#            Sharing's reference server there; base+99 its S3 (moto)
#   base+40  Trino (interop/trino); base+41..44 its lakegates: root Caddyfile,
#            examples/remote, examples/nessie, examples/policy (admin base+112..115)
#   base+50  lakegate, interop/flink: root Caddyfile (admin base+120); base+51
#            examples/remote (admin base+121); base+52 examples/nessie (admin
#            base+122); base+53 its reference REST server (base+54 spare)
#   base+60  lakegate, interop/delta-clients (admin base+123); base+61, base+62
#            its two replicas on one PostgreSQL catalog (admin base+124, base+125)
#   base+70  lakegate, interop/engines: root Caddyfile (admin base+126); base+71
#            interop/unified (admin base+127); base+72 examples/policy (admin
#            base+128), whose `remote` upstream base+73 nobody serves
#   base+20  Nessie (HTTP); base+21 Nessie management
#   base+30  the S3 object store Nessie writes to
#   base+31  moto for the storage tests (interop/storage/moto.sh; .ci/run's
#            LAKEGATE_TEST_S3); base+32 lakegate, interop/storage on
#            examples/storage (admin base+129); base+33 its reference REST
#            server on moto; base+34 lakegate on examples/storage-remote in
#            front of it (admin base+130); base+35 Trino on
#            examples/storage; base+36 its STS recorder (interop/storage/sts_recorder.py)
#   base+100.. admin endpoints of the gateways above (base+100+n for gateway n)
# State lives under INTEROP_WORK (default interop/.work, git-ignored);
# downloads under INTEROP_CACHE (default ~/.cache/lakegate-interop), reused
# when present.

INTEROP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$INTEROP_ROOT/.." && pwd)
INTEROP_PORT_BASE=${INTEROP_PORT_BASE:-18100}
INTEROP_WORK=${INTEROP_WORK:-$INTEROP_ROOT/.work}
INTEROP_CACHE=${INTEROP_CACHE:-$HOME/.cache/lakegate-interop}
mkdir -p "$INTEROP_WORK" "$INTEROP_CACHE"

port() { echo $((INTEROP_PORT_BASE + $1)); }
PORT_EMBEDDED=$(port 81)
PORT_GW_REF=$(port 82)
PORT_GW_NESSIE=$(port 83)
PORT_GW_POLICY=$(port 84)
PORT_REF=$(port 90)
PORT_NESSIE=$(port 20)
PORT_NESSIE_MGMT=$(port 21)
PORT_S3=$(port 30)

# Background processes started here; stopped by interop_cleanup (trap it).
INTEROP_PIDS=()
interop_cleanup() {
	local pid
	for pid in "${INTEROP_PIDS[@]:-}"; do
		[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	done
	for pid in "${INTEROP_PIDS[@]:-}"; do
		[ -n "$pid" ] && wait "$pid" 2>/dev/null || true
	done
	INTEROP_PIDS=()
}

# port_free PORT WHAT: fails when something already listens there (a
# leftover from an earlier run would otherwise answer in place of a fresh
# server).
port_free() {
	if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
		echo "127.0.0.1:$1 is already in use ($2); stop it or pick another INTEROP_PORT_BASE" >&2
		return 1
	fi
}

# stop_pidfile FILE: stops the detached server whose pid FILE holds (one
# a script started with setsid to outlive it), waits up to 5 s for it to
# go, and removes FILE.
stop_pidfile() {
	local pid
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	if kill "$pid" 2>/dev/null; then
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	fi
	rm -f "$1"
}

# wait_port PORT [SECONDS] [LOGFILE]: waits until 127.0.0.1:PORT accepts.
wait_port() {
	local port=$1 secs=${2:-60} log=${3:-} i
	for ((i = 0; i < secs * 10; i++)); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "nothing listens on 127.0.0.1:$port after ${secs}s" >&2
	[ -n "$log" ] && tail -n 40 "$log" >&2
	return 1
}

# build_lakegate: builds the gateway binary once per work folder.
LAKEGATE_BIN=${LAKEGATE_BIN:-$INTEROP_WORK/lakegate}
# LAKEGATE_PREBUILT=1 uses the binary already at $LAKEGATE_BIN (one built
# from another checkout, while this one is being edited).
build_lakegate() {
	if [ -n "${LAKEGATE_PREBUILT:-}" ] && [ -x "$LAKEGATE_BIN" ]; then
		return 0
	fi
	(cd "$REPO_ROOT" && go build -o "$LAKEGATE_BIN" ./caddy)
}

# start_lakegate NAME CADDYFILE PORT ADMIN_PORT [VAR=VALUE ...]: runs the
# gateway on CADDYFILE (a path relative to the repository root) with its own
# data folder, listening on 127.0.0.1:PORT. Extra VAR=VALUE pairs are passed
# as environment (UPSTREAM_URL=..., NESSIE_URL=...). Logs: $INTEROP_WORK/NAME.log.
start_lakegate() {
	local name=$1 caddyfile=$2 port=$3 admin=$4
	shift 4
	local log="$INTEROP_WORK/$name.log"
	rm -rf "$INTEROP_WORK/data-$name"
	# exec: the recorded pid is the gateway itself, so interop_cleanup stops it.
	(cd "$REPO_ROOT" && exec env LAKEGATE_ADDR="127.0.0.1:$port" LAKEGATE_ADMIN_PORT="$admin" \
		LAKEGATE_DATA="$INTEROP_WORK/data-$name" LAKEGATE_POLICIES="$REPO_ROOT/policies" "$@" \
		"$LAKEGATE_BIN" run --config "$caddyfile" >"$log" 2>&1) &
	INTEROP_PIDS+=($!)
	wait_port "$port" 60 "$log"
}

# mvn_cached ARGS...: Maven with its local repository in the download cache.
mvn_cached() {
	mvn -B -q -Dmaven.repo.local="$INTEROP_CACHE/m2" "$@"
}

# interop_venv [NAME REQUIREMENTS]: a virtualenv in the cache with a
# suite's requirements file installed (re-installed only when that file
# changes, keyed by its hash); prints its python. Without arguments:
# interop/python/requirements.txt. Fails when the install fails.
interop_venv() {
	local name=${1:-} req=${2:-$INTEROP_ROOT/python/requirements.txt}
	local sum venv
	sum=$(sha256sum "$req" | cut -c1-12)
	venv="$INTEROP_CACHE/venv-${name:+$name-}$sum"
	if [ ! -e "$venv/.complete" ]; then
		rm -rf "$venv"
		python3 -m venv "$venv" >&2 || return 1
		"$venv/bin/python" -m pip install -q --cache-dir "$INTEROP_CACHE/pip" -r "$req" >&2 || return 1
		touch "$venv/.complete"
	fi
	echo "$venv/bin/python"
}

# run_pytest LABEL DIR TESTFILE XML OUT PY: runs one pytest file in DIR
# with JUnit XML, prints the failures' reasons and the short summary (one
# line per test), and returns 0 when pytest ran (all passed or some
# failed: the summary judges), 1 when pytest itself broke.
run_pytest() {
	local label=$1 dir=$2 file=$3 xml=$4 out=$5 py=$6 t0=$SECONDS prc
	rm -f "$xml"
	echo "--- $label" >&2
	(cd "$dir" && nice -n 10 "$py" -m pytest -rA -p no:cacheprovider --tb=short \
		--junitxml="$xml" -o junit_family=xunit2 "$file") >"$out" 2>&1
	prc=$?
	sed -n '/^=* FAILURES =*$/,/^=* \(warnings summary\|PASSES\|short test summary info\) =*$/p' "$out" | sed '$d'
	sed -n '/^=* short test summary info =*$/,$p' "$out"
	echo "  $label took $((SECONDS - t0))s; output: $out" >&2
	case $prc in 0 | 1) return 0 ;; esac
	echo "$label: pytest exited $prc" >&2
	return 1
}

# report LINE: prints a suite's summary line ("java/embedded: 10 passed,
# 0 failed, 2 skipped") and appends it to $INTEROP_WORK/summary.txt, which
# interop/run and .ci/run print at the end.
report() {
	echo "$*"
	echo "$*" >>"$INTEROP_WORK/summary.txt"
}

# mvn_jars POM: the runtime dependencies that POM lists, copied once (per
# version of POM) into $INTEROP_CACHE/jars-<hash>; prints that folder. For
# handing jars to a JVM tool (e.g. Spark's spark.jars) without it resolving
# them itself.
mvn_jars() {
	local pom=$1 dir
	dir="$INTEROP_CACHE/jars-$(sha256sum "$pom" | cut -c1-12)"
	if [ ! -e "$dir/.complete" ]; then
		rm -rf "$dir"
		mvn_cached -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
			-DoutputDirectory="$dir" >&2 || return 1
		touch "$dir/.complete"
	fi
	echo "$dir"
}

# Peers no registry serves: Unity Catalog's server, its Delta SDK tests and
# its Spark connector, and delta-sharing's Spark connector and reference
# server. They are built
# from their projects' sources, by hand, into $INTEROP_CACHE; this
# repository carries none of their code and no recipe that builds them
# (interop/README.md, "Peers built from source", lists each folder and what
# it holds). The pinned commits:
UC_COMMIT=${UC_COMMIT:-c9ed6b142f851b4d32c56eed9e85e917f27d7b7a}
DSS_COMMIT=${DSS_COMMIT:-5c1b00200dadc651c849e65485f2eea88c58205e}

# prebuilt NAME: prints $INTEROP_CACHE/NAME when it is complete (holds
# .complete); otherwise says which folder is missing and returns 3, which
# a suite reports as "not run" and exits 0 for: a fresh cache must not
# block every landing, and the summary line says it did not run.
prebuilt() {
	local dir=$INTEROP_CACHE/$1
	if [ -e "$dir/.complete" ]; then
		echo "$dir"
		return 0
	fi
	echo "no prebuilt $1 in \$INTEROP_CACHE ($dir); see interop/README.md, \"Peers built from source\"" >&2
	return 3
}
