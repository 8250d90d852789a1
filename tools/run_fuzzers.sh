#!/usr/bin/env bash
# Runs every libFuzzer target of a fuzz build for SECONDS each.
#   tools/run_fuzzers.sh BUILD_DIR SECONDS [FUZZER...]
# BUILD_DIR is a build of the `fuzz` preset (cmake --preset fuzz). Without FUZZER names, every
# executable under BUILD_DIR/fuzz ending in _fuzzer runs. Corpora live in BUILD_DIR/fuzz/corpus/
# <fuzzer> (kept between runs); parquet_reader_fuzzer is seeded from ../shared/testdata/
# parquet-testing, ddl_fuzzer from a few schemas. A crash leaves its input in BUILD_DIR/fuzz/
# crashes/ and makes the script fail: turn it into a regression test and fix the bug.
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
  echo "run_fuzzers: no fuzzers under $build_dir/fuzz (build the fuzz preset first)" >&2
  exit 1
fi

seed_corpus() {
  local name=$1 dir=$2
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

status=0
for name in "${fuzzers[@]}"; do
  bin="$build_dir/fuzz/$name"
  corpus="$build_dir/fuzz/corpus/$name"
  crashes="$build_dir/fuzz/crashes/$name"
  mkdir -p "$corpus" "$crashes"
  seed_corpus "$name" "$corpus"
  echo "run_fuzzers: $name for ${seconds}s (corpus $(ls "$corpus" | wc -l) files)"
  # One process, bounded memory and time per input; a slow input (>10 s) counts as a hang.
  if ! "$bin" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=1024 -max_len=1048576 -print_final_stats=1 \
      -artifact_prefix="$crashes/" >"$build_dir/fuzz/$name.log" 2>&1; then
    echo "run_fuzzers: $name FAILED; the input is in $crashes, the log in $build_dir/fuzz/$name.log" >&2
    tail -n 60 "$build_dir/fuzz/$name.log" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$build_dir/fuzz/$name.log" |
      sed "s/^/run_fuzzers: $name /"
  fi
done
exit $status
