#!/usr/bin/env bash
# setup_gcs.sh LOG: installs the pinned Google Cloud Storage emulator, fake-gcs-server, into
# ~/.cache/ferry/fake-gcs-server-<version>/ when it is not there yet, built from the Go module
# proxy with the machine's Go (`go install`, nothing downloaded by URL, nothing written into the
# tree). The build's output goes to LOG through tools/quietly.sh and is shown only on failure.
# The tests find the binary at the same path (src/ferry/testing/fake_gcs.cc) or in FERRY_FAKE_GCS.
set -euo pipefail
log=${1:-/tmp/ferry-setup-$(id -u).log}
version=v1.56.1
dir="${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}/fake-gcs-server-${version}"
if [ -x "${dir}/fake-gcs-server" ]; then
  exit 0
fi
"$(dirname "$0")/go_install.sh" "${log}" "${dir}" "github.com/fsouza/fake-gcs-server@${version}"
