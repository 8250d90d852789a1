#!/usr/bin/env bash
# Kafka ingestion into Google Cloud Storage (fake-gcs-server) vs into a local table (issue 40,
# docs/BENCHMARKS.md "GCS (fake-gcs-server) vs local"): not a timed test. No target: the emulator
# (Go, objects in memory) shares the 2 cores with ferry and is not Google's service; the ratio is
# for regressions, the CPU split says where the time goes.
#
#   tools/bench_gcs_ingest.sh [BUILD_DIR]      # default build/release
#
# Starts the tests' fake-gcs-server (`test_object_server gcs` from BUILD_DIR: the binary of
# `make setup-gcs`, `-backend memory -host 127.0.0.1`, a free port), creates the bucket "bench"
# through the JSON API (curl), then runs tools/bench_kafka_ingest.sh ROUNDS (default 3) times per
# store, alternating local and GCS (each run its own mock cluster, preload and kcat peer): the
# local run into a temp dir, the GCS run into gs://bench/run-N, ferry configured by the
# environment alone (STORAGE_EMULATOR_HOST: anonymous requests, as Google's clients send them to
# an emulator). Per run: ferry's wall seconds, messages/s, ferry's CPU (user + sys), its peak RSS,
# and for GCS runs the emulator's CPU over the run (utime + stime of /proc/<pid>/stat before and
# after bench_kafka_ingest.sh; the emulator is idle but for ferry's run and the script's
# `ferry table inspect`). Prints the ratio of the median ferry rates, GCS / local, the medians of
# the CPU split, the emulator's RSS at the end and the load average.
# Environment: as bench_kafka_ingest.sh (COUNT, MAX_ROWS, ...), ROUNDS.
set -euo pipefail
BUILD_DIR=${1:-build/release}
ROUNDS=${ROUNDS:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
SERVER=$(realpath "$BUILD_DIR/src/ferry/testing/test_object_server")
OUT=$(mktemp -d /tmp/ferry-bench-gcs.XXXXXX)
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill -TERM "$server" 2>/dev/null || true  # it stops the emulator and removes its directory
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$OUT"
}
trap cleanup EXIT

"$SERVER" gcs >"$OUT/server.txt" 2>&1 &
server=$!
for _ in $(seq 600); do grep -q '^# running' "$OUT/server.txt" && break; sleep 0.1; done
grep -q '^# running' "$OUT/server.txt" || { cat "$OUT/server.txt" >&2; exit 1; }
eval "$(grep '^export ' "$OUT/server.txt")"
gcs_pid=$(sed -n 's/^# pid \([0-9]*\),.*/\1/p' "$OUT/server.txt")
[ -n "$gcs_pid" ] && kill -0 "$gcs_pid" || { cat "$OUT/server.txt" >&2; exit 1; }
curl -sSf -X POST -H 'Content-Type: application/json' -d '{"name": "bench"}' \
  "$STORAGE_EMULATOR_HOST/storage/v1/b" >/dev/null

TICK=$(getconf CLK_TCK)
gcs_cpu() { awk -v t="$TICK" '{printf "%.2f", ($14 + $15) / t}' "/proc/$gcs_pid/stat"; }
seconds_of() { sed -n 's/^| ferry run --until-caught-up (start to exit) | \([0-9.]*\) | [0-9]* |$/\1/p' "$1"; }
rate_of() { sed -n 's/^| ferry run --until-caught-up (start to exit) | [0-9.]* | \([0-9]*\) |$/\1/p' "$1"; }
cpu_of() { sed -n 's/^ferry CPU: user \([0-9.]*\) s, sys \([0-9.]*\) s;.*/\1 \2/p' "$1" | awk '{printf "%.2f\n", $1 + $2}'; }
rss_of() { sed -n 's/^ferry CPU: .*peak RSS \([0-9]*\) MiB$/\1/p' "$1"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "Kafka ingestion, GCS ($(grep '^# fake-gcs-server' "$OUT/server.txt" | sed 's/^# //'), $STORAGE_EMULATOR_HOST) vs local; $ROUNDS rounds"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '\n| round | table | ferry s | messages/s | ferry CPU s | fake-gcs-server CPU s | peak RSS MiB | load (1 min) after |\n|---|---|---|---|---|---|---|---|\n'
for round in $(seq "$ROUNDS"); do
  for store in local gcs; do
    if [ "$store" = local ]; then
      env -u STORAGE_EMULATOR_HOST "$HERE/bench_kafka_ingest.sh" "$BUILD_DIR" >"$OUT/$store-$round.txt"
      table=local
      server_cpu=-
    else
      c0=$(gcs_cpu)
      TABLE="gs://bench/run-$round" "$HERE/bench_kafka_ingest.sh" "$BUILD_DIR" >"$OUT/$store-$round.txt"
      c1=$(gcs_cpu)
      table="gs://bench/run-$round"
      server_cpu=$(printf '%.2f' "$(echo "$c1 - $c0" | bc -l)")
      echo "$server_cpu" >>"$OUT/server.cpu"
    fi
    f="$OUT/$store-$round.txt"
    rate_of "$f" >>"$OUT/$store.rates"
    cpu_of "$f" >>"$OUT/$store.cpu"
    rss_of "$f" >>"$OUT/$store.rss"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$round" "$table" "$(seconds_of "$f")" \
      "$(rate_of "$f")" "$(cpu_of "$f")" "$server_cpu" "$(rss_of "$f")" "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
local_rate=$(median <"$OUT/local.rates")
gcs_rate=$(median <"$OUT/gcs.rates")
printf '\nmedian ferry rate: local %s msg/s, GCS (fake-gcs-server) %s msg/s; GCS / local %.2f\n' \
  "$local_rate" "$gcs_rate" "$(echo "$gcs_rate / $local_rate" | bc -l)"
printf 'median CPU per run: ferry local %s s, ferry GCS %s s, fake-gcs-server during a GCS run %s s\n' \
  "$(median <"$OUT/local.cpu")" "$(median <"$OUT/gcs.cpu")" "$(median <"$OUT/server.cpu")"
printf 'peak RSS: local %s-%s MiB, GCS %s-%s MiB; fake-gcs-server RSS at the end %s (holding %d tables)\n' \
  "$(sort -n "$OUT/local.rss" | head -1)" "$(sort -n "$OUT/local.rss" | tail -1)" \
  "$(sort -n "$OUT/gcs.rss" | head -1)" "$(sort -n "$OUT/gcs.rss" | tail -1)" \
  "$(awk '/VmRSS/ {printf "%d MiB", $2 / 1024}' "/proc/$gcs_pid/status")" "$ROUNDS"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
