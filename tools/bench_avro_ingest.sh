#!/usr/bin/env bash
# Avro ingestion benchmark (issue 20, docs/BENCHMARKS.md "Avro decoding"): not a timed test.
#
#   tools/bench_avro_ingest.sh [BUILD_DIR]      # default build/release (failpoints compiled out)
#
# 1. starts the embedded mock cluster (`ferry mock-kafka`, 3 brokers) with two topics of
#    PARTITIONS partitions, avro and json;
# 2. preloads COUNT (default 1,000,000) messages of the nine-field row (bench/nine_field_row.h)
#    into each with bench/avro_produce, round-robin over the partitions: the same rows as
#    unframed Avro datums (about 150 B; no Confluent frame, so no schema registry: ferry reads
#    them with `avro_schema_file`) and as JSON text (about 250 B). `ferry produce kafka` writes
#    text templates only, hence the bench tool;
# 3. ROUNDS (default 3) rounds of two `ferry run --until-caught-up` runs, Avro then JSON, each
#    into a fresh Delta table with the same schema (process start to exit, i.e. the last durable
#    commit), under /usr/bin/time -v for CPU time and peak RSS;
# 4. checks every table holds COUNT rows (`ferry table inspect --json`), prints every run and the
#    ratios of the medians, Avro / JSON, in messages per wall second and per CPU second (target:
#    Avro faster, ratio > 1).
#
# Environment: COUNT, PARTITIONS (128), ROUNDS, MAX_ROWS (100000), MAX_LATENCY (5s), CODEC (zstd),
# LOG_LEVEL (info), BENCH_DIR (default: a mktemp dir, removed).
set -euo pipefail
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
PRODUCE=$(realpath "$BUILD_DIR/bench/avro_produce")
COUNT=${COUNT:-1000000}
PARTITIONS=${PARTITIONS:-128}
ROUNDS=${ROUNDS:-3}
MAX_ROWS=${MAX_ROWS:-100000}
MAX_LATENCY=${MAX_LATENCY:-5s}
CODEC=${CODEC:-zstd}

if [ -n "${BENCH_DIR:-}" ]; then
  rm -rf "$BENCH_DIR"
  mkdir -p "$BENCH_DIR"
  DIR=$(realpath "$BENCH_DIR")
  keep=1
else
  DIR=$(mktemp -d /tmp/ferry-bench-avro.XXXXXX)
  keep=0
fi
mock=""
cleanup() {
  if [ -n "$mock" ]; then
    kill "$mock" 2>/dev/null || true
    wait "$mock" 2>/dev/null || true
  fi
  if [ "$keep" = 0 ]; then rm -rf "$DIR"; fi
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }
rate() { printf '%.0f' "$(echo "$1 / $2" | bc -l)"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "ferry Avro vs JSON ingestion benchmark: $COUNT messages each, $PARTITIONS partitions ($FERRY)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# The mock keeps at most 5 MiB and 100,000 messages per partition: more would be evicted.
per_partition=$(((COUNT + PARTITIONS - 1) / PARTITIONS))
if [ "$per_partition" -gt 100000 ] || [ $((per_partition * 260)) -gt $((5 * 1024 * 1024)) ]; then
  echo "COUNT / PARTITIONS = $per_partition messages per partition: over the mock's retention" \
    "(100,000 and 5 MiB per partition); raise PARTITIONS" >&2
  exit 2
fi

"$FERRY" mock-kafka --brokers 3 --topic "avro:$PARTITIONS" --topic "json:$PARTITIONS" \
  --bootstrap-file "$DIR/bootstrap" </dev/null >/dev/null 2>"$DIR/mock-kafka.log" &
mock=$!
for _ in $(seq 100); do [ -s "$DIR/bootstrap" ] && break; sleep 0.1; done
BROKERS=$(cat "$DIR/bootstrap")

"$PRODUCE" schema >"$DIR/nine_fields.avsc"
for format in avro json; do
  t0=$(now)
  "$PRODUCE" "$format" "$BROKERS" "$format" "$COUNT" 2>"$DIR/produce-$format.log" || {
    cat "$DIR/produce-$format.log" >&2
    exit 1
  }
  echo "preloaded $COUNT $format messages in $(printf '%.1f' "$(elapsed "$t0" "$(now)")") s"
done

# One `ferry run --until-caught-up` of FORMAT into a fresh table, timed; sets wall_s, cpu_s,
# rss_kb, files.
run_ferry() {
  local format=$1 name=$2 table="$DIR/delta/$2"
  local decode="format = \"json\""
  if [ "$format" = avro ]; then
    decode="format = \"avro\"
avro_schema_file = \"$DIR/nine_fields.avsc\""
  fi
  cat >"$DIR/$name.toml" <<TOML
[log]
level = "${LOG_LEVEL:-info}"

[[pipeline]]
id = "bench"
table = "$table"
schema = "id BIGINT NOT NULL, qty INT, price DOUBLE, code STRING, city STRING, body STRING, ts TIMESTAMP, day DATE, note STRING"
metadata_columns = { partition = "_partition", offset = "_offset" }

[pipeline.kafka]
brokers = "$BROKERS"
topics = ["$format"]
group_id = "ferry-$name"
start = "earliest"

[pipeline.decode]
$decode

[pipeline.batch]
max_rows = $MAX_ROWS
max_bytes = "256MB"
max_latency = "$MAX_LATENCY"

[pipeline.writer]
codec = "$CODEC"
TOML
  local a b json rows user sys
  a=$(now)
  /usr/bin/time -v -o "$DIR/time-$name.txt" \
    "$FERRY" run --config "$DIR/$name.toml" --until-caught-up 2>"$DIR/ferry-run-$name.log"
  b=$(now)
  wall_s=$(elapsed "$a" "$b")
  rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$DIR/time-$name.txt")
  user=$(sed -n 's/.*User time (seconds): *//p' "$DIR/time-$name.txt")
  sys=$(sed -n 's/.*System time (seconds): *//p' "$DIR/time-$name.txt")
  cpu_s=$(echo "$user + $sys" | bc -l)
  json=$("$FERRY" table inspect "$table" --json)
  rows=$(jq -r .num_rows <<<"$json")
  files=$(jq -r .num_files <<<"$json")
  if [ "${rows:-0}" != "$COUNT" ]; then
    echo "FAIL: $table holds ${rows:-?} rows, expected $COUNT (log: $DIR/ferry-run-$name.log)" >&2
    keep=1
    exit 1
  fi
}

printf '\n| round | format | seconds | messages/s | CPU user + sys s | messages/CPU s | peak RSS MiB | files |\n|---|---|---|---|---|---|---|---|\n'
for format in avro json; do : >"$DIR/$format.wall" && : >"$DIR/$format.cpu"; done
for round in $(seq "$ROUNDS"); do
  for format in avro json; do
    run_ferry "$format" "$format-$round"
    echo "$wall_s" >>"$DIR/$format.wall"
    echo "$cpu_s" >>"$DIR/$format.cpu"
    printf '| %d | %s | %.2f | %s | %.2f | %s | %d | %s |\n' "$round" "$format" "$wall_s" \
      "$(rate "$COUNT" "$wall_s")" "$cpu_s" "$(rate "$COUNT" "$cpu_s")" $((rss_kb / 1024)) "$files"
  done
done

avro_wall=$(median <"$DIR/avro.wall")
json_wall=$(median <"$DIR/json.wall")
avro_cpu=$(median <"$DIR/avro.cpu")
json_cpu=$(median <"$DIR/json.cpu")
printf '\nmedians of %d rounds: Avro %.2f s wall, %.2f s CPU; JSON %.2f s wall, %.2f s CPU\n' \
  "$ROUNDS" "$avro_wall" "$avro_cpu" "$json_wall" "$json_cpu"
echo "ratio Avro / JSON (messages/s): $(printf '%.2f' "$(echo "$json_wall / $avro_wall" | bc -l)") wall, $(printf '%.2f' "$(echo "$json_cpu / $avro_cpu" | bc -l)") CPU (target > 1)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
