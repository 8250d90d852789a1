#!/usr/bin/env bash
# setup_spark_bench.sh LOG: installs what the Spark head-to-head benchmark (tools/bench_spark.sh)
# needs beyond the interop suite's environment (tools/setup_interop.sh: pyspark, delta-spark and
# the Delta jars), outside the tree and only when missing or its pins changed: Spark's Kafka source
# (spark-sql-kafka-0-10, spark-token-provider-kafka-0-10, kafka-clients, commons-pool2; pinned in
# bench/spark/pom.xml) copied by Maven into ~/.cache/ferry/spark-kafka-jars/, without their
# transitive dependencies (the pyspark wheel ships Spark, Hadoop, Scala, lz4, snappy). A stamp
# (tools/maven_jars.sh) holding the pom's hash skips the step when it matches. FERRY_CACHE_DIR (else $XDG_CACHE_HOME/ferry, else ~/.cache/ferry) moves the cache.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 LOG" >&2
  exit 2
fi
log=$1
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}
jars=$cache/spark-kafka-jars
pom=$root/bench/spark/pom.xml

"$root/tools/maven_jars.sh" "$log" "$pom" "$jars" "Spark's Kafka source jars" -DexcludeTransitive=true
