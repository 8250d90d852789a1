#!/usr/bin/env bash
# setup_deb.sh LOG [--with-npm] PACKAGE...: installs the Debian packages of the list that are not
# installed yet (apt-get update first, only when something is missing), quietly (tools/quietly.sh:
# the output goes to LOG, printed only when a step fails). --with-npm adds nodejs and npm when the
# machine has no npm (the tests' DuckDB, Azurite and browser checks need Node >= 18).
# `make setup-deb` passes every package the tests need; `make demo` only what building ferry and
# running the demo need (Makefile: DEMO_DEB_PACKAGES).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 LOG [--with-npm] PACKAGE..." >&2
  exit 2
fi
log=$1
shift
with_npm=0
if [ "$1" = --with-npm ]; then
  with_npm=1
  shift
fi
quietly="$(dirname "$0")/quietly.sh $log"
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "$with_npm" = 1 ] && ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]} (log: $log)"
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
$quietly $sudo apt-get update
$quietly env DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends \
  "${missing[@]}"
