# Iceberg's reference REST server (RESTCatalogServer from iceberg-open-api's
# test-fixtures jar, as Iceberg's REST Compatibility Kit runs it): a JDBC
# catalog on SQLite with a local warehouse. Source after ../lib.sh; needs
# REFSERVER_CLASSPATH (run.sh builds it with `mvn dependency:build-classpath`
# on pom.xml, which pins the server's dependencies).
#
#   start_refserver NAME   fresh, empty server on 127.0.0.1:$PORT_REF (it
#                          binds every interface: the fixture has no host
#                          setting), state and log in $INTEROP_WORK/java/NAME/;
#                          REFSERVER_WAREHOUSE_SCHEME=file: gives the warehouse
#                          as a file: URI (clients whose file systems need a
#                          scheme in every location: Trino)
#                          REFSERVER_WAREHOUSE=s3://bucket/prefix puts it
#                          elsewhere (with the CATALOG_* of its FileIO, e.g.
#                          CATALOG_IO__IMPL=org.apache.iceberg.aws.s3.S3FileIO,
#                          in the environment: interop/storage/run.sh)
#
# The fixture reads its catalog properties from CATALOG_* environment
# variables (CATALOG_FOO__BAR_BAZ -> foo-bar.baz, RCKUtils.environmentCatalogConfig):
# uri (JDBC URL), warehouse, rest.port; catalog-impl defaults to JdbcCatalog
# and jdbc.schema-version to V1 (which stores views too).
# refserver_classpath: sets REFSERVER_CLASSPATH from java/pom.xml (test
# scope), built once per version of the pom into $INTEROP_WORK/java.
refserver_classpath() {
	local pom="$INTEROP_ROOT/java/pom.xml" file
	mkdir -p "$INTEROP_WORK/java"
	file="$INTEROP_WORK/java/refserver-classpath-$(sha256sum "$pom" | cut -c1-12).txt"
	if [ ! -s "$file" ]; then
		mvn_cached -f "$pom" dependency:build-classpath -Dmdep.includeScope=test \
			-Dmdep.outputFile="$file" >"$file.log" 2>&1 || {
			cat "$file.log" >&2
			rm -f "$file"
			return 1
		}
	fi
	REFSERVER_CLASSPATH=$(cat "$file")
}

start_refserver() {
	local name=$1 dir="$INTEROP_WORK/java/$1"
	if [ -z "${REFSERVER_CLASSPATH:-}" ]; then
		echo "start_refserver: REFSERVER_CLASSPATH is not set" >&2
		return 1
	fi
	rm -rf "$dir"
	mkdir -p "$dir/warehouse"
	# exec: the recorded pid is the JVM itself, so interop_cleanup stops it.
	(exec env CATALOG_URI="jdbc:sqlite:$dir/catalog.db" CATALOG_WAREHOUSE="${REFSERVER_WAREHOUSE:-${REFSERVER_WAREHOUSE_SCHEME:-}$dir/warehouse}" \
		CATALOG_REST_PORT="$PORT_REF" \
		java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-cp "$REFSERVER_CLASSPATH" org.apache.iceberg.rest.RESTCatalogServer \
		>"$dir/server.log" 2>&1) &
	INTEROP_PIDS+=($!)
	wait_port "$PORT_REF" 60 "$dir/server.log"
}
