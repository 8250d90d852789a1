#!/usr/bin/env bash
# What the status page costs the ingest path (issue 23, docs/BENCHMARKS.md "Status page"): not a
# timed test.
#
#   tools/bench_status_page.sh [BUILD_DIR]      # default build/release
#
# 1. starts the embedded mock cluster (`ferry mock-kafka`, topic bench:PARTITIONS) and preloads
#    COUNT JSON messages of about 400 bytes (as tools/bench_kafka_ingest.sh);
# 2. REPS rounds, each running three variants in turn, each `ferry run --until-caught-up` into a
#    fresh table, timed from start to exit with its CPU time (user + sys):
#      off     no [metrics] listen: no HTTP server, no sampler
#      closed  [metrics] listen: the status page's sampler runs, nobody looks
#      polled  [metrics] listen, and /api/status polled every second the way the page polls it
#              (the first answer in full, then ?since=<next_tick>; node, as the page's own
#              logic), from the moment it answers
# 3. prints the median of each variant and polled/off, closed/off.
#
# Environment: COUNT (600000), PARTITIONS (64: each under the mock's 5 MiB retention), REPS (5),
# PAYLOAD (285 random letters per message), BENCH_DIR (default: a mktemp dir, removed).
set -euo pipefail
BUILD_DIR=${1:-build/release}
FERRY=$(realpath "$BUILD_DIR/src/ferry/app/ferry")
COUNT=${COUNT:-600000}
PARTITIONS=${PARTITIONS:-64}
REPS=${REPS:-5}
PAYLOAD=${PAYLOAD:-285}

DIR=${BENCH_DIR:-$(mktemp -d /tmp/ferry-bench-status.XXXXXX)}
mkdir -p "$DIR"
mock=""
poller=""
cleanup() {
  for p in $poller $mock; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  if [ -z "${BENCH_DIR:-}" ]; then rm -rf "$DIR"; fi
}
trap cleanup EXIT

echo "ferry status page benchmark: $COUNT messages, $PARTITIONS partitions, $REPS rounds ($FERRY)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

"$FERRY" mock-kafka --brokers 1 --topic "bench:$PARTITIONS" --bootstrap-file "$DIR/bootstrap" \
  </dev/null >/dev/null 2>"$DIR/mock-kafka.log" &
mock=$!
for _ in $(seq 100); do [ -s "$DIR/bootstrap" ] && break; sleep 0.1; done
BROKERS=$(cat "$DIR/bootstrap")
"$FERRY" produce kafka --brokers "$BROKERS" --topic bench --count "$COUNT" --timeout 600 \
  -X linger.ms=50 -X batch.size=1000000 \
  --template "{\"id\": {{seq}}, \"user\": \"{{uuid}}\", \"payload\": \"{{rand:$PAYLOAD}}\"}" \
  2>"$DIR/produce.log"

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

config() {  # variant round
  local metrics=""
  if [ "$1" != off ]; then metrics=$'[metrics]\nlisten = "127.0.0.1:'$PORT$'"\n'; fi
  cat <<TOML
$metrics
[[pipeline]]
id = "bench"
table = "$DIR/delta/$1-$2"
schema = "id BIGINT NOT NULL, user STRING, payload STRING"

[pipeline.kafka]
brokers = "$BROKERS"
topics = ["bench"]
group_id = "ferry-bench-$1-$2"
start = "earliest"

[pipeline.batch]
max_rows = 100000
max_bytes = "256MB"
max_latency = "5s"
TOML
}

# Polls like the page (status.js): GET /api/status, then ?since=<next_tick> every second; the
# number of answers goes to $DIR/polls.
poll() {
  exec node -e '
    const [url, out] = process.argv.slice(1);
    let since = "", n = 0;
    const fs = require("fs");
    async function tick() {
      try {
        const r = await fetch(url + since);
        if (r.ok) {
          const j = await r.json();
          since = "?since=" + j.history.next_tick;
          fs.writeFileSync(out, String(++n));
          setTimeout(tick, 1000);
          return;
        }
      } catch (e) { /* not serving yet */ }
      setTimeout(tick, 100);
    }
    tick();' "http://127.0.0.1:$PORT/api/status" "$DIR/polls"
}

declare -A wall cpu
for round in $(seq "$REPS"); do
  for variant in off closed polled; do
    config "$variant" "$round" >"$DIR/$variant.toml"
    echo 0 >"$DIR/polls"
    if [ "$variant" = polled ]; then
      poll &
      poller=$!
    fi
    /usr/bin/time -f '%e %U %S' -o "$DIR/time.txt" \
      "$FERRY" run --config "$DIR/$variant.toml" --until-caught-up 2>"$DIR/run-$variant.log"
    if [ -n "$poller" ]; then
      kill "$poller" 2>/dev/null || true
      wait "$poller" 2>/dev/null || true
      poller=""
    fi
    read -r e u s <"$DIR/time.txt"
    c=$(echo "$u + $s" | bc -l)
    rows=$("$FERRY" table inspect "$DIR/delta/$variant-$round" --json | sed -n 's/.*"num_rows": *\([0-9]*\).*/\1/p' | head -1)
    [ "$rows" = "$COUNT" ] || { echo "FAIL: $variant round $round wrote $rows rows" >&2; exit 1; }
    printf 'round %d %-6s wall %6.2f s  cpu %6.2f s  %8.0f msg/s  polls %s\n' "$round" "$variant" "$e" "$c" \
      "$(echo "$COUNT / $e" | bc -l)" "$(cat "$DIR/polls")"
    wall[$variant]+="$e "
    cpu[$variant]+="$c "
  done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
printf '\n| variant | median wall s | median msg/s | median CPU s |\n|---|---|---|---|\n'
for variant in off closed polled; do
  w=$(median <<<"${wall[$variant]}")
  c=$(median <<<"${cpu[$variant]}")
  printf '| %s | %.2f | %.0f | %.2f |\n' "$variant" "$w" "$(echo "$COUNT / $w" | bc -l)" "$c"
done
wo=$(median <<<"${wall[off]}"); wc=$(median <<<"${wall[closed]}"); wp=$(median <<<"${wall[polled]}")
co=$(median <<<"${cpu[off]}"); cc=$(median <<<"${cpu[closed]}"); cp=$(median <<<"${cpu[polled]}")
printf '\nclosed / off: wall %.3f, CPU %.3f; polled / off: wall %.3f, CPU %.3f\n' \
  "$(echo "$wc / $wo" | bc -l)" "$(echo "$cc / $co" | bc -l)" "$(echo "$wp / $wo" | bc -l)" "$(echo "$cp / $co" | bc -l)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
