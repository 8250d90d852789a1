#!/usr/bin/env bash
# clang-format 14 in dry-run mode over every tracked C++ source; fails on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.h' '*.cc' 2>/dev/null || true)
[ -z "$files" ] && { echo "check_format: no files"; exit 0; }
if ! command -v clang-format >/dev/null; then
  echo "check_format: clang-format not installed (make setup)"; exit 1
fi
echo "$files" | xargs clang-format --dry-run --Werror
echo "check_format: ok ($(echo "$files" | wc -l) files)"
