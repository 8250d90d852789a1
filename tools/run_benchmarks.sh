#!/usr/bin/env bash
# The Parquet benchmark of issue 2 (docs/BENCHMARKS.md): 1 M rows of the 9-column row, zstd, one
# thread, ferry next to DuckDB (@duckdb/node-api from tests/duckdb) in the same run:
#   (a) JSON lines -> Parquet: `ferry parquet from-json` vs DuckDB COPY (SELECT * FROM read_json)
#   (b) Parquet write alone from in-memory batches: bench/parquet_bench write vs DuckDB COPY of
#       an in-memory table
#   (c) read of the same files: bench/parquet_bench read vs DuckDB read_parquet (every column)
# Each measurement is the best (least CPU time) of REPS runs (default 3). Prints rows per CPU
# second and per wall second, and the ratios ferry / DuckDB (the target is >= 2.0 for (a) and
# (b)); CPU time is the figure to trust on a shared machine.
# The zstd level is LEVEL on both sides (default 3, DuckDB's default; ferry's own default is 1).
#   tools/run_benchmarks.sh [ROWS]   (env: REPS, LEVEL, BUILD_DIR=build/release, WORK_DIR, FERRY=binary)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rows=${1:-1000000}
reps=${REPS:-3}
level=${LEVEL:-3}
export DUCKDB_ZSTD_LEVEL=$level
build=${BUILD_DIR:-build/release}
work=${WORK_DIR:-$build/bench-parquet}
schema='id BIGINT NOT NULL, qty INT, price DOUBLE, code STRING, city STRING, body STRING, ts TIMESTAMP, day DATE, note STRING'

if [ ! -f "$build/build.ninja" ]; then
  cmake --preset release >/dev/null
fi
if [ -n "${FERRY:-}" ]; then
  ferry=$FERRY
  cmake --build "$build" --target parquet_bench >/dev/null
else
  ferry="$build/src/ferry/app/ferry"
  cmake --build "$build" --target ferry parquet_bench >/dev/null
fi
bench="$build/bench/parquet_bench"
if [ ! -d tests/duckdb/node_modules/@duckdb/node-api ]; then
  (cd tests/duckdb && npm ci --no-audit --no-fund --loglevel=error)
fi

mkdir -p "$work"
json="$work/rows-$rows.jsonl"
if [ ! -s "$json" ]; then
  "$bench" gen-json "$rows" "$json"
fi

# best_of CMD...: runs CMD REPS times; CMD prints `... seconds=W cpu_seconds=C ...`; echoes
# "W C" of the run with the least CPU time (on a shared machine, wall time includes waiting for
# a core; CPU time does not).
best_of() {
  local best_w="" best_c="" line w c
  for _ in $(seq "$reps"); do
    line=$("$@")
    w=$(sed -n 's/.* seconds=\([0-9.]*\).*/\1/p' <<<"$line")
    c=$(sed -n 's/.*cpu_seconds=\([0-9.]*\).*/\1/p' <<<"$line")
    if [ -z "$w" ] || [ -z "$c" ]; then
      echo "run_benchmarks: no timing from: $* ($line)" >&2
      exit 1
    fi
    if [ -z "$best_c" ] || awk "BEGIN{exit !($c < $best_c)}"; then
      best_w=$w
      best_c=$c
    fi
  done
  echo "$best_w $best_c"
}
# The CLI prints nothing: time the whole process (start-up included, a few ms).
ferry_from_json() {
  local t
  rm -f "$work/ferry.parquet"
  t=$( { TIMEFORMAT='%R %U %S'; time "$ferry" parquet from-json --schema "$schema" --codec zstd --level "$level" \
    "$json" "$work/ferry.parquet" >/dev/null; } 2>&1)
  read -r w u s <<<"$t"
  echo "from-json seconds=$w cpu_seconds=$(awk "BEGIN{print $u + $s}")"
}
duck() { node bench/duckdb_parquet_bench.mjs "$@"; }

rate() { awk "BEGIN{printf \"%.0f\", $rows / $1}"; }
ratio() { awk "BEGIN{printf \"%.2f\", $2 / $1}"; }  # ferry seconds, duckdb seconds
row() {  # name "ferry_wall ferry_cpu" "duck_wall duck_cpu"
  local fw fc dw dc
  read -r fw fc <<<"$2"
  read -r dw dc <<<"$3"
  printf '%-34s | %10s %10s %6s | %10s %10s %6s\n' "$1" "$(rate "$fc")" "$(rate "$dc")" \
    "$(ratio "$fc" "$dc")x" "$(rate "$fw")" "$(rate "$dw")" "$(ratio "$fw" "$dw")x"
}

echo "rows=$rows reps=$reps (best of) zstd level $level (both) cpu=$(nproc) x $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
a_f=$(best_of ferry_from_json)
a_d=$(best_of duck json "$json" "$work/duckdb.parquet")
b_f=$(best_of "$bench" write "$json" "$work/ferry-write.parquet" "$level")
b_d=$(best_of duck write "$json" "$work/duckdb-write.parquet")
c_ff=$(best_of "$bench" read "$work/ferry.parquet")
c_fd=$(best_of duck read "$work/ferry.parquet")
c_df=$(best_of "$bench" read "$work/duckdb.parquet")
c_dd=$(best_of duck read "$work/duckdb.parquet")

printf '%-34s | %-29s | %-29s\n' "rows/s" "per CPU second" "per wall second"
printf '%-34s | %10s %10s %6s | %10s %10s %6s\n' "" ferry duckdb ratio ferry duckdb ratio
row "(a) JSON lines -> Parquet (zstd)" "$a_f" "$a_d"
row "(b) write from memory (zstd)" "$b_f" "$b_d"
row "(c) read ferry's file" "$c_ff" "$c_fd"
row "(c) read DuckDB's file" "$c_df" "$c_dd"
printf 'file sizes: ferry %s bytes, duckdb %s bytes, JSON %s bytes\n' \
  "$(stat -c %s "$work/ferry.parquet")" "$(stat -c %s "$work/duckdb.parquet")" "$(stat -c %s "$json")"
