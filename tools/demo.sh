#!/usr/bin/env bash
# make demo: ferry's main job on an embedded default, no broker to set up (README.md).
#
# 1. starts the embedded mock Kafka cluster (`ferry mock-kafka`, topic `events`, 4 partitions);
# 2. publishes 10,000 messages shaped like the Spark job's input while ferry ingests them;
# 3. SIGKILLs ferry mid-way (a crash: no shutdown code runs), restarts it until caught up;
# 4. counts what the Delta table holds with ferry's own reader (`ferry verify`);
# 5. does the same from NATS JetStream: a nats-server on a free port, 10,000 raw messages
#    `test #1` .. `test #10000` on stream `newstream`, subject `newsub` (the scenario in which
#    nats-spark-connector left 10,100 rows).
# The table stays in $DEMO_DIR (default build/demo) for `ferry table inspect|history`.
set -euo pipefail
FERRY=$(realpath "${1:-build/dev/src/ferry/app/ferry}")
DEMO_DIR=${DEMO_DIR:-build/demo}
COUNT=${COUNT:-10000}

rm -rf "$DEMO_DIR"
mkdir -p "$DEMO_DIR"
DEMO_DIR=$(realpath "$DEMO_DIR")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }

step "starting the embedded mock Kafka cluster (3 brokers, topic events with 4 partitions)"
"$FERRY" mock-kafka --brokers 3 --topic events:4 --bootstrap-file "$DEMO_DIR/bootstrap" \
  </dev/null >/dev/null 2>"$DEMO_DIR/mock-kafka.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$DEMO_DIR/bootstrap" ] && break; sleep 0.1; done
BROKERS=$(cat "$DEMO_DIR/bootstrap")
echo "bootstrap servers: $BROKERS"

cat >"$DEMO_DIR/ferry.toml" <<TOML
[[pipeline]]
id = "events"
table = "$DEMO_DIR/delta/events"
schema = "id BIGINT NOT NULL, dateTime STRING, payload STRING"
metadata_columns = { offset = "_offset", partition = "_partition" }

[pipeline.kafka]
brokers = "$BROKERS"
topics = ["events"]
group_id = "ferry-demo"
start = "earliest"

[pipeline.decode]
format = "json"

[pipeline.batch]
max_rows = 500
max_latency = "200ms"
TOML
echo "configuration: $DEMO_DIR/ferry.toml"

step "publishing $COUNT messages at 2,500/s while ferry runs"
"$FERRY" produce kafka --brokers "$BROKERS" --topic events --count "$COUNT" --rate 2500 \
  --key 'k{{seq}}' \
  --template '{"id": {{seq}}, "dateTime": "{{now:MM/dd/yyyy - HH:mm:ss Z}}", "payload": "test #{{seq}}"}' \
  2>"$DEMO_DIR/produce.log" &
producer=$!
pids+=($producer)

"$FERRY" run --config "$DEMO_DIR/ferry.toml" 2>"$DEMO_DIR/ferry-run-1.log" &
ferry=$!
pids+=($ferry)

rows=0
for _ in $(seq 300); do
  rows=$("$FERRY" table inspect "$DEMO_DIR/delta/events" --json 2>/dev/null |
    sed -n 's/.*"num_rows": *\([0-9]*\).*/\1/p' | head -1 || true)
  rows=${rows:-0}
  [ "$rows" -ge $((COUNT / 4)) ] && break
  sleep 0.1
done
kill -KILL "$ferry"
wait "$ferry" 2>/dev/null || true
echo "ferry SIGKILLed mid-way with $rows rows committed (log: $DEMO_DIR/ferry-run-1.log)"

wait "$producer"
echo "producer done: $COUNT messages published"

step "restarting ferry (--until-caught-up: ingest to the broker heads, then exit)"
"$FERRY" run --config "$DEMO_DIR/ferry.toml" --until-caught-up 2>"$DEMO_DIR/ferry-run-2.log"
echo "ferry exited 0 (log: $DEMO_DIR/ferry-run-2.log)"

step "what the table holds (ferry verify, ferry's own Delta and Parquet reader)"
echo "published:  $COUNT"
"$FERRY" verify "$DEMO_DIR/delta/events" --id id --expect "$COUNT" --range "1..$COUNT"

step "JetStream: starting nats-server on a free port (store $DEMO_DIR/nats)"
nats-server -js -sd "$DEMO_DIR/nats" -a 127.0.0.1 -p -1 >"$DEMO_DIR/nats-server.log" 2>&1 &
pids+=($!)
NATS_URL=
for _ in $(seq 100); do
  NATS_URL=$(sed -n 's/.*Listening for client connections on \([0-9.:]*\).*/nats:\/\/\1/p' \
    "$DEMO_DIR/nats-server.log" | head -1)
  [ -n "$NATS_URL" ] && break
  sleep 0.1
done
echo "nats-server: $NATS_URL"

cat >"$DEMO_DIR/ferry-nats.toml" <<TOML
[[pipeline]]
id = "newstream"
table = "$DEMO_DIR/delta/newstream"
schema = "payload STRING NOT NULL"
metadata_columns = { sequence = "_sequence", subject = "_subject" }

[pipeline.jetstream]
servers = "$NATS_URL"
stream = "newstream"
subjects = ["newsub"]
start = "all"

[pipeline.decode]
format = "raw"
column = "payload"

[pipeline.batch]
max_rows = 500
max_latency = "200ms"
TOML

step "publishing $COUNT messages 'test #N' to newstream/newsub at 2,500/s while ferry runs"
"$FERRY" produce nats --server "$NATS_URL" --stream newstream --subject newsub --create-stream \
  --count "$COUNT" --rate 2500 --template 'test #{{seq}}' 2>"$DEMO_DIR/produce-nats.log" &
producer=$!
pids+=($producer)
for _ in $(seq 50); do grep -q "newstream" "$DEMO_DIR/produce-nats.log" 2>/dev/null && break; sleep 0.1; done
"$FERRY" run --config "$DEMO_DIR/ferry-nats.toml" 2>"$DEMO_DIR/ferry-nats-1.log" &
ferry=$!
pids+=($ferry)
rows=0
for _ in $(seq 300); do
  rows=$("$FERRY" table inspect "$DEMO_DIR/delta/newstream" --json 2>/dev/null |
    sed -n 's/.*"num_rows": *\([0-9]*\).*/\1/p' | head -1 || true)
  rows=${rows:-0}
  [ "$rows" -ge $((COUNT / 4)) ] && break
  sleep 0.1
done
kill -KILL "$ferry"
wait "$ferry" 2>/dev/null || true
echo "ferry SIGKILLed mid-way with $rows rows committed"
wait "$producer"
echo "producer done: $COUNT messages published"

step "restarting ferry: it resumes at the stream sequence in the table, no ack wait"
start=$(date +%s.%N)
"$FERRY" run --config "$DEMO_DIR/ferry-nats.toml" --until-caught-up 2>"$DEMO_DIR/ferry-nats-2.log"
echo "caught up in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"

step "what the table holds"
echo "published:  $COUNT"
"$FERRY" verify "$DEMO_DIR/delta/newstream" --id payload --expect "$COUNT"
echo
echo "Inspect them: $FERRY table history $DEMO_DIR/delta/events"
echo "              $FERRY table inspect $DEMO_DIR/delta/newstream"
