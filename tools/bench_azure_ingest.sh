#!/usr/bin/env bash
# Kafka ingestion into Azure Blob (Azurite) vs into a local table (issue 18, docs/BENCHMARKS.md
# "Azure Blob (Azurite) vs local"): not a timed test. No target: Azurite (Node.js, blobs in
# memory) is not built for speed; the ratio is for regressions.
#
#   tools/bench_azure_ingest.sh [BUILD_DIR]      # default build/release
#
# Starts the tests' Azurite (test_object_server azurite from BUILD_DIR, in memory, a free port),
# creates the container "bench" with Microsoft's SDK (tests/azurite/blob.mjs), then runs
# tools/bench_kafka_ingest.sh ROUNDS (default 2) times per store, alternating local and Azure
# (each run its own mock cluster, preload and kcat peer): the local run into a temp dir, the
# Azure run into az://bench/run-N, ferry configured by the environment alone
# (AZURE_STORAGE_USE_EMULATOR, AZURE_STORAGE_ENDPOINT). Prints every run and the ratio of the
# median ferry rates, Azure / local. Environment: as bench_kafka_ingest.sh (COUNT, ...), ROUNDS.
set -euo pipefail
BUILD_DIR=${1:-build/release}
ROUNDS=${ROUNDS:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
SERVER=$(realpath "$BUILD_DIR/src/ferry/testing/test_object_server")
OUT=$(mktemp -d /tmp/ferry-bench-azure.XXXXXX)
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill -TERM "$server" 2>/dev/null || true  # it stops Azurite and removes its directory
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$OUT"
}
trap cleanup EXIT

"$SERVER" azurite >"$OUT/server.txt" 2>&1 &
server=$!
for _ in $(seq 600); do grep -q '^# running' "$OUT/server.txt" && break; sleep 0.1; done
grep -q '^# running' "$OUT/server.txt" || { cat "$OUT/server.txt" >&2; exit 1; }
endpoint=$(sed -n 's/^# endpoint \([^,]*\),.*/\1/p' "$OUT/server.txt")
eval "$(grep '^export ' "$OUT/server.txt")"
(cd "$HERE/../tests/azurite" && node blob.mjs create-container bench)

rate_of() { sed -n 's/^| ferry run --until-caught-up (start to exit) | [0-9.]* | \([0-9]*\) |$/\1/p' "$1"; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "Kafka ingestion, Azure Blob (Azurite $endpoint) vs local; $ROUNDS rounds"
for round in $(seq "$ROUNDS"); do
  "$HERE/bench_kafka_ingest.sh" "$BUILD_DIR" >"$OUT/local-$round.txt"
  AZURE_STORAGE_USE_EMULATOR=true AZURE_STORAGE_ENDPOINT="$endpoint" \
    TABLE="az://bench/run-$round" "$HERE/bench_kafka_ingest.sh" "$BUILD_DIR" >"$OUT/azure-$round.txt"
  for store in local azure; do
    printf '\n## round %s, %s\n' "$round" "$store"
    grep -E '^\| ferry run|^ferry CPU|^table:|^date:|^load' "$OUT/$store-$round.txt"
    rate_of "$OUT/$store-$round.txt" >>"$OUT/$store.rates"
  done
done
local_rate=$(median <"$OUT/local.rates")
azure_rate=$(median <"$OUT/azure.rates")
printf '\nmedian ferry rate: local %s msg/s, Azure (Azurite) %s msg/s; Azure / local %.2f\n' \
  "$local_rate" "$azure_rate" "$(echo "$azure_rate / $local_rate" | bc -l)"
