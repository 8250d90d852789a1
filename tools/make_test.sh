#!/usr/bin/env bash
# make_test.sh JOBS TEST_JOBS FUZZ_SECONDS: `make test`, phase by phase:
#   1. setup (the Debian and npm packages, the Kafka jars, nats-server 2.15, the GCS emulator),
#   2. lint, 3. the dev build,
#   4. tools/run_tests.sh: the dev tests (the ASan+UBSan build beside them), the ASan unit tests,
#      the fuzzers.
# Each phase's wall time goes to build/test-times/phases.tsv and each ctest's output to
# build/test-times/*-ctest.log; at the end, passed or failed, tools/print_test_times.sh prints the
# phases and the ten slowest tests, so that the growth of `make test` is seen as it happens
# (CI gives one run 90 minutes; a cold run should stay under 45).
set -uo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 JOBS TEST_JOBS FUZZ_SECONDS" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export FERRY_TEST_TIMES=$root/build/test-times
rm -rf "$FERRY_TEST_TIMES"
mkdir -p "$FERRY_TEST_TIMES"
trap 'tools/print_test_times.sh "$FERRY_TEST_TIMES"' EXIT

# phase NAME COMMAND...: runs COMMAND and appends "NAME<TAB>seconds<TAB>exit status".
phase() {
  local name=$1 start rc
  shift
  start=$(date +%s)
  "$@"
  rc=$?
  printf '%s\t%s\t%s\n' "$name" "$(($(date +%s) - start))" "$rc" >>"$FERRY_TEST_TIMES/phases.tsv"
  return $rc
}

phase "setup (Debian and npm packages, Kafka jars, nats-server, GCS emulator)" make --no-print-directory setup || exit 1
phase "lint (clang-format, layers)" make --no-print-directory lint || exit 1
phase "dev build" make --no-print-directory build || exit 1
tools/run_tests.sh "$@"
