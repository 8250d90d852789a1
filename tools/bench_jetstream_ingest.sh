#!/usr/bin/env bash
# JetStream ingestion benchmark (issue 5, docs/BENCHMARKS.md "JetStream ingestion"): not a timed test.
#
#   tools/bench_jetstream_ingest.sh [BUILD_DIR]   # default build/release; needs the targets
#                                                 # ferry and nats_bare_consumer built there
#
# 1. starts nats-server (JetStream, file store in a temp dir) on a free port;
# 2. publishes COUNT (default 1,000,000) messages of about 400 bytes to stream `bench`, subject
#    `bench` (`ferry produce nats --create-stream`: Limits retention, file storage);
# 3. times bench/nats_bare_consumer (an ordered push consumer, AckNone, reading in batches of
#    BATCH = ferry's `batch_size`, 1000 by default) over the whole stream;
# 4. times `ferry run --until-caught-up` into a fresh Delta table (process start to exit, i.e.
#    the last durable commit) under /usr/bin/time -v for the peak RSS;
# 5. runs the bare consumer once more (the machine is shared: two peer figures show the noise);
# 6. checks the table holds COUNT rows and prints the ratio ferry / bare consumer, with the
#    faster bare run as the peer (target >= 0.8).
# The server is stopped and the temp dirs removed on exit.
#
# Environment: COUNT, FORMAT (json: the Kafka benchmark's JSON document, decoded into 4 columns;
# raw: the same bytes into one STRING column), PAYLOAD (random letters, 285 -> ~400 B), BATCH
# (1000), MAX_ROWS (100000), MAX_LATENCY (5s), MAX_IN_FLIGHT (1; 0 = no overlap), CODEC (zstd), LEVEL (the codec default), COMPRESSION_THREADS (the default: one per core, at most 4),
# BENCH_DIR (kept when set).
set -euo pipefail
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
BARE=$(realpath "$BUILD_DIR/bench/nats_bare_consumer")
COUNT=${COUNT:-1000000}
FORMAT=${FORMAT:-json}
PAYLOAD=${PAYLOAD:-285}
BATCH=${BATCH:-1000}
MAX_ROWS=${MAX_ROWS:-100000}
MAX_LATENCY=${MAX_LATENCY:-5s}
MAX_IN_FLIGHT=${MAX_IN_FLIGHT:-1}
CODEC=${CODEC:-zstd}
command -v nats-server >/dev/null || { echo "nats-server is missing" >&2; exit 2; }

if [ -n "${BENCH_DIR:-}" ]; then
  rm -rf "$BENCH_DIR"
  mkdir -p "$BENCH_DIR"
  DIR=$(realpath "$BENCH_DIR")
  keep=1
else
  DIR=$(mktemp -d /tmp/ferry-bench-js.XXXXXX)
  keep=0
fi
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  if [ "$keep" = 0 ]; then rm -rf "$DIR"; else rm -rf "$DIR/js"; fi
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }
rate() { printf '%.0f' "$(echo "$1 / $2" | bc -l)"; }

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="nats://127.0.0.1:$PORT"
echo "ferry JetStream ingestion benchmark: $COUNT messages, format $FORMAT, batch $BATCH ($FERRY)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$DIR/js"
nats-server -js -sd "$DIR/js" -a 127.0.0.1 -p "$PORT" >"$DIR/nats-server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  sleep 0.1
done

t0=$(now)
"$FERRY" produce nats --server "$URL" --stream bench --subject bench --create-stream \
  --count "$COUNT" \
  --template "{\"id\": {{seq}}, \"dateTime\": \"{{now:MM/dd/yyyy - HH:mm:ss Z}}\", \"user\": \"{{uuid}}\", \"payload\": \"{{rand:$PAYLOAD}}\"}" \
  >"$DIR/produce.log" 2>&1
t1=$(now)
echo "published in $(printf '%.1f' "$(elapsed "$t0" "$t1")") s"

# Process start to exit, like ferry's figure (the program's own line, printed on stderr, times
# subscribe to last message only).
run_bare() {
  local a b
  a=$(now)
  "$BARE" --server "$URL" --stream bench --subject bench --count "$COUNT" --batch "$BATCH" \
    >"$DIR/bare.out"
  b=$(now)
  cat "$DIR/bare.out" >&2
  elapsed "$a" "$b"
}

bare1=$(run_bare)

if [ "$FORMAT" = json ]; then
  schema="id BIGINT NOT NULL, dateTime STRING, user STRING, payload STRING"
  decode='format = "json"'
else
  schema="payload STRING"
  decode='format = "raw"
column = "payload"'
fi
cat >"$DIR/ferry.toml" <<TOML
[log]
level = "info"

[[pipeline]]
id = "bench"
table = "$DIR/delta/bench"
schema = "$schema"
metadata_columns = { sequence = "_sequence", subject = "_subject" }

[pipeline.jetstream]
servers = "$URL"
stream = "bench"
subjects = ["bench"]
start = "all"
batch_size = $BATCH

[pipeline.decode]
$decode

[pipeline.batch]
max_rows = $MAX_ROWS
max_bytes = "256MB"
max_latency = "$MAX_LATENCY"
max_in_flight = $MAX_IN_FLIGHT

[pipeline.writer]
codec = "$CODEC"
${LEVEL:+compression_level = $LEVEL}
${COMPRESSION_THREADS:+compression_threads = $COMPRESSION_THREADS}
TOML

a=$(now)
/usr/bin/time -v -o "$DIR/time.txt" \
  "$FERRY" run --config "$DIR/ferry.toml" --until-caught-up 2>"$DIR/ferry-run.log"
b=$(now)
ferry_s=$(elapsed "$a" "$b")
rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$DIR/time.txt")
cpu_user=$(sed -n 's/.*User time (seconds): *//p' "$DIR/time.txt")
cpu_sys=$(sed -n 's/.*System time (seconds): *//p' "$DIR/time.txt")

bare2=$(run_bare)

json=$("$FERRY" table inspect "$DIR/delta/bench" --json)
rows=$(sed -n 's/.*"num_rows": *\([0-9]*\).*/\1/p' <<<"$json" | head -1)
files=$(sed -n 's/.*"num_files": *\([0-9]*\).*/\1/p' <<<"$json" | head -1)
version=$(sed -n 's/.*"version": *\([0-9]*\).*/\1/p' <<<"$json" | head -1)

bare_best=$(echo "if ($bare1 < $bare2) $bare1 else $bare2" | bc -l)
ferry_rate=$(rate "$COUNT" "$ferry_s")
bare_rate=$(rate "$COUNT" "$bare_best")
ratio=$(printf '%.2f' "$(echo "$ferry_rate / $bare_rate" | bc -l)")

printf '\n| what | seconds | messages/s |\n|---|---|---|\n'
printf '| nats_bare_consumer --batch %s (before ferry) | %.2f | %s |\n' "$BATCH" "$bare1" "$(rate "$COUNT" "$bare1")"
printf '| nats_bare_consumer --batch %s (after ferry) | %.2f | %s |\n' "$BATCH" "$bare2" "$(rate "$COUNT" "$bare2")"
printf '| ferry run --until-caught-up (start to exit) | %.2f | %s |\n' "$ferry_s" "$ferry_rate"
printf '\nferry CPU: user %s s, sys %s s; peak RSS %d MiB\n' "$cpu_user" "$cpu_sys" $((rss_kb / 1024))
echo "table: ${rows:-?} rows, ${files:-?} files, version ${version:-?} (expected $COUNT rows)"
echo "ratio ferry / bare consumer (faster bare run): $ratio (target >= 0.8)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "${rows:-0}" != "$COUNT" ]; then
  echo "FAIL: the table holds ${rows:-?} rows, expected $COUNT" >&2
  exit 1
fi
