#!/usr/bin/env bash
# go_install.sh LOG DIR MODULE@VERSION: `go install` of a pinned Go program from the Go module
# proxy into DIR (GOBIN), for the test servers make setup builds (setup_nats.sh, setup_gcs.sh).
# Go is taken from PATH, else /usr/local/go/bin (where this kind of machine has it; Debian 12's
# golang 1.19 is too old for these programs). go's output goes to LOG through tools/quietly.sh,
# printed only when the build fails. GOFLAGS=-modcacherw keeps the module cache deletable.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 LOG DIR MODULE@VERSION" >&2
  exit 2
fi
log=$1
dir=$2
module=$3
go=$(command -v go || true)
if [ -z "$go" ] && [ -x /usr/local/go/bin/go ]; then
  go=/usr/local/go/bin/go
fi
if [ -z "$go" ]; then
  echo "setup: $module needs Go >= 1.24 (go not found on PATH or in /usr/local/go/bin)" >&2
  exit 1
fi
echo "setup: go install $module into $dir (log: $log)"
mkdir -p "$dir"
"$(dirname "$0")/quietly.sh" "$log" env GOBIN="$dir" GOFLAGS="-modcacherw -buildvcs=false" \
  "$go" install "$module"
