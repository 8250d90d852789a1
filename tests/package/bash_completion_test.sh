#!/usr/bin/env bash
# The bash completion (packaging/ferry.bash-completion) against a ferry binary: subcommands at
# every level, flags, values skipped, configuration files, table directories, Parquet files.
#
#   tests/package/bash_completion_test.sh FERRY COMPLETION_SCRIPT
set -euo pipefail
ferry=$(realpath "$1") script=$(realpath "$2")
[ -f /usr/share/bash-completion/bash_completion ] || { echo "skipped: no bash-completion"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/conf/tables/events"
ln -s "$ferry" "$work/bin/ferry"
touch "$work/conf/a.toml" "$work/conf/b.txt" "$work/conf/c.parquet"
cd "$work"
export PATH="$work/bin:$PATH"

# shellcheck disable=SC1091,SC1090
source /usr/share/bash-completion/bash_completion
# shellcheck disable=SC1090
source "$script"

# Prints the completions of a command line (cursor at its end), sorted, space-separated.
complete_line() {
  COMP_LINE=$1 COMP_POINT=${#1} COMPREPLY=()
  read -ra COMP_WORDS <<<"$1"
  if [[ $1 == *" " ]]; then COMP_WORDS+=(""); fi
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  _ferry ferry "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//'
}

failures=0
expect() {
  local got
  got=$(complete_line "$1")
  if [ "$got" != "$2" ]; then
    echo "FAIL: '$1': expected '$2', got '$got'"
    failures=$((failures + 1))
  else
    echo "ok: '$1' -> '$got'"
  fi
}

# Completions that must include WORDS (others may be added to ferry later) and be all flags
# (KIND "flags") or none (KIND "words").
expect_has() {
  local got word kind=$3
  got=" $(complete_line "$1") "
  for word in $2; do
    if [[ "$got" != *" $word "* ]]; then
      echo "FAIL: '$1': '$word' missing from '$got'"
      failures=$((failures + 1))
      return
    fi
  done
  if { [ "$kind" = words ] && [[ "$got" == *" -"* ]]; } ||
    { [ "$kind" = flags ] && [[ "$got" =~ \ [^-] ]]; }; then
    echo "FAIL: '$1': not only $kind: '$got'"
    failures=$((failures + 1))
    return
  fi
  echo "ok: '$1' ->$got"
}
expect_has "ferry " "config mock-kafka optimize parquet produce run status table vacuum verify" words
expect "ferry r" "run"
expect "ferry --v" "--version"
expect "ferry table " "add-columns history inspect"
expect "ferry parquet from" "from-json"
expect "ferry run --c" "--config"
expect_has "ferry run -" "--config --help --pipeline --until-caught-up -c -h -p" flags
expect "ferry run --config conf/" "conf/a.toml conf/tables"
expect "ferry run -c conf/a.toml --u" "--until-caught-up"
expect "ferry run --config conf/a.toml --pipeline " ""
expect "ferry config check conf/" "conf/a.toml conf/tables"
expect "ferry table inspect conf/" "conf/tables"
expect "ferry status --table conf/tables/" "conf/tables/events"
expect "ferry parquet cat conf/" "conf/c.parquet conf/tables"
expect "ferry mock-kafka --brokers 3 --t" "--topic"
expect "ferry produce kafka --brokers x:1 --topic t --c" "--count"
[ "$failures" = 0 ] || { echo "$failures completion(s) wrong"; exit 1; }
