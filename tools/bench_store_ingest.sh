#!/usr/bin/env bash
# Kafka ingestion into an emulated object store vs into a local table (docs/BENCHMARKS.md
# "Azure Blob (Azurite) vs local", "GCS (fake-gcs-server) vs local"): not a timed test. No
# target: the emulators (Azurite in Node.js, fake-gcs-server in Go, objects in memory) share the
# 2 cores with ferry and are not the cloud services; the ratio is for regressions, the CPU split
# says where the time goes.
#
#   tools/bench_store_ingest.sh azure|gcs [BUILD_DIR]      # default build/release
#
# Starts the tests' emulator (`test_object_server azurite|gcs` from BUILD_DIR, in memory, a free
# port), creates the container or bucket "bench" (Azure: Microsoft's SDK, tests/azurite/blob.mjs;
# GCS: the JSON API through curl), then runs tools/bench_kafka_ingest.sh ROUNDS (default 3) times
# per store, alternating local and the store (each run its own mock cluster, preload and kcat
# peer): the local run into a temp dir, the store run into az://bench/run-N or gs://bench/run-N,
# ferry configured by the environment alone (Azure: AZURE_STORAGE_USE_EMULATOR and
# AZURE_STORAGE_ENDPOINT; GCS: STORAGE_EMULATOR_HOST, anonymous requests as Google's clients send
# them to an emulator). Per run: ferry's wall seconds, messages/s, ferry's CPU (user + sys), its
# peak RSS, and for store runs the emulator's CPU over the run (utime + stime of /proc/<pid>/stat
# before and after bench_kafka_ingest.sh; the emulator is idle but for ferry's run and the
# script's `ferry table inspect`). Prints the ratio of the median ferry rates, store / local, the
# medians of the CPU split, the emulator's RSS at the end and the load average.
# Environment: as bench_kafka_ingest.sh (COUNT, MAX_ROWS, ...), ROUNDS.
set -euo pipefail
STORE=${1:?usage: tools/bench_store_ingest.sh azure|gcs [BUILD_DIR]}
BUILD_DIR=${2:-build/release}
ROUNDS=${ROUNDS:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
case "$STORE" in
  azure) emulator=azurite scheme=az name="Azure Blob (Azurite)" ;;
  gcs) emulator=gcs scheme=gs name="GCS (fake-gcs-server)" ;;
  *) echo "unknown store '$STORE': azure or gcs" >&2; exit 2 ;;
esac
SERVER=$(realpath "$BUILD_DIR/src/ferry/testing/test_object_server")
OUT=$(mktemp -d "/tmp/ferry-bench-$STORE.XXXXXX")
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill -TERM "$server" 2>/dev/null || true  # it stops the emulator and removes its directory
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$OUT"
}
trap cleanup EXIT

"$SERVER" "$emulator" >"$OUT/server.txt" 2>&1 &
server=$!
for _ in $(seq 600); do grep -q '^# running' "$OUT/server.txt" && break; sleep 0.1; done
grep -q '^# running' "$OUT/server.txt" || { cat "$OUT/server.txt" >&2; exit 1; }
eval "$(grep '^export ' "$OUT/server.txt")"
emulator_pid=$(sed -n 's/^# pid \([0-9]*\).*/\1/p' "$OUT/server.txt")
[ -n "$emulator_pid" ] && kill -0 "$emulator_pid" || { cat "$OUT/server.txt" >&2; exit 1; }
if [ "$STORE" = azure ]; then
  endpoint=$(sed -n 's/^# endpoint \([^,]*\),.*/\1/p' "$OUT/server.txt")
  (cd "$HERE/../tests/azurite" && node blob.mjs create-container bench)
  store_env=(AZURE_STORAGE_USE_EMULATOR=true "AZURE_STORAGE_ENDPOINT=$endpoint")
else
  endpoint=$STORAGE_EMULATOR_HOST
  curl -sSf -X POST -H 'Content-Type: application/json' -d '{"name": "bench"}' \
    "$endpoint/storage/v1/b" >/dev/null
  store_env=("STORAGE_EMULATOR_HOST=$endpoint")
fi

TICK=$(getconf CLK_TCK)
emulator_cpu() { awk -v t="$TICK" '{printf "%.2f", ($14 + $15) / t}' "/proc/$emulator_pid/stat"; }
seconds_of() { sed -n 's/^| ferry run --until-caught-up (start to exit) | \([0-9.]*\) | [0-9]* |$/\1/p' "$1"; }
rate_of() { sed -n 's/^| ferry run --until-caught-up (start to exit) | [0-9.]* | \([0-9]*\) |$/\1/p' "$1"; }
cpu_of() { sed -n 's/^ferry CPU: user \([0-9.]*\) s, sys \([0-9.]*\) s;.*/\1 \2/p' "$1" | awk '{printf "%.2f\n", $1 + $2}'; }
rss_of() { sed -n 's/^ferry CPU: .*peak RSS \([0-9]*\) MiB$/\1/p' "$1"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "Kafka ingestion, $name ($(grep -m1 '^# .* up in' "$OUT/server.txt" | sed 's/^# //'), $endpoint) vs local; $ROUNDS rounds"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n| round | table | ferry s | messages/s | ferry CPU s | emulator CPU s | peak RSS MiB | load (1 min) after |\n|---|---|---|---|---|---|---|---|\n'
for round in $(seq "$ROUNDS"); do
  for where in local "$STORE"; do
    f="$OUT/$where-$round.txt"
    if [ "$where" = local ]; then
      env -u STORAGE_EMULATOR_HOST -u AZURE_STORAGE_CONNECTION_STRING -u AZURE_STORAGE_ACCOUNT_NAME \
        -u AZURE_STORAGE_ACCOUNT_KEY "$HERE/bench_kafka_ingest.sh" "$BUILD_DIR" >"$f"
      table=local
      server_cpu=-
    else
      table="$scheme://bench/run-$round"
      c0=$(emulator_cpu)
      env "${store_env[@]}" TABLE="$table" "$HERE/bench_kafka_ingest.sh" "$BUILD_DIR" >"$f"
      c1=$(emulator_cpu)
      server_cpu=$(printf '%.2f' "$(echo "$c1 - $c0" | bc -l)")
      echo "$server_cpu" >>"$OUT/server.cpu"
    fi
    rate_of "$f" >>"$OUT/$where.rates"
    cpu_of "$f" >>"$OUT/$where.cpu"
    rss_of "$f" >>"$OUT/$where.rss"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$round" "$table" "$(seconds_of "$f")" \
      "$(rate_of "$f")" "$(cpu_of "$f")" "$server_cpu" "$(rss_of "$f")" "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
local_rate=$(median <"$OUT/local.rates")
store_rate=$(median <"$OUT/$STORE.rates")
printf '\nmedian ferry rate: local %s msg/s, %s %s msg/s; %s / local %.2f\n' \
  "$local_rate" "$name" "$store_rate" "$STORE" "$(echo "$store_rate / $local_rate" | bc -l)"
printf 'median CPU per run: ferry local %s s, ferry %s %s s, the emulator during a %s run %s s\n' \
  "$(median <"$OUT/local.cpu")" "$STORE" "$(median <"$OUT/$STORE.cpu")" "$STORE" \
  "$(median <"$OUT/server.cpu")"
printf 'peak RSS: local %s-%s MiB, %s %s-%s MiB; the emulator RSS at the end %s (holding %d tables)\n' \
  "$(sort -n "$OUT/local.rss" | head -1)" "$(sort -n "$OUT/local.rss" | tail -1)" "$STORE" \
  "$(sort -n "$OUT/$STORE.rss" | head -1)" "$(sort -n "$OUT/$STORE.rss" | tail -1)" \
  "$(awk '/VmRSS/ {printf "%d MiB", $2 / 1024}' "/proc/$emulator_pid/status")" "$ROUNDS"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
