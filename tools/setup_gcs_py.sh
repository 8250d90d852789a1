#!/usr/bin/env bash
# setup_gcs_py.sh LOG: a small Python venv in ~/.cache/ferry/gcs-py-venv (outside the tree)
# with the packages pinned by tests/gcs/requirements.txt (Google's google-cloud-storage, from
# PyPI), for tests/gcs/gcs_client.py. Created only when missing or when the requirements
# changed (a copy of them is written into the venv last, as the marker); pip's output goes to LOG
# (tools/quietly.sh). `make setup-gcs` runs it.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 LOG" >&2
  exit 2
fi
log=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
req="$root/tests/gcs/requirements.txt"
quietly="$root/tools/quietly.sh $log"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/ferry/gcs-py-venv"
if cmp -s "$req" "$venv/ferry-requirements.txt"; then
  exit 0
fi
echo "setup: Python venv with $(grep -v '^#' "$req" | xargs) from PyPI into $venv (log: $log)"
rm -rf "$venv"
$quietly python3 -m venv "$venv"
$quietly "$venv/bin/pip" install --no-input --disable-pip-version-check -r "$req"
"$venv/bin/python" -c 'from google.cloud import storage' >/dev/null
cp "$req" "$venv/ferry-requirements.txt"
