#!/usr/bin/env bash
# Prints, for each test the last ctest run in BUILD_DIR failed, the lines that say why: every
# GoogleTest failure (the "file:line: Failure" line and the lines after it up to a blank line),
# or the output's last 40 lines when there is no such line (a crash, a timeout, a script test).
# `make test` calls it after a failed ctest, so that the reasons come last in a long log, where
# a reader of its tail (CI keeps the tail) finds them.
#
#   tools/print_test_failures.sh BUILD_DIR
set -uo pipefail
dir=${1:?usage: $0 BUILD_DIR}
failed=$dir/Testing/Temporary/LastTestsFailed.log
log=$dir/Testing/Temporary/LastTest.log
[ -s "$failed" ] && [ -f "$log" ] || exit 0

printf '\n==== why the failed tests of %s failed (from %s)\n' "$dir" "$log"
while IFS= read -r entry; do
  number=${entry%%:*}
  name=${entry#*:}
  printf '\n---- %s\n' "$name"
  # The test's section: from "N/M Testing: NAME" to its "end time:" line.
  section=$(awk -v n="$number" '
    index($0, n "/") == 1 && $2 == "Testing:" { on = 1 }
    on { print }
    on && / end time: / { exit }' "$log")
  reasons=$(printf '%s\n' "$section" | awk '
    /: Failure$/ || /^\[  FAILED  \]/ || /FAILED:/ { on = 1; shown = 0 }
    on { print; if ($0 == "" || ++shown > 25) on = 0; if (++total >= 120) exit }')
  if [ -n "$reasons" ]; then
    printf '%s\n' "$reasons"
  else
    printf '%s\n' "$section" | tail -n 40
  fi
done <"$failed"
