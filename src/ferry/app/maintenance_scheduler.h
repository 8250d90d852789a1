// MaintenanceScheduler: `[pipeline.maintenance]` inside `ferry run`: `ferry optimize` every
// optimize_every and `ferry vacuum --retain vacuum_retain` every vacuum_every, on one thread per
// pipeline that has a schedule. A routed pipeline's schedule covers each of its tables in turn
// (RoutedTablesOf, routed_pipeline.h: every table it has routed to, read again each round, so a
// table made since the last round is in the next one); the positions table holds txns only and
// is not one of them. Both commit with dataChange=false and never touch txns, so they
// are safe alongside the pipeline's own commits (a conflict only makes one round fail; it is
// logged, counted and tried again at the next tick). The first round runs one period after start.
//
// Metrics: ferry_maintenance_runs_total{pipeline, operation=optimize|vacuum, outcome=ok|failed},
// one per table and round.
// Each round is also listed in the registry's Journal (the status page's maintenance runs).
//
// Thread-safety: Start/Stop from one thread.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ferry/config/config.h"
#include "ferry/metrics/metrics.h"

namespace ferry::app {

class MaintenanceScheduler {
 public:
  explicit MaintenanceScheduler(metrics::Registry* registry) : registry_(registry) {}
  ~MaintenanceScheduler();
  MaintenanceScheduler(const MaintenanceScheduler&) = delete;
  MaintenanceScheduler& operator=(const MaintenanceScheduler&) = delete;

  // Starts a thread for each pipeline with a non-zero optimize_every or vacuum_every.
  void Start(const std::vector<config::PipelineConfig>& pipelines);
  // Wakes the threads and joins them (a round in progress finishes first).
  void Stop();

 private:
  void Loop(config::PipelineConfig pipeline);
  // One round of `optimize` or vacuum on each of the pipeline's tables.
  void RunRound(const config::PipelineConfig& pipeline, bool optimize);
  void RunOnce(const config::PipelineConfig& pipeline, const std::string& table, bool optimize);

  metrics::Registry* registry_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ferry::app
