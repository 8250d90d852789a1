// RoutedTables: the tables of a routed pipeline (router.h): the route id of every table it knows,
// and the inner pipeline of each open one, running on a thread of its own and reading its
// RouteQueue (steps 3, 6, 8 and 9).
//
//   RoutedTables tables(options, make_pipeline, metrics);
//   bool opened = false;
//   FERRY_ASSIGN_OR_RETURN(RoutedTables::Inner* inner, tables.Open("/lake/t", assigned, &opened));
//   inner->queue->PushMessages(...);
//   tables.Stop(/*drain=*/true);
//
// Thread-safety: one thread (the router's); each Inner's pipeline runs on its own thread and
// shares only its queue, its stop signal and `done` with it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/metrics/metrics.h"
#include "ferry/pipeline/pipeline.h"
#include "ferry/pipeline/routed_source.h"
#include "ferry/pipeline/router_metrics.h"
#include "ferry/pipeline/stop_signal.h"
#include "ferry/source/source.h"

namespace ferry::pipeline {

class RoutedTables {
 public:
  struct Options {
    std::string id;  // the pipeline's, for messages
    size_t queue_messages = 1000;
    size_t max_tables = 1000;
    size_t max_open_tables = 64;
    std::chrono::milliseconds drain_timeout{30000};
  };
  // An open table.
  struct Inner {
    std::string table;
    int route = -1;
    std::shared_ptr<RouteQueue> queue;
    std::unique_ptr<Pipeline> pipeline;
    StopSignal stop;
    Status result;  // the pipeline's, once done
    std::atomic<bool> done{false};
    std::thread thread;
    uint64_t last_used = 0;
    metrics::Gauge* queued = nullptr;  // ferry_routing_queue_messages{table}; null without metrics
    // The router thread's: the chunk it fills with the table's messages of a poll, then queues;
    // the queue hands back a spent one in its place (RouteQueue::PushMessages).
    MessageChunk chunk;
  };
  // Makes the pipeline of `table`, which reads `queue` as route `route`.
  using PipelineMaker = std::function<Result<std::unique_ptr<Pipeline>>(
      const std::string& table, int route, std::shared_ptr<RouteQueue> queue)>;

  // `metrics` may be null (no series); else it outlives this.
  RoutedTables(Options options, PipelineMaker make_pipeline, RouterMetrics* metrics);
  // Aborts the open pipelines.
  ~RoutedTables();

  // The route id of `table`, which becomes known.
  int RouteId(const std::string& table);
  // Every table known (static routes, recorded, routed to), by name.
  const std::map<std::string, int>& known() const { return route_ids_; }

  // Step 3: the open inner pipeline of `table`. When none is open, one is made, told of every
  // `assigned` partition before any message, and started; `opened` says so. ResourceExhausted
  // when the table would be one more than max_tables.
  Result<Inner*> Open(const std::string& table,
                      const std::map<int32_t, source::PartitionInfo>& assigned, bool* opened);
  // The open pipelines, by table.
  const std::map<std::string, std::unique_ptr<Inner>>& open() const { return inners_; }

  // A pipeline that returned: its error, naming the table (OK when none did).
  Status Failure() const;
  // Steps 8 and 9: stops every open pipeline, `drain`: after committing its open batch (else
  // abandoning it), and returns each table's result.
  std::vector<std::pair<std::string, Status>> Stop(bool drain);
  // Step 6: while more than max_open_tables are open, drains and closes the least recently used
  // one whose queue is empty and which `busy` says has nothing outstanding.
  void EvictIdle(const std::function<bool(const Inner&)>& busy);
  // ferry_routing_queue_messages of every open table.
  void UpdateQueueGauges();

 private:
  const Options options_;
  PipelineMaker make_pipeline_;
  RouterMetrics* metrics_;
  std::map<std::string, std::unique_ptr<Inner>> inners_;  // open, by table
  std::map<std::string, int> route_ids_;                  // every table known, by table
  uint64_t use_clock_ = 0;                                // LRU order of the open pipelines
};

}  // namespace ferry::pipeline
