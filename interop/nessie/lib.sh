# Project Nessie (its Iceberg REST endpoint) on loopback, for the interop
# suites. Source it after interop/lib.sh:
#   . interop/lib.sh; . interop/nessie/lib.sh
#   trap interop_cleanup EXIT
#   start_nessie
#
# What runs:
#   - moto_server (PyPI moto[server], pinned in moto-requirements.txt) as the
#     S3 object store on 127.0.0.1:$PORT_S3, with bucket $NESSIE_BUCKET.
#   - Nessie $NESSIE_VERSION (Maven Central org.projectnessie.nessie:
#     nessie-quarkus:$NESSIE_VERSION:jar:runner, sha256 checked) on
#     127.0.0.1:$PORT_NESSIE (management/health on $PORT_NESSIE_MGMT), with
#     the in-memory version store and two warehouses: `warehouse` at
#     s3://$NESSIE_BUCKET/ (the default one) and `second` at
#     s3://$NESSIE_BUCKET2/ (chosen with prefix main|second, or
#     ?warehouse=second on /v1/config). Nessie 0.99 is built for
#     Java 21: a JDK >= 21 is picked (Temurin 25 here), see nessie_java.
#   Both keep their state in memory only: every start_nessie is a fresh,
#   empty catalog and bucket. Logs go to $INTEROP_WORK/nessie/.
#
# S3 access for clients: Nessie does NOT vend credentials here (request
# signing is off, no STS). Its /v1/config overrides and every LoadTable
# config carry s3.endpoint, s3.path-style-access and client.region, but a
# client must bring the access key itself: NESSIE_CLIENT_PROPS lists what an
# Iceberg client sets (moto accepts any key, but the AWS SDKs refuse to send
# a request without one). With NESSIE_CONFIG_CREDENTIALS=1 before
# start_nessie, Nessie also hands the keys out in /v1/config overrides
# (nessie.catalog.iceberg-config-overrides), so that uri + warehouse alone
# is enough for a client; that also checks a gateway passes overrides on.
#
# Provides:
#   start_nessie            start (or reuse) moto + Nessie, wait until ready
#   stop_nessie             stop both (interop_cleanup does it too)
#   NESSIE_ICEBERG_URL      http://127.0.0.1:$PORT_NESSIE/iceberg (no /v1)
#   NESSIE_S3_ENDPOINT      http://127.0.0.1:$PORT_S3
#   NESSIE_BUCKET, NESSIE_BUCKET2, NESSIE_S3_ACCESS_KEY, NESSIE_S3_SECRET_KEY, NESSIE_S3_REGION
#   NESSIE_CLIENT_PROPS     key=value lines for an Iceberg client's catalog
#   nessie_client_props [PREFIX]  the same lines, each key prefixed (e.g.
#                           spark.sql.catalog.nessie.); nessie_spark_conf
#                           NAME prints them as --conf arguments, one a line
#   nessie_new_bucket NAME  another empty bucket in the same object store

NESSIE_VERSION=0.99.0
NESSIE_JAR_SHA256=ce9fa33e2878bf5ea3981876b9e6204cabc0362b3dd82326b10e47271a78c417
NESSIE_JAR="$INTEROP_CACHE/m2/org/projectnessie/nessie/nessie-quarkus/$NESSIE_VERSION/nessie-quarkus-$NESSIE_VERSION-runner.jar"
NESSIE_HEAP=${NESSIE_HEAP:-512m}
NESSIE_BUCKET=${NESSIE_BUCKET:-warehouse}
NESSIE_BUCKET2=${NESSIE_BUCKET2:-$NESSIE_BUCKET-second}
NESSIE_S3_ACCESS_KEY=${NESSIE_S3_ACCESS_KEY:-lakegate-interop}
NESSIE_S3_SECRET_KEY=${NESSIE_S3_SECRET_KEY:-lakegate-interop-secret}
NESSIE_S3_REGION=${NESSIE_S3_REGION:-us-east-1}
NESSIE_ICEBERG_URL="http://127.0.0.1:$PORT_NESSIE/iceberg"
NESSIE_S3_ENDPOINT="http://127.0.0.1:$PORT_S3"
NESSIE_RUN="$INTEROP_WORK/nessie"
NESSIE_PID=
NESSIE_S3_PID=

# What an Iceberg client needs for the object store, besides uri and
# warehouse. Java (S3FileIO from iceberg-aws-bundle) reads s3.* and
# client.region; PyIceberg reads s3.* (s3.region; client.region too in
# recent versions); Spark takes the same keys under spark.sql.catalog.<name>.
NESSIE_CLIENT_PROPS="io-impl=org.apache.iceberg.aws.s3.S3FileIO
s3.endpoint=$NESSIE_S3_ENDPOINT
s3.path-style-access=true
s3.access-key-id=$NESSIE_S3_ACCESS_KEY
s3.secret-access-key=$NESSIE_S3_SECRET_KEY
s3.region=$NESSIE_S3_REGION
client.region=$NESSIE_S3_REGION"

nessie_client_props() {
	local prefix=${1:-} line
	while IFS= read -r line; do
		[ -n "$line" ] && printf '%s%s\n' "$prefix" "$line"
	done <<<"$NESSIE_CLIENT_PROPS"
}

# nessie_spark_conf CATALOG: --conf lines for a Spark catalog on top of
# uri/warehouse (which the caller sets: direct or through lakegate).
nessie_spark_conf() {
	nessie_client_props "spark.sql.catalog.$1." | sed 's/^/--conf /'
}

# nessie_java: a java >= 21 (NESSIE_JAVA, JAVA_HOME, then /usr/lib/jvm/*).
nessie_java() {
	local j v
	for j in "${NESSIE_JAVA:-}" "${JAVA_HOME:+$JAVA_HOME/bin/java}" \
		/usr/lib/jvm/temurin-25-jdk-amd64/bin/java /usr/lib/jvm/*/bin/java java; do
		[ -n "$j" ] && command -v "$j" >/dev/null 2>&1 || continue
		v=$("$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
		if [ -n "$v" ] && [ "${v%%.*}" -ge 21 ] 2>/dev/null; then
			echo "$j"
			return 0
		fi
	done
	echo "Nessie $NESSIE_VERSION needs Java 21 or newer; none found (set NESSIE_JAVA)" >&2
	return 1
}

# nessie_fetch: the runner jar from Maven Central into the cache's m2.
nessie_fetch() {
	if [ ! -f "$NESSIE_JAR" ]; then
		mvn_cached dependency:get -Dtransitive=false \
			-Dartifact="org.projectnessie.nessie:nessie-quarkus:$NESSIE_VERSION:jar:runner" >&2 || return 1
	fi
	if ! echo "$NESSIE_JAR_SHA256  $NESSIE_JAR" | sha256sum -c --status; then
		echo "checksum mismatch for $NESSIE_JAR; removing it" >&2
		rm -f "$NESSIE_JAR"
		return 1
	fi
}

# nessie_venv REQUIREMENTS NAME: a venv in the cache with that pinned
# requirements file (re-made only when the file changes); prints its bin/.
nessie_venv() {
	local req=$1 sum venv
	sum=$(sha256sum "$req" | cut -c1-12)
	venv="$INTEROP_CACHE/venv-$2-$sum"
	if [ ! -e "$venv/.complete" ]; then
		rm -rf "$venv"
		python3 -m venv "$venv" >&2 &&
			"$venv/bin/python" -m pip install -q --cache-dir "$INTEROP_CACHE/pip" -r "$req" >&2 ||
			return 1
		touch "$venv/.complete"
	fi
	echo "$venv/bin"
}

# nessie_moto: prints the moto_server path (moto-requirements.txt).
nessie_moto() {
	local bin
	bin=$(nessie_venv "$INTEROP_ROOT/nessie/moto-requirements.txt" moto) || return 1
	echo "$bin/moto_server"
}

# _nessie_stop_leftover NAME: ends the process a previous run with this
# INTEROP_WORK left (its pid file), and only if it is still that program.
_nessie_stop_leftover() {
	local pidfile="$NESSIE_RUN/$1.pid" pid i
	[ -f "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	rm -f "$pidfile"
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 0
	if tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -e "$2"; then
		echo "stopping leftover $1 (pid $pid) from an earlier run" >&2
		kill "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
}

_nessie_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# nessie_new_bucket NAME: creates an empty bucket in the object store.
nessie_new_bucket() {
	local code
	code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$NESSIE_S3_ENDPOINT/$1")
	[ "$code" = 200 ] || { echo "creating bucket $1 answered HTTP $code" >&2; return 1; }
}

# start_s3: moto on 127.0.0.1:$PORT_S3 with empty $NESSIE_BUCKET and
# $NESSIE_BUCKET2.
start_s3() {
	if _nessie_alive "$NESSIE_S3_PID"; then return 0; fi
	local moto
	moto=$(nessie_moto) || return 1
	mkdir -p "$NESSIE_RUN"
	_nessie_stop_leftover s3 "moto_server -H 127.0.0.1 -p $PORT_S3"
	port_free "$PORT_S3" "the S3 object store" || return 1
	# exec: the recorded pid is moto's own, so interop_cleanup ends it.
	(exec "$moto" -H 127.0.0.1 -p "$PORT_S3" >"$NESSIE_RUN/s3.log" 2>&1) &
	NESSIE_S3_PID=$!
	INTEROP_PIDS+=("$NESSIE_S3_PID")
	echo "$NESSIE_S3_PID" >"$NESSIE_RUN/s3.pid"
	wait_port "$PORT_S3" 60 "$NESSIE_RUN/s3.log" || return 1
	nessie_new_bucket "$NESSIE_BUCKET" && nessie_new_bucket "$NESSIE_BUCKET2"
}

# start_nessie: the object store and Nessie, both fresh; returns once
# Nessie's readiness check (which includes the warehouse's object store)
# is UP. A second call in the same shell reuses what runs.
start_nessie() {
	if _nessie_alive "$NESSIE_PID" && _nessie_alive "$NESSIE_S3_PID"; then return 0; fi
	local java log="$NESSIE_RUN/nessie.log" i t0=$SECONDS
	local -a props
	java=$(nessie_java) || return 1
	nessie_fetch || return 1
	mkdir -p "$NESSIE_RUN"
	_nessie_stop_leftover nessie "quarkus.http.port=$PORT_NESSIE .*nessie-quarkus-"
	port_free "$PORT_NESSIE" Nessie || return 1
	port_free "$PORT_NESSIE_MGMT" "Nessie management" || return 1
	start_s3 || return 1
	props=(
		-Dquarkus.http.host=127.0.0.1
		-Dquarkus.http.port="$PORT_NESSIE"
		-Dquarkus.management.host=127.0.0.1
		-Dquarkus.management.port="$PORT_NESSIE_MGMT"
		-Dquarkus.log.file.enable=false
		-Dnessie.version.store.type=IN_MEMORY
		-Dnessie.catalog.default-warehouse=warehouse
		-Dnessie.catalog.warehouses.warehouse.location="s3://$NESSIE_BUCKET/"
		-Dnessie.catalog.warehouses.second.location="s3://$NESSIE_BUCKET2/"
		-Dnessie.catalog.service.s3.default-options.endpoint="$NESSIE_S3_ENDPOINT/"
		-Dnessie.catalog.service.s3.default-options.path-style-access=true
		-Dnessie.catalog.service.s3.default-options.region="$NESSIE_S3_REGION"
		-Dnessie.catalog.service.s3.default-options.request-signing-enabled=false
		-Dnessie.catalog.service.s3.default-options.access-key=urn:nessie-secret:quarkus:lakegate-interop.s3
		-Dlakegate-interop.s3.name="$NESSIE_S3_ACCESS_KEY"
		-Dlakegate-interop.s3.secret="$NESSIE_S3_SECRET_KEY"
	)
	if [ "${NESSIE_CONFIG_CREDENTIALS:-0}" = 1 ]; then
		props+=(
			-Dnessie.catalog.iceberg-config-overrides.s3.access-key-id="$NESSIE_S3_ACCESS_KEY"
			-Dnessie.catalog.iceberg-config-overrides.s3.secret-access-key="$NESSIE_S3_SECRET_KEY"
		)
	fi
	# A small heap, serial GC and C1 only: quick to start on 2 shared cores.
	(exec "$java" -Xmx"$NESSIE_HEAP" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		"${props[@]}" ${NESSIE_JAVA_OPTS:-} -jar "$NESSIE_JAR" >"$log" 2>&1) &
	NESSIE_PID=$!
	INTEROP_PIDS+=("$NESSIE_PID")
	echo "$NESSIE_PID" >"$NESSIE_RUN/nessie.pid"
	for ((i = 0; i < 1800; i++)); do
		if curl -sf "http://127.0.0.1:$PORT_NESSIE_MGMT/q/health/ready" >/dev/null 2>&1; then
			echo "Nessie $NESSIE_VERSION ready on $NESSIE_ICEBERG_URL after $((SECONDS - t0))s (S3 $NESSIE_S3_ENDPOINT, bucket $NESSIE_BUCKET)" >&2
			return 0
		fi
		if ! _nessie_alive "$NESSIE_PID"; then
			echo "Nessie exited during start-up:" >&2
			grep -v '^[[:space:]]*at ' "$log" | tail -n 30 >&2
			return 1
		fi
		sleep 0.1
	done
	echo "Nessie not ready after 180s:" >&2
	tail -n 40 "$log" >&2
	return 1
}

# stop_nessie: ends Nessie and the object store started by this shell.
stop_nessie() {
	local pid
	for pid in "$NESSIE_PID" "$NESSIE_S3_PID"; do
		if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then wait "$pid" 2>/dev/null || true; fi
	done
	rm -f "$NESSIE_RUN/nessie.pid" "$NESSIE_RUN/s3.pid"
	NESSIE_PID= NESSIE_S3_PID=
}
