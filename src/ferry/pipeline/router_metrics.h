// RouterMetrics: a routed pipeline's own series (router.h, "Metrics"), labelled `pipeline` (and
// `partition`): ferry_pipeline_up, ferry_routing_tables_open, ferry_routing_tables_known,
// ferry_routing_rereads_total, ferry_routing_restarts_total, ferry_routing_resume_position,
// ferry_broker_head_position, ferry_lag_messages, ferry_lag_seconds and
// ferry_routing_queue_messages{table}.
//
//   RouterMetrics metrics(registry, "events", std::chrono::seconds(5));
//   metrics.Update({.tables_open = 3, ...}, source, assigned, positions.LowNow());
//
// Thread-safety: one thread (the router's); the series it sets are safe to read anywhere.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "ferry/metrics/metrics.h"
#include "ferry/source/source.h"

namespace ferry::pipeline {

class RouterMetrics {
 public:
  // The router's counts, each as it stands now (the counters add what is new since the last
  // Update).
  struct Counts {
    size_t tables_open = 0;
    size_t tables_known = 0;
    int64_t rereads = 0;
    int64_t restarts = 0;
  };

  // REQUIRES: registry != nullptr and outlives this.
  RouterMetrics(metrics::Registry* registry, std::string pipeline,
                std::chrono::milliseconds heads_interval);

  // The gauges and counters after a poll. At most every heads_interval, asks `source` (null: the
  // source is closed) for the broker's heads of the `assigned` partitions; the lag of a partition
  // is its head minus its L in `lows`, and in seconds (as a single table's pipeline reports it,
  // partition_book.h) the age of its message at L, whose timestamp is in `low_timestamps`
  // (RoutingPositions::LowTimestamps), while it lags; 0 otherwise or without a timestamp.
  void Update(const Counts& counts, source::Source* source,
              const std::map<int32_t, source::PartitionInfo>& assigned,
              const std::map<int32_t, int64_t>& lows,
              const std::map<int32_t, int64_t>& low_timestamps);
  void SetUp(bool up) { up_->Set(up ? 1 : 0); }
  void SetTablesOpen(size_t n) { tables_open_->Set(static_cast<double>(n)); }
  // ferry_routing_queue_messages of `table`.
  metrics::Gauge* QueueGauge(const std::string& table);

 private:
  // A partition's gauges, looked up in the registry once per partition key.
  struct PartitionGauges {
    metrics::Gauge* resume;
    metrics::Gauge* head;
    metrics::Gauge* lag;
    metrics::Gauge* lag_seconds;
  };
  const PartitionGauges& Partition(const std::string& key);

  metrics::Registry* registry_;
  const std::string pipeline_;
  const std::chrono::milliseconds heads_interval_;
  metrics::Gauge* up_;
  metrics::Gauge* tables_open_;
  metrics::Gauge* tables_known_;
  metrics::Counter* rereads_;
  metrics::Counter* restarts_;
  int64_t rereads_counted_ = 0;
  int64_t restarts_counted_ = 0;
  std::map<std::string, PartitionGauges> partitions_;   // by key
  std::map<std::string, source::PartitionHead> heads_;  // by key, the last the broker reported
  std::chrono::steady_clock::time_point heads_at_;
  bool heads_asked_ = false;
};

}  // namespace ferry::pipeline
