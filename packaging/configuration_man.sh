#!/usr/bin/env bash
# Writes ferry.toml(5) from docs/configuration.md, so the man page says what the reference says.
#
#   packaging/configuration_man.sh docs/configuration.md OUT.5 VERSION
#
# 1. The page gets the sections a man page needs (NAME for whatis/apropos, SYNOPSIS, FILES, SEE
#    ALSO) around the document, whose own headings move up a level (## -> .SH, ### -> .SS).
# 2. The key | default | meaning tables become definition lists ("key (default: ...)" over an
#    indented meaning): tbl's equal-width columns left 25-character cells that troff could not
#    fill ("cannot adjust line" warnings, words cut), a list reads as other man pages do.
# 3. lowdown (Debian package) turns that Markdown into man(7) roff.
set -euo pipefail
in=$1 out=$2 version=$3

awk '
  # Splits a table row on the | outside `code` spans into cells[1..n], trimmed.
  function split_row(line,    i, c, code, cell, n) {
    n = 0; code = 0; cell = ""
    line = substr(line, 2, length(line) - 2)   # the outer pipes
    for (i = 1; i <= length(line); i++) {
      c = substr(line, i, 1)
      if (c == "`") { code = !code }
      if (c == "|" && !code) { cells[++n] = trim(cell); cell = ""; continue }
      cell = cell c
    }
    cells[++n] = trim(cell)
    return n
  }
  function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
  NR == 1 && /^# / {
    print "# NAME\n\nferry.toml - the configuration file of ferry(1)\n"
    print "# SYNOPSIS\n\n`/etc/ferry/ferry.toml`\n"
    print "`ferry run --config /etc/ferry/ferry.toml`\n"
    print "# DESCRIPTION\n"
    next
  }
  /^```/ { fence = !fence; print; next }
  fence { print; next }
  /^### / { sub(/^### /, "## "); print; next }
  /^## / { sub(/^## /, "# "); print; next }
  /^\|/ {
    n = split_row($0)
    if (!in_table) { in_table = 1; ncols = n; for (i = 1; i <= n; i++) head[i] = cells[i]; next }
    if ($0 ~ /^\|[-: |]+\|$/) { next }
    term = cells[1]
    if (ncols >= 3 && cells[2] == "required") { term = term " (required)" }
    else if (ncols >= 3 && cells[2] != "" && cells[2] != "—") { term = term " (" head[2] ": " cells[2] ")" }
    print term
    print ": " cells[ncols]
    print ""
    next
  }
  { in_table = 0; print }
  END {
    print "# FILES\n"
    print "`/etc/ferry/ferry.toml`\n: the configuration the systemd unit `ferry.service` runs\n"
    print "`/etc/ferry/ferry.env`\n: environment variables for the unit, e.g. the secrets the configuration names as `${NAME}`\n"
    print "`/usr/share/doc/ferry/examples/ferry.toml`\n: an example\n"
    print "# SEE ALSO\n"
    print "ferry(1), ferry-run(1), ferry-config-check(1); `/usr/share/doc/ferry/` (configuration.md, running.md, OPERATIONS.md)"
  }
' "$in" >"$out.md"

lowdown -s -Tman --nroff-nolinks -m "title: ferry.toml" -m "section: 5" \
  -m "source: ferry $version" -m "volume: ferry manual" "$out.md" >"$out.tmp"
rm -f "$out.md"
mv "$out.tmp" "$out"
