#!/usr/bin/env bash
# maven_jars.sh LOG POM DIR WHAT [MAVEN_ARG...]: copies the jars POM pins into DIR (outside the
# tree) with `mvn dependency:copy-dependencies`, only when DIR's stamp (the hash of POM and the
# arguments) does not match: a copy cut short or made from other pins is made again. Maven's
# output goes to LOG (tools/quietly.sh), printed only when it fails. WHAT names the jars in the
# one line printed when it copies. Used by setup_interop.sh (Delta's jars) and
# setup_spark_bench.sh (Spark's Kafka source).
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 LOG POM DIR WHAT [MAVEN_ARG...]" >&2
  exit 2
fi
log=$1 pom=$2 dir=$3 what=$4
shift 4
root=$(cd "$(dirname "$0")/.." && pwd)
want=$( (sha256sum <"$pom"; echo "$*") | sha256sum | cut -d' ' -f1)
[ "$(cat "$dir/.ferry-stamp" 2>/dev/null)" = "$want" ] && exit 0
echo "setup: $what in $dir (${pom#"$root"/}; log: $log)"
rm -rf "$dir"
mkdir -p "$dir"
"$root/tools/quietly.sh" "$log" mvn --batch-mode --no-transfer-progress -f "$pom" \
  dependency:copy-dependencies -DoutputDirectory="$dir" "$@"
echo "$want" >"$dir/.ferry-stamp"
