#!/usr/bin/env bash
# Upserts (issue 42, docs/BENCHMARKS.md "Upserts"): changes applied per second into a table of
# ROWS (10,000,000) rows with HOT_KEYS (10 %) of the keys hot, by ferry with deletion vectors and
# with copy-on-write, and side by side Spark's foreachBatch + MERGE on the same change stream into
# a copy of the same table. Not a timed test.
#
#   tools/bench_upsert.sh [BUILD_DIR]     # default build/release: ferry and test_object_server
#   SMOKE=1 tools/bench_upsert.sh         # 200,000 rows, 50,000 changes: checks that it runs
#
# One real single-broker Apache Kafka (KRaft; make setup-kafka), topics of PARTITIONS (8):
# 1. load  ROWS messages {"id": N, "v": "init-N", "n": 0} (`ferry produce kafka`), ingested by an
#          append pipeline into table-dv (delta.enableDeletionVectors) and table-cow; table-dv is
#          copied to table-spark before any change.
# 2. changes  CHANGES (1,000,000) messages by bench/upsert_changes.py --start-live: updates,
#          deletes (tombstones), re-inserts of deleted keys and deletes of deleted ones (every key
#          of the table is live at the start, so there is no insert of a new key); HOT_SHARE
#          (90 %) of them to the hot keys (ids 1..ROWS*HOT_KEYS). Keyed {"id": N}: a key's
#          changes stay in order in one partition.
# 3. runs  for MODE in MODES ("dv cow"): `ferry run --until-caught-up` of an upsert pipeline
#          (key id, batch MAX_ROWS) on table-MODE; then, unless SPARK=0, bench/spark/spark_merge.py
#          (local[2], tuned settings, maxOffsetsPerTrigger MAX_ROWS) on table-spark. Each under
#          /usr/bin/time: wall, CPU user + sys (the JVM included). ferry's figures: changes/s over
#          the whole run (with INDEX=rebuild its key index is built from the table's 10 M keys at
#          start: the run's first seconds) and over the commits after the first (from the commit
#          files' times and the txn positions in them), and changes per CPU-second. Afterwards every table is
#          checked by `ferry verify --key id --expect LIVE` (LIVE: the generator's live keys).
#          The load average (1 min) before and after each run is printed with it.
#
# INDEX (persisted): before the changes are produced, each upsert pipeline runs once over the
# empty changes topic, which builds its key index from the table and writes it beside the table,
# so the measured run starts as a restarted pipeline does (loading that file); the build's wall,
# CPU and RSS are printed. INDEX=rebuild: the measured run builds the index itself (a pipeline's
# first start on a table it has never indexed).
#
# PERF=1 runs each ferry upsert run under `perf record -g` and prints the top of `perf report`
# (where the CPU went: the key index build at start, the scan of touched files, the writes).
#
# Environment: ROWS, CHANGES, HOT_KEYS, HOT_SHARE, PARTITIONS, MAX_ROWS, MODES, SPARK (1), SEED,
# PERF, INDEX, BENCH_DIR (default: a mktemp dir, removed), SMOKE.
set -euo pipefail
BUILD_DIR=${1:-build/release}
root=$(cd "$(dirname "$0")/.." && pwd)
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
SERVER=$(realpath "$BUILD_DIR/src/ferry/testing/test_object_server")
CACHE=${FERRY_INTEROP_CACHE:-$HOME/.cache/ferry}
SPARK_PY=$CACHE/interop-venv/bin/python
if [ "${SMOKE:-0}" = 1 ]; then
  ROWS=${ROWS:-200000}
  CHANGES=${CHANGES:-50000}
fi
ROWS=${ROWS:-10000000}
CHANGES=${CHANGES:-1000000}
HOT_KEYS=${HOT_KEYS:-0.1}
HOT_SHARE=${HOT_SHARE:-0.9}
PARTITIONS=${PARTITIONS:-8}
MAX_ROWS=${MAX_ROWS:-250000}
MODES=${MODES:-dv cow}
SPARK=${SPARK:-1}
SEED=${SEED:-42}
PERF=${PERF:-0}
INDEX=${INDEX:-persisted}
for f in "$FERRY" "$SERVER"; do
  [ -x "$f" ] || { echo "$f is missing (cmake --build $BUILD_DIR --target ferry test_object_server)" >&2; exit 2; }
done
. "$root/tools/bench_lib.sh"
bench_extra_cleanup() { bench_stop_real_kafka; }
bench_dir upsert
bench_start_real_kafka "$SERVER"
bench_create_topic base "$PARTITIONS"
bench_create_topic changes "$PARTITIONS"
MAX_LATENCY=5s
load() { cut -d' ' -f1 /proc/loadavg; }

# config NAME TABLE TOPIC MODE(append|upsert) DV(0|1)
config() {
  local props=""
  [ "$5" = 1 ] && props='"delta.enableDeletionVectors" = "true"'
  local upsert=""
  [ "$4" = upsert ] && upsert=$'mode = "upsert"\nkey = ["id"]'
  cat >"$DIR/$1.toml" <<TOML
[log]
level = "warn"

[[pipeline]]
id = "$1"
table = "$2"
schema = "id BIGINT NOT NULL, v STRING, n BIGINT"
table_properties = { $props }
$upsert
$(bench_kafka_json_toml "$1" "$3")
TOML
}

# measure NAME CMD...: runs CMD under /usr/bin/time; sets WALL, CPU (user + sys), RSS_MB.
measure() {
  local name=$1
  shift
  local before
  before=$(load)
  /usr/bin/time -f "%e %U %S %M" -o "$DIR/time-$name.txt" "$@" >"$DIR/out-$name.log" 2>&1 || {
    echo "$name failed:" >&2
    tail -30 "$DIR/out-$name.log" >&2
    exit 1
  }
  read -r WALL user sys rss <"$DIR/time-$name.txt"
  CPU=$(echo "$user + $sys" | bc -l)
  RSS_MB=$((rss / 1024))
  LOADS="$before -> $(load)"
}

echo "upsert benchmark: $ROWS rows, $CHANGES changes, hot keys $HOT_KEYS taking $HOT_SHARE," \
  "$PARTITIONS partitions, batches of $MAX_ROWS; $(nproc) cores, load $(load); $FERRY"
t0=$(now)
"$FERRY" produce kafka --brokers "$BROKERS" --topic base --count "$ROWS" \
  --template '{"id": {{seq}}, "v": "init-{{seq}}", "n": 0}' -X linger.ms=50 \
  -X compression.type=lz4 --timeout 600 2>"$DIR/produce-base.log"
echo "load: $ROWS rows produced in $(printf %.1f "$(elapsed "$t0" "$(now)")") s"
for mode in $MODES; do
  dv=0
  [ "$mode" = dv ] && dv=1
  MAX_ROWS_SAVED=$MAX_ROWS
  MAX_ROWS=1000000
  config "load-$mode" "$DIR/table-$mode" base append "$dv"
  MAX_ROWS=$MAX_ROWS_SAVED
  measure "load-$mode" "$FERRY" run --config "$DIR/load-$mode.toml" --until-caught-up
  echo "load: table-$mode (append) $ROWS rows in $WALL s, CPU $CPU s"
done
if [ "$SPARK" = 1 ]; then
  cp -r "$DIR/table-dv" "$DIR/table-spark"
fi
# INDEX=persisted: the upsert pipeline runs once over the still empty changes topic, so that its
# key index is built from the table and written beside it (_ferry/upsert/<id>/keys.idx), as a
# running pipeline's is (a restart loads it and reads the log after it); the measured run then
# starts from that file. INDEX=rebuild: the measured run builds the index from the table itself.
if [ "$INDEX" = persisted ]; then
  for mode in $MODES; do
    dv=0
    [ "$mode" = dv ] && dv=1
    config "upsert-$mode" "$DIR/table-$mode" changes upsert "$dv"
    measure "index-$mode" "$FERRY" run --config "$DIR/upsert-$mode.toml" --until-caught-up
    echo "index: table-$mode's key index of $ROWS keys built and persisted in $WALL s, CPU $CPU s," \
      "peak RSS $RSS_MB MB ($(du -h "$DIR/table-$mode/_ferry/upsert/upsert-$mode/keys.idx" | cut -f1) file)"
  done
fi
t0=$(now)
"$KAFKA_PY" "$root/bench/upsert_changes.py" --brokers "$BROKERS" --topic changes --keys "$ROWS" \
  --changes "$CHANGES" --hot-keys "$HOT_KEYS" --hot-share "$HOT_SHARE" --seed "$SEED" \
  --start-live >"$DIR/changes.json"
LIVE=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["live"])' "$DIR/changes.json")
echo "changes: $(cat "$DIR/changes.json") (produced in $(printf %.1f "$(elapsed "$t0" "$(now)")") s)"

# The commits of an upsert run after version FROM: "<seconds from the first to the last commit>
# <messages in the commits after the first> <the first commit's time (epoch s)>" from the commit
# files' mtimes and txn positions.
steady() {
  python3 - "$1" "$2" <<'PY'
import glob, json, os, sys
log, first = sys.argv[1], int(sys.argv[2])
commits = []
for path in glob.glob(os.path.join(log, "*.json")):
    v = int(os.path.basename(path).split(".")[0])
    if v <= first:
        continue
    consumed = None
    with open(path) as f:
        for line in f:
            a = json.loads(line)
            if "txn" in a:
                consumed = consumed or {}
                consumed[a["txn"]["appId"]] = a["txn"]["version"] + 1
    if consumed is not None:
        commits.append((v, os.path.getmtime(path), consumed))
commits.sort()
if len(commits) < 2:
    print("0 0 0")
    sys.exit()
positions = {}
for _, _, c in commits[:1]:
    positions.update(c)
before = sum(positions.values())
for _, _, c in commits[1:]:
    positions.update(c)
print(f"{commits[-1][1] - commits[0][1]:.3f} {sum(positions.values()) - before} {commits[0][1]:.3f}")
PY
}

verify() {
  local out
  if out=$("$FERRY" verify "$1" --key id --expect "$LIVE" --json 2>&1); then
    echo "ok ($LIVE rows, one per key)"
  else
    echo "NOT CLEAN: $(echo "$out" | tail -1 | cut -c1-400)"
  fi
}

for mode in $MODES; do
  dv=0
  [ "$mode" = dv ] && dv=1
  table="$DIR/table-$mode"
  first=$(ls "$table/_delta_log" | sed -n 's/^0*\([0-9][0-9]*\)\.json$/\1/p' | sort -n | tail -1)
  config "upsert-$mode" "$table" changes upsert "$dv"
  perf=()
  [ "$PERF" = 1 ] && perf=(perf record -F 199 -g -o "$DIR/perf-$mode.data" --)
  start=$(now)
  measure "upsert-$mode" "${perf[@]}" "$FERRY" run --config "$DIR/upsert-$mode.toml" --until-caught-up
  read -r span after first_at <<<"$(steady "$table/_delta_log" "${first:-0}")"
  rate=$(echo "$CHANGES / $WALL" | bc -l)
  per_cpu=$(echo "$CHANGES / $CPU" | bc -l)
  steady_rate=0
  if [ "$(echo "$span > 0" | bc -l)" = 1 ]; then steady_rate=$(echo "$after / $span" | bc -l); fi
  printf 'ferry %-4s %d changes in %.1f s: %.0f changes/s (first commit %.1f s after the start; after it: %.0f/s over %.1f s), CPU %.1f s = %.0f changes per CPU-second, peak RSS %d MB, load %s; verify: %s\n' \
    "$mode" "$CHANGES" "$WALL" "$rate" "$(echo "$first_at - $start" | bc -l)" "$steady_rate" "$span" \
    "$CPU" "$per_cpu" "$RSS_MB" "$LOADS" "$(verify "$table")"
  if [ "$PERF" = 1 ]; then
    perf report -i "$DIR/perf-$mode.data" --stdio --no-children --percent-limit 1.5 -g none \
      2>/dev/null | grep -v '^#' | grep -v '^$' | head -25 | sed "s/^/  perf $mode /"
  fi
  eval "FERRY_PER_CPU_$mode=$per_cpu"
done

if [ "$SPARK" = 1 ]; then
  [ -x "$SPARK_PY" ] || { echo "$SPARK_PY is missing (make setup-spark-bench)" >&2; exit 2; }
  mkdir -p "$DIR/spark-scratch"
  measure spark "$SPARK_PY" "$root/bench/spark/spark_merge.py" --brokers "$BROKERS" \
    --topic changes --table "$DIR/table-spark" --checkpoint "$DIR/spark-checkpoint" \
    --scratch "$DIR/spark-scratch" --max-offsets "$MAX_ROWS"
  rate=$(echo "$CHANGES / $WALL" | bc -l)
  per_cpu=$(echo "$CHANGES / $CPU" | bc -l)
  printf 'spark foreachBatch+MERGE %d changes in %.1f s: %.0f changes/s, CPU %.1f s = %.0f changes per CPU-second, peak RSS %d MB, load %s; %s; verify: %s\n' \
    "$CHANGES" "$WALL" "$rate" "$CPU" "$per_cpu" "$RSS_MB" "$LOADS" \
    "$(grep '^DONE' "$DIR/out-spark.log" || echo 'no DONE line')" "$(verify "$DIR/table-spark")"
  grep '^BATCH' "$DIR/out-spark.log" | sed 's/^/  spark /' || true
  for mode in $MODES; do
    v="FERRY_PER_CPU_$mode"
    printf 'ferry %s / spark, changes per CPU-second: %.1fx\n' "$mode" "$(echo "${!v} / $per_cpu" | bc -l)"
  done
fi
