#!/usr/bin/env bash
# Publish-to-visible latency (docs/BENCHMARKS.md, "Publish-to-visible latency and table
# health"): not a timed test.
#
#   tools/bench_latency.sh [BUILD_DIR]      # default build/release (ferry, visible_latency,
#                                           # test_object_server built there)
#
# BROKER=real (the default, issue 38): one real single-broker Apache Kafka (KRaft) for the whole
# invocation, the tests' broker (`test_object_server kafka` from BUILD_DIR, jars from `make
# setup-kafka`, free loopback ports, stopped and removed at exit whatever happens), topics
# created with the tests' confluent-kafka venv. BROKER=mock: the embedded mock cluster (`ferry
# mock-kafka`, one broker), as the figures before issue 38 were measured (see "mock" below).
#
# For each round of ROUNDS (1), each trigger of LATENCIES ("1s 100ms"; MAX_LATENCY=X runs X
# alone) and each store of STORES (local; "local s3" adds an S3 table on the tests' radosgw):
# 1. a fresh topic of PARTITIONS (8);
# 2. `ferry run` into a fresh table (a local directory, or s3://bench/... reached with the
#    standard AWS_* variables alone) at ferry's default consumer settings and batch settings
#    except `[pipeline.batch] max_latency` (a trigger of 1s is ferry's default and is not
#    written); the producer starts once ferry was assigned its partitions;
# 3. `ferry produce kafka --rate RATE` (2,000 msg/s) for WARMUP (5) + DURATION (60) seconds, each
#    message carrying the time it was rendered in `sent` ({{now:...}}, µs), keyed so the
#    messages spread over the partitions;
# 4. bench/visible_latency watches the table's log every POLL_MS, notes when each commit is
#    listed, reads the files it adds, and prints p50/p90/p99/max of visible - sent over the rows
#    sent after the warm-up (ferry's start and its first commit, which creates the table, are
#    not what a running pipeline shows).
# Per run: p50/p90/p99/max, p99 ÷ the target (issue 38: 1,200 ms at the 1 s trigger, 250 ms at
# 100 ms; <= 1 meets it), and the CPU ferry and the broker used during the run (utime + stime
# from /proc/<pid>/stat, as a share of one core); then the median of each figure over the rounds.
#
# The producer lingers LINGER_MS (5 on the real broker, librdkafka's default; `sent` is stamped
# before it, so the linger is part of the figure).
#
# mock: librdkafka 2.0.2's mock cluster, unlike a broker, does not answer a Fetch when data
# arrives: a Fetch that found no data waits the whole fetch.wait.max.ms, and each answer holds
# one record batch per partition. So on the mock the consumer's fetch.wait.max.ms is set to
# FETCH_WAIT_MS (10 there; unset on the real broker, where ferry's default applies), and the
# producer lingers 50 ms: the mock finds a Fetch's offset by walking the partition's record
# batches from the oldest ("FIXME: Maintain an index" in rdkafka_mock.c), so with about one
# message per batch its CPU grew with the run (docs/BENCHMARKS-history.md).
#
# Environment: BROKER (real, mock), ROUNDS (1), LATENCIES ("1s 100ms"), MAX_LATENCY (one trigger
# instead of LATENCIES), STORES (local), RATE (2000), WARMUP (5), DURATION (60), PARTITIONS (8),
# POLL_MS (10), FETCH_WAIT_MS (mock 10, real unset), LINGER_MS (real 5, mock 50), MEMSTORE_MIB
# (2048), KAFKA_PROPERTIES (TOML inline-table body for [pipeline.kafka] properties, for
# diagnostics), BENCH_DIR (default: a mktemp dir, removed; the local table is
# BENCH_DIR/delta/lat), PIPELINE_TOML (lines added to [[pipeline]], e.g. table_properties) and
# EXTRA_TOML (tables appended to the configuration, e.g. [pipeline.maintenance]):
# tools/bench_table_health.sh runs it so.
set -euo pipefail
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
WATCH=$(realpath "$BUILD_DIR/bench/visible_latency")
SERVER=$(realpath "$BUILD_DIR/src/ferry/testing/test_object_server")
BROKER=${BROKER:-real}
ROUNDS=${ROUNDS:-1}
LATENCIES=${MAX_LATENCY:-${LATENCIES:-1s 100ms}}
STORES=${STORES:-local}
RATE=${RATE:-2000}
WARMUP=${WARMUP:-5}
DURATION=${DURATION:-60}
PARTITIONS=${PARTITIONS:-8}
POLL_MS=${POLL_MS:-10}
MEMSTORE_MIB=${MEMSTORE_MIB:-2048}
case "$BROKER" in
  real)
    FETCH_WAIT_MS=${FETCH_WAIT_MS:-}
    LINGER_MS=${LINGER_MS:-5}
    ;;
  mock)
    FETCH_WAIT_MS=${FETCH_WAIT_MS:-10}
    LINGER_MS=${LINGER_MS:-50}
    ;;
  *) echo "BROKER must be real or mock, not $BROKER" >&2; exit 2 ;;
esac
COUNT=$((RATE * (WARMUP + DURATION)))
TICK=$(getconf CLK_TCK)
source "$(dirname "$0")/bench_radosgw.sh"
source "$(dirname "$0")/bench_lib.sh"
# NICE: the niceness of every process of the measurement (broker, radosgw, ferry, producer,
# watcher), e.g. -10 on a machine shared with other work (root only); unset: inherited.
prio=()
if [ -n "${NICE:-}" ]; then prio=(nice -n "$NICE"); fi
# Every thread of PID and of its descendants (a JVM's threads each have their own niceness).
renice_tree() {
  [ -n "${NICE:-}" ] || return 0
  local pid child
  for pid in "$@"; do
    renice -n "$NICE" -p $(ls "/proc/$pid/task") >/dev/null 2>&1 || true
    for child in $(pgrep -P "$pid"); do renice_tree "$child"; done
  done
}

ferry_pid=""
watch_pid=""
bench_extra_cleanup() {
  for pid in $ferry_pid $watch_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  stop_radosgw
  bench_stop_real_kafka
}
bench_dir latency

# The target of issue 38 for a trigger, in ms ("" when it names none).
target_ms() {
  case "$1" in
    1s | 1000ms) echo 1200 ;;
    100ms) echo 250 ;;
    *) echo "" ;;
  esac
}
cpu_s() { awk -v t="$TICK" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat" 2>/dev/null || echo 0; }

echo "ferry publish-to-visible latency: $RATE msg/s for $WARMUP s of warm-up + $DURATION s measured," \
  "$PARTITIONS partitions, triggers: $LATENCIES, rounds: $ROUNDS, stores: $STORES, broker: $BROKER," \
  "fetch.wait.max.ms ${FETCH_WAIT_MS:-not set (librdkafka default, 500)}, producer linger.ms $LINGER_MS ($FERRY)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$BROKER" = real ]; then
  bench_start_real_kafka "$SERVER"
  renice_tree "$KAFKA_SERVER_PID"
  echo "broker: $(grep '^# Kafka' "$DIR/kafka.out" | sed 's/^# //'), pid $BROKER_PID, $BROKERS"
else
  topics=()
  for round in $(seq "$ROUNDS"); do
    for ml in $LATENCIES; do
      for store in $STORES; do topics+=(--topic "lat-$store-$ml-$round:$PARTITIONS"); done
    done
  done
  "${prio[@]}" "$FERRY" mock-kafka --brokers 1 "${topics[@]}" --bootstrap-file "$DIR/bootstrap" \
    </dev/null >/dev/null 2>"$DIR/mock-kafka.log" &
  mock=$!
  for _ in $(seq 100); do [ -s "$DIR/bootstrap" ] && break; sleep 0.1; done
  BROKERS=$(cat "$DIR/bootstrap")
  BROKER_PID=$mock
fi

properties=""
if [ -n "$FETCH_WAIT_MS" ]; then properties="\"fetch.wait.max.ms\" = \"$FETCH_WAIT_MS\""; fi
if [ -n "${KAFKA_PROPERTIES:-}" ]; then properties="${properties:+$properties, }$KAFKA_PROPERTIES"; fi

: >"$DIR/runs.txt"
for round in $(seq "$ROUNDS"); do
  for ml in $LATENCIES; do
    for store in $STORES; do
      name="$store-$ml-$round"
      topic="lat-$name"
      case "$store" in
        local) table="$DIR/delta/lat" ;;
        s3)
          [ -n "${RGW_PID:-}" ] || { start_radosgw "$SERVER" "$DIR" "$MEMSTORE_MIB" bench; renice_tree "$RGW_PID"; }
          table="s3://bench/lat-$ml-$round"
          ;;
        *) echo "unknown store $store (local, s3)" >&2; exit 2 ;;
      esac
      if [ "$store" = local ]; then rm -rf "$table"; fi
      if [ "$BROKER" = real ]; then bench_create_topic "$topic" "$PARTITIONS"; fi
      batch=""
      if [ "$ml" != 1s ]; then batch=$(printf '[pipeline.batch]\nmax_latency = "%s"' "$ml"); fi
      cat >"$DIR/$name.toml" <<TOML
[[pipeline]]
id = "latency"
table = "$table"
schema = "id BIGINT NOT NULL, sent TIMESTAMP"
${PIPELINE_TOML:-}

[pipeline.kafka]
brokers = "$BROKERS"
topics = ["$topic"]
group_id = "ferry-latency-$name"
start = "earliest"
properties = { $properties }

$batch
${EXTRA_TOML:-}
TOML
      "${prio[@]}" "$FERRY" run --config "$DIR/$name.toml" 2>"$DIR/ferry-$name.log" &
      ferry_pid=$!
      for _ in $(seq 600); do grep -q ' starts at ' "$DIR/ferry-$name.log" && break; sleep 0.1; done
      since=$(($(date +%s%6N) + WARMUP * 1000000))
      "${prio[@]}" "$WATCH" "$table" --rows "$COUNT" --poll-ms "$POLL_MS" --since-us "$since" \
        --timeout-s $(((WARMUP + DURATION) * 3 + 120)) >"$DIR/watch-$name.txt" 2>&1 &
      watch_pid=$!
      f0=$(cpu_s "$ferry_pid")
      b0=$(cpu_s "$BROKER_PID")
      t0=$(now)
      "${prio[@]}" "$FERRY" produce kafka --brokers "$BROKERS" --topic "$topic" --count "$COUNT" \
        --rate "$RATE" --key 'k{{seq}}' -X "linger.ms=$LINGER_MS" \
        --template "{\"id\": {{seq}}, \"sent\": \"{{now:yyyy-MM-dd'T'HH:mm:ss.SSSSSSX}}\"}" \
        2>"$DIR/produce-$name.log"
      rc=0
      wait "$watch_pid" || rc=$?
      watch_pid=""
      t1=$(now)
      f1=$(cpu_s "$ferry_pid")
      b1=$(cpu_s "$BROKER_PID")
      kill "$ferry_pid" 2>/dev/null || true
      wait "$ferry_pid" 2>/dev/null || true
      ferry_pid=""
      out=$(cat "$DIR/watch-$name.txt")
      echo "$store ($table, max_latency $ml, round $round): $out"
      [ "$rc" = 0 ] || { echo "FAIL: the watcher exited $rc; ferry's log:" >&2; tail -20 "$DIR/ferry-$name.log" >&2; exit 1; }
      wall=$(elapsed "$t0" "$t1")
      # rows N in C commits (...), M measured: publish-to-visible p50 A ms, p90 B ms, p99 C ms, max D ms
      read -r commits p50 p90 p99 pmax < <(sed -n 's/.* in \([0-9]*\) commits.*p50 \([0-9]*\) ms, p90 \([0-9]*\) ms, p99 \([0-9]*\) ms, max \([0-9]*\) ms.*/\1 \2 \3 \4 \5/p' <<<"$out")
      fcpu=$(printf '%.0f' "$(echo "100 * ($f1 - $f0) / $wall" | bc -l)")
      bcpu=$(printf '%.0f' "$(echo "100 * ($b1 - $b0) / $wall" | bc -l)")
      echo "$round $store $ml $commits $p50 $p90 $p99 $pmax $fcpu $bcpu" >>"$DIR/runs.txt"
      if [ "$store" = local ]; then rm -rf "$table"; fi
    done
  done
done

ratio() {  # P99 TARGET
  if [ -n "$2" ]; then printf '%.2f' "$(echo "$1 / $2" | bc -l)"; else echo "-"; fi
}
printf '\n| round | store | max_latency | commits | p50 ms | p90 ms | p99 ms | max ms | p99 ÷ target | ferry CPU %% of a core | broker CPU %% of a core |\n|---|---|---|---|---|---|---|---|---|---|---|\n'
while read -r round store ml commits p50 p90 p99 pmax fcpu bcpu; do
  t=$(target_ms "$ml")
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s (target %s) | %s | %s |\n' "$round" "$store" "$ml" \
    "$commits" "$p50" "$p90" "$p99" "$pmax" "$(ratio "$p99" "$t")" "${t:-none}" "$fcpu" "$bcpu"
done <"$DIR/runs.txt"
echo
for ml in $LATENCIES; do
  for store in $STORES; do
    col() { awk -v s="$store" -v m="$ml" -v c="$1" '$2 == s && $3 == m {print $c}' "$DIR/runs.txt" | median; }
    t=$(target_ms "$ml")
    p99=$(col 7)
    printf 'median of %d rounds, %s, max_latency %s: p50 %s ms, p99 %s ms, max %s ms; p99 ÷ target = %s (target %s ms, <= 1 meets it); ferry CPU %s %%, broker CPU %s %% of a core\n' \
      "$ROUNDS" "$store" "$ml" "$(col 5)" "$p99" "$(col 8)" "$(ratio "$p99" "$t")" "${t:-none}" "$(col 9)" "$(col 10)"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
