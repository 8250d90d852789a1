#!/usr/bin/env bash
# timed.sh NAME COMMAND...: prints "== NAME", runs COMMAND, then "== NAME: done in N s" (or
# "failed after N s (exit S)"), and exits with COMMAND's status. `make demo` runs each of its
# steps through it, so a newcomer sees what is happening and how long each part took.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 NAME COMMAND [ARGS...]" >&2
  exit 2
fi
name=$1
shift
echo "== $name"
start=$(date +%s.%N)
"$@"
rc=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
if [ $rc -eq 0 ]; then
  echo "== $name: done in $elapsed s"
else
  echo "== $name: failed after $elapsed s (exit $rc)" >&2
fi
exit $rc
