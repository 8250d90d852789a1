#!/usr/bin/env bash
# setup_kafka.sh LOG [PROFILE...]: puts the Apache Kafka broker the tests start
# (src/ferry/testing/kafka_broker.h) in ~/.cache/ferry/kafka-<version>/libs, outside the tree:
# the jars of org.apache.kafka:kafka_2.13 and its runtime dependencies, pinned by
# tests/kafka/pom.xml (profile kafka-4, the default: the newest 4.x; kafka-3: the last 3.x line),
# copied from Maven Central by `mvn dependency:copy-dependencies`. Only a missing cache is
# fetched; Maven's output goes to LOG (tools/quietly.sh). Java is Debian's OpenJDK 17
# (`make setup-deb`). `make setup-kafka` runs it for both profiles.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 LOG [kafka-4|kafka-3]..." >&2
  exit 2
fi
log=$1
shift
[ $# -gt 0 ] || set -- kafka-4
root="$(cd "$(dirname "$0")/.." && pwd)"
pom="$root/tests/kafka/pom.xml"
quietly="$root/tools/quietly.sh $log"
cache="${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}"
for profile in "$@"; do
  # The profile's <kafka.version>: the first one after its <id>.
  version=$(sed -n "/<id>$profile<\/id>/,/<\/profile>/s|.*<kafka.version>\(.*\)</kafka.version>.*|\1|p" "$pom")
  if [ -z "$version" ]; then
    echo "setup_kafka: no profile $profile with a kafka.version in $pom" >&2
    exit 2
  fi
  dir="$cache/kafka-$version"
  # The marker is written last: a copy cut short is fetched again.
  [ -f "$dir/.complete" ] && continue
  echo "setup: Apache Kafka $version jars from Maven Central into $dir (log: $log)"
  rm -rf "$dir"
  $quietly mvn -B -q -f "$pom" -P "$profile" dependency:copy-dependencies \
    -DoutputDirectory="$dir/libs"
  ls "$dir"/libs/kafka_2.13-"$version".jar >/dev/null
  touch "$dir/.complete"
done
