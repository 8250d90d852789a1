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
dir=${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}/nats-server-$version
[ -x "$dir/nats-server" ] && exit 0
"$(dirname "$0")/go_install.sh" "$log" "$dir" "github.com/nats-io/nats-server/v2@$version"
