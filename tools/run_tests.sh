#!/usr/bin/env bash
# The test half of `make test`, after lint and the dev build:
#   1. every test of the dev tree (ctest, TEST_JOBS at a time), while the ASan+UBSan tree's unit
#      tests and fuzzers build beside them at the lowest CPU priority (nice 19);
#   2. the unit tests again in the ASan tree, once it is built;
#   3. every fuzzer for FUZZ_SECONDS.
# The dev tests mostly wait on brokers, processes and timers (the Makefile's TEST_JOBS note), so
# the compile takes the idle cores and yields them whenever a test wants one, instead of
# starting after the last test.
#
#   tools/run_tests.sh JOBS TEST_JOBS FUZZ_SECONDS
# UNITY (default ON, as the Makefile's) is the ASan tree's CMAKE_UNITY_BUILD.
# After a failed ctest, tools/print_test_failures.sh repeats why each test failed at the end of
# the log. A failed ASan build prints the last lines of its log (build/asan-build.log).
# Under tools/make_test.sh (FERRY_TEST_TIMES set), each step's wall time goes to
# $FERRY_TEST_TIMES/phases.tsv and each ctest's output to $FERRY_TEST_TIMES/{dev,asan}-ctest.log.
set -uo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 JOBS TEST_JOBS FUZZ_SECONDS" >&2
  exit 2
fi
jobs=$1
test_jobs=$2
fuzz_seconds=$3
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

times=${FERRY_TEST_TIMES:-}
# record NAME START_SECONDS RC: one line of phases.tsv (nothing without FERRY_TEST_TIMES).
record() {
  [ -n "$times" ] || return 0
  printf '%s\t%s\t%s\n' "$1" "$(($(date +%s) - $2))" "$3" >>"$times/phases.tsv"
}
# ctest_logged TREE ARGS...: ctest, its output also kept in $times/TREE-ctest.log.
ctest_logged() {
  local tree=$1
  shift
  if [ -n "$times" ]; then
    (cd "build/$tree" && ctest "$@") 2>&1 | tee "$times/$tree-ctest.log"
  else
    (cd "build/$tree" && ctest "$@")
  fi
}

cmake --preset asan -DCMAKE_UNITY_BUILD="${UNITY:-ON}" >/dev/null || exit 1
asan_log=build/asan-build.log
# In a session of its own, so that a stop (a failed ctest included) kills ninja's compilers too.
asan_start=$(date +%s)
asan_end_file=$(mktemp)
setsid bash -c 'nice -n 19 cmake --build --preset asan --target unit_tests fuzzers -j "$1"; rc=$?
  date +%s >"$2"; exit $rc' asan-build "$jobs" "$asan_end_file" >"$asan_log" 2>&1 &
asan_build=$!
trap 'kill -- -"$asan_build" 2>/dev/null; wait "$asan_build" 2>/dev/null' EXIT

start=$(date +%s)
ctest_logged dev --output-on-failure -j "$test_jobs" --timeout 600
dev_rc=$?
record "dev tests (ctest, $test_jobs at a time)" "$start" "$dev_rc"
if [ "$dev_rc" -ne 0 ]; then
  tools/print_test_failures.sh "$root/build/dev"
  exit 1
fi

echo "run_tests: waiting for the ASan+UBSan build (log: $asan_log)"
start=$(date +%s)
wait "$asan_build"
asan_rc=$?
trap - EXIT
asan_end=$(cat "$asan_end_file" 2>/dev/null || date +%s)
rm -f "$asan_end_file"
if [ -n "$times" ]; then
  printf '%s\t%s\t%s\n' "  ASan+UBSan build (nice 19, beside the dev tests)" \
    "$((asan_end - asan_start))" "$asan_rc" >>"$times/phases.tsv"
fi
record "ASan+UBSan build: the wait after the dev tests" "$start" "$asan_rc"
if [ "$asan_rc" -ne 0 ]; then
  tail -n 60 "$asan_log"
  echo "run_tests: the ASan+UBSan build failed (exit $asan_rc; whole log: $asan_log)" >&2
  exit 1
fi

start=$(date +%s)
ctest_logged asan --output-on-failure -j "$jobs" -L unit --timeout 900
asan_tests_rc=$?
record "ASan+UBSan unit tests" "$start" "$asan_tests_rc"
if [ "$asan_tests_rc" -ne 0 ]; then
  tools/print_test_failures.sh "$root/build/asan"
  exit 1
fi

start=$(date +%s)
tools/run_fuzzers.sh build/asan "$fuzz_seconds"
fuzz_rc=$?
record "fuzzers ($fuzz_seconds s each)" "$start" "$fuzz_rc"
exit $fuzz_rc
