#!/usr/bin/env bash
# Builds Unity Catalog's Spark connector (UCSingleCatalog: the `spark`,
# `client` and `hadoop` sbt projects) and UC's own server (the oracle
# target of run.sh) from source, and prints the folder holding them:
#
#   interop/uc-spark/build.sh     # prints $INTEROP_CACHE/uc-spark-<commit>
#
#   <folder>/connector/*.jar      unitycatalog-spark_4.1_2.13, -client, -hadoop (0.7.0-SNAPSHOT)
#   <folder>/server/lib/*.jar     the server's runtime classpath (unitycatalog-server and its dependencies)
#   <folder>/server/etc/conf/     the source tree's etc/conf (the server reads it from its cwd)
#
# Neither is on Maven Central: delta-spark 4.3.1 is, and speaks UC's Delta
# REST API only through this connector (README.md). Pinned: the source
# commit (UC_COMMIT), a digest of its file tree (UC_TREE_SHA256: sha256 of
# `sha256sum` over every file, sorted by path, as sharing-spark/build.sh
# computes it), sbt 1.9.9 (the build's project/build.properties; the
# launcher from Maven Central), Spark 4.1.0 (project/spark-versions.json's
# default: the jar runs on pyspark 4.1.4). Needs JDK 17: the build's Lombok
# 1.18.32 does not run on JDK 25 (interop/catalogs.md, "Unity Catalog OSS
# from source"); UC_JAVA overrides the `java` used.
#
# The source: $INTEROP_CACHE/unitycatalog-src-<commit>.tar.gz, a `git archive`
# of the commit without docs/ (one of docs/' blobs is missing from the
# mirror this was taken from, and GitHub's tarball would hold docs/ and so
# not match the digest). When it is missing this exits 3 and says how to
# make it.
#
# sbt resolves only from Maven Central (sbt.override.build.repos) and keeps
# everything under $INTEROP_CACHE/sbt; the result is cached per commit, so a
# warm run starts no sbt. The build is not patched.
# Log: $INTEROP_WORK/uc-spark/sbt.log.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"

UC_COMMIT=${UC_COMMIT:-c9ed6b142f851b4d32c56eed9e85e917f27d7b7a}
UC_TREE_SHA256=${UC_TREE_SHA256:-174495d89c8c9a2da8d271cb54ef9e8fafd10142626f19868bc71722c14ef172}
SBT_VERSION=1.9.9
# The jars' version: the commit's version.sbt.
UC_VERSION=0.7.0-SNAPSHOT
JAVA=${UC_JAVA:-java}

OUT=$INTEROP_CACHE/uc-spark-${UC_COMMIT:0:12}
if [ -e "$OUT/.complete" ]; then
	echo "$OUT"
	exit 0
fi

BUILD=$INTEROP_WORK/uc-spark
mkdir -p "$BUILD"
# One build at a time per work folder (two would share $BUILD/src); the
# second finds the first's result.
exec 9>"$BUILD/build.lock"
flock 9
if [ -e "$OUT/.complete" ]; then
	echo "$OUT"
	exit 0
fi
LOG=$BUILD/sbt.log
TARBALL=$INTEROP_CACHE/unitycatalog-src-$UC_COMMIT.tar.gz

if [ ! -s "$TARBALL" ]; then
	cat >&2 <<MSG
uc-spark: no source for unitycatalog/unitycatalog $UC_COMMIT:
  $TARBALL is missing. Make it from any clone or mirror holding that commit:
    git --git-dir=<unitycatalog clone>/.git archive --prefix=unitycatalog-$UC_COMMIT/ $UC_COMMIT -- . ':(exclude)docs' | gzip -n >$TARBALL
  (docs/ is left out: the files digest this build checks is of the tree without it.)
MSG
	exit 3
fi

SRC=$BUILD/src
rm -rf "$SRC"
mkdir -p "$SRC"
if ! tar -xzf "$TARBALL" -C "$SRC" --strip-components=1; then
	echo "uc-spark: $TARBALL does not unpack" >&2
	exit 1
fi
tree=$(cd "$SRC" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [ "$tree" != "$UC_TREE_SHA256" ]; then
	echo "uc-spark: $TARBALL is not the tree of $UC_COMMIT without docs/ (files digest $tree, want $UC_TREE_SHA256)" >&2
	exit 1
fi

# The sbt launcher from Maven Central, then sbt itself, its plugins and the
# build's dependencies, all from Maven Central only.
LAUNCHER=$INTEROP_CACHE/m2/org/scala-sbt/sbt-launch/$SBT_VERSION/sbt-launch-$SBT_VERSION.jar
if [ ! -s "$LAUNCHER" ]; then
	mvn_cached -Dstyle.color=never dependency:get -Dartifact=org.scala-sbt:sbt-launch:$SBT_VERSION -Dtransitive=false >&2 || exit 1
fi
SBT_HOME=$INTEROP_CACHE/sbt
mkdir -p "$SBT_HOME"
cat >"$SBT_HOME/repositories" <<'REPOS'
[repositories]
  local
  maven-central: https://repo1.maven.org/maven2/
REPOS

# One sbt invocation: the three connector jars and the server's jar
# (`server/package`, which also writes server/target/classpath: its
# runtime classpath, that jar included), rather than the shaded assembly,
# which would also compile the server's tests.
echo "uc-spark: building unitycatalog ${UC_COMMIT:0:12} (connector + server) with sbt $SBT_VERSION, log $LOG" >&2
t0=$SECONDS
(cd "$SRC" && nice -n 10 "$JAVA" -Xmx3g -Xss4m \
	-Dsbt.override.build.repos=true -Dsbt.repository.config="$SBT_HOME/repositories" \
	-Dsbt.boot.directory="$SBT_HOME/boot" -Dsbt.ivy.home="$SBT_HOME/ivy2" \
	-Dsbt.global.base="$SBT_HOME/global" -Dsbt.coursier.home="$SBT_HOME/coursier" \
	-Dsbt.server.autostart=false -Dsbt.ci=true -Dsbt.log.noformat=true -Dsbt.supershell=false \
	-jar "$LAUNCHER" client/package hadoop/package spark/package server/package </dev/null) >"$LOG" 2>&1
brc=$?
jars=("$SRC/connectors/spark/target/scala-2.13/unitycatalog-spark_4.1_2.13-$UC_VERSION.jar"
	"$SRC/clients/java/target/unitycatalog-client-$UC_VERSION.jar"
	"$SRC/connectors/hadoop/target/unitycatalog-hadoop-$UC_VERSION.jar")
server_cp=$SRC/server/target/classpath
missing=
for j in "${jars[@]}" "$SRC/server/target/unitycatalog-server-$UC_VERSION.jar" "$server_cp"; do
	[ -s "$j" ] || missing="$missing $j"
done
if [ $brc -ne 0 ] || [ -n "$missing" ]; then
	grep -E '^\[error\]' "$LOG" | head -n 30 >&2
	echo "uc-spark: sbt failed (exit $brc${missing:+, missing$missing}) after $((SECONDS - t0))s; log $LOG" >&2
	exit 1
fi
echo "uc-spark: built in $((SECONDS - t0))s" >&2
rm -rf "$OUT"
mkdir -p "$OUT/connector" "$OUT/server/lib" "$OUT/server/etc"
cp "${jars[@]}" "$OUT/connector/" || exit 1
i=0
IFS=: read -r -a entries <"$server_cp"
for e in "${entries[@]}"; do
	# Numbered, so `ls | sort` gives the classpath's order back.
	i=$((i + 1))
	if [ -f "$e" ]; then
		cp "$e" "$OUT/server/lib/$(printf '%03d' "$i")-$(basename "$e")" || exit 1
	elif [ -d "$e" ]; then
		(cd "$e" && jar cf "$OUT/server/lib/$(printf '%03d' "$i")-$(echo "${e#"$SRC"/}" | tr '/' '-').jar" .) || exit 1
	fi
done
cp -r "$SRC/etc/conf" "$OUT/server/etc/conf" || exit 1
touch "$OUT/.complete"
rm -rf "$SRC"
echo "$OUT"
