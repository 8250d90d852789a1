#!/usr/bin/env bash
# quietly.sh LOG COMMAND...: runs COMMAND with its output appended to LOG, printing nothing when it
# succeeds; when it fails, prints the command, its exit status and the last 200 lines of LOG on
# stderr, and exits with its status. `make setup` runs apt-get and npm through it, so `make demo`
# and `make test` start with ferry's own output, not hundreds of lines of package progress.
set -uo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 LOG COMMAND [ARGS...]" >&2
  exit 2
fi
log=$1
shift
mkdir -p "$(dirname "$log")"
{ echo; echo "== $(date -u +%FT%TZ) $*"; } >>"$log"
"$@" >>"$log" 2>&1 </dev/null
rc=$?
if [ $rc -ne 0 ]; then
  {
    echo "setup: '$*' failed with exit status $rc; the last 200 lines of $log:"
    tail -n 200 "$log"
  } >&2
fi
exit $rc
