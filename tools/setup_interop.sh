#!/usr/bin/env bash
# setup_interop.sh LOG: installs what the interop suite (tests/interop, docs/interop.md) needs,
# outside the tree and only when it is missing or its pins changed:
#   1. a Python virtual environment at ~/.cache/ferry/interop-venv with the exact packages of
#      tests/interop/requirements.txt (pyspark, delta-spark, deltalake, pyarrow, pytest);
#   2. Delta Lake's jars for Spark (tests/interop/pom.xml) copied by Maven into
#      ~/.cache/ferry/delta-jars/, which the tests hand to Spark as spark.jars, so no test
#      downloads anything.
# Each part keeps a stamp holding the hash of the file it was made from (and of the Python that
# made the venv); a matching stamp skips the part. pip's and Maven's output goes to LOG
# (tools/quietly.sh), printed only when a step fails. FERRY_CACHE_DIR (else $XDG_CACHE_HOME/ferry, else ~/.cache/ferry) moves the cache.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 LOG" >&2
  exit 2
fi
log=$1
root=$(cd "$(dirname "$0")/.." && pwd)
quietly="$root/tools/quietly.sh $log"
cache=${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}
venv=$cache/interop-venv
jars=$cache/delta-jars
# Debian's Python 3.11 (python3-venv), so the venv does not depend on whichever python3 is first
# on PATH.
python=/usr/bin/python3
requirements=$root/tests/interop/requirements.txt
pom=$root/tests/interop/pom.xml

want=$( (sha256sum <"$requirements"; "$python" --version) | sha256sum | cut -d' ' -f1)
if [ "$(cat "$venv/.ferry-stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: Python venv for the interop suite in $venv (pinned pyspark, delta-spark, deltalake; log: $log)"
  rm -rf "$venv"
  mkdir -p "$cache"
  $quietly "$python" -m venv "$venv"
  $quietly "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
    --require-virtualenv -r "$requirements"
  echo "$want" >"$venv/.ferry-stamp"
fi

"$root/tools/maven_jars.sh" "$log" "$pom" "$jars" "Delta Lake jars for Spark" -DincludeScope=runtime
