#!/usr/bin/env bash
# tools/quietly.sh, which `make setup` runs apt-get and npm through: silent when the command
# succeeds (its output only in the log), the log's tail and the command's status when it fails.
set -euo pipefail
quietly=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
log=$dir/setup.log
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$quietly" "$log" bash -c 'for i in $(seq 500); do echo "Unpacking package-$i"; done' 2>&1)
[ -z "$out" ] || fail "a successful command printed: ${out:0:200}"
grep -q 'Unpacking package-500' "$log" || fail "the output did not reach the log"

set +e
out=$("$quietly" "$log" bash -c 'echo "E: Unable to locate package nosuch"; exit 100' 2>&1)
rc=$?
set -e
[ $rc -eq 100 ] || fail "exit status $rc, expected the command's 100"
grep -q 'failed with exit status 100' <<<"$out" || fail "no failure line: $out"
grep -q 'E: Unable to locate package nosuch' <<<"$out" || fail "the log was not printed: $out"
echo "quietly_test: ok"
