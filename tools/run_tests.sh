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

cmake --preset asan -DCMAKE_UNITY_BUILD="${UNITY:-ON}" >/dev/null || exit 1
asan_log=build/asan-build.log
# In a session of its own, so that a stop (a failed ctest included) kills ninja's compilers too.
setsid nice -n 19 cmake --build --preset asan --target unit_tests fuzzers -j "$jobs" \
  >"$asan_log" 2>&1 &
asan_build=$!
trap 'kill -- -"$asan_build" 2>/dev/null; wait "$asan_build" 2>/dev/null' EXIT

(cd build/dev && ctest --output-on-failure -j "$test_jobs" --timeout 600) ||
  { tools/print_test_failures.sh "$root/build/dev"; exit 1; }

echo "run_tests: waiting for the ASan+UBSan build (log: $asan_log)"
wait "$asan_build"
asan_rc=$?
trap - EXIT
if [ "$asan_rc" -ne 0 ]; then
  tail -n 60 "$asan_log"
  echo "run_tests: the ASan+UBSan build failed (exit $asan_rc; whole log: $asan_log)" >&2
  exit 1
fi

(cd build/asan && ctest --output-on-failure -j "$jobs" -L unit --timeout 900) ||
  { tools/print_test_failures.sh "$root/build/asan"; exit 1; }

tools/run_fuzzers.sh build/asan "$fuzz_seconds"
