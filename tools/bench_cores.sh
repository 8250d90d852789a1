#!/usr/bin/env bash
# What a second core buys (issue 22, target 5; docs/BENCHMARKS.md "Cores"): not a timed test.
#
#   tools/bench_cores.sh [BUILD_DIR]      # default build/release
#
# 1. starts the embedded mock cluster (`ferry mock-kafka`, 3 brokers) with topics a and b of
#    PARTITIONS partitions each, and preloads COUNT JSON messages of ~400 B into each;
# 2. ROUNDS times, alternating:
#    - one: `taskset -c 0 ferry run --until-caught-up`, one pipeline (topic a -> table), i.e.
#      one pipeline on one core;
#    - two: `taskset -c 0,1 ferry run --until-caught-up`, two pipelines in one process (a and b,
#      each to its own table), i.e. two pipelines on two cores;
#    each into fresh tables checked for COUNT rows apiece;
# 3. prints every run and the ratio of the medians of messages/s, two / one (target >= 1.7),
#    and each run's CPU seconds per million messages (user + sys), which says whether the
#    second pipeline costs the same per message.
# The mock cluster is not pinned: on this 2-core machine it runs beside ferry, on the idle core
# in the one-core runs and sharing both cores in the two-core runs, as a broker on the same host
# would. `MOCK_CPUS` pins it (taskset list) instead.
#
# Environment: COUNT (500000 per topic), PARTITIONS (128: the mock keeps at most 5 MiB per
# partition, FIELD-NOTES), PAYLOAD (285 -> ~400 B), ROUNDS (3),
# MAX_ROWS (100000), MAX_LATENCY (5s), MOCK_CPUS, BENCH_DIR (default: a mktemp dir, removed).
set -euo pipefail
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
COUNT=${COUNT:-500000}
PARTITIONS=${PARTITIONS:-128}
PAYLOAD=${PAYLOAD:-285}
ROUNDS=${ROUNDS:-3}
MAX_ROWS=${MAX_ROWS:-100000}
MAX_LATENCY=${MAX_LATENCY:-5s}
command -v taskset >/dev/null || { echo "taskset is missing (util-linux)" >&2; exit 2; }
if [ "$(nproc)" -lt 2 ]; then
  echo "bench_cores: needs 2 cores, this machine has $(nproc)" >&2
  exit 2
fi

source "$(dirname "$0")/bench_lib.sh"
bench_dir cores

echo "ferry cores benchmark: $COUNT messages per topic, $PARTITIONS partitions each ($FERRY)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

bench_start_mock --topic "a:$PARTITIONS" --topic "b:$PARTITIONS"

t0=$(now)
for topic in a b; do
  "$FERRY" produce kafka --brokers "$BROKERS" --topic "$topic" --count "$COUNT" --timeout 600 \
    -X linger.ms=50 -X batch.size=1000000 \
    --template "{\"id\": {{seq}}, \"dateTime\": \"{{now:MM/dd/yyyy - HH:mm:ss Z}}\", \"user\": \"{{uuid}}\", \"payload\": \"{{rand:$PAYLOAD}}\"}" \
    2>"$DIR/produce-$topic.log"
done
echo "preloaded in $(printf '%.1f' "$(elapsed "$t0" "$(now)")") s"

# pipeline_toml ID TOPIC TABLE: one [[pipeline]] block.
pipeline_toml() {
  cat <<TOML

[[pipeline]]
id = "$1"
table = "$3"
schema = "id BIGINT NOT NULL, dateTime STRING, user STRING, payload STRING"
TOML
  bench_kafka_json_toml "$1" "$2"
}

# run_ferry NAME CPUS TOPIC...: one timed `ferry run --until-caught-up` pinned to CPUS with a
# pipeline per topic; sets ferry_s and cpu_s and checks every table.
run_ferry() {
  local name=$1 cpus=$2
  shift 2
  local toml="$DIR/$name.toml"
  printf '[log]\nlevel = "warn"\n' >"$toml"
  for topic in "$@"; do
    pipeline_toml "$name-$topic" "$topic" "$DIR/delta/$name-$topic" >>"$toml"
  done
  local a b rows
  a=$(now)
  /usr/bin/time -v -o "$DIR/time-$name.txt" taskset -c "$cpus" \
    "$FERRY" run --config "$toml" --until-caught-up 2>"$DIR/ferry-run-$name.log"
  b=$(now)
  ferry_s=$(elapsed "$a" "$b")
  cpu_s=$(echo "$(sed -n 's/.*User time (seconds): *//p' "$DIR/time-$name.txt") + $(sed -n 's/.*System time (seconds): *//p' "$DIR/time-$name.txt")" | bc -l)
  for topic in "$@"; do
    rows=$("$FERRY" table inspect "$DIR/delta/$name-$topic" --json | jq -r .num_rows)
    if [ "${rows:-0}" != "$COUNT" ]; then
      echo "FAIL: $DIR/delta/$name-$topic holds ${rows:-?} rows, expected $COUNT" >&2
      exit 1
    fi
  done
}

printf '\n| round | run | cores | pipelines | seconds | messages/s | CPU s per 1 M messages |\n|---|---|---|---|---|---|---|\n'
: >"$DIR/one.rates"
: >"$DIR/two.rates"
for round in $(seq "$ROUNDS"); do
  run_ferry "one-$round" 0 a
  r=$(echo "$COUNT / $ferry_s" | bc -l)
  echo "$r" >>"$DIR/one.rates"
  printf '| %d | one | 1 | 1 | %.2f | %.0f | %.2f |\n' "$round" "$ferry_s" "$r" \
    "$(echo "$cpu_s * 1000000 / $COUNT" | bc -l)"
  run_ferry "two-$round" 0,1 a b
  r=$(echo "2 * $COUNT / $ferry_s" | bc -l)
  echo "$r" >>"$DIR/two.rates"
  printf '| %d | two | 2 | 2 | %.2f | %.0f | %.2f |\n' "$round" "$ferry_s" "$r" \
    "$(echo "$cpu_s * 1000000 / (2 * $COUNT)" | bc -l)"
done
one=$(median <"$DIR/one.rates")
two=$(median <"$DIR/two.rates")
printf '\nmedian messages/s: one pipeline on one core %.0f, two pipelines on two cores %.0f\n' "$one" "$two"
echo "ratio two / one: $(printf '%.2f' "$(echo "$two / $one" | bc -l)") (target >= 1.7)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
