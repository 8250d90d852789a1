#!/usr/bin/env bash
# Kafka ingestion benchmark (issue 4, docs/BENCHMARKS.md "Kafka ingestion"): not a timed test.
#
#   tools/bench_kafka_ingest.sh [BUILD_DIR]      # default build/release (failpoints compiled out)
#
# 1. starts the embedded mock cluster (`ferry mock-kafka`, 3 brokers, topic bench:128);
# 2. preloads COUNT (default 1,000,000) JSON messages of about 400 bytes, round-robin over the
#    128 partitions (about 7,800 per partition, ~3.1 MiB: under the mock's 5 MiB / 100,000
#    message retention per partition, so nothing is evicted);
# 3. times `kcat -C -e -o beginning -q > /dev/null` over the whole topic (process start to exit);
# 4. times `ferry run --until-caught-up` into a fresh Delta table (process start to exit, i.e.
#    the last durable commit) under /usr/bin/time -v for the peak RSS;
# 5. times kcat once more (the machine is shared: two peer figures show the noise);
# 6. checks the table holds COUNT rows (`ferry table inspect --json`) and prints the ratio
#    ferry / kcat, with the faster kcat run as the peer (target >= 0.5).
#
# STORE=s3 (issue 17): step 4 becomes ROUNDS (default 3) rounds of two runs side by side, one
# into a local table and one into s3://bench/run-N on the tests' radosgw (test_object_server
# from BUILD_DIR, memstore MEMSTORE_MIB, reached with the standard AWS_* variables alone), and
# the script prints every run and the ratio of the medians, S3 / local (target >= 0.7).
#
# BROKER=real (issue 38): a real single-broker Apache Kafka (KRaft, the tests' broker: `test_object_server
# kafka` from BUILD_DIR, jars from `make setup-kafka`, default 4.4.0; group.initial.rebalance.delay.ms=0)
# instead of the mock. The topic is created with the tests' confluent-kafka venv (AdminClient), the
# COUNT messages (PAYLOAD 165 -> ~280-285 B) are produced with keys ("k{{seq}}") so they spread over the
# partitions, then ROUNDS rounds each run, in turn, `kcat -C -e -o beginning -q > /dev/null`, `ferry run
# --until-caught-up` with assignment = "manual" and the same with assignment = "group", each into a
# fresh local table, under /usr/bin/time -v. Per run: wall, CPU user + sys, peak RSS, messages/s, the
# ferry / kcat ratio against the same round's kcat (targets >= 0.9 manual, >= 0.7 group), and the
# broker's CPU during the run (utime + stime of /proc/<broker pid>/stat before and after, as a share of
# one core and of the machine). The broker is stopped at exit (trap).
#
# Environment: COUNT, PARTITIONS (128), PAYLOAD (random letters per message, 285 -> ~400 B),
# MAX_ROWS (100000), MAX_LATENCY (5s), MAX_IN_FLIGHT (1; 0 = no overlap of read and write), CODEC (zstd), LEVEL (the codec default), ASSIGNMENT (group or manual), KAFKA_PROPERTIES (TOML inline-table body for
# [pipeline.kafka] properties, e.g. '"queued.max.messages.kbytes" = "262144"'), FETCH_WAKEUP (true, false:
# [pipeline.kafka] fetch_wakeup; unset = the default), STORE (local, s3),
# ROUNDS, MEMSTORE_MIB (4096), LOG_LEVEL (info), EXTRA_TOML (appended to every run's configuration, e.g.
# $'[pipeline.storage]\nupload_part_size = "8MiB"'), TABLE (without STORE=s3: the table's location, default
# $BENCH_DIR/delta/bench; an az:// or s3:// URI reached with the store's environment variables, as
# tools/bench_store_ingest.sh does), BENCH_DIR (default: a mktemp dir, removed).
set -euo pipefail
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
COUNT=${COUNT:-1000000}
PARTITIONS=${PARTITIONS:-128}
BROKER=${BROKER:-mock}  # mock (ferry mock-kafka) or real (Apache Kafka, test_object_server kafka)
if [ "$BROKER" = real ]; then PAYLOAD=${PAYLOAD:-165}; else PAYLOAD=${PAYLOAD:-285}; fi
MAX_ROWS=${MAX_ROWS:-100000}
MAX_LATENCY=${MAX_LATENCY:-5s}
MAX_IN_FLIGHT=${MAX_IN_FLIGHT:-1}
CODEC=${CODEC:-zstd}
ASSIGNMENT=${ASSIGNMENT:-group}  # group (the default) or manual
KAFKA_PROPERTIES=${KAFKA_PROPERTIES:-}
STORE=${STORE:-local}
ROUNDS=${ROUNDS:-3}
MEMSTORE_MIB=${MEMSTORE_MIB:-4096}
source "$(dirname "$0")/bench_radosgw.sh"
command -v kcat >/dev/null || { echo "kcat is missing (apt-get install kcat)" >&2; exit 2; }

source "$(dirname "$0")/bench_lib.sh"
bench_extra_cleanup() { stop_radosgw; bench_stop_real_kafka; }
bench_dir kafka
rate() { printf '%.0f' "$(echo "$1 / $2" | bc -l)"; }

echo "ferry Kafka ingestion benchmark: $COUNT messages, $PARTITIONS partitions ($FERRY)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$BROKER" = real ]; then
  bench_start_real_kafka "$(realpath "$BUILD_DIR/src/ferry/testing/test_object_server")"
  echo "broker: $(grep '^# Kafka' "$DIR/kafka.out" | sed 's/^# //'), pid $BROKER_PID, $BROKERS;" \
    "$(grep -h '^group.initial.rebalance.delay.ms' "$KAFKA_DIR/server.properties")"
  bench_create_topic bench "$PARTITIONS"
  KEY=(--key 'k{{seq}}')
else
  bench_start_mock --topic "bench:$PARTITIONS"
  KEY=()
fi

t0=$(now)
"$FERRY" produce kafka --brokers "$BROKERS" --topic bench --count "$COUNT" --timeout 600 "${KEY[@]}" \
  -X linger.ms=50 -X batch.size=1000000 \
  --template "{\"id\": {{seq}}, \"dateTime\": \"{{now:MM/dd/yyyy - HH:mm:ss Z}}\", \"user\": \"{{uuid}}\", \"payload\": \"{{rand:$PAYLOAD}}\"}" \
  2>"$DIR/produce.log"
t1=$(now)
sample=$(kcat -C -b "$BROKERS" -t bench -p 0 -o beginning -c 1 -e -q)
echo "preloaded in $(printf '%.1f' "$(elapsed "$t0" "$t1")") s; a message (${#sample} bytes): ${sample:0:120}..."

run_kcat() {
  local a b
  a=$(now)
  kcat -C -b "$BROKERS" -t bench -e -o beginning -q >/dev/null
  b=$(now)
  elapsed "$a" "$b"
}

kcat1=$(run_kcat)

# One `ferry run --until-caught-up` into TABLE, timed; sets ferry_s, rss_kb, cpu_user, cpu_sys,
# rows, files, version.
run_ferry() {
  local table=$1 name=$2
  cat >"$DIR/$name.toml" <<TOML
[log]
level = "${LOG_LEVEL:-info}"

[[pipeline]]
id = "bench"
table = "$table"
schema = "id BIGINT NOT NULL, dateTime STRING, user STRING, payload STRING"
metadata_columns = { partition = "_partition", offset = "_offset" }

[pipeline.kafka]
brokers = "$BROKERS"
topics = ["bench"]
group_id = "ferry-$name"
assignment = "$ASSIGNMENT"
start = "earliest"
properties = { $KAFKA_PROPERTIES }
${FETCH_WAKEUP:+fetch_wakeup = $FETCH_WAKEUP}

[pipeline.decode]
format = "json"

[pipeline.batch]
max_rows = $MAX_ROWS
max_bytes = "256MB"
max_latency = "$MAX_LATENCY"
max_in_flight = $MAX_IN_FLIGHT

[pipeline.writer]
codec = "$CODEC"
${LEVEL:+compression_level = $LEVEL}
${EXTRA_TOML:-}
TOML
  local a b json
  a=$(now)
  /usr/bin/time -v -o "$DIR/time-$name.txt" \
    "$FERRY" run --config "$DIR/$name.toml" --until-caught-up 2>"$DIR/ferry-run-$name.log"
  b=$(now)
  ferry_s=$(elapsed "$a" "$b")
  rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$DIR/time-$name.txt")
  cpu_user=$(sed -n 's/.*User time (seconds): *//p' "$DIR/time-$name.txt")
  cpu_sys=$(sed -n 's/.*System time (seconds): *//p' "$DIR/time-$name.txt")
  json=$("$FERRY" table inspect "$table" --json)
  # jq: the greedy sed this replaced took the last "version" of the line, the schema history's
  # (it printed "version 0" for every table).
  rows=$(jq -r .num_rows <<<"$json")
  files=$(jq -r .num_files <<<"$json")
  version=$(jq -r .version <<<"$json")
  if [ "${rows:-0}" != "$COUNT" ]; then
    echo "FAIL: $table holds ${rows:-?} rows, expected $COUNT" >&2
    exit 1
  fi
}

if [ "$BROKER" = real ]; then
  TICK=$(getconf CLK_TCK)
  broker_cpu() { awk -v t="$TICK" '{printf "%.2f", ($14 + $15) / t}' "/proc/$BROKER_PID/stat"; }
  # One kcat -C over the whole topic under /usr/bin/time -v; sets kcat_s, rss_kb, cpu_user, cpu_sys.
  run_kcat_timed() {
    local a b
    a=$(now)
    /usr/bin/time -v -o "$DIR/time-kcat-$1.txt" \
      kcat -C -b "$BROKERS" -t bench -e -o beginning -q >/dev/null
    b=$(now)
    kcat_s=$(elapsed "$a" "$b")
    rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$DIR/time-kcat-$1.txt")
    cpu_user=$(sed -n 's/.*User time (seconds): *//p' "$DIR/time-kcat-$1.txt")
    cpu_sys=$(sed -n 's/.*System time (seconds): *//p' "$DIR/time-kcat-$1.txt")
  }
  row() {  # round, what, seconds, broker CPU s during the run, ratio
    local cpu
    cpu=$(echo "$cpu_user + $cpu_sys" | bc -l)
    printf '| %d | %s | %.2f | %s | %.2f | %d | %.2f (%.0f %% of a core, %.0f %% of the machine) | %s |\n' \
      "$1" "$2" "$3" "$(rate "$COUNT" "$3")" "$cpu" $((rss_kb / 1024)) "$4" \
      "$(echo "100 * $4 / $3" | bc -l)" "$(echo "100 * $4 / $3 / $(nproc)" | bc -l)" "$5"
  }
  echo "warm-up kcat -C (before the rounds): $(printf '%.2f' "$kcat1") s"
  printf '\n| round | what | seconds | messages/s | CPU user + sys s | peak RSS MiB | broker CPU s during the run | ferry / kcat |\n|---|---|---|---|---|---|---|---|\n'
  : >"$DIR/manual.ratios"
  : >"$DIR/group.ratios"
  : >"$DIR/kcat.times" >"$DIR/manual.times" >"$DIR/group.times"
  for round in $(seq "$ROUNDS"); do
    b0=$(broker_cpu)
    run_kcat_timed "$round"
    b1=$(broker_cpu)
    row "$round" "kcat -C -e" "$kcat_s" "$(echo "$b1 - $b0" | bc -l)" "-"
    echo "$kcat_s" >>"$DIR/kcat.times"
    for ASSIGNMENT in manual group; do
      b0=$(broker_cpu)
      run_ferry "$DIR/delta/$ASSIGNMENT-$round" "$ASSIGNMENT-$round"
      b1=$(broker_cpu)
      ratio=$(printf '%.2f' "$(echo "$kcat_s / $ferry_s" | bc -l)")
      echo "$ratio" >>"$DIR/$ASSIGNMENT.ratios"
      echo "$ferry_s" >>"$DIR/$ASSIGNMENT.times"
      row "$round" "ferry, $ASSIGNMENT ($files files)" "$ferry_s" "$(echo "$b1 - $b0" | bc -l)" "$ratio"
      rm -rf "$DIR/delta/$ASSIGNMENT-$round"
    done
  done
  printf '\nferry / kcat (messages/s, same round), median of %d rounds: manual %.2f (target >= 0.9), group %.2f (target >= 0.7)\n' \
    "$ROUNDS" "$(median <"$DIR/manual.ratios")" "$(median <"$DIR/group.ratios")"
  kcat_median=$(median <"$DIR/kcat.times")
  printf 'medians of the seconds: kcat %.2f, ferry manual %.2f, group %.2f; ratio of the medians: manual %.2f, group %.2f\n' \
    "$kcat_median" "$(median <"$DIR/manual.times")" "$(median <"$DIR/group.times")" \
    "$(echo "$kcat_median / $(median <"$DIR/manual.times")" | bc -l)" \
    "$(echo "$kcat_median / $(median <"$DIR/group.times")" | bc -l)"
  echo "broker RSS at the end: $(awk '/VmRSS/ {printf "%d MiB", $2 / 1024}' "/proc/$BROKER_PID/status")"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi

if [ "$STORE" = s3 ]; then
  kcat2=$(run_kcat)
  start_radosgw "$(realpath "$BUILD_DIR/src/ferry/testing/test_object_server")" "$DIR" \
    "$MEMSTORE_MIB" bench
  printf '\n| round | table | seconds | messages/s | CPU user + sys s | peak RSS MiB | files | version |\n|---|---|---|---|---|---|---|---|\n'
  : >"$DIR/local.times"
  : >"$DIR/s3.times"
  for round in $(seq "$ROUNDS"); do
    for store in local s3; do
      if [ "$store" = local ]; then table="$DIR/delta/run-$round"; else table="s3://bench/run-$round"; fi
      run_ferry "$table" "$store-$round"
      echo "$ferry_s" >>"$DIR/$store.times"
      printf '| %d | %s | %.2f | %s | %.2f | %d | %s | %s |\n' "$round" "$table" "$ferry_s" \
        "$(rate "$COUNT" "$ferry_s")" "$(echo "$cpu_user + $cpu_sys" | bc -l)" $((rss_kb / 1024)) \
        "$files" "$version"
    done
  done
  local_median=$(median <"$DIR/local.times")
  s3_median=$(median <"$DIR/s3.times")
  kcat_best=$(echo "if ($kcat1 < $kcat2) $kcat1 else $kcat2" | bc -l)
  printf '\nkcat -C (faster of two): %.2f s; ferry median: local %.2f s, S3 %.2f s\n' \
    "$kcat_best" "$local_median" "$s3_median"
  echo "ratio S3 / local (messages/s, medians of $ROUNDS interleaved rounds): $(printf '%.2f' "$(echo "$local_median / $s3_median" | bc -l)") (target >= 0.7)"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi

run_ferry "${TABLE:-$DIR/delta/bench}" bench

kcat2=$(run_kcat)

kcat_best=$(echo "if ($kcat1 < $kcat2) $kcat1 else $kcat2" | bc -l)
ferry_rate=$(rate "$COUNT" "$ferry_s")
kcat_rate=$(rate "$COUNT" "$kcat_best")
ratio=$(printf '%.2f' "$(echo "$ferry_rate / $kcat_rate" | bc -l)")

printf '\n| what | seconds | messages/s |\n|---|---|---|\n'
printf '| kcat -C -e -o beginning > /dev/null (before ferry) | %.2f | %s |\n' "$kcat1" "$(rate "$COUNT" "$kcat1")"
printf '| kcat -C -e -o beginning > /dev/null (after ferry) | %.2f | %s |\n' "$kcat2" "$(rate "$COUNT" "$kcat2")"
printf '| ferry run --until-caught-up (start to exit) | %.2f | %s |\n' "$ferry_s" "$ferry_rate"
printf '\nferry CPU: user %s s, sys %s s; peak RSS %d MiB\n' "$cpu_user" "$cpu_sys" $((rss_kb / 1024))
echo "table: ${rows:-?} rows, ${files:-?} files, version ${version:-?} (expected $COUNT rows)"
echo "ratio ferry / kcat (faster kcat run): $ratio (target >= 0.5)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
