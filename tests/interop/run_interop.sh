#!/usr/bin/env bash
# run_interop.sh FERRY_BINARY [PYTEST_ARGS...]: the interop suite (docs/interop.md) with the
# venv tools/setup_interop.sh made: Spark and delta-rs read the tables FERRY_BINARY writes.
# CTest runs it as interop_test; a missing venv or jar cache fails, naming the make target that
# installs them (`make setup`, and so `make test`, runs it).
set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 FERRY_BINARY [PYTEST_ARGS...]" >&2
  exit 2
fi
ferry=$(realpath "$1")
shift
here=$(cd "$(dirname "$0")" && pwd)
cache=${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}
venv=$cache/interop-venv
if [ ! -x "$venv/bin/pytest" ] || [ ! -f "$venv/.ferry-stamp" ]; then
  echo "interop: no Python environment at $venv: run \`make setup-interop\` (part of \`make setup\`)" >&2
  exit 1
fi
if [ ! -f "$cache/delta-jars/.ferry-stamp" ]; then
  echo "interop: no Delta jars in $cache/delta-jars: run \`make setup-interop\` (part of \`make setup\`)" >&2
  exit 1
fi
cd "$here"
# No __pycache__ or .pytest_cache in the source tree.
export PYTHONDONTWRITEBYTECODE=1
export FERRY_BINARY=$ferry
exec "$venv/bin/pytest" "$@"
