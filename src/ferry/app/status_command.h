// `ferry status`: where each source partition of a pipeline stands.
//
//   ferry status --config FILE [--pipeline ID]... [--max-lag N] [--json]
//       for each pipeline of FILE (or the ones named): its table's committed position per source
//       partition (the txn of appId "<pipeline>/<partition key>" in the latest snapshot), the
//       broker head (Kafka: high watermark - 1; JetStream: last sequence matching the filter),
//       the lag (head - position; for a partition the table has never seen, every message the
//       broker holds) and the time of the commit that set the position. The broker is asked
//       without joining the group or creating consumers.
//       A routed pipeline (docs/decisions/routing.md): one row per table and partition
//       (routed_status.h): the table's own position, the resume position a restart starts after
//       (the largest "<id>/<partition>/resume" over its tables and positions table), the head and
//       the lag (head - max(position, resume)). Its tables: the routes', the fallback and every
//       table the positions table records.
//   ferry status --table PATH [--json]
//       the positions of every appId the table holds (no broker: head and lag unknown).
//
//   ferry status --config FILE --watch [--interval 1s] [--count N]
//       the status page of the `ferry run` serving FILE's `[metrics] listen`, in the terminal
//       (status_watch.h).
//
// --json prints one object per partition per line with the keys pipeline, partition, position,
// head, lag (null when unknown) and last_commit (ISO-8601 UTC, null when the table is empty);
// a routed pipeline's rows have two keys more: table and resume; an elastic JetStream
// pipeline's (`partitions = {...}`) rows two others: owner (the process holding the partition's
// lease, null when free) and lease_age_ms (how long it has held it), read from the lease bucket
// (columns OWNER and LEASE AGE).
//
// Exit codes: 0 ok, 1 some partition's lag exceeds --max-lag, 2 an error (configuration, table
// or broker).
//
// Thread-safety: run from main() only.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace ferry::app {

void RegisterStatusCommand(CLI::App& app, int* exit_code);

}  // namespace ferry::app
