# Trino for the interop suites (interop/trino/run.sh, interop/storage/run.sh):
# the pinned server, the Java that runs it, its configuration and its start.
# Source it after ../lib.sh:
#   . "$INTEROP_ROOT/trino/lib.sh"
#   TRINO_JAVA_BIN=$(trino_java) && trino_install      (sets TRINO_HOME)
#   trino_config ETC PORT                              (catalogs go in ETC/catalog)
#   start_trino WORK ETC PORT                          (log: WORK/trino.log)
# Trino: $TRINO_VERSION's trino-server-core tarball and trino-iceberg plugin
# zip from Maven Central (sha256 pinned below), unpacked once into
# $INTEROP_CACHE/trino-$TRINO_VERSION with only the Iceberg plugin; run by a
# JDK >= 24 (Temurin 25 here) with a $TRINO_HEAP heap (default 2 GB).

TRINO_VERSION=476
TRINO_CORE_SHA256=0f388f9967c177ae70a47c099082fc95387f0c3cb96d8000d1d41fc3a5223158
TRINO_ICEBERG_SHA256=99edba5b491ed94d599aeb61e0794272d3569d8b563f3bb8569e8a49daa87b6c
TRINO_HEAP=${TRINO_HEAP:-2G}

# trino_java: a java >= 24 (Trino 476's minimum): TRINO_JAVA, then the JDKs here.
trino_java() {
	local j v
	for j in "${TRINO_JAVA:-}" /usr/lib/jvm/temurin-25-jdk-amd64/bin/java "${JAVA_HOME:+$JAVA_HOME/bin/java}" \
		/usr/lib/jvm/*/bin/java java; do
		[ -n "$j" ] && command -v "$j" >/dev/null 2>&1 || continue
		v=$("$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
		if [ -n "$v" ] && [ "${v%%.*}" -ge 24 ] 2>/dev/null; then
			echo "$j"
			return 0
		fi
	done
	return 1
}

# trino_install: the server (core tarball + Iceberg plugin) in the cache;
# sets TRINO_HOME.
trino_install() {
	local m2="$INTEROP_CACHE/m2/io/trino" core iceberg
	TRINO_HOME="$INTEROP_CACHE/trino-$TRINO_VERSION"
	[ -e "$TRINO_HOME/.complete" ] && return 0
	core="$m2/trino-server-core/$TRINO_VERSION/trino-server-core-$TRINO_VERSION.tar.gz"
	iceberg="$m2/trino-iceberg/$TRINO_VERSION/trino-iceberg-$TRINO_VERSION.zip"
	[ -f "$core" ] || mvn_cached -Dstyle.color=never dependency:get -Dtransitive=false \
		-Dartifact="io.trino:trino-server-core:$TRINO_VERSION:tar.gz" >&2 || return 1
	[ -f "$iceberg" ] || mvn_cached -Dstyle.color=never dependency:get -Dtransitive=false \
		-Dartifact="io.trino:trino-iceberg:$TRINO_VERSION:zip" >&2 || return 1
	if ! echo "$TRINO_CORE_SHA256  $core" | sha256sum -c --status ||
		! echo "$TRINO_ICEBERG_SHA256  $iceberg" | sha256sum -c --status; then
		echo "checksum mismatch for Trino $TRINO_VERSION's downloads; removing them" >&2
		rm -f "$core" "$iceberg"
		return 1
	fi
	rm -rf "$TRINO_HOME" "$TRINO_HOME.tmp"
	mkdir -p "$TRINO_HOME.tmp"
	tar xzf "$core" -C "$TRINO_HOME.tmp" --strip-components=1 || return 1
	# The core's own plugins (exchange and spooling file systems, Python
	# functions, geospatial, authenticators, resource groups, session
	# properties, the keystore secrets plugin) are not needed here: only
	# the Iceberg connector, which keeps start-up and memory small.
	rm -rf "$TRINO_HOME.tmp/plugin" "$TRINO_HOME.tmp/secrets-plugin"
	mkdir -p "$TRINO_HOME.tmp/plugin"
	unzip -q "$iceberg" -d "$TRINO_HOME.tmp/plugin" || return 1
	mv "$TRINO_HOME.tmp/plugin/trino-iceberg-$TRINO_VERSION" "$TRINO_HOME.tmp/plugin/iceberg" || return 1
	mv "$TRINO_HOME.tmp" "$TRINO_HOME" && touch "$TRINO_HOME/.complete"
}

# trino_config ETC PORT: a single-node coordinator on 127.0.0.1:PORT whose
# catalogs are ETC/catalog/*.properties, with the Iceberg plugin only.
trino_config() {
	local etc=$1 port=$2
	mkdir -p "$etc/catalog"
	cat >"$etc/config.properties" <<-EOF
	coordinator=true
	node-scheduler.include-coordinator=true
	http-server.http.port=$port
	discovery.uri=http://127.0.0.1:$port
	query.max-memory=1GB
	query.max-memory-per-node=1GB
	node.environment=interop
	node.id=lakegate-interop
	node.bind-ip=127.0.0.1
	node.internal-address=127.0.0.1
	catalog.config-dir=$etc/catalog
	plugin.dir=$TRINO_HOME/plugin
	EOF
	cat >"$etc/log.properties" <<-EOF
	io.trino=INFO
	io.airlift=WARN
	org.apache.iceberg=WARN
	EOF
}

# start_trino WORK ETC PORT: runs Trino on trino_config's ETC and waits
# until it serves (at most 180 s); its pid joins INTEROP_PIDS.
start_trino() {
	local work=$1 etc=$2 port=$3 t0=$SECONDS i pid
	local log=$work/trino.log
	port_free "$port" Trino || return 1
	# exec: the recorded pid is the JVM itself, so interop_cleanup stops it.
	(cd "$work" && exec "$TRINO_JAVA_BIN" -Xmx"$TRINO_HEAP" -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError \
		-XX:ReservedCodeCacheSize=256M -Djdk.attach.allowAttachSelf=true -XX:+EnableDynamicAgentLoading \
		-Dconfig="$etc/config.properties" -Dlog.levels-file="$etc/log.properties" \
		-cp "$TRINO_HOME/lib/*" io.trino.server.TrinoServer >"$log" 2>&1) &
	pid=$!
	INTEROP_PIDS+=($pid)
	for ((i = 0; i < 1800; i++)); do
		if curl -sf "http://127.0.0.1:$port/v1/info" 2>/dev/null | grep -q '"starting":false'; then
			echo "Trino $TRINO_VERSION up on 127.0.0.1:$port after $((SECONDS - t0))s" >&2
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "Trino exited during start-up:" >&2
			grep -v '^[[:space:]]*at ' "$log" | tail -n 30 >&2
			return 1
		fi
		sleep 0.1
	done
	echo "Trino not up after 180s:" >&2
	tail -n 40 "$log" >&2
	return 1
}
