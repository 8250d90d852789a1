#!/usr/bin/env bash
# make demo: runs ferry's main job on an embedded default. Grows with the project (README.md).
set -euo pipefail
FERRY=${1:-build/dev/src/ferry/app/ferry}
"$FERRY" --version
"$FERRY" --help
