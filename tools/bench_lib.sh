# Shared pieces of the benchmark scripts under tools/ (sourced, not run):
#   bench_dir NAME        sets DIR and keep: BENCH_DIR when set (emptied, kept afterwards), else a
#                         new /tmp/ferry-bench-NAME.XXXXXX (removed at exit); sets the EXIT trap
#   bench_start_mock ARGS starts `$FERRY mock-kafka ARGS` (killed at exit; pinned with taskset to
#                         MOCK_CPUS when set); sets mock and BROKERS
#   bench_kafka_json_toml ID TOPIC  the [pipeline.kafka], decode and batch sections of a pipeline
#                         reading TOPIC from the start, manual assignment, JSON, MAX_ROWS and
#                         MAX_LATENCY (BROKERS from bench_start_mock)
#   bench_nats_server     sets NATS_BIN and NATS_VERSION from NATS_SERVER (default
#                         FERRY_NATS_SERVER, else `debian`): `debian` (nats-server on PATH, Debian's
#                         2.9.10), a version installed by `make setup-nats` (`v2.15.3`: the binary
#                         in ${FERRY_CACHE_DIR:-~/.cache/ferry}/nats-server-v2.15.3/), or a path
#   now, elapsed A B, median (of the numbers on stdin, one per line)
# A script that needs more at exit defines bench_extra_cleanup.
mock=""
keep=1
bench_cleanup() {
  if [ -n "$mock" ]; then
    kill "$mock" 2>/dev/null || true
    wait "$mock" 2>/dev/null || true
  fi
  if declare -F bench_extra_cleanup >/dev/null; then bench_extra_cleanup; fi
  if [ "$keep" = 0 ]; then rm -rf "$DIR"; fi
}

bench_dir() {
  if [ -n "${BENCH_DIR:-}" ]; then
    rm -rf "$BENCH_DIR"
    mkdir -p "$BENCH_DIR"
    DIR=$(realpath "$BENCH_DIR")
    keep=1
  else
    DIR=$(mktemp -d "/tmp/ferry-bench-$1.XXXXXX")
    keep=0
  fi
  trap bench_cleanup EXIT
}

bench_start_mock() {
  local pin=()
  if [ -n "${MOCK_CPUS:-}" ]; then pin=(taskset -c "$MOCK_CPUS"); fi
  "${pin[@]}" "$FERRY" mock-kafka --brokers 3 "$@" --bootstrap-file "$DIR/bootstrap" \
    </dev/null >/dev/null 2>"$DIR/mock-kafka.log" &
  mock=$!
  for _ in $(seq 100); do [ -s "$DIR/bootstrap" ] && break; sleep 0.1; done
  BROKERS=$(cat "$DIR/bootstrap")
}

bench_kafka_json_toml() {
  cat <<TOML

[pipeline.kafka]
brokers = "$BROKERS"
topics = ["$2"]
group_id = "ferry-$1"
assignment = "manual"
start = "earliest"

[pipeline.decode]
format = "json"

[pipeline.batch]
max_rows = $MAX_ROWS
max_latency = "$MAX_LATENCY"
TOML
}

bench_nats_server() {
  local choice=${NATS_SERVER:-${FERRY_NATS_SERVER:-debian}}
  case "$choice" in
    debian | nats-server) NATS_BIN=$(command -v nats-server || true) ;;
    v[0-9]*) NATS_BIN="${FERRY_CACHE_DIR:-$HOME/.cache/ferry}/nats-server-$choice/nats-server" ;;
    *) NATS_BIN=$choice ;;
  esac
  if [ -z "$NATS_BIN" ] || [ ! -x "$NATS_BIN" ]; then
    echo "nats-server '$choice' not found (${NATS_BIN:-not on PATH}): make setup-deb / make setup-nats" >&2
    exit 2
  fi
  NATS_VERSION=$("$NATS_BIN" --version 2>&1 | sed -n 's/.*\(v[0-9][0-9.]*\).*/\1/p' | head -1)
}

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
