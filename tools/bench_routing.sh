#!/usr/bin/env bash
# One routed pipeline against ten filtering pipelines and against one table (issue 21;
# docs/BENCHMARKS.md "Routing"): not a timed test.
#
#   tools/bench_routing.sh [BUILD_DIR]      # default build/release
#
# 1. starts the embedded mock cluster (`ferry mock-kafka`, 3 brokers) with one topic of
#    PARTITIONS partitions and preloads COUNT JSON messages of ~300 B, each with an `event_type`
#    of TYPES kinds in turn (t0, t1, ...);
# 2. ROUNDS times, in turn, each a timed `ferry run --until-caught-up` into fresh tables:
#    - routed: one pipeline, `table = ".../{field:event_type}"`: TYPES tables;
#    - filtered: TYPES pipelines in one process, each reading the whole topic with
#      `where = "event_type = 'tK'"` into its own table (what users do without routing);
#    - single: one pipeline, every message into one table (the ceiling);
#    each checked: COUNT rows in all, COUNT / TYPES in each type's table;
# 3. prints every run and the medians' ratios: routed / filtered (messages delivered per second,
#    target >= 4) and routed / single (target >= 0.8), with CPU seconds per million messages.
#
# Environment: COUNT (1000000), TYPES (10), PARTITIONS (128: the mock keeps at most 5 MiB per
# partition, FIELD-NOTES), PAYLOAD (200), ROUNDS (3), MAX_ROWS (100000), MAX_LATENCY (5s),
# QUEUE (routing.queue_messages, default ferry's), MOCK_CPUS, BENCH_DIR (default: a mktemp dir,
# removed).
set -euo pipefail
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
COUNT=${COUNT:-1000000}
TYPES=${TYPES:-10}
PARTITIONS=${PARTITIONS:-128}
PAYLOAD=${PAYLOAD:-200}
ROUNDS=${ROUNDS:-3}
MAX_ROWS=${MAX_ROWS:-100000}
MAX_LATENCY=${MAX_LATENCY:-5s}
QUEUE=${QUEUE:-}
if [ $((COUNT % TYPES)) != 0 ]; then
  echo "bench_routing: COUNT ($COUNT) must be a multiple of TYPES ($TYPES)" >&2
  exit 2
fi

source "$(dirname "$0")/bench_lib.sh"
bench_dir routing

echo "ferry routing benchmark: $COUNT messages of $TYPES event types, $PARTITIONS partitions ($FERRY)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

bench_start_mock --topic "events:$PARTITIONS"

types=""
for k in $(seq 0 $((TYPES - 1))); do types="$types${types:+,}t$k"; done
t0=$(now)
"$FERRY" produce kafka --brokers "$BROKERS" --topic events --count "$COUNT" --timeout 600 \
  -X linger.ms=50 -X batch.size=1000000 \
  --template "{\"id\": {{seq}}, \"event_type\": \"{{cycle:$types}}\", \"user\": \"{{uuid}}\", \"payload\": \"{{rand:$PAYLOAD}}\"}" \
  2>"$DIR/produce.log"
echo "preloaded in $(printf '%.1f' "$(elapsed "$t0" "$(now)")") s"

SCHEMA="id BIGINT NOT NULL, event_type STRING, user STRING, payload STRING"

# pipeline_toml ID TABLE [WHERE]: one [[pipeline]] block reading the whole topic.
pipeline_toml() {
  cat <<TOML

[[pipeline]]
id = "$1"
table = "$2"
schema = "$SCHEMA"
TOML
  if [ -n "${3:-}" ]; then echo "where = \"$3\""; fi
  if [[ "$2" == *"{field:"* ]]; then
    printf '\n[pipeline.table_name_rules]\nfallback = "%s"\n' "$DIR/delta/$1-unknown"
    if [ -n "$QUEUE" ]; then printf '\n[pipeline.routing]\nqueue_messages = %s\n' "$QUEUE"; fi
  fi
  bench_kafka_json_toml "$1" events
}

rows_of() {
  "$FERRY" table inspect "$1" --json | jq -r .num_rows
}
expect_rows() {
  local rows
  rows=$(rows_of "$1")
  if [ "${rows:-0}" != "$2" ]; then
    echo "FAIL: $1 holds ${rows:-?} rows, expected $2" >&2
    exit 1
  fi
}

# run_ferry NAME: one timed `ferry run --until-caught-up` of $DIR/NAME.toml; sets ferry_s,
# cpu_s and rss_mib.
run_ferry() {
  local name=$1 a b
  a=$(now)
  /usr/bin/time -v -o "$DIR/time-$name.txt" \
    "$FERRY" run --config "$DIR/$name.toml" --until-caught-up 2>"$DIR/ferry-run-$name.log"
  b=$(now)
  ferry_s=$(elapsed "$a" "$b")
  cpu_s=$(echo "$(sed -n 's/.*User time (seconds): *//p' "$DIR/time-$name.txt") + $(sed -n 's/.*System time (seconds): *//p' "$DIR/time-$name.txt")" | bc -l)
  rss_mib=$(( $(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$DIR/time-$name.txt") / 1024 ))
}

report() {  # KIND ROUND
  local r
  r=$(echo "$COUNT / $ferry_s" | bc -l)
  echo "$r" >>"$DIR/$1.rates"
  printf '| %d | %s | %.2f | %.0f | %.2f | %d |\n' "$2" "$1" "$ferry_s" "$r" \
    "$(echo "$cpu_s * 1000000 / $COUNT" | bc -l)" "$rss_mib"
}

printf '\n| round | run | seconds | messages delivered/s | CPU s per 1 M messages | peak RSS MiB |\n|---|---|---|---|---|---|\n'
: >"$DIR/routed.rates"
: >"$DIR/filtered.rates"
: >"$DIR/single.rates"
per_type=$((COUNT / TYPES))
for round in $(seq "$ROUNDS"); do
  # routed
  name="routed-$round"
  { printf '[log]\nlevel = "warn"\n'; pipeline_toml "$name" "$DIR/delta/$name/{field:event_type}"; } >"$DIR/$name.toml"
  run_ferry "$name"
  for k in $(seq 0 $((TYPES - 1))); do expect_rows "$DIR/delta/$name/t$k" "$per_type"; done
  if [ -e "$DIR/delta/$name-unknown" ]; then
    echo "FAIL: the fallback table $DIR/delta/$name-unknown exists" >&2
    exit 1
  fi
  report routed "$round"

  # filtered: TYPES pipelines, each reading the whole topic
  name="filtered-$round"
  printf '[log]\nlevel = "warn"\n' >"$DIR/$name.toml"
  for k in $(seq 0 $((TYPES - 1))); do
    pipeline_toml "$name-t$k" "$DIR/delta/$name/t$k" "event_type = 't$k'" >>"$DIR/$name.toml"
  done
  run_ferry "$name"
  for k in $(seq 0 $((TYPES - 1))); do expect_rows "$DIR/delta/$name/t$k" "$per_type"; done
  report filtered "$round"

  # single
  name="single-$round"
  { printf '[log]\nlevel = "warn"\n'; pipeline_toml "$name" "$DIR/delta/$name"; } >"$DIR/$name.toml"
  run_ferry "$name"
  expect_rows "$DIR/delta/$name" "$COUNT"
  report single "$round"
  rm -rf "$DIR/delta"
done
routed=$(median <"$DIR/routed.rates")
filtered=$(median <"$DIR/filtered.rates")
single=$(median <"$DIR/single.rates")
printf '\nmedian messages delivered/s: routed %.0f, filtered (%d pipelines) %.0f, single table %.0f\n' \
  "$routed" "$TYPES" "$filtered" "$single"
echo "routed / filtered: $(printf '%.2f' "$(echo "$routed / $filtered" | bc -l)") (target >= 4)"
echo "routed / single:   $(printf '%.2f' "$(echo "$routed / $single" | bc -l)") (target >= 0.8)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
