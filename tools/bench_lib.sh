# Shared pieces of the benchmark scripts under tools/ (sourced, not run):
#   bench_dir NAME        sets DIR and keep: BENCH_DIR when set (emptied, kept afterwards), else a
#                         new /tmp/ferry-bench-NAME.XXXXXX (removed at exit); sets the EXIT trap
#   bench_start_mock ARGS starts `$FERRY mock-kafka ARGS` (killed at exit; pinned with taskset to
#                         MOCK_CPUS when set); sets mock and BROKERS
#   bench_kafka_json_toml ID TOPIC  the [pipeline.kafka], decode and batch sections of a pipeline
#                         reading TOPIC from the start, manual assignment, JSON, MAX_ROWS and
#                         MAX_LATENCY (BROKERS from bench_start_mock)
#   bench_start_real_kafka SERVER  starts a real single-broker Apache Kafka (KRaft) with
#                         `SERVER kafka` (test_object_server; jars from `make setup-kafka`); sets
#                         KAFKA_SERVER_PID, BROKERS, KAFKA_DIR and BROKER_PID (the broker's JVM);
#                         bench_stop_real_kafka stops it (call it from bench_extra_cleanup)
#   bench_create_topic NAME PARTITIONS  creates a topic on it (the tests' confluent-kafka venv)
#   bench_nats_server     sets NATS_BIN and NATS_VERSION from NATS_SERVER (default
#                         FERRY_NATS_SERVER, else `debian`): `debian` (nats-server on PATH, Debian's
#                         2.9.10), a version installed by `make setup-nats` (`v2.15.3`: the binary
#                         in ${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/ferry}/nats-server-v2.15.3/), or a path
#   bench_start_nats      starts $NATS_BIN (from bench_nats_server) with JetStream, its file
#                         store in $DIR/js, on a free loopback port, and waits until it accepts
#                         connections; sets NATS_PID, PORT and URL. Stopped at exit, after
#                         bench_extra_cleanup; $DIR/js is removed even when DIR is kept
#   now, elapsed A B, median (of the numbers on stdin, one per line)
# A script that needs more at exit defines bench_extra_cleanup.
mock=""
NATS_PID=""
keep=1
bench_cleanup() {
  if [ -n "$mock" ]; then
    kill "$mock" 2>/dev/null || true
    wait "$mock" 2>/dev/null || true
  fi
  if declare -F bench_extra_cleanup >/dev/null; then bench_extra_cleanup; fi
  if [ -n "$NATS_PID" ]; then
    kill "$NATS_PID" 2>/dev/null || true
    wait "$NATS_PID" 2>/dev/null || true
    rm -rf "$DIR/js"
  fi
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

KAFKA_SERVER_PID=""
bench_start_real_kafka() {
  KAFKA_PY=${KAFKA_PY:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry/kafka-py-venv/bin/python}
  [ -x "$KAFKA_PY" ] || { echo "$KAFKA_PY is missing (make setup-kafka)" >&2; exit 2; }
  "$1" kafka >"$DIR/kafka.out" 2>&1 </dev/null &
  KAFKA_SERVER_PID=$!
  for _ in $(seq 1200); do
    grep -q '^# bootstrap servers' "$DIR/kafka.out" 2>/dev/null && break
    kill -0 "$KAFKA_SERVER_PID" 2>/dev/null || { cat "$DIR/kafka.out" >&2; exit 1; }
    sleep 0.1
  done
  BROKERS=$(sed -n 's/^# bootstrap servers (PLAINTEXT): \([^;]*\);.*/\1/p' "$DIR/kafka.out")
  KAFKA_DIR=$(sed -n 's/.*data and log (server.log) in //p' "$DIR/kafka.out")
  # The broker's JVM: the one process whose command line names its server.properties.
  BROKER_PID=$(pgrep -f "kafka.Kafka $KAFKA_DIR/server.properties" | head -1)
  [ -n "$BROKER_PID" ] || { echo "no broker process for $KAFKA_DIR" >&2; exit 1; }
}

bench_stop_real_kafka() {
  if [ -n "$KAFKA_SERVER_PID" ]; then
    # SIGTERM: test_object_server stops the broker and removes its directory.
    kill "$KAFKA_SERVER_PID" 2>/dev/null || true
    wait "$KAFKA_SERVER_PID" 2>/dev/null || true
    KAFKA_SERVER_PID=""
  fi
  if [ -n "${BROKER_PID:-}" ] && kill -0 "$BROKER_PID" 2>/dev/null; then
    kill "$BROKER_PID" 2>/dev/null || true
  fi
}

bench_create_topic() {
  "$KAFKA_PY" - "$BROKERS" "$1" "$2" <<'PY'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
admin = AdminClient({"bootstrap.servers": sys.argv[1]})
for f in admin.create_topics([NewTopic(sys.argv[2], int(sys.argv[3]), 1)]).values():
    f.result(60)
PY
}

bench_nats_server() {
  local choice=${NATS_SERVER:-${FERRY_NATS_SERVER:-debian}}
  case "$choice" in
    debian | nats-server) NATS_BIN=$(command -v nats-server || true) ;;
    v[0-9]*) NATS_BIN="${FERRY_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}/nats-server-$choice/nats-server" ;;
    *) NATS_BIN=$choice ;;
  esac
  if [ -z "$NATS_BIN" ] || [ ! -x "$NATS_BIN" ]; then
    echo "nats-server '$choice' not found (${NATS_BIN:-not on PATH}): make setup-deb / make setup-nats" >&2
    exit 2
  fi
  NATS_VERSION=$("$NATS_BIN" --version 2>&1 | sed -n 's/.*\(v[0-9][0-9.]*\).*/\1/p' | head -1)
}

bench_start_nats() {
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  URL="nats://127.0.0.1:$PORT"
  mkdir -p "$DIR/js"
  "$NATS_BIN" -js -sd "$DIR/js" -a 127.0.0.1 -p "$PORT" >"$DIR/nats-server.log" 2>&1 &
  NATS_PID=$!
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
    kill -0 "$NATS_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "nats-server did not start on port $PORT:" >&2
  cat "$DIR/nats-server.log" >&2
  exit 1
}

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
