#!/usr/bin/env bash
# setup_nats.sh LOG: builds the pinned current nats-server (NATS_SERVER_VERSION, default v2.15.3)
# from the Go module proxy into ~/.cache/ferry/nats-server-<version>/nats-server, unless it is
# already there. `make setup-nats` runs it (part of `make setup`); the JetStream tests run against
# both this server and Debian's nats-server 2.9.10 (docs/testing-servers.md). Nothing of it lives
# in the tree. Quietly, like tools/quietly.sh: go's output goes to LOG, printed only on failure.
# Needs Go >= 1.24 on PATH or in /usr/local/go/bin (Debian 12's golang 1.19 is too old for 2.15).
# Measured cold (empty Go module and build caches, 2 shared cores): see docs/testing-servers.md.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 LOG" >&2
  exit 2
fi
log=$1
version=${NATS_SERVER_VERSION:-v2.15.3}
dir=${FERRY_CACHE_DIR:-$HOME/.cache/ferry}/nats-server-$version
[ -x "$dir/nats-server" ] && exit 0
go=$(command -v go || true)
if [ -z "$go" ] && [ -x /usr/local/go/bin/go ]; then
  go=/usr/local/go/bin/go
fi
if [ -z "$go" ]; then
  echo "setup: nats-server $version needs Go >= 1.24 (go not found on PATH or in /usr/local/go/bin)" >&2
  exit 1
fi
echo "setup: go install nats-server $version into $dir (log: $log)"
mkdir -p "$dir"
# GOFLAGS=-modcacherw: the module cache stays deletable by rm -rf (go makes it read-only).
"$(dirname "$0")/quietly.sh" "$log" env GOBIN="$dir" GOFLAGS="-modcacherw -buildvcs=false" \
  "$go" install "github.com/nats-io/nats-server/v2@$version"
"$dir/nats-server" --version >>"$log" 2>&1
