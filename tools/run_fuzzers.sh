#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for SECONDS each, FUZZ_JOBS at a time (default: the
# number of cores).
#   tools/run_fuzzers.sh BUILD_DIR SECONDS [FUZZER...]
# BUILD_DIR is a build of the `asan` preset (cmake --preset asan). Without FUZZER names, every
# executable under BUILD_DIR/fuzz ending in _fuzzer runs. Corpora live in BUILD_DIR/fuzz/corpus/
# <fuzzer> (kept between runs), seeded from fuzz/corpus/<fuzzer>/ (inputs we wrote, and every
# input that once crashed a fuzzer), parquet_reader_fuzzer also from ../shared/testdata/
# parquet-testing, ddl_fuzzer from a few schemas; fuzz/<fuzzer>.dict is passed when present.
# A crash leaves its input in BUILD_DIR/fuzz/crashes/ and makes the script fail: fix the bug,
# add the input to fuzz/corpus/<fuzzer>/ and a regression unit test beside the code.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS [FUZZER...]" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
seconds=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
testdata="${FERRY_TESTDATA_DIR:-$root/../shared/testdata}"

fuzzers=("$@")
if [ ${#fuzzers[@]} -eq 0 ]; then
  for f in "$build_dir"/fuzz/*_fuzzer; do
    [ -x "$f" ] && fuzzers+=("$(basename "$f")")
  done
fi
if [ ${#fuzzers[@]} -eq 0 ]; then
  echo "run_fuzzers: no fuzzers under $build_dir/fuzz (build the asan preset first)" >&2
  exit 1
fi

seed_corpus() {
  local name=$1 dir=$2
  if [ -d "$root/fuzz/corpus/$name" ]; then
    cp -n "$root/fuzz/corpus/$name"/* "$dir/" 2>/dev/null || true
  fi
  case "$name" in
    parquet_reader_fuzzer)
      # Plain files under 1 MiB (the encrypted ones stop at the footer, a path worth covering).
      find "$testdata/parquet-testing" -maxdepth 1 -type f -name '*.parquet*' -size -1024k \
        -exec cp -n {} "$dir/" \;
      ;;
    ddl_fuzzer)
      printf '%s' 'id BIGINT NOT NULL, ts TIMESTAMP, tags ARRAY<STRING>' >"$dir/a"
      printf '%s' 'm MAP<STRING, STRUCT<x: DECIMAL(12,2), `y z`: ARRAY<DATE> NOT NULL>>' >"$dir/b"
      printf '%s' "c STRING COMMENT 'a \\u00e9 comment', d FIXED(16), e UINT64" >"$dir/c"
      ;;
  esac
}

# Longest input per fuzzer: text formats stay small so that time goes into structure, not size.
max_len() {
  case "$1" in
    parquet_reader_fuzzer) echo 1048576 ;;
    expression_fuzzer | ddl_fuzzer | avro_schema_fuzzer) echo 4096 ;;
    *) echo 65536 ;;
  esac
}

# One fuzzer: bounded memory and time per input; a slow input (>10 s) counts as a hang. Its
# summary (or failure report) goes to BUILD_DIR/fuzz/NAME.summary, printed once all have ended.
run_one() {
  local name=$1
  local bin="$build_dir/fuzz/$name"
  local corpus="$build_dir/fuzz/corpus/$name"
  local crashes="$build_dir/fuzz/crashes/$name"
  local log="$build_dir/fuzz/$name.log" summary="$build_dir/fuzz/$name.summary"
  local dict=()
  if [ -f "$root/fuzz/$name.dict" ]; then
    dict=(-dict="$root/fuzz/$name.dict")
  fi
  if ! "$bin" "$corpus" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=1024 -max_len="$(max_len "$name")" -print_final_stats=1 \
      -artifact_prefix="$crashes/" >"$log" 2>&1; then
    {
      echo "run_fuzzers: $name FAILED; the input is in $crashes, the log in $log"
      tail -n 60 "$log"
    } >"$summary"
    return 1
  fi
  grep -E '^stat::number_of_executed_units|^stat::average_exec_per_sec|^stat::peak_rss_mb' "$log" |
    sed "s/^/run_fuzzers: $name /" >"$summary" ||
    echo "run_fuzzers: $name: passed, but $log holds no final stats" >"$summary"
}

# FUZZ_JOBS fuzzers run at once (default: one per core), each for the full SECONDS.
jobs=${FUZZ_JOBS:-$(nproc)}
if ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
  echo "run_fuzzers: FUZZ_JOBS must be a positive integer, got '$jobs'" >&2
  exit 2
fi
# Whatever ends this script (an error, Ctrl-C, a CI timeout) ends the fuzzers it started.
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT INT TERM
declare -A pids=()
for name in "${fuzzers[@]}"; do
  corpus="$build_dir/fuzz/corpus/$name"
  mkdir -p "$corpus" "$build_dir/fuzz/crashes/$name"
  rm -f "$build_dir/fuzz/$name.summary"
  seed_corpus "$name" "$corpus"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
  done
  echo "run_fuzzers: $name for ${seconds}s (corpus $(ls "$corpus" | wc -l) files)"
  run_one "$name" &
  pids[$name]=$!
done

status=0
for name in "${fuzzers[@]}"; do
  summary="$build_dir/fuzz/$name.summary"
  if ! wait "${pids[$name]}"; then
    cat "$summary" >&2 2>/dev/null || echo "run_fuzzers: $name FAILED before writing $summary" >&2
    status=1
  else
    cat "$summary"
  fi
done
exit $status
