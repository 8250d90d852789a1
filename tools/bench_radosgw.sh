# Sourced by the S3 benchmarks (tools/bench_kafka_ingest.sh with STORE=s3, tools/bench_latency.sh):
# starts the tests' radosgw (test_object_server: a one-host Ceph cluster with an in-memory OSD on
# free ports, docs/testing-servers.md), exports the standard AWS variables that reach it, and
# creates a bucket with curl's own SigV4 signer.
#
#   start_radosgw SERVER_BINARY DIR MEMSTORE_MIB BUCKET   # sets RGW_PID and exports AWS_*
#   stop_radosgw                                          # SIGTERM: it removes its directory
start_radosgw() {
  local server=$1 dir=$2 memstore=$3 bucket=$4
  "$server" radosgw --memstore-mib "$memstore" >"$dir/radosgw.out" 2>&1 </dev/null &
  RGW_PID=$!
  for _ in $(seq 600); do
    grep -q '^export ' "$dir/radosgw.out" 2>/dev/null && break
    kill -0 "$RGW_PID" 2>/dev/null || { cat "$dir/radosgw.out" >&2; return 1; }
    sleep 0.1
  done
  eval "$(grep '^export ' "$dir/radosgw.out")"
  curl -sf -X PUT --aws-sigv4 "aws:amz:$AWS_REGION:s3" \
    --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$AWS_ENDPOINT_URL/$bucket" >/dev/null
  echo "radosgw: $(grep '^# radosgw up' "$dir/radosgw.out" | sed 's/^# //'), memstore $memstore MiB, endpoint $AWS_ENDPOINT_URL"
}

stop_radosgw() {
  if [ -n "${RGW_PID:-}" ]; then
    kill "$RGW_PID" 2>/dev/null || true
    wait "$RGW_PID" 2>/dev/null || true
    RGW_PID=""
  fi
}
