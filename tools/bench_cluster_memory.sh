#!/usr/bin/env bash
# Peak memory of `ferry optimize` on a clustered table (docs/delta.md, "Clustered optimize
# memory"): not a timed test.
#
#   tools/bench_cluster_memory.sh [BUILD_DIR]      # default build/dev
#
# Generates a clustered table of FILES (16) zstd files of ROWS (500000) rows each with
# tools/gen_clustered_table.py (the interop venv's pyarrow: `make setup-interop`), copies it, and
# runs `ferry optimize` once with --cluster-memory 64GiB (the whole group sorted in memory, as
# before the bound) and once with the default (256MiB), each under /usr/bin/time -v. Prints the
# table's compressed size, each run's maximum resident set size, and its --json result.
set -euo pipefail
BUILD_DIR=${1:-build/dev}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
FILES=${FILES:-16}
ROWS=${ROWS:-500000}
cache=${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}
python=$cache/interop-venv/bin/python
if [ ! -x "$python" ]; then
  echo "bench_cluster_memory: no interop venv at $cache/interop-venv: run \`make setup-interop\`" >&2
  exit 1
fi
DIR=$(mktemp -d /tmp/ferry-bench-cluster.XXXXXX)
trap 'rm -rf "$DIR"' EXIT

"$python" "$(dirname "$0")/gen_clustered_table.py" "$DIR/unbounded" "$FILES" "$ROWS"
cp -r "$DIR/unbounded" "$DIR/bounded"
echo "table: $FILES files x $ROWS rows, $(du -sb "$DIR/unbounded" | cut -f1) bytes on disk"

run() {
  local name=$1
  shift
  /usr/bin/time -v "$FERRY" optimize "$DIR/$name" --json "$@" >"$DIR/$name.json" \
    2>"$DIR/$name.time"
  local rss
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$DIR/$name.time")
  local wall
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$DIR/$name.time")
  echo "$name ($*): max RSS $((rss / 1024)) MiB, wall $wall: $(cat "$DIR/$name.json")"
}
run unbounded --cluster-memory 64GiB
run bounded
