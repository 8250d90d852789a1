#!/usr/bin/env bash
# ferry against Spark Structured Streaming (issue 43, docs/BENCHMARKS.md "ferry against Spark"):
# not a timed test.
#
#   tools/bench_spark.sh [BUILD_DIR]     # default build/release: ferry, test_object_server,
#                                        # visible_latency and avro_produce built there
#   SMOKE=1 tools/bench_spark.sh         # 20,000 messages, one round, 10 s of latency: checks
#                                        # that everything runs (10-20 min here: each of the
#                                        # six Spark runs starts a JVM and a query)
#
# Needs `make setup-spark-bench` (the Kafka broker's jars, the interop venv with pyspark 4.2.0 and
# delta-spark 4.4.0, Delta's jars and Spark's Kafka source in ~/.cache/ferry). One invocation, on
# one real single-broker Apache Kafka (KRaft; the tests' broker, as `BROKER=real
# tools/bench_kafka_ingest.sh`):
#
# ingest  MESSAGES (1,000,000) nine-field rows (bench/nine_field_row.h, ToSparkJson: ~250 B of
#         JSON with a Spark-style `dateTime` string) preloaded round-robin over PARTITIONS (128)
#         by bench/avro_produce. ROUNDS (3) rounds, the order of the runs alternating from one
#         round to the next, each run into a fresh Delta table:
#           ferry      `ferry run --until-caught-up`, the batch settings at their defaults
#           spark      bench/spark/spark_ingest.py --settings default: the Kafka source, the delta
#                      sink, trigger(availableNow=True), local[2], Spark's defaults otherwise
#           spark-2c   the same with --settings tuned (spark_ingest.py's TUNED: shuffle and
#                      default parallelism 2, Delta snapshot partitions 2, driver memory 1g,
#                      no UI, a Kafka consumer pool of 256 instead of 64)
#         Both sides: the same schema (kNineFieldSparkDdl), `_partition`/`_offset`, and the
#         seed job's date_only = from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss
#         Z'), 'MM/dd/yyyy'). Per run: wall (process start to exit), CPU user + sys of the whole
#         process tree (/usr/bin/time; the Spark job waits for its JVM so that it counts), peak
#         RSS of the tree (the sum over its processes, sampled every 0.2 s), the time to the first
#         commit that adds rows (the table's _delta_log polled every 0.05 s), commits, and the
#         rows in the table (`ferry table inspect`; must be MESSAGES exactly).
# latency RATE (2,000) msg/s for WARMUP (20) + DURATION (60) s into a fresh topic of
#         LAT_PARTITIONS (8) per run, {"id", "sent"} as tools/bench_latency.sh sends them, and
#         bench/visible_latency on the table: p50/p90/p99/max publish-to-visible of the rows
#         sent after the warm-up (--since-us; Spark's first micro-batches take tens of seconds
#         on this machine, which a 60 s window would otherwise average in). Runs: ferry at max_latency 1s (its
#         default), ferry at 100ms, Spark with its default trigger (the next micro-batch as soon
#         as one ends) and with processingTime='1 second' (--settings tuned). The producer starts
#         once the consumer is ready (ferry: partitions assigned; Spark: its first trigger ran).
# restart MESSAGES again into a fresh table by each side (ferry at its defaults, i.e. a group
#         member whose dead predecessor holds the partitions until its session times out; ferry
#         with assignment = "manual", as Spark's source reads; Spark with --settings tuned):
#         SIGKILL (the whole process tree) KILL_AT seconds after the start (default: half that
#         side's median ingest wall), count the rows, restart, time the restart to its exit
#         (caught up), count rows and distinct ids (delta-rs, a third reader).
#
# Environment: MESSAGES, ROUNDS, PARTITIONS, PARTS ("ingest latency restart"), SPARK_SETTINGS
# ("default tuned": the Spark variants of the ingest rounds), RATE, WARMUP, DURATION, LAT_PARTITIONS,
# KILL_AT_FERRY, KILL_AT_SPARK (seconds), LOG_LEVEL (ferry's, info), BENCH_DIR (default: a mktemp
# dir, removed), SMOKE.
set -euo pipefail
BUILD_DIR=${1:-build/release}
root=$(cd "$(dirname "$0")/.." && pwd)
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
PRODUCE=$(realpath "$BUILD_DIR/bench/avro_produce")
WATCH=$(realpath "$BUILD_DIR/bench/visible_latency")
SERVER=$(realpath "$BUILD_DIR/src/ferry/testing/test_object_server")
CACHE=${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}
PY=$CACHE/interop-venv/bin/python
JOB=$root/bench/spark/spark_ingest.py
if [ "${SMOKE:-0}" = 1 ]; then
  MESSAGES=${MESSAGES:-20000}
  ROUNDS=${ROUNDS:-1}
  DURATION=${DURATION:-10}
  WARMUP=${WARMUP:-5}
fi
MESSAGES=${MESSAGES:-1000000}
ROUNDS=${ROUNDS:-3}
PARTITIONS=${PARTITIONS:-128}
PARTS=${PARTS:-ingest latency restart}
SPARK_SETTINGS=${SPARK_SETTINGS:-default tuned}
RATE=${RATE:-2000}
DURATION=${DURATION:-60}
WARMUP=${WARMUP:-20}
LAT_PARTITIONS=${LAT_PARTITIONS:-8}
DATE_ONLY="from_unixtime(unix_timestamp(dateTime, 'MM/dd/yyyy - HH:mm:ss Z'), 'MM/dd/yyyy')"
for f in "$FERRY" "$PRODUCE" "$WATCH" "$SERVER"; do
  [ -x "$f" ] || { echo "$f is missing (cmake --build $BUILD_DIR --target ferry test_object_server visible_latency avro_produce)" >&2; exit 2; }
done
[ -x "$PY" ] || { echo "$PY is missing (make setup-spark-bench)" >&2; exit 2; }
[ -n "$(ls "$CACHE"/spark-kafka-jars/*.jar 2>/dev/null)" ] || { echo "Spark's Kafka jars are missing from $CACHE/spark-kafka-jars (make setup-spark-bench)" >&2; exit 2; }

source "$root/tools/bench_lib.sh"
running=()  # process groups (Spark) and pids (ferry) to stop at exit
bench_extra_cleanup() {
  local p
  for p in "${running[@]}"; do kill -KILL -- "$p" 2>/dev/null || true; done
  bench_stop_real_kafka
}
bench_dir spark

echo "ferry against Spark Structured Streaming: $MESSAGES messages, $PARTITIONS partitions, $ROUNDS rounds; parts: $PARTS"
echo "ferry: $FERRY; Spark: pyspark $("$PY" -c 'import pyspark; print(pyspark.__version__)'), delta-spark $("$PY" -c 'import importlib.metadata as m; print(m.version("delta-spark"))'), $(cd "$CACHE/spark-kafka-jars" && ls *.jar | tr '\n' ' ')"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

bench_start_real_kafka "$SERVER"
echo "broker: $(grep '^# Kafka' "$DIR/kafka.out" | sed 's/^# //'), $BROKERS"

# --- measuring one run ----------------------------------------------------------------------

# The peak over time of the summed RSS (KiB) of PID's descendants (PID is /usr/bin/time or
# setsid), written to FILE at every new peak.
rss_watch() {
  local pid=$1 file=$2 peak=0 cur
  while kill -0 "$pid" 2>/dev/null; do
    cur=$(ps -e -o pid=,ppid=,rss= | awk -v root="$pid" '
      { parent[$1] = $2; rss[$1] = $3 }
      END { for (p in parent) { q = parent[p]; while (q != "" && q != root && q in parent && q != 1) q = parent[q];
                                if (q == root) sum += rss[p] } print sum + 0 }')
    if [ "$cur" -gt "$peak" ]; then peak=$cur; echo "$peak" >"$file"; fi
    sleep 0.2
  done
}

# Seconds from START until TABLE's log holds a commit that adds a file, written to FILE; gives up
# when PID is gone.
first_row_watch() {
  local table=$1 start=$2 file=$3 pid=$4
  while kill -0 "$pid" 2>/dev/null; do
    if grep -qs '"add"' "$table"/_delta_log/*.json; then
      elapsed "$start" "$(now)" >"$file"
      return
    fi
    sleep 0.05
  done
}

rows_of() { "$FERRY" table inspect "$1" --json 2>/dev/null | jq -r .num_rows; }
commits_of() { ls "$1"/_delta_log/*.json 2>/dev/null | wc -l; }

ferry_toml() {  # NAME TABLE TOPIC SCHEMA EXTRA: a pipeline at ferry's defaults
  cat >"$DIR/$1.toml" <<TOML
[log]
level = "${LOG_LEVEL:-info}"

[[pipeline]]
id = "bench"
table = "$2"
schema = "$4"
$5

[pipeline.kafka]
brokers = "$BROKERS"
topics = ["$3"]
group_id = "ferry-$1"
start = "earliest"
${6:-}
TOML
}
NINE_EXTRA=$(printf 'metadata_columns = { partition = "_partition", offset = "_offset" }\n\n[[pipeline.columns]]\nname = "date_only"\nexpr = "%s"' "$DATE_ONLY")

# run_measured NAME TABLE CMD...: runs CMD under /usr/bin/time in its own process group, with
# the RSS and first-row watchers; sets wall, cpu, rss_mib, first_s, rows, commits.
run_measured() {
  local name=$1 table=$2
  shift 2
  local a b pid rpid fpid
  rm -f "$DIR/rss-$name" "$DIR/first-$name"
  a=$(now)
  setsid /usr/bin/time -v -o "$DIR/time-$name.txt" "$@" >"$DIR/out-$name.log" 2>"$DIR/err-$name.log" &
  pid=$!
  running+=("-$pid")
  rss_watch "$pid" "$DIR/rss-$name" &
  rpid=$!
  first_row_watch "$table" "$a" "$DIR/first-$name" "$pid" &
  fpid=$!
  local rc=0
  wait "$pid" || rc=$?
  b=$(now)
  kill "$fpid" 2>/dev/null || true
  wait "$rpid" "$fpid" 2>/dev/null || true
  running=("${running[@]:0:${#running[@]}-1}")
  if [ "$rc" != 0 ]; then
    echo "FAIL: $name exited $rc; its log:" >&2
    tail -30 "$DIR/err-$name.log" >&2
    exit 1
  fi
  wall=$(elapsed "$a" "$b")
  cpu=$(awk -F': *' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$DIR/time-$name.txt")
  rss_mib=$(($(cat "$DIR/rss-$name" 2>/dev/null || echo 0) / 1024))
  first_s=$(cat "$DIR/first-$name" 2>/dev/null || echo nan)
  rows=$(rows_of "$table")
  commits=$(commits_of "$table")
}

spark_cmd() {  # TABLE CHECKPOINT TOPIC SHAPE TRIGGER SETTINGS
  echo "$PY" "$JOB" --brokers "$BROKERS" --table "$1" --checkpoint "$2" --topic "$3" \
    --shape "$4" --trigger "$5" --settings "$6" --scratch "$DIR/scratch"
}

# --- ingest --------------------------------------------------------------------------------

median_of() { median <"$DIR/$1"; }
if [[ " $PARTS " == *" ingest "* || " $PARTS " == *" restart "* ]]; then
  bench_create_topic bench "$PARTITIONS"
  t0=$(now)
  "$PRODUCE" spark-json "$BROKERS" bench "$MESSAGES" 2>"$DIR/produce.log"
  echo "preloaded $MESSAGES messages in $(printf '%.1f' "$(elapsed "$t0" "$(now)")") s: $(tail -1 "$DIR/produce.log")"
  echo "a message: $(kcat -C -b "$BROKERS" -t bench -p 0 -o beginning -c 1 -e -q 2>/dev/null | cut -c1-400)"
fi

run_ingest() {  # WHAT ROUND
  local what=$1 round=$2 table="$DIR/delta/$1-$2"
  case "$what" in
    ferry)
      ferry_toml "$what-$round" "$table" bench "id BIGINT NOT NULL, qty INT, price DOUBLE, code STRING, city STRING, body STRING, dateTime STRING, day DATE, note STRING" "$NINE_EXTRA"
      run_measured "$what-$round" "$table" "$FERRY" run --config "$DIR/$what-$round.toml" --until-caught-up
      ;;
    spark | spark-2c)
      local settings=default
      [ "$what" = spark-2c ] && settings=tuned
      # shellcheck disable=SC2046
      run_measured "$what-$round" "$table" $(spark_cmd "$table" "$DIR/ckpt/$what-$round" bench nine available-now "$settings")
      ;;
  esac
  if [ "$rows" != "$MESSAGES" ]; then
    echo "FAIL: $what round $round: the table holds $rows rows, expected $MESSAGES" >&2
    exit 1
  fi
  printf '| %d | %s | %.2f | %.0f | %.2f | %.0f | %d | %.2f | %d | %s |\n' "$round" "$what" "$wall" \
    "$(echo "$MESSAGES / $wall" | bc -l)" "$cpu" "$(echo "$MESSAGES / $cpu" | bc -l)" "$rss_mib" \
    "$first_s" "$commits" "$rows"
  echo "$wall" >>"$DIR/$what.wall"
  echo "$cpu" >>"$DIR/$what.cpu"
  echo "$rss_mib" >>"$DIR/$what.rss"
  echo "$first_s" >>"$DIR/$what.first"
  rm -rf "$table" "$DIR/ckpt/$what-$round" "$DIR/scratch"
}

if [[ " $PARTS " == *" ingest "* ]]; then
  kinds=(ferry)
  for s in $SPARK_SETTINGS; do
    if [ "$s" = tuned ]; then kinds+=(spark-2c); else kinds+=(spark); fi
  done
  printf '\n| round | run | wall s | msg/s | CPU s (tree) | msg per CPU-s | peak RSS MiB (tree) | first rows visible s | log entries | rows |\n|---|---|---|---|---|---|---|---|---|---|\n'
  for round in $(seq "$ROUNDS"); do
    order=("${kinds[@]}")
    if [ $((round % 2)) = 0 ]; then  # alternate: even rounds run the list backwards
      order=()
      for ((i = ${#kinds[@]} - 1; i >= 0; i--)); do order+=("${kinds[$i]}"); done
    fi
    for what in "${order[@]}"; do run_ingest "$what" "$round"; done
  done
  printf '\nmedians of %d rounds (wall s, CPU s, msg per CPU-s, peak RSS MiB, first rows visible s):\n' "$ROUNDS"
  for what in "${kinds[@]}"; do
    printf '  %-9s wall %.2f, CPU %.2f, %.0f msg/CPU-s, RSS %.0f MiB, first rows %.1f s\n' "$what" \
      "$(median_of "$what.wall")" "$(median_of "$what.cpu")" \
      "$(echo "$MESSAGES / $(median_of "$what.cpu")" | bc -l)" "$(median_of "$what.rss")" \
      "$(median_of "$what.first")"
  done
  for what in "${kinds[@]:1}"; do
    printf 'ferry vs %s: msg per CPU-s %.1fx (target >= 10), wall %.3f of its (target <= 0.333), peak RSS %.3f of its (target <= 0.25)\n' \
      "$what" "$(echo "$(median_of "$what.cpu") / $(median_of ferry.cpu)" | bc -l)" \
      "$(echo "$(median_of ferry.wall) / $(median_of "$what.wall")" | bc -l)" \
      "$(echo "$(median_of ferry.rss) / $(median_of "$what.rss")" | bc -l)"
  done
fi

# --- latency -------------------------------------------------------------------------------

if [[ " $PARTS " == *" latency "* ]]; then
  count=$((RATE * (WARMUP + DURATION)))
  printf '\nlatency: %d msg/s for %d s of warm-up + %d s measured (%d messages) into %d partitions, visible_latency polling every 10 ms\n' \
    "$RATE" "$WARMUP" "$DURATION" "$count" "$LAT_PARTITIONS"
  for what in ferry-1s ferry-100ms spark-default spark-1s; do
    topic="lat-$what"
    table="$DIR/delta/$topic"
    bench_create_topic "$topic" "$LAT_PARTITIONS"
    case "$what" in
      ferry-*)
        ml=${what#ferry-}
        batch=""
        [ "$ml" != 1s ] && batch=$(printf '[pipeline.batch]\nmax_latency = "%s"' "$ml")
        ferry_toml "$what" "$table" "$topic" "id BIGINT NOT NULL, sent TIMESTAMP" "" "$batch"
        setsid "$FERRY" run --config "$DIR/$what.toml" >"$DIR/out-$what.log" 2>"$DIR/err-$what.log" &
        pid=$!
        running+=("-$pid")
        for _ in $(seq 600); do grep -q ' starts at ' "$DIR/err-$what.log" && break; sleep 0.1; done
        ;;
      spark-*)
        trigger=${what#spark-}
        # shellcheck disable=SC2046
        setsid $(spark_cmd "$table" "$DIR/ckpt/$what" "$topic" latency "$trigger" tuned) \
          >"$DIR/out-$what.log" 2>"$DIR/err-$what.log" &
        pid=$!
        running+=("-$pid")
        for _ in $(seq 1800); do grep -q '^READY' "$DIR/out-$what.log" && break; sleep 0.1; done
        ;;
    esac
    since=$(($(date +%s%6N) + WARMUP * 1000000))
    "$WATCH" "$table" --rows "$count" --poll-ms 10 --since-us "$since" \
      --timeout-s $(((WARMUP + DURATION) * 3 + 300)) >"$DIR/watch-$what.txt" 2>&1 &
    wpid=$!
    "$FERRY" produce kafka --brokers "$BROKERS" --topic "$topic" --count "$count" \
      --rate "$RATE" --key 'k{{seq}}' -X "linger.ms=5" \
      --template "{\"id\": {{seq}}, \"sent\": \"{{now:yyyy-MM-dd'T'HH:mm:ss.SSSSSSX}}\"}" \
      2>"$DIR/produce-$what.log"
    rc=0
    wait "$wpid" || rc=$?
    kill -TERM -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    kill -KILL -- "-$pid" 2>/dev/null || true
    running=("${running[@]:0:${#running[@]}-1}")
    echo "$what: $(cat "$DIR/watch-$what.txt")"
    [ "$rc" = 0 ] || { echo "FAIL: the watcher exited $rc; the consumer's log:" >&2; tail -20 "$DIR/err-$what.log" >&2; exit 1; }
    rm -rf "$table" "$DIR/ckpt/$what" "$DIR/scratch"
  done
fi

# --- restart -------------------------------------------------------------------------------

distinct_ids() {  # TABLE: rows and distinct ids, read by delta-rs
  "$PY" - "$1" <<'PY'
import sys
import pyarrow.compute as pc
from deltalake import DeltaTable
ids = DeltaTable(sys.argv[1]).to_pyarrow_table(columns=["id"])["id"]
print(len(ids), pc.count_distinct(ids).as_py())
PY
}

if [[ " $PARTS " == *" restart "* ]]; then
  printf '\nrestart: SIGKILL mid-way, restart, run to caught up (%d messages)\n' "$MESSAGES"
  printf '| run | killed after s | rows at the kill | restart to caught up s | rows after | distinct ids | log entries |\n|---|---|---|---|---|---|---|\n'
  for what in ferry ferry-manual spark-2c; do
    table="$DIR/delta/restart-$what"
    if [ "$what" != spark-2c ]; then
      kill_at=${KILL_AT_FERRY:-$(echo "$(median_of ferry.wall 2>/dev/null || echo 2) / 2" | bc -l)}
      assignment=""
      [ "$what" = ferry-manual ] && assignment='assignment = "manual"'
      ferry_toml "restart-$what" "$table" bench "id BIGINT NOT NULL, qty INT, price DOUBLE, code STRING, city STRING, body STRING, dateTime STRING, day DATE, note STRING" "$NINE_EXTRA" "$assignment"
      cmd=("$FERRY" run --config "$DIR/restart-$what.toml" --until-caught-up)
    else
      kill_at=${KILL_AT_SPARK:-$(echo "$(median_of spark-2c.wall 2>/dev/null || echo 60) / 2" | bc -l)}
      # shellcheck disable=SC2207
      cmd=($(spark_cmd "$table" "$DIR/ckpt/restart-$what" bench nine available-now tuned))
    fi
    setsid "${cmd[@]}" >"$DIR/out-restart-$what.log" 2>"$DIR/err-restart-$what.log" &
    pid=$!
    running+=("-$pid")
    sleep "$kill_at"
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    running=("${running[@]:0:${#running[@]}-1}")
    at_kill=$(rows_of "$table" || true)
    run_measured "restart2-$what" "$table" "${cmd[@]}"
    read -r n d < <(distinct_ids "$table")
    printf '| %s | %.1f | %s | %.2f | %s | %s | %s |\n' "$what" "$kill_at" "${at_kill:-0 (no table yet)}" \
      "$wall" "$rows" "$d" "$commits"
    [ "$rows" = "$MESSAGES" ] && [ "$d" = "$MESSAGES" ] && [ "$n" = "$MESSAGES" ] ||
      echo "NOTE: $what holds $rows rows ($n read by delta-rs, $d distinct ids) after the restart, expected $MESSAGES"
  done
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
