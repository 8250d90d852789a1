#!/usr/bin/env bash
# Publish-to-visible latency (docs/BENCHMARKS.md, "Publish-to-visible latency and table
# health"): not a timed test.
#
#   tools/bench_latency.sh [BUILD_DIR]      # default build/release (ferry, visible_latency,
#                                           # test_object_server built there)
#
# For each store of STORES (default "local s3"), in one invocation:
# 1. a fresh topic on the embedded mock cluster (`ferry mock-kafka`, one broker, PARTITIONS);
# 2. `ferry run` into a fresh table (a local directory, or s3://bench/... on the tests' radosgw,
#    reached with the standard AWS_* variables alone) at the default batch settings
#    (max_latency 1s) unless MAX_LATENCY is set; the producer starts once ferry was assigned
#    its partitions;
# 3. `ferry produce kafka --rate RATE` for DURATION seconds, each message carrying the time it
#    was rendered in `sent` ({{now:...}}, µs);
# 4. bench/visible_latency watches the table's log every POLL_MS, notes when each commit is
#    listed, reads the files it adds, and prints p50/p90/p99/max of visible - sent over every
#    row. Target (issue 17): p99 <= 1.5 s at 2,000 msg/s with an S3 table.
#
# The consumer's fetch.wait.max.ms is FETCH_WAIT_MS (default 10; librdkafka's default is 500).
# librdkafka 2.0.2's mock cluster, unlike a broker, does not answer a Fetch when data arrives:
# a Fetch that found no data waits the whole fetch.wait.max.ms, and each answer holds one record
# batch per partition. At the default, rows that arrived just after such a Fetch waited up to
# 0.5 s more, which measured the mock rather than ferry (p50 881 ms locally with a 1 s
# max_latency, 2026-12-02). FETCH_WAIT_MS=500 measures what the mock does at the default.
#
# The producer lingers LINGER_MS (default 50; librdkafka's default is 5) so that its record
# batches hold a few messages each. The mock finds a Fetch's offset by walking the partition's
# record batches from the oldest ("FIXME: Maintain an index" in rdkafka_mock.c), so its CPU grows
# with the batches it holds: at 5 ms (about one message per batch at 2,000 msg/s over 8
# partitions) the mock went from 10 % to 48 % of a core in the first 70 s and kept growing until
# its 5 MiB per partition retention, and the rows waited in it (p99 0.14 s in the first minute,
# 0.58 s by the third, with ferry's own commit path flat). The linger is part of the figure:
# `sent` is stamped before it.
#
# Environment: STORES, RATE (2000), DURATION (60), PARTITIONS (8), MAX_LATENCY, POLL_MS (10),
# FETCH_WAIT_MS (10), LINGER_MS (50), MEMSTORE_MIB (2048), BENCH_DIR (default: a mktemp dir, removed; the local
# table is BENCH_DIR/delta/lat), PIPELINE_TOML (lines added to [[pipeline]], e.g.
# table_properties) and EXTRA_TOML (tables appended to the configuration, e.g.
# [pipeline.maintenance]): tools/bench_table_health.sh runs it so.
set -euo pipefail
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
WATCH=$(realpath "$BUILD_DIR/bench/visible_latency")
SERVER=$(realpath "$BUILD_DIR/src/ferry/testing/test_object_server")
STORES=${STORES:-local s3}
RATE=${RATE:-2000}
DURATION=${DURATION:-60}
PARTITIONS=${PARTITIONS:-8}
MAX_LATENCY=${MAX_LATENCY:-}
POLL_MS=${POLL_MS:-10}
FETCH_WAIT_MS=${FETCH_WAIT_MS:-10}
LINGER_MS=${LINGER_MS:-50}
MEMSTORE_MIB=${MEMSTORE_MIB:-2048}
COUNT=$((RATE * DURATION))
source "$(dirname "$0")/bench_radosgw.sh"

if [ -n "${BENCH_DIR:-}" ]; then
  rm -rf "$BENCH_DIR"
  mkdir -p "$BENCH_DIR"
  DIR=$(realpath "$BENCH_DIR")
  keep=1
else
  DIR=$(mktemp -d /tmp/ferry-bench-latency.XXXXXX)
  keep=0
fi
mock=""
ferry_pid=""
cleanup() {
  for pid in $ferry_pid $mock; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  stop_radosgw
  if [ "$keep" = 0 ]; then rm -rf "$DIR"; fi
}
trap cleanup EXIT

echo "ferry publish-to-visible latency: $RATE msg/s for $DURATION s, $PARTITIONS partitions," \
  "max_latency ${MAX_LATENCY:-default (1s)}, fetch.wait.max.ms $FETCH_WAIT_MS, producer linger.ms $LINGER_MS, stores: $STORES ($FERRY)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

topics=()
for store in $STORES; do topics+=(--topic "lat-$store:$PARTITIONS"); done
"$FERRY" mock-kafka --brokers 1 "${topics[@]}" --bootstrap-file "$DIR/bootstrap" \
  </dev/null >/dev/null 2>"$DIR/mock-kafka.log" &
mock=$!
for _ in $(seq 100); do [ -s "$DIR/bootstrap" ] && break; sleep 0.1; done
BROKERS=$(cat "$DIR/bootstrap")

for store in $STORES; do
  case "$store" in
    local) table="$DIR/delta/lat" ;;
    s3)
      [ -n "${RGW_PID:-}" ] || start_radosgw "$SERVER" "$DIR" "$MEMSTORE_MIB" bench
      table="s3://bench/lat"
      ;;
    *) echo "unknown store $store (local, s3)" >&2; exit 2 ;;
  esac
  batch=""
  if [ -n "$MAX_LATENCY" ]; then batch=$(printf '[pipeline.batch]\nmax_latency = "%s"' "$MAX_LATENCY"); fi
  cat >"$DIR/$store.toml" <<TOML
[[pipeline]]
id = "latency"
table = "$table"
schema = "id BIGINT NOT NULL, sent TIMESTAMP"
${PIPELINE_TOML:-}

[pipeline.kafka]
brokers = "$BROKERS"
topics = ["lat-$store"]
group_id = "ferry-latency-$store"
start = "earliest"
properties = { "fetch.wait.max.ms" = "$FETCH_WAIT_MS" }

$batch
${EXTRA_TOML:-}
TOML
  "$FERRY" run --config "$DIR/$store.toml" 2>"$DIR/ferry-$store.log" &
  ferry_pid=$!
  for _ in $(seq 600); do grep -q ' starts at ' "$DIR/ferry-$store.log" && break; sleep 0.1; done
  "$WATCH" "$table" --rows "$COUNT" --poll-ms "$POLL_MS" --timeout-s $((DURATION * 3 + 120)) \
    >"$DIR/watch-$store.txt" 2>&1 &
  watch_pid=$!
  "$FERRY" produce kafka --brokers "$BROKERS" --topic "lat-$store" --count "$COUNT" \
    --rate "$RATE" --key 'k{{seq}}' -X "linger.ms=$LINGER_MS" \
    --template "{\"id\": {{seq}}, \"sent\": \"{{now:yyyy-MM-dd'T'HH:mm:ss.SSSSSSX}}\"}" \
    2>"$DIR/produce-$store.log"
  rc=0
  wait "$watch_pid" || rc=$?
  kill "$ferry_pid" 2>/dev/null || true
  wait "$ferry_pid" 2>/dev/null || true
  ferry_pid=""
  echo "$store ($table): $(cat "$DIR/watch-$store.txt")"
  [ "$rc" = 0 ] || { echo "FAIL: the watcher exited $rc; ferry's log:" >&2; tail -20 "$DIR/ferry-$store.log" >&2; exit 1; }
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
