#!/usr/bin/env bash
# print_test_times.sh DIR: the end of `make test` (tools/make_test.sh): the wall time of each phase
# that ran (DIR/phases.tsv) and the ten slowest tests of the ctest logs in DIR (*-ctest.log).
set -uo pipefail
dir=${1:?usage: $0 DIR}
[ -s "$dir/phases.tsv" ] || exit 0
printf '\n==== make test: wall time of each phase\n'
awk -F'\t' '
  { printf "  %-58s %6d s  %s\n", $1, $2, ($3 == 0 ? "" : "(exit " $3 ")") }
  $1 !~ /^ +/ { total += $2 }
  END { printf "  %-58s %6d s (%d min %02d s)\n", "total (the indented phases overlap the dev tests)", total, total / 60, total % 60 }' \
  "$dir/phases.tsv"
logs=$(ls "$dir"/*-ctest.log 2>/dev/null)
[ -n "$logs" ] || exit 0
printf '\n==== the ten slowest tests\n'
# ctest prints "  12/1138 Test  #45: Suite.Name ......   Passed  160.23 sec".
for log in $logs; do
  tree=$(basename "$log" -ctest.log)
  sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .* \([0-9.]*\) sec$/\2\t\1/p' "$log" |
    awk -F'\t' -v tree="$tree" '{ print $1 "\t" tree "\t" $2 }'
done | sort -t$'\t' -k1,1 -rn | head -n 10 |
  awk -F'\t' '{ printf "  %8.1f s  %-5s %s\n", $1, $2, $3 }'
