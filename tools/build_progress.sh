#!/usr/bin/env bash
# build_progress.sh: reads ninja's output on stdin and prints a short progress line at each tenth
# of the build ("build: 40% (96/240 steps, 75 s)"), and every other line (a warning, an error, a
# failed command) as it is. `make demo` pipes its build through it, so a newcomer sees that the
# compile moves without a screen of compiler command lines.
set -uo pipefail
start=$(date +%s)
shown=-1
while IFS= read -r line; do
  if [[ $line =~ ^\[([0-9]+)/([0-9]+)\] ]]; then
    done_steps=${BASH_REMATCH[1]}
    total=${BASH_REMATCH[2]}
    tenth=$(( done_steps * 10 / total ))
    if [ "$tenth" -gt "$shown" ]; then
      shown=$tenth
      echo "build: $(( tenth * 10 ))% ($done_steps/$total steps, $(( $(date +%s) - start )) s)"
    fi
  elif [ -n "$line" ] && [[ $line != ninja:\ Entering* ]]; then
    printf '%s\n' "$line"
  fi
done
