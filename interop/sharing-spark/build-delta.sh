#!/usr/bin/env bash
# Builds delta-io/delta's delta-sharing-spark (the `sharing` sbt project of
# Delta 4.3.1: Spark's Delta Sharing reader on delta-spark, the one that
# reads responseFormat=delta) for Spark 4.1 and prints a folder holding
# every jar Spark needs for it next to pyspark 4.1.4's own:
#
#   interop/sharing-spark/build-delta.sh    # prints $INTEROP_CACHE/delta-sharing-spark-delta-<commit>-...
#   DSS_JARS=$(ls "$dir"/*.jar | paste -sd, -)   # Spark's spark.jars
#
#   delta-sharing-spark_4.1_2.13-4.3.1.jar  this build (sharing/src/main only)
#   delta-sharing-client_2.13-1.1.0.jar     delta-io/delta-sharing's client (build.sh)
#   delta-spark_4.1_2.13-4.3.1.jar, delta-storage, delta-kernel-api,
#   delta-kernel-defaults 4.3.1, jackson-datatype-jdk8  (Maven Central, delta-pom.xml)
#
# Not delta-sharing-spark of build.sh (delta-io/delta-sharing's `spark`
# project): both define io.delta.sharing.spark.DeltaSharingDataSource
# ("deltaSharing"), so Spark gets one or the other, never both.
#
# Why not Maven Central or delta's own build: Maven Central here does not
# serve io.delta:delta-sharing-spark_2.13 / _4.1_2.13 (4.3.1, 4.0.0:
# "Missing") nor its dependency io.delta:delta-sharing-client_2.13 (1.4.0,
# 1.3.0, 1.1.0), and `sbt sharing/package` on delta's build compiles
# delta-spark (and delta-kernel) first. So this compiles only the nine
# Scala files of sharing/src/main with scalac, against the published
# delta-spark jar:
#
#   - Scala 2.13.17 (delta's build.sbt `scala213`): the compiler is pyspark
#     4.1.4's own jars/scala-compiler-2.13.17.jar, so no sbt and no download
#     for the compiler; the Spark it compiles against is pyspark's 4.1.4
#     (delta 4.3.1 builds against 4.1.0);
#   - delta's build.sbt pins delta-sharing-client 1.4.0; this uses the
#     client build.sh builds from delta-sharing 5c1b00200dad (master of
#     2026-08-04, which carries every change of the v1.4.0 tag: v1.4.0 is
#     their merge base plus the version bump; version.sbt there says 1.1.0).
#
# Pinned: the delta commit (DELTA_COMMIT, the commit of tag v4.3.1) and a
# digest of the files this needs (DELTA_TREE_SHA256: sha256 of `sha256sum`
# over every file, sorted by path, as build.sh). The source:
# $INTEROP_CACHE/delta-src-<commit>.tar.gz, a tarball of sharing/src/main,
# build.sbt, version.sbt, LICENSE.txt, NOTICE.txt of that commit with one
# top folder; GitHub is not reachable here, so when it is missing this
# exits 3 with how to make it. The output is cached per delta commit,
# delta-sharing commit and pyspark version.
# Log: $INTEROP_WORK/sharing-spark/scalac-delta.log.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"

DELTA_COMMIT=${DELTA_COMMIT:-54ce02692567fc3e5107a3ae69ebeccdffa7edfe}
DELTA_TREE_SHA256=${DELTA_TREE_SHA256:-19236be370b7d1da93e25b7b483b963d7716eaeffdff9307ee96860e22f62173}
DELTA_VERSION=4.3.1
DELTA_PATHS="sharing/src/main build.sbt version.sbt LICENSE.txt NOTICE.txt"
JAR_NAME=delta-sharing-spark_4.1_2.13-$DELTA_VERSION.jar

BUILD=$INTEROP_WORK/sharing-spark
mkdir -p "$BUILD"
LOG=$BUILD/scalac-delta.log
TARBALL=$INTEROP_CACHE/delta-src-$DELTA_COMMIT.tar.gz

if [ ! -s "$TARBALL" ]; then
	cat >&2 <<MSG
sharing-spark: no source for delta-io/delta $DELTA_COMMIT (v$DELTA_VERSION):
  $TARBALL is missing (GitHub is not reachable from here). Make it from any
  clone or mirror holding that commit:
    git --git-dir=<delta clone>/.git archive --prefix=delta-$DELTA_COMMIT/ $DELTA_COMMIT \\
        $DELTA_PATHS | gzip -n >$TARBALL
  or, where GitHub is reachable, unpack
  https://codeload.github.com/delta-io/delta/tar.gz/$DELTA_COMMIT and tar up those paths
  under one top folder.
MSG
	exit 3
fi

# delta-io/delta-sharing's client (build.sh; exits 3 itself when its source is missing).
DSS_DIR=$("$HERE/build.sh")
brc=$?
[ $brc -eq 0 ] || exit $brc
CLIENT=$(ls "$DSS_DIR"/delta-sharing-client_2.13-*.jar 2>/dev/null | head -n 1)
if [ -z "$CLIENT" ]; then
	echo "sharing-spark: no delta-sharing-client jar in $DSS_DIR" >&2
	exit 1
fi
# pyspark 4.1.4 (interop/python's virtualenv): Spark's jars and the Scala compiler.
PY=$(interop_venv) || exit 1
PYJARS=$("$PY" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))') || exit 1
PYSPARK_VERSION=$("$PY" -c 'import pyspark; print(pyspark.__version__)') || exit 1
SCALAC_JARS=$(ls "$PYJARS"/scala-compiler-2.13.*.jar "$PYJARS"/scala-library-2.13.*.jar "$PYJARS"/scala-reflect-2.13.*.jar 2>/dev/null | paste -sd: -)
case $SCALAC_JARS in
*scala-compiler*scala-library*scala-reflect*) ;;
*)
	echo "sharing-spark: $PYJARS has no scala-compiler/library/reflect 2.13" >&2
	exit 1
	;;
esac

OUT=$INTEROP_CACHE/delta-sharing-spark-delta-${DELTA_COMMIT:0:12}-dss$(basename "$DSS_DIR" | sed -n 's/^delta-sharing-spark-\([0-9a-f]*\)-.*/\1/p')-pyspark$PYSPARK_VERSION
if [ -e "$OUT/.complete" ]; then
	echo "$OUT"
	exit 0
fi

# delta-spark 4.3.1 and the Delta modules it loads, from Maven Central.
DELTA_JARS=$(mvn_jars "$HERE/delta-pom.xml") || exit 1

SRC=$BUILD/delta-src
rm -rf "$SRC"
mkdir -p "$SRC"
if ! tar -xzf "$TARBALL" -C "$SRC" --strip-components=1; then
	echo "sharing-spark: $TARBALL does not unpack" >&2
	exit 1
fi
tree=$(cd "$SRC" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [ "$tree" != "$DELTA_TREE_SHA256" ]; then
	echo "sharing-spark: $TARBALL is not those files of $DELTA_COMMIT (files digest $tree, want $DELTA_TREE_SHA256)" >&2
	exit 1
fi
grep -q "\"$DELTA_VERSION\"" "$SRC/version.sbt" || {
	echo "sharing-spark: $TARBALL's version.sbt is not $DELTA_VERSION" >&2
	exit 1
}

CLASSES=$SRC/classes
mkdir -p "$CLASSES"
# Compile classpath: pyspark's jars (Spark 4.1.4, Hadoop, Guava, Jackson,
# Scala) and the Delta and delta-sharing-client jars.
CP=$(ls "$PYJARS"/*.jar "$DELTA_JARS"/*.jar "$CLIENT" | paste -sd: -)
echo "sharing-spark: compiling delta-sharing-spark $DELTA_VERSION (${DELTA_COMMIT:0:12}) with scalac against pyspark $PYSPARK_VERSION, log $LOG" >&2
t0=$SECONDS
find "$SRC/sharing/src/main/scala" -name '*.scala' | LC_ALL=C sort >"$SRC/sources.txt"
nice -n 10 java -Xmx1536m -Xss4m -cp "$SCALAC_JARS" scala.tools.nsc.Main \
	-nowarn -release 17 -classpath "$CP" -d "$CLASSES" @"$SRC/sources.txt" >"$LOG" 2>&1
crc=$?
if [ $crc -ne 0 ]; then
	grep -E 'error' "$LOG" | head -n 30 >&2
	echo "sharing-spark: scalac failed (exit $crc) after $((SECONDS - t0))s; log $LOG" >&2
	exit 1
fi
cp -r "$SRC/sharing/src/main/resources/." "$CLASSES/"
(cd "$CLASSES" && jar cf "$SRC/$JAR_NAME" .) || exit 1
echo "sharing-spark: compiled in $((SECONDS - t0))s" >&2
rm -rf "$OUT"
mkdir -p "$OUT"
cp "$SRC/$JAR_NAME" "$CLIENT" "$DELTA_JARS"/*.jar "$OUT/" && touch "$OUT/.complete" || exit 1
rm -rf "$SRC"
echo "$OUT"
