# Shared pieces of the benchmark scripts under tools/ (sourced, not run):
#   bench_dir NAME        sets DIR and keep: BENCH_DIR when set (emptied, kept afterwards), else a
#                         new /tmp/ferry-bench-NAME.XXXXXX (removed at exit); sets the EXIT trap
#   bench_start_mock ARGS starts `$FERRY mock-kafka ARGS` (killed at exit; pinned with taskset to
#                         MOCK_CPUS when set); sets mock and BROKERS
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

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
