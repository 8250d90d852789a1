#!/usr/bin/env bash
# The Debian package end to end (ctest label `package`; docs/OPERATIONS.md, "Installing"):
#
# 1. `make install` into a staging directory (PREFIX=/opt/ferry): the files, the unit's path;
#    `make package`: the same build (the `package` preset, ferry alone, built here in a scratch
#    tree at -O0, in unity batches, to save compile time) made into ferry_<version>_<arch>.deb
#    by CPack; lintian finds no error in it;
# 2. installs it with `apt-get install ./ferry_*.deb`, which resolves its Depends;
# 3. checks what the installation made: the binary's --version (release build, the source's
#    commit, the librdkafka and zstd it runs with), the `ferry` system user, /etc/ferry/ferry.toml
#    (a conffile, root:ferry 0640, accepted by `ferry config check` run as that user), the unit
#    (ExecStart= the installed binary, not enabled, clean for `systemd-analyze verify`), `man
#    ferry` and the other pages (no groff warnings), the bash completion;
# 4. runs the installed binary for real: a mock Kafka cluster, 1,000 messages, `ferry run
#    --until-caught-up` as the ferry user, `ferry verify` (each id once);
# 5. purges it and checks nothing is left: no file it installed, no /etc/ferry, no /var/lib/ferry.
#    Debian leaves system users on purge (files they own may remain); the test removes the one
#    the package created.
#
#   tests/package/package_test.sh SOURCE_DIR
#
# It changes the machine (a package, a user), so it runs only as root (CI runs `make test` as root
# on a machine of its own), refuses to touch an existing ferry installation or user, and exits 77
# (skipped) otherwise. It holds the ctest RESOURCE_LOCK `dpkg`; apt waits for dpkg's lock.
set -euo pipefail
src=$(realpath "$1")
skip() { echo "package_test: skipped: $*"; exit 77; }
fail() { echo "package_test: FAILED: $*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }

[ "$(id -u)" = 0 ] || skip "needs root (it installs and purges a Debian package)"
for tool in apt-get dpkg-shlibdeps lintian help2man lowdown man systemctl systemd-analyze; do
  command -v "$tool" >/dev/null || skip "needs $tool (make setup installs it)"
done
if dpkg-query -W -f='${Status}' ferry 2>/dev/null | grep -q installed; then
  skip "a ferry package is installed on this machine; the test would replace and purge it"
fi
getent passwd ferry >/dev/null && skip "a user 'ferry' exists; the test would remove it"
getent group ferry >/dev/null && skip "a group 'ferry' exists; the test would remove it"
for d in /etc/ferry /var/lib/ferry; do [ ! -e "$d" ] || skip "$d exists; the test would remove it"; done

work=$(mktemp -d /tmp/ferry-package-test.XXXXXX)
chmod 0755 "$work"
installed=0
mock_pid=
cleanup() {
  local rc=$?
  if [ -n "$mock_pid" ]; then kill "$mock_pid" 2>/dev/null || true; fi
  if [ "$installed" = 1 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq -o DPkg::Lock::Timeout=600 ferry \
      >/dev/null 2>&1 || true
  fi
  if getent passwd ferry >/dev/null; then deluser --quiet --system ferry >/dev/null 2>&1 || true; fi
  if getent group ferry >/dev/null; then delgroup --quiet --system ferry >/dev/null 2>&1 || true; fi
  rm -rf /etc/ferry /var/lib/ferry "$work"
  exit $rc
}
trap cleanup EXIT

# make from inside `make test` (ctest): the outer make's jobserver is not ours.
unset MAKEFLAGS MAKELEVEL MFLAGS
cd "$src"
version=$(sed -n 's/^project(ferry VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

# The package preset's build in a scratch tree at -O0 (PACKAGE_BUILD, PACKAGE_CXX_FLAGS): the
# packaging is the same at any optimisation, and -O0 compiles fastest (-O1 took ~27 % longer a
# file). The preset's -D_FORTIFY_SOURCE=2 needs optimisation (glibc's #warning, an error under
# -Werror), so this build leaves it out; lintian reports its absence as information only.
build=$work/build
package_vars=(PACKAGE_BUILD="$build" PACKAGE_CXX_FLAGS="-O0 -U_FORTIFY_SOURCE -DNDEBUG")

step "make install PREFIX=/opt/ferry DESTDIR=<scratch> (builds the package preset: ferry alone, release build type, man pages)"
stage=$work/stage
make --no-print-directory install "${package_vars[@]}" PREFIX=/opt/ferry DESTDIR="$stage" >"$work/install-make.log" 2>&1 ||
  fail "make install: $(tail -30 "$work/install-make.log")"
for path in bin/ferry share/man/man1/ferry.1.gz share/man/man1/ferry-run.1.gz \
  share/man/man1/ferry-config-check.1.gz share/man/man5/ferry.toml.5.gz \
  share/bash-completion/completions/ferry share/doc/ferry/README.md \
  share/doc/ferry/configuration.md share/doc/ferry/examples/ferry.toml \
  share/doc/ferry/examples/grafana-dashboard.json lib/systemd/system/ferry.service; do
  [ -f "$stage/opt/ferry/$path" ] || fail "make install: no /opt/ferry/$path"
done
grep -qx 'ExecStart=/opt/ferry/bin/ferry run --config /etc/ferry/ferry.toml' \
  "$stage/opt/ferry/lib/systemd/system/ferry.service" || fail "make install: the unit's ExecStart"
[ ! -e "$stage/etc" ] && [ ! -e "$stage/opt/ferry/etc" ] || fail "make install wrote a configuration"
[ ! -e "$stage/opt/ferry/share/doc/ferry/copyright" ] || fail "make install: Debian files"
"$stage/opt/ferry/bin/ferry" --version | grep -qx "ferry $version" || fail "make install: --version"
echo "staged under $stage/opt/ferry: $(find "$stage" -type f | wc -l) files"

step "make package (the same build, CPack DEB, lintian: errors fail it)"
rm -f "$build"/ferry_*.deb
make --no-print-directory package "${package_vars[@]}" >"$work/package-make.log" 2>&1 ||
  fail "make package: $(tail -30 "$work/package-make.log")"
grep -E '^(W|I|E): ' "$work/package-make.log" || true
debs=("$build"/ferry_*.deb)
[ ${#debs[@]} = 1 ] && [ -f "${debs[0]}" ] || fail "make package made no single ferry_*.deb: ${debs[*]}"
deb=$(realpath "${debs[0]}")
[ "$(basename "$deb")" = "ferry_${version}_$(dpkg --print-architecture).deb" ] ||
  fail "package file $(basename "$deb"), expected ferry_${version}_<arch>.deb"
dpkg-deb --info "$deb"
depends=$(dpkg-deb --field "$deb" Depends)
for name in libc6 librdkafka1 libzstd1 adduser; do
  tr ',' '\n' <<<"$depends" | sed 's/^ *//; s/ .*//' | grep -qx "$name" ||
    fail "Depends lacks $name (dpkg-shlibdeps): $depends"
done

step "apt-get install $(basename "$deb")"
installed=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 \
  -o 'DPkg::Options::=--path-include=/usr/share/man/*/ferry*' "$deb" >"$work/install.log" 2>&1 ||
  fail "apt-get install: $(tail -20 "$work/install.log")"
grep -E '^(Setting up|The following|[0-9]+ upgraded)' "$work/install.log"
dpkg-query -W -f='${Status}\n' ferry | grep -qx 'install ok installed' || fail "not installed"
dpkg -L ferry >"$work/files"

step "the installed binary"
[ "$(command -v ferry)" = /usr/bin/ferry ] || fail "ferry on PATH is $(command -v ferry)"
ferry --version | tee "$work/version"
[ "$(sed -n 1p "$work/version")" = "ferry $version" ] || fail "--version's first line"
grep -q failpoints "$work/version" && fail "the packaged binary has failpoints compiled in"
commit=$(sed -n 's/^commit //p' "$work/version")
if head=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null); then
  [[ "$commit" == "$head" || "$commit" == "$head-dirty" ]] ||
    fail "--version says commit $commit, the source is at $head"
else
  [ "$commit" = unknown ] || fail "--version says commit $commit outside a git checkout"
fi
upstream() { dpkg-query -W -f='${Version}' "$1" | sed 's/^[0-9]*://; s/[-+~].*//'; }
grep -qx "librdkafka $(upstream librdkafka1)" "$work/version" || fail "librdkafka version"
grep -qx "zstd $(upstream libzstd1)" "$work/version" || fail "zstd version"
grep -q '^nats.c [0-9]' "$work/version" || fail "nats.c version"

step "the ferry user, /etc/ferry/ferry.toml, the unit"
IFS=: read -r _ _ uid _ _ home shell < <(getent passwd ferry)
[ "$uid" -lt 1000 ] && [ "$home" = /var/lib/ferry ] && [[ "$shell" == */nologin ]] ||
  fail "ferry user: uid $uid, home $home, shell $shell"
[ "$(stat -c %U:%G /var/lib/ferry)" = ferry:ferry ] || fail "/var/lib/ferry not ferry's"
[ "$(stat -c %a:%U:%G /etc/ferry/ferry.toml)" = 640:root:ferry ] ||
  fail "/etc/ferry/ferry.toml is $(stat -c %a:%U:%G /etc/ferry/ferry.toml)"
dpkg-query -W -f='${Conffiles}\n' ferry | grep -q '^ /etc/ferry/ferry.toml ' ||
  fail "/etc/ferry/ferry.toml is not a conffile"
runuser -u ferry -- ferry config check /etc/ferry/ferry.toml
unit=/lib/systemd/system/ferry.service
grep -qx 'ExecStart=/usr/bin/ferry run --config /etc/ferry/ferry.toml' "$unit" || fail "$unit ExecStart"
grep -qx 'ExecStartPre=/usr/bin/ferry config check /etc/ferry/ferry.toml' "$unit" ||
  fail "$unit ExecStartPre"
ls /etc/systemd/system/*.wants/ferry.service 2>/dev/null && fail "the unit was enabled"
state=$(systemctl is-enabled ferry.service 2>&1 || true)
[ "$state" = disabled ] || fail "systemctl is-enabled ferry.service: $state"
# systemd's own reading of the unit, offline: keys, sections, the commands, the man pages it names.
verify=$(systemd-analyze verify "$unit" 2>&1) && [ -z "$verify" ] ||
  fail "systemd-analyze verify $unit: $verify"
echo "$unit: disabled, systemd-analyze verify clean"

step "man pages"
MANWIDTH=100 man ferry | tee "$work/man" | head -20
grep -q 'ferry - Kafka and NATS JetStream into Delta Lake tables' "$work/man" || fail "man ferry"
grep -q 'ferry-run(1)' "$work/man" || fail "man ferry lacks SEE ALSO ferry-run(1)"
man ferry-run | grep -q -- '--until-caught-up' || fail "man ferry-run"
man ferry-config-check | grep -q 'Validate a configuration' || fail "man ferry-config-check"
man 5 ferry.toml | grep -q 'max_latency' || fail "man 5 ferry.toml"
for page in $(grep '^/usr/share/man/.*\.gz$' "$work/files"); do
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "$page: $warnings"
done

step "bash completion"
cat >"$work/complete.sh" <<'EOF'
source /usr/share/bash-completion/bash_completion
_completion_loader ferry   # what bash-completion does at the first TAB after "ferry"
complete_line() {
  COMP_LINE=$1 COMP_POINT=${#1} COMPREPLY=()
  read -ra COMP_WORDS <<<"$1"
  if [[ $1 == *" " ]]; then COMP_WORDS+=(""); fi
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  _ferry ferry "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  echo "${COMPREPLY[*]}"
}
complete_line "ferry r"
complete_line "ferry run --c"
complete_line "ferry config ch"
complete_line "ferry run --config /etc/ferry/"
EOF
mapfile -t got < <(bash "$work/complete.sh")
[ "${got[0]}" = run ] || fail "completion of 'ferry r': ${got[0]}"
[ "${got[1]}" = --config ] || fail "completion of 'ferry run --c': ${got[1]}"
[ "${got[2]}" = check ] || fail "completion of 'ferry config ch': ${got[2]}"
[ "${got[3]}" = /etc/ferry/ferry.toml ] || fail "completion of a --config path: ${got[3]}"

step "a run of the installed binary, as the ferry user: mock Kafka, 1,000 messages, until caught up"
chown ferry:ferry "$work"
coproc MOCK { exec runuser -u ferry -- ferry mock-kafka --brokers 1 --topic events:2 \
  --bootstrap-file "$work/bootstrap" --exit-on-eof 2>"$work/mock.log"; }
mock_pid=$MOCK_PID
for _ in $(seq 100); do [ -s "$work/bootstrap" ] && break; sleep 0.1; done
[ -s "$work/bootstrap" ] || fail "mock-kafka wrote no bootstrap file: $(cat "$work/mock.log")"
brokers=$(cat "$work/bootstrap")
ferry produce kafka --brokers "$brokers" --topic events --count 1000 \
  --template '{"id": {{seq}}, "payload": "test #{{seq}}"}' 2>"$work/produce.log" ||
  fail "produce: $(cat "$work/produce.log")"
cat >"$work/ferry.toml" <<EOF
[[pipeline]]
id = "events"
table = "$work/events"
schema = "id BIGINT NOT NULL, payload STRING"
metadata_columns = { partition = "_partition", offset = "_offset" }
[pipeline.kafka]
brokers = "$brokers"
topics = ["events"]
assignment = "manual"
[pipeline.batch]
max_rows = 300
EOF
runuser -u ferry -- ferry run --config "$work/ferry.toml" --until-caught-up 2>"$work/run.log" ||
  fail "ferry run: $(tail -20 "$work/run.log")"
ferry verify "$work/events" --id id --expect 1000 --range 1..1000
[ "$(stat -c %U "$work/events/_delta_log")" = ferry ] || fail "the table is not the ferry user's"
# Closing its stdin ends the cluster (--exit-on-eof), as the end of this script would.
eval "exec ${MOCK[1]}>&-"
wait "$mock_pid" || fail "mock-kafka exited $?: $(cat "$work/mock.log")"
mock_pid=

step "apt-get purge ferry: nothing left behind"
DEBIAN_FRONTEND=noninteractive apt-get purge -y -o DPkg::Lock::Timeout=600 ferry \
  >"$work/purge.log" 2>&1 || fail "apt-get purge: $(tail -20 "$work/purge.log")"
installed=0
grep -E '^(Removing|Purging)' "$work/purge.log"
dpkg-query -W -f='${Status}' ferry 2>/dev/null | grep -q installed && fail "still installed"
# Every file; the directories the package alone made are checked by name below (the others,
# such as /usr/bin or the /lib symlink, are shared).
while IFS= read -r path; do
  [ -d "$path" ] && continue
  [ ! -e "$path" ] && [ ! -L "$path" ] || fail "$path is left after purge"
done <"$work/files"
for path in /etc/ferry /var/lib/ferry /usr/share/doc/ferry; do
  [ ! -e "$path" ] || fail "$path is left after purge"
done
echo "no file of the package is left, nor /etc/ferry, /var/lib/ferry, /usr/share/doc/ferry"
getent passwd ferry >/dev/null || fail "purge removed the ferry user (Debian keeps system users)"
deluser --quiet --system ferry >"$work/deluser.log" 2>&1 || fail "deluser: $(cat "$work/deluser.log")"
if getent group ferry >/dev/null; then delgroup --quiet --system ferry; fi
! getent passwd ferry >/dev/null && ! getent group ferry >/dev/null || fail "ferry user left"
echo "package_test: ok"
