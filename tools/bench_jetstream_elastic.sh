#!/usr/bin/env bash
# JetStream elastic scale-out benchmark (issue 41 "Performance", docs/BENCHMARKS.md "JetStream
# elastic scale-out"): not a timed test.
#
#   tools/bench_jetstream_elastic.sh [BUILD_DIR]   # default build/release; needs `ferry` built
#
# 1. starts nats-server (JetStream, file store in a temp dir; NATS_SERVER chooses which, as for
#    tools/bench_jetstream_ingest.sh) on a free port, not pinned;
# 2. publishes COUNT (default 1,000,000) JSON messages of about 400 bytes to stream `bench`
#    (subject `bench.>`), spread evenly over PARTITIONS (16) partition subjects `bench.<p>.x`
#    (`ferry produce nats --stream-subject 'bench.>'`), ids 1..COUNT;
# 3. ROUNDS times (default 3), alternating:
#    one: one `ferry run --until-caught-up` pinned to the first CPU of CPUS (`taskset`), the elastic
#         pipeline `partitions = { subject = "bench.{partition}.>", count = PARTITIONS }` alone;
#    two: two such processes with the same config, started together, pinned one to each CPU of
#         CPUS: the leases split the partitions in halves between them;
#    each into a fresh Delta table, timed from the first start to the last exit (the last durable
#    commit), the table checked to hold COUNT rows, and the leases each process took and released
#    counted from its log (the spread);
# 4. prints every run, the medians and the speed-up one / two (target >= 1.7).
# On a 2-core machine the nats-server shares the cores with ferry: with one process it has a core
# nearly to itself, with two it competes with both (the speed-up is a lower bound of what two
# hosts give). The server is stopped and the temp dirs removed on exit.
#
# Environment: COUNT, PARTITIONS, PAYLOAD (285 -> ~400 B), BATCH (1000), MAX_ROWS (100000),
# MAX_LATENCY (5s), LEASE_TTL (3s; leases are renewed and rebalanced every third of it), CPUS
# ("0 1"), ROUNDS (3), NATS_SERVER, BENCH_DIR (kept when set), SPLIT (leases: the elastic
# config above, the default; static: each process's config names its half of the partitions'
# filters in `subjects`, no leases: the same work without the start-up handover, in which the
# first process to start holds every lease until the second joins and it has committed what it
# read of the partitions it hands over).
set -euo pipefail
source "$(dirname "$0")/bench_lib.sh"
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
COUNT=${COUNT:-1000000}
PARTITIONS=${PARTITIONS:-16}
PAYLOAD=${PAYLOAD:-285}
BATCH=${BATCH:-1000}
MAX_ROWS=${MAX_ROWS:-100000}
MAX_LATENCY=${MAX_LATENCY:-5s}
LEASE_TTL=${LEASE_TTL:-3s}
SPLIT=${SPLIT:-leases}
[[ $SPLIT =~ ^(leases|static)$ ]] || { echo "SPLIT must be leases or static, got '$SPLIT'" >&2; exit 2; }
read -r -a CPU < <(echo "${CPUS:-0 1}")
ROUNDS=${ROUNDS:-3}
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive integer, got '$ROUNDS'" >&2; exit 2; }
[ "${#CPU[@]}" -ge 2 ] || { echo "CPUS must name two CPUs, got '${CPUS:-}'" >&2; exit 2; }
((COUNT % PARTITIONS == 0)) || { echo "COUNT must be a multiple of PARTITIONS" >&2; exit 2; }
command -v taskset >/dev/null || { echo "taskset is missing (util-linux)" >&2; exit 2; }
bench_nats_server

bench_dir js-elastic
ferries=()
bench_extra_cleanup() {
  for pid in "${ferries[@]}"; do kill "$pid" 2>/dev/null || true; done
}

echo "ferry JetStream elastic benchmark: $COUNT messages on $PARTITIONS partitions, split by $SPLIT, lease_ttl $LEASE_TTL, CPUs ${CPU[0]} and ${CPU[1]} ($FERRY)"
echo "nats-server $NATS_VERSION ($NATS_BIN)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
bench_start_nats

per=$((COUNT / PARTITIONS))
t0=$(now)
for p in $(seq 0 $((PARTITIONS - 1))); do
  "$FERRY" produce nats --server "$URL" --stream bench --subject "bench.$p.x" \
    --stream-subject 'bench.>' --create-stream --count "$per" --first $((p * per + 1)) \
    --template "{\"id\": {{seq}}, \"dateTime\": \"{{now:MM/dd/yyyy - HH:mm:ss Z}}\", \"user\": \"{{uuid}}\", \"payload\": \"{{rand:$PAYLOAD}}\"}" \
    >>"$DIR/produce.log" 2>&1
done
t1=$(now)
echo "published in $(printf '%.1f' "$(elapsed "$t0" "$t1")") s"

# The partitions' filters from $1 to $2 (inclusive), as a TOML list.
filters() {
  local p out=()
  for ((p = $1; p <= $2; p++)); do out+=("\"bench.$p.>\""); done
  (IFS=,; echo "[${out[*]}]")
}

# The config of run $1, process $2 of $3: SPLIT=leases, the elastic pipeline (its own lease bucket
# per run, so that no lease of an earlier run is in the way); SPLIT=static, `subjects` naming the
# process's half of the partitions.
write_config() {
  local source half=$((PARTITIONS / $3))
  if [ "$SPLIT" = leases ]; then
    source="partitions = { subject = \"bench.{partition}.>\", count = $PARTITIONS }
lease_ttl = \"$LEASE_TTL\"
lease_bucket = \"leases_$1\""
  else
    source="subjects = $(filters $(($2 * half)) $((($2 + 1) * half - 1)))"
  fi
  cat >"$DIR/ferry-$1-$2.toml" <<TOML
[log]
level = "info"

[[pipeline]]
id = "bench"
table = "$DIR/delta/$1"
schema = "id BIGINT NOT NULL, dateTime STRING, user STRING, payload STRING"
metadata_columns = { sequence = "_sequence", subject = "_subject" }

[pipeline.jetstream]
servers = "$URL"
stream = "bench"
$source
start = "all"
batch_size = $BATCH

[pipeline.decode]
format = "json"

[pipeline.batch]
max_rows = $MAX_ROWS
max_latency = "$MAX_LATENCY"
TOML
}

# Runs $2 processes (1 or 2) for run name $1, pinned one per CPU; prints the seconds from the
# first start to the last exit. Inside $(...): a failure prints FAIL and returns non-zero.
run_processes() {
  local name=$1 n=$2 a b i status=0
  ferries=()
  a=$(now)
  for ((i = 0; i < n; i++)); do
    write_config "$name" "$i" "$n"
    taskset -c "${CPU[$i]}" "$FERRY" run --config "$DIR/ferry-$name-$i.toml" --until-caught-up \
      2>"$DIR/ferry-$name-$i.log" &
    ferries+=($!)
  done
  for ((i = 0; i < n; i++)); do
    if ! wait "${ferries[$i]}"; then
      echo "FAIL: run $name: process $i exited non-zero; its log:" >&2
      tail -n 20 "$DIR/ferry-$name-$i.log" >&2
      status=1
    fi
  done
  b=$(now)
  ferries=()
  [ "$status" = 0 ] || return 1
  elapsed "$a" "$b"
}

# Checks run $1's table: COUNT rows (ids 1..COUNT each once: exactly-once positions make a
# duplicate show as a row too many).
check_table() {
  local json rows
  json=$("$FERRY" table inspect "$DIR/delta/$1" --json)
  rows=$(jq -r .num_rows <<<"$json")
  if [ "${rows:-0}" != "$COUNT" ]; then
    echo "FAIL: run $1: the table holds ${rows:-?} rows, expected $COUNT" >&2
    return 1
  fi
}

# Run $1's processes' leases: "took T, released R" each, from their logs (partition_leases.cc).
spread() {
  local out=() f
  for f in "$DIR/ferry-$1-"*.log; do
    out+=("took $(grep -c 'took partition' "$f" || true), released $(grep -c 'releasing partition' "$f" || true)")
  done
  (IFS=';'; echo "${out[*]}")
}

one_runs=()
two_runs=()
printf '\n| run | what | seconds | messages/s | leases per process |\n|---|---|---|---|---|\n' >"$DIR/runs.md"
for round in $(seq "$ROUNDS"); do
  t=$(run_processes "one-$round" 1)
  check_table "one-$round"
  one_runs+=("$t")
  printf '| %d | one process on CPU %s, %d partitions | %.2f | %.0f | %s |\n' "$round" "${CPU[0]}" \
    "$PARTITIONS" "$t" "$(echo "$COUNT / $t" | bc -l)" "$(spread "one-$round")" >>"$DIR/runs.md"
  t=$(run_processes "two-$round" 2)
  check_table "two-$round"
  two_runs+=("$t")
  printf '| %d | two processes on CPUs %s and %s, sharing %d partitions by %s | %.2f | %.0f | %s |\n' \
    "$round" "${CPU[0]}" "${CPU[1]}" "$PARTITIONS" "$SPLIT" "$t" "$(echo "$COUNT / $t" | bc -l)" \
    "$(spread "two-$round")" >>"$DIR/runs.md"
done

one_median=$(printf '%s\n' "${one_runs[@]}" | median)
two_median=$(printf '%s\n' "${two_runs[@]}" | median)
cat "$DIR/runs.md"
printf '\nmedians: one process %.2f s (%.0f msg/s), two processes %.2f s (%.0f msg/s)\n' \
  "$one_median" "$(echo "$COUNT / $one_median" | bc -l)" "$two_median" \
  "$(echo "$COUNT / $two_median" | bc -l)"
printf 'speed-up two / one (medians of %d rounds each): %.2f (target >= 1.7), nats-server %s\n' \
  "$ROUNDS" "$(echo "$one_median / $two_median" | bc -l)" "$NATS_VERSION"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
