#!/usr/bin/env bash
# setup_py_venv.sh LOG NAME REQUIREMENTS MODULE: a small Python venv in ~/.cache/ferry/NAME
# (outside the tree) with the packages pinned by REQUIREMENTS (from PyPI), checked by importing
# MODULE. Created only when missing or when the requirements changed (a copy of them is written
# into the venv last, as the marker); pip's output goes to LOG (tools/quietly.sh). `make
# setup-kafka` makes kafka-py-venv (tests/kafka/requirements.txt: confluent-kafka, for
# tests/kafka/txn_produce.py); `make setup-gcs` makes gcs-py-venv (tests/gcs/requirements.txt:
# google-cloud-storage, for tests/gcs/gcs_client.py).
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 LOG NAME REQUIREMENTS MODULE" >&2
  exit 2
fi
log=$1
root="$(cd "$(dirname "$0")/.." && pwd)"
req="$root/$3"
quietly="$root/tools/quietly.sh $log"
venv="${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}/$2"
if cmp -s "$req" "$venv/ferry-requirements.txt"; then
  exit 0
fi
echo "setup: Python venv with $(grep -v '^#' "$req" | xargs) from PyPI into $venv (log: $log)"
rm -rf "$venv"
$quietly python3 -m venv "$venv"
$quietly "$venv/bin/pip" install --no-input --disable-pip-version-check -r "$req"
"$venv/bin/python" -c "import $4" >/dev/null
cp "$req" "$venv/ferry-requirements.txt"
