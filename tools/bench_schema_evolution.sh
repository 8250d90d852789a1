#!/usr/bin/env bash
# Schema evolution benchmark (issue 19, docs/BENCHMARKS.md "Schema evolution"): not a timed test.
#
#   tools/bench_schema_evolution.sh [BUILD_DIR]      # default build/release
#
# 1. starts the embedded mock cluster (`ferry mock-kafka`, 3 brokers) with topics `steady` and
#    `evolving` of PARTITIONS partitions, and preloads COUNT JSON messages of about 400 bytes
#    into each (the Kafka benchmark's message, docs/BENCHMARKS.md "Kafka ingestion"); in
#    `evolving`, the messages of the second half carry two more fields, one top-level and one
#    nested (`score` and `geo.alt`);
# 2. steady state: ROUNDS rounds, each running `ferry run --until-caught-up` over `steady` into a
#    fresh table once with `schema_evolution = "none"` and once with "add_columns_and_widen"
#    (alternating which goes first), process start to exit, CPU from /usr/bin/time; prints the
#    medians and the ratio evolution / none (target: not slower, <= 1 within the noise);
# 3. an evolving stream: the same over `evolving` with each setting; counts the commits and the
#    metaData actions of each table (`_delta_log/*.json`): the batch that meets the new fields
#    must cost at most one extra metaData action and no extra commit.
#
# Environment: COUNT (default 500000), PARTITIONS (64), ROUNDS (5), MAX_ROWS (100000),
# MAX_LATENCY (5s), ASSIGNMENT (manual; or group), BENCH_DIR (keep the files there).
set -euo pipefail
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
COUNT=${COUNT:-500000}
PARTITIONS=${PARTITIONS:-64}
ROUNDS=${ROUNDS:-5}
MAX_ROWS=${MAX_ROWS:-100000}
MAX_LATENCY=${MAX_LATENCY:-5s}
ASSIGNMENT=${ASSIGNMENT:-manual}

source "$(dirname "$0")/bench_lib.sh"
bench_dir evolution

echo "ferry schema evolution benchmark: $COUNT messages per topic, $PARTITIONS partitions, $ROUNDS rounds ($FERRY)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

bench_start_mock --topic "steady:$PARTITIONS" --topic "evolving:$PARTITIONS"

BASE='"id": {{seq}}, "dateTime": "{{now:MM/dd/yyyy - HH:mm:ss Z}}", "user": "{{uuid}}", "geo": {"lat": 1.5}, "payload": "{{rand:270}}"'
produce() {  # topic start count template
  "$FERRY" produce kafka --brokers "$BROKERS" --topic "$1" --start "$2" --count "$3" --timeout 600 \
    -X linger.ms=50 -X batch.size=1000000 --template "$4" 2>>"$DIR/produce.log"
}
produce steady 1 "$COUNT" "{$BASE}"
half=$((COUNT / 2))
produce evolving 1 "$half" "{$BASE}"
produce evolving $((half + 1)) $((COUNT - half)) \
  '{"id": {{seq}}, "dateTime": "{{now:MM/dd/yyyy - HH:mm:ss Z}}", "user": "{{uuid}}", "geo": {"lat": 1.5, "alt": {{seq}} }, "score": {{seq}}, "payload": "{{rand:250}}"}'
echo "preloaded: $(kcat -C -b "$BROKERS" -t steady -p 0 -o beginning -c 1 -e -q 2>/dev/null | head -c 160)..."

config() {  # name topic evolution
  cat >"$DIR/$1.toml" <<TOML
[log]
level = "info"

[[pipeline]]
id = "bench"
table = "$DIR/delta/$1"
schema = "id BIGINT NOT NULL, dateTime STRING, user STRING, geo STRUCT<lat: DOUBLE>, payload STRING"
metadata_columns = { partition = "_partition", offset = "_offset" }
schema_evolution = "$3"

[pipeline.kafka]
brokers = "$BROKERS"
topics = ["$2"]
group_id = "ferry-bench-$1"
assignment = "$ASSIGNMENT"
start = "earliest"

[pipeline.batch]
max_rows = $MAX_ROWS
max_bytes = "256MB"
max_latency = "$MAX_LATENCY"
TOML
}

# Runs one config to completion; prints "wall cpu".
run() {
  rm -rf "$DIR/delta/$1"
  local a b
  a=$(now)
  /usr/bin/time -v -o "$DIR/$1.time" "$FERRY" run --config "$DIR/$1.toml" --until-caught-up \
    2>"$DIR/$1.log"
  b=$(now)
  local user sys
  user=$(sed -n 's/.*User time (seconds): *//p' "$DIR/$1.time")
  sys=$(sed -n 's/.*System time (seconds): *//p' "$DIR/$1.time")
  echo "$(elapsed "$a" "$b") $(echo "$user + $sys" | bc -l)"
}

rows_of() {
  "$FERRY" table inspect "$DIR/delta/$1" --json | sed -n 's/.*"num_rows": *\([0-9]*\).*/\1/p' | head -1
}

config none steady none
config evolve steady add_columns_and_widen
: >"$DIR/none.runs"
: >"$DIR/evolve.runs"
for r in $(seq "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="none evolve"; else order="evolve none"; fi
  for which in $order; do
    result=$(run "$which")
    echo "$result" >>"$DIR/$which.runs"
    rows=$(rows_of "$which")
    [ "$rows" = "$COUNT" ] || { echo "FAIL: $which round $r holds $rows rows, expected $COUNT" >&2; exit 1; }
    echo "round $r $which: wall ${result% *} s, cpu ${result#* } s"
  done
done
none_wall=$(cut -d' ' -f1 "$DIR/none.runs" | median)
none_cpu=$(cut -d' ' -f2 "$DIR/none.runs" | median)
evo_wall=$(cut -d' ' -f1 "$DIR/evolve.runs" | median)
evo_cpu=$(cut -d' ' -f2 "$DIR/evolve.runs" | median)
printf '\n| steady state (no new fields), medians of %d | wall s | CPU s |\n|---|---|---|\n' "$ROUNDS"
printf '| schema_evolution = "none" | %.2f | %.2f |\n' "$none_wall" "$none_cpu"
printf '| schema_evolution = "add_columns_and_widen" | %.2f | %.2f |\n' "$evo_wall" "$evo_cpu"
printf 'ratio evolution / none: wall %.3f, CPU %.3f (target: not slower)\n' \
  "$(echo "$evo_wall / $none_wall" | bc -l)" "$(echo "$evo_cpu / $none_cpu" | bc -l)"

# An evolving stream: commits and metaData actions.
config none-evolving evolving none
config evolve-evolving evolving add_columns_and_widen
actions() {  # table -> "commits metaData_actions"
  local log="$DIR/delta/$1/_delta_log"
  echo "$(ls "$log"/*.json | wc -l) $(cat "$log"/*.json | grep -c '^{"metaData"')"
}
printf '\n| evolving stream | wall s | commits | metaData actions | schema |\n|---|---|---|---|---|\n'
for which in none-evolving evolve-evolving; do
  result=$(run "$which")
  read -r commits metadata <<<"$(actions "$which")"
  schema=$("$FERRY" table inspect "$DIR/delta/$which" | sed -n 's/^schema: *//p')
  printf '| %s | %.2f | %s | %s | %s |\n' "$which" "${result% *}" "$commits" "$metadata" "$schema"
done
echo "(each table's version 0 holds one metaData: the creation)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
