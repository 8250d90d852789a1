#!/usr/bin/env bash
# A table's health under low-latency ingestion (issue 22, docs/BENCHMARKS.md "Publish-to-visible
# latency and table health"): not a timed test.
#
#   tools/bench_table_health.sh [BUILD_DIR]      # default build/release
#
# Runs tools/bench_latency.sh into a local table for DURATION (600) seconds at RATE (2000) msg/s
# with MAX_LATENCY (100ms), i.e. about ten commits a second, with the maintenance a user would
# schedule for that: `[pipeline.maintenance] optimize_every = OPTIMIZE_EVERY ("1m")`, and the
# table property delta.logRetentionDuration = LOG_RETENTION ("interval 2 minutes"), so that the
# log cleanup after each checkpoint (every delta.checkpointInterval = 10 commits, ferry's
# default) deletes the commits older than that. Every SAMPLE_S (60) seconds it prints the
# table's version, its active files (`ferry table inspect --json`), the data files on disk
# (active and removed; vacuum keeps removed files for at least 168 h, so these grow), the files
# in _delta_log, and the commits after the newest checkpoint (what a reader replays on top of
# it). Bounded: active files, log files and the replay stay flat while the version grows. The
# latency figures of the whole run come last (bench/visible_latency).
set -euo pipefail
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
DURATION=${DURATION:-600}
SAMPLE_S=${SAMPLE_S:-60}
OPTIMIZE_EVERY=${OPTIMIZE_EVERY:-1m}
LOG_RETENTION=${LOG_RETENTION:-interval 2 minutes}
DIR=$(mktemp -d /tmp/ferry-bench-health.XXXXXX)
table=$DIR/run/delta/lat
runner=""
cleanup() {
  if [ -n "$runner" ]; then kill "$runner" 2>/dev/null || true; wait "$runner" 2>/dev/null || true; fi
  rm -rf "$DIR"
}
trap cleanup EXIT

echo "ferry table health: $DURATION s at ${RATE:-2000} msg/s, max_latency ${MAX_LATENCY:-100ms}," \
  "optimize_every $OPTIMIZE_EVERY, delta.logRetentionDuration '$LOG_RETENTION' ($FERRY)"
STORES=local DURATION=$DURATION MAX_LATENCY=${MAX_LATENCY:-100ms} BENCH_DIR=$DIR/run \
  PIPELINE_TOML="table_properties = { \"delta.logRetentionDuration\" = \"$LOG_RETENTION\" }" \
  EXTRA_TOML=$(printf '[pipeline.maintenance]\noptimize_every = "%s"' "$OPTIMIZE_EVERY") \
  "$(dirname "$0")/bench_latency.sh" "$BUILD_DIR" >"$DIR/latency.txt" 2>&1 &
runner=$!

sample() {
  local inspect version active ondisk logs checkpoint replay
  # The checkpoint first: read after the version, it may be newer than it.
  checkpoint=$(jq -r '.version // empty' "$table/_delta_log/_last_checkpoint" 2>/dev/null || true)
  inspect=$("$FERRY" table inspect "$table" --json 2>"$DIR/inspect.err") ||
    { echo "| $1 | inspect failed: $(head -c 200 "$DIR/inspect.err") | | | | | |"; return; }
  version=$(jq -r .version <<<"$inspect")
  active=$(jq -r .num_files <<<"$inspect")
  ondisk=$(find "$table" -path "$table/_delta_log" -prune -o -name '*.parquet' -print | wc -l)
  logs=$(find "$table/_delta_log" -maxdepth 1 -type f | wc -l)
  replay=$((version - ${checkpoint:--1}))
  echo "| $1 | $version | $active | $ondisk | $logs | ${checkpoint:-none} | $replay |"
}

echo
echo "| seconds | version | active files | data files on disk | _delta_log files | last checkpoint | commits after it |"
echo "|---|---|---|---|---|---|---|"
start=$(date +%s)
while kill -0 "$runner" 2>/dev/null; do
  sleep "$SAMPLE_S" & wait $! || true
  kill -0 "$runner" 2>/dev/null || break
  sample $(($(date +%s) - start))
done
rc=0
wait "$runner" || rc=$?
runner=""
sample "end"
echo
grep -E '^(local|date|load|FAIL)' "$DIR/latency.txt" || true
[ "$rc" = 0 ] || { echo "bench_latency.sh exited $rc:"; tail -20 "$DIR/latency.txt"; exit 1; }
