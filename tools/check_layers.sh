#!/usr/bin/env bash
# Fails when a file under src/ferry/<module>/ includes a ferry header of a module it may not depend
# on. The allowed edges are the table in docs/architecture.md (between the layers markers).
# Unit tests (*_test.cc) may also include ferry/testing/; their shared fixtures live there
# (src/ferry/testing/*_fixture.h), so no product file includes it.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A allowed
while IFS='|' read -r _ module deps _; do
  module=$(echo "$module" | tr -d ' `')
  deps=$(echo "$deps" | tr -d '`' | tr ',' ' ')
  [ -n "$module" ] && allowed[$module]="$module $deps"
done < <(sed -n '/<!-- layers:begin -->/,/<!-- layers:end -->/p' docs/architecture.md | grep '^| `')
status=0
while IFS= read -r file; do
  module=$(echo "$file" | cut -d/ -f3)
  if [ -z "${allowed[$module]+x}" ]; then
    echo "check_layers: $file: module '$module' is not in docs/architecture.md"; status=1; continue
  fi
  ok=" ${allowed[$module]} "
  case "$file" in *_test.cc) ok="$ok testing " ;; esac
  while IFS= read -r dep; do
    if [[ "$ok" != *" $dep "* ]]; then
      echo "check_layers: $file includes ferry/$dep/ but $module may use only: ${allowed[$module]}"
      status=1
    fi
  done < <(grep -ho '#include "ferry/[a-z_]*/' "$file" | sed 's|#include "ferry/||; s|/$||' | sort -u)
done < <(git ls-files 'src/ferry/*.h' 'src/ferry/*.cc' 2>/dev/null || find src/ferry -name '*.h' -o -name '*.cc')
[ $status -eq 0 ] && echo "check_layers: ok"
exit $status
