#!/usr/bin/env bash
# Writes the man pages of ferry from its own --help, at build time, so they say what --help says:
# ferry(1), one page per subcommand (ferry-run(1), ferry-config-check(1), ...) and ferry.toml(5)
# (packaging/configuration_man.sh, from docs/configuration.md). Every page is gzipped (-9n, no
# timestamp: the same tree makes the same bytes).
#
#   packaging/man_pages.sh FERRY OUTDIR VERSION
#
# 1. Walks the command tree: the names under "Subcommands:" in `ferry [path] --help` (CLI11's
#    layout: two spaces, the name, two or more spaces, the description's first line).
# 2. help2man (Debian package) runs a wrapper named ferry-<path> that execs `ferry <path>` with
#    argv[0] "ferry", so the usage line reads "ferry run [OPTIONS]". NAME takes the parent's
#    one-line description; every page gets a SEE ALSO section.
# 3. OUTDIR/man1/*.1.gz, OUTDIR/man5/ferry.toml.5.gz; OUTDIR/pages lists them. Pages of commands
#    that no longer exist are removed first.
set -euo pipefail
ferry=$(realpath "$1") out=$2 version=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out/man1" "$out/man5"
mkdir -p "$out/man1" "$out/man5"

# Fields are separated by the unit separator: a tab is whitespace to `read`, which would drop the
# root's empty path.
sep=$'\x1f'

# Prints "name<sep>description" for each subcommand in the --help text on stdin.
subcommands() {
  awk '/^Subcommands:/ { on = 1; next }
       /^[^ ]/ { on = 0 }
       on && /^  [a-z][a-z0-9-]*  / { name = $1; sub(/^  [a-z0-9-]+ +/, ""); print name "\x1f" $0 }'
}

# commands: "path<sep>description", the root first, parents before children.
commands="${sep}Kafka and NATS JetStream into Delta Lake tables, exactly once"
queue=("")
while [ ${#queue[@]} -gt 0 ]; do
  path=${queue[0]}
  queue=("${queue[@]:1}")
  # shellcheck disable=SC2086  # path is a list of words
  while IFS=$sep read -r name description; do
    child="${path:+$path }$name"
    commands+=$'\n'"$child$sep$description"
    queue+=("$child")
  done < <("$ferry" $path --help | subcommands)
done

page_of() { echo "ferry${1:+-${1// /-}}"; }

parent_of() { if [[ "$1" == *" "* ]]; then echo "${1% *}"; fi; }

# SEE ALSO: ferry(1) and the parent's page, the pages of the subcommands, ferry.toml(5).
see_also() {
  local path=$1 refs=() other
  if [ -n "$path" ]; then
    refs+=(ferry)
    if [[ "$path" == *" "* ]]; then refs+=("$(page_of "$(parent_of "$path")")"); fi
  fi
  while IFS=$sep read -r other _; do
    if [ -n "$other" ] && [ "$(parent_of "$other")" = "$path" ]; then
      refs+=("$(page_of "$other")")
    fi
  done <<<"$commands"
  printf '\\fB%s\\fR(1), ' "${refs[@]}"
  echo '\fBferry.toml\fR(5)'
}

# help2man's page, made tidier: CLI11's "Positionals:" and "Subcommands:" become the sections
# ARGUMENTS and COMMANDS, and quotes inside a heading (which end the macro's argument) \(dq.
tidy() {
  awk '/^\.SS "Positionals:"$/ { print ".SH ARGUMENTS"; next }
       /^\.SS "Subcommands:"$/ { print ".SH COMMANDS"; next }
       /^\.S[SH] ".*"$/ { head = substr($0, 1, 4); text = substr($0, 6, length($0) - 6)
                         gsub(/"/, "\\(dq", text); print head "\"" text "\""; next }
       { print }'
}

pages=()
while IFS=$sep read -r path description; do
  page=$(page_of "$path")
  # The NAME line ("ferry-run \- Run the pipelines of ..."): no final full stop.
  name=${description%.}
  wrapper="$work/$page"
  printf '#!/bin/bash\nexec -a ferry %q %s "$@"\n' "$ferry" "$path" >"$wrapper"
  chmod +x "$wrapper"
  {
    echo "[SEE ALSO]"
    see_also "$path"
    if [ -z "$path" ]; then
      echo
      echo "The documentation (running, configuration, operations, the exactly-once protocol):"
      echo ".I /usr/share/doc/ferry/"
      echo "[FILES]"
      echo ".TP"
      echo ".I /etc/ferry/ferry.toml"
      echo "the configuration the systemd unit ferry.service runs (\\fBferry.toml\\fR(5))"
      echo ".TP"
      echo ".I /etc/ferry/ferry.env"
      echo "environment variables for the unit, such as the secrets the configuration names"
    fi
  } >"$work/$page.include"
  help2man --no-info --no-discard-stderr --section=1 --version-string="$version" \
    --source="ferry $version" --manual="ferry manual" --name="$name" \
    --include="$work/$page.include" --output="$work/$page.1" "$wrapper"
  tidy <"$work/$page.1" | gzip -9n >"$out/man1/$page.1.gz"
  pages+=("$page")
done <<<"$commands"

"$here/configuration_man.sh" "$here/../docs/configuration.md" "$work/ferry.toml.5" "$version"
gzip -9n <"$work/ferry.toml.5" >"$out/man5/ferry.toml.5.gz"

{ printf 'man1/%s.1.gz\n' "${pages[@]}"; echo man5/ferry.toml.5.gz; } >"$out/pages"
