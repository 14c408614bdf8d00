#!/usr/bin/env bash
# Builds the Delta Sharing Spark connector (delta-io/delta-sharing's
# `client` and `spark` sbt projects, Scala 2.13) from source and prints the
# folder holding its two jars. Maven Central does not serve
# io.delta:delta-sharing-spark_2.13 here, so the suite builds it.
#
#   interop/sharing-spark/build.sh        # prints $INTEROP_CACHE/delta-sharing-spark-<commit>-spark<ver>
#
# Pinned: the source commit (DSS_COMMIT) and a digest of its file tree
# (DSS_TREE_SHA256: sha256 of `sha256sum` over every file, sorted by path,
# so it does not depend on how the tarball was packed), sbt 1.9.9 (the
# build's own project/build.properties; the launcher from Maven Central),
# and the Spark version it compiles against (DSS_SPARK_VERSION, default
# the build's own 4.0.0: those jars run on pyspark 4.1.4, see README.md).
#
# The source: $INTEROP_CACHE/delta-sharing-src-<commit>.tar.gz when present
# (any tarball of that commit's tree with one top folder, e.g. `git archive
# --prefix=delta-sharing-<commit>/`), else GitHub's codeload tarball of the
# commit, saved there. When neither is there it exits 3 with what to do.
#
# sbt resolves only from Maven Central (sbt.override.build.repos, the
# build's other resolvers are ignored: every plugin of project/plugins.sbt
# is there) and keeps everything under $INTEROP_CACHE/sbt; the jars are
# cached per commit and Spark version, so a warm run starts neither sbt
# nor a download. The build is not patched (DSS_SPARK_VERSION other than
# 4.0.0 rewrites build.sbt's `latestSparkVersion`, nothing else).
# Log: $INTEROP_WORK/sharing-spark/sbt.log.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../lib.sh"

DSS_COMMIT=${DSS_COMMIT:-5c1b00200dadc651c849e65485f2eea88c58205e}
DSS_TREE_SHA256=${DSS_TREE_SHA256:-680a0fcd666d53d52b350cf95040f61d7a8dd39cb570b889f80cc51d42e324e4}
DSS_SPARK_VERSION=${DSS_SPARK_VERSION:-4.0.0}
SBT_VERSION=1.9.9
# The jars' version: the commit's version.sbt.
DSS_VERSION=1.1.0

OUT=$INTEROP_CACHE/delta-sharing-spark-${DSS_COMMIT:0:12}-spark$DSS_SPARK_VERSION
if [ -e "$OUT/.complete" ]; then
	echo "$OUT"
	exit 0
fi

BUILD=$INTEROP_WORK/sharing-spark
mkdir -p "$BUILD"
LOG=$BUILD/sbt.log
TARBALL=$INTEROP_CACHE/delta-sharing-src-$DSS_COMMIT.tar.gz
URL=https://codeload.github.com/delta-io/delta-sharing/tar.gz/$DSS_COMMIT

if [ ! -s "$TARBALL" ]; then
	echo "sharing-spark: fetching $URL" >&2
	if curl -fsSL --max-time 300 -o "$TARBALL.part" "$URL" 2>"$BUILD/curl.err"; then
		mv "$TARBALL.part" "$TARBALL"
	else
		rm -f "$TARBALL.part"
		cat >&2 <<MSG
sharing-spark: no source for delta-io/delta-sharing $DSS_COMMIT:
  $TARBALL is missing and $URL failed ($(tr '\n' ' ' <"$BUILD/curl.err"))
  Provide it from any clone or mirror holding that commit, e.g.
    git --git-dir=<delta-sharing clone>/.git archive --prefix=delta-sharing-$DSS_COMMIT/ $DSS_COMMIT | gzip -n >$TARBALL
  or download $URL on a machine that reaches GitHub and copy it there.
MSG
		exit 3
	fi
fi

SRC=$BUILD/src
rm -rf "$SRC"
mkdir -p "$SRC"
if ! tar -xzf "$TARBALL" -C "$SRC" --strip-components=1; then
	echo "sharing-spark: $TARBALL does not unpack" >&2
	exit 1
fi
tree=$(cd "$SRC" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [ "$tree" != "$DSS_TREE_SHA256" ]; then
	echo "sharing-spark: $TARBALL is not the tree of $DSS_COMMIT (files digest $tree, want $DSS_TREE_SHA256)" >&2
	exit 1
fi
if [ "$DSS_SPARK_VERSION" != 4.0.0 ]; then
	sed -i "s/^val latestSparkVersion = \"4.0.0\"$/val latestSparkVersion = \"$DSS_SPARK_VERSION\"/" "$SRC/build.sbt"
	grep -q "latestSparkVersion = \"$DSS_SPARK_VERSION\"" "$SRC/build.sbt" || {
		echo "sharing-spark: build.sbt has no latestSparkVersion = \"4.0.0\" to rewrite" >&2
		exit 1
	}
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

echo "sharing-spark: building delta-sharing ${DSS_COMMIT:0:12} (Spark $DSS_SPARK_VERSION) with sbt $SBT_VERSION, log $LOG" >&2
t0=$SECONDS
(cd "$SRC" && nice -n 10 java -Xmx2g -Xss4m \
	-Dsbt.override.build.repos=true -Dsbt.repository.config="$SBT_HOME/repositories" \
	-Dsbt.boot.directory="$SBT_HOME/boot" -Dsbt.ivy.home="$SBT_HOME/ivy2" \
	-Dsbt.global.base="$SBT_HOME/global" -Dsbt.coursier.home="$SBT_HOME/coursier" \
	-Dsbt.server.autostart=false -Dsbt.ci=true -Dsbt.log.noformat=true -Dsbt.supershell=false \
	-jar "$LAUNCHER" "client/package" "spark/package" </dev/null) >"$LOG" 2>&1
brc=$?
client=$SRC/client/target/scala-2.13/delta-sharing-client_2.13-$DSS_VERSION.jar
spark=$SRC/spark/target/scala-2.13/delta-sharing-spark_2.13-$DSS_VERSION.jar
if [ $brc -ne 0 ] || [ ! -s "$client" ] || [ ! -s "$spark" ]; then
	grep -E '^\[error\]' "$LOG" | head -n 30 >&2
	echo "sharing-spark: sbt failed (exit $brc) after $((SECONDS - t0))s; log $LOG" >&2
	exit 1
fi
echo "sharing-spark: built in $((SECONDS - t0))s" >&2
rm -rf "$OUT"
mkdir -p "$OUT"
cp "$client" "$spark" "$OUT/" && touch "$OUT/.complete" || exit 1
rm -rf "$SRC"
echo "$OUT"
