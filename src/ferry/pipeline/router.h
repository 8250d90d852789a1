// Router: a routed pipeline (docs/decisions/routing.md): one real source feeding many Delta
// tables, each through an ordinary inner Pipeline (pipeline.h) with its own batch loop,
// committer, schema evolution, dedup, dead letters and fencing.
//
//   FERRY_ASSIGN_OR_RETURN(auto router, Router::Create(options, source_factory,
//   std::move(selector),
//                                                     inner_factory, table_reader,
//                                                     std::move(positions_table)));
//   Status st = router->Run(&stop);
//
// Run(), numbered (RoutingPositions, routing_positions.h, keeps the positions of steps 3-6):
//   1. Start the real source. For every partition p it assigns, read every table the router
//      knows (the static routes' and fallback tables, the tables the positions table records,
//      and the positions table itself) and resume p after the largest txn "<id>/<p key>/resume"
//      among them (L, a low-water mark: every message of p at or below it is durable in its table);
//      none: the start policy. Each open inner pipeline hears of the assignment through its queue
//      and reads its own table's position for p, as a pipeline does.
//   2. Poll; drop redeliveries (at or below the highest position polled since the assignment);
//      choose each message's table (RouteSelector, route_selector.h; deterministic). A selector
//      whose routing decoder cannot fetch a writer schema now (Unavailable) is asked again with
//      backoff: the poll's messages wait, nothing is taken or skipped, nothing more is polled.
//   3. Record every polled message as outstanding, then copy the poll's messages for each table
//      into its RouteQueue as one chunk, waiting while the queue is full (backpressure). A table
//      seen for the first time gets its inner pipeline now (InnerFactory: the table is opened
//      or created the way `ferry run` does), told of every assigned partition before any
//      message, and recorded in the
//      positions table (txn "<id>/table/<table>", one commit for the poll's new tables, after
//      its messages are queued) so that step 1 reads it after a restart; at most max_tables
//      tables.
//   4. Each inner pipeline reads its queue through a RoutedSource (routed_source.h). When it
//      seals a batch, the seal hook adds txn "<id>/<p key>/resume" = L for each partition in it
//      to the batch's commit (RoutingPositions::Seal). When the commit is durable and the inner
//      pipeline acknowledges, the seal's L becomes durable.
//   5. After each poll (under a steady flow, at most every kPublishEvery; an empty poll always):
//      the real source is acknowledged up to each partition's L as of now
//      (RoutingPositions::LowNow: the oldest message not durable yet, minus one; advisory, and
//      only ever after the commits that made it true); at most every position_commit_interval,
//      when it moved, that L goes to the positions table in a commit of txns only, so a restart
//      resumes near where it stopped even when the tables' own seals lag (a table that went
//      quiet, traffic that stopped) or no table is open yet.
//   6. More than max_open_tables inner pipelines: the least recently used one with nothing
//      outstanding is drained and closed (it reopens when a message comes for it).
//   7. Revocation of p: every queue drops p's messages and tells its pipeline (OnRevoked);
//      p's positions are forgotten.
//   8. An inner pipeline that fenced (another writer owns a partition in its table) asks for a
//      new source: the whole routed pipeline restarts from the tables (inner pipelines aborted,
//      the real source closed and started again: step 1).
//   5b. At most every heads_interval: the broker's heads (Source::Heads), for the lag metrics.
//   9. A stop: a drain drains every inner pipeline (their open batches commit; messages still in
//      the queues are read again at the next start), then L as of now goes to the positions
//      table and the acknowledgements. An abort aborts them. until_caught_up stops once every
//      partition was polled up to its head and every message polled is durable; from the moment
//      everything is polled, each inner pipeline commits its open batch as soon as its queue is
//      empty (not max_latency later). With max_wait, it stops with Unavailable after a drain
//      (what was routed is committed) once max_wait passed without contact with the broker (an
//      assignment, a message, the heads), with the schema registry while step 2 waits for it,
//      with a table's full queue while step 3 waits for it, or, everything polled, without a
//      table's commit while messages are outstanding. An inner pipeline's error stops the router
//      with the error, naming the table.
//
// Metrics (with RouterOptions::registry; docs/running.md): the router's own series are labelled
// `pipeline` (and `partition`): ferry_pipeline_up, ferry_routing_tables_open,
// ferry_routing_tables_known, ferry_routing_rereads_total, ferry_routing_restarts_total,
// ferry_routing_resume_position (L as of now), ferry_broker_head_position, ferry_lag_messages
// (head - L: messages of the partition not known durable in their tables), and
// ferry_routing_queue_messages{table}. The inner pipelines' series carry a `table` label
// (PipelineOptions::metrics_table, set by the InnerFactory).
//
// The router's parts: RoutingPositions (routing_positions.h) computes L, RoutingLedger
// (routing_ledger.h) keeps the positions table, RoutedTables (routed_tables.h) the inner
// pipelines, RouterMetrics (router_metrics.h) the series.
//
// Thread-safety: Run() on one thread (the router's); each inner pipeline runs on a thread of its
// own; RoutingPositions and the queues are what they share.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/metrics/metrics.h"
#include "ferry/pipeline/pipeline.h"
#include "ferry/pipeline/route_selector.h"
#include "ferry/pipeline/routed_source.h"
#include "ferry/pipeline/routed_tables.h"
#include "ferry/pipeline/router_metrics.h"
#include "ferry/pipeline/routing_ledger.h"
#include "ferry/pipeline/routing_positions.h"
#include "ferry/pipeline/stop_signal.h"
#include "ferry/source/source.h"

namespace ferry::pipeline {

struct RouterOptions {
  // The pipeline's id: the prefix of every appId, in every table.
  std::string id;
  std::chrono::milliseconds poll_timeout{200};
  size_t max_poll = 5000;        // messages per poll of the real source
  size_t queue_messages = 1000;  // per table: how far the router may run ahead of a table
  size_t max_open_tables = 64;
  size_t max_tables = 1000;
  std::chrono::milliseconds position_commit_interval{5000};
  // A drain's time for the inner pipelines to commit their open batches.
  std::chrono::milliseconds drain_timeout{30000};
  // Stop (OK, everything committed) once every assigned partition was polled up to the broker's
  // head when first seen (`ferry run --until-caught-up`).
  bool until_caught_up = false;
  // With until_caught_up: stop (Unavailable) after this long without contact; 0 waits forever
  // (`ferry run --max-wait`; step 9).
  std::chrono::milliseconds max_wait{0};
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  // Where the router's metrics go (null: none), and how often it asks the broker's heads for them.
  metrics::Registry* registry = nullptr;
  std::chrono::milliseconds heads_interval{5000};
};

// What the router gives the factory of a table's inner pipeline: the pipeline must read from
// `source`, call `seal_hook` (PipelineOptions::seal_hook), use `dead_letter_id`
// (PipelineOptions::dead_letter_id) and `seal_now` (PipelineOptions::seal_now); its id is the
// router's.
struct InnerSpec {
  std::string table;
  SourceFactory source;
  std::function<void(SealedBatch*)> seal_hook;
  std::string dead_letter_id;
  // PipelineOptions::seal_now: true once until_caught_up has polled every partition to its goal.
  std::function<bool()> seal_now;
};
using InnerFactory = std::function<Result<std::unique_ptr<Pipeline>>(const InnerSpec&)>;
// The latest snapshot of a table, read-only; nullopt when there is no table there yet.
using TableReader = std::function<Result<std::optional<delta::Snapshot>>(const std::string&)>;

class Router final : private source::PartitionListener {
 public:
  // `positions_table`: the router's own table (txns only), with its snapshot.
  static Result<std::unique_ptr<Router>> Create(RouterOptions options, SourceFactory source_factory,
                                                std::unique_ptr<RouteSelector> selector,
                                                InnerFactory inner_factory, TableReader reader,
                                                std::unique_ptr<delta::Table> positions_table,
                                                delta::Snapshot positions_snapshot);
  ~Router() override;

  // Until a stop (OK after a drain; Cancelled after an abort) or an error.
  Status Run(StopSignal* stop);

  // After Run: messages polled again that their table held already (re-reads after a restart),
  // restarts after fencing, tables opened.
  int64_t rereads() const { return positions_.skipped(); }
  int64_t restarts() const { return restarts_; }
  std::vector<std::string> tables() const;

 private:
  using Inner = RoutedTables::Inner;

  Router(RouterOptions options, SourceFactory source_factory,
         std::unique_ptr<RouteSelector> selector, InnerFactory inner_factory, TableReader reader,
         std::unique_ptr<delta::Table> positions_table, delta::Snapshot positions_snapshot);

  // PartitionListener (router thread, inside the real source's Poll).
  Result<std::optional<int64_t>> OnAssigned(const source::PartitionInfo& partition) override;
  void OnRevoked(const source::PartitionInfo& partition) override;

  Status StartSource();
  void CloseSource();
  Status RunLoop();
  // Steps 2-3 for one poll.
  Status Dispatch(std::vector<source::Message>& polled);
  // The open inner pipeline of `table`, made when missing (step 3), and noted for the ledger.
  Result<Inner*> OpenInner(const std::string& table);
  // The inner pipeline of a table that is opened (InnerFactory, with the spec of the router).
  Result<std::unique_ptr<Pipeline>> MakeInner(const std::string& table, int route,
                                              std::shared_ptr<RouteQueue> queue);
  // Step 5. `force`: commit the positions table now (a drain's end).
  void PublishPositions(bool force);
  Status Restart();
  bool CaughtUp();
  void UpdateGoals();
  // Step 9's max_wait: Unavailable once it passed since `since` (the last contact, or when step
  // 2 began waiting for the registry); `what` says what did not happen ("no contact with ...").
  Status CheckMaxWait(std::chrono::steady_clock::time_point since, std::string_view what) const;
  // Step 5b and the gauges, after each poll (nothing without a registry).
  void UpdateMetrics(const std::map<int32_t, int64_t>& lows);

  const RouterOptions options_;
  SourceFactory source_factory_;
  std::unique_ptr<RouteSelector> selector_;
  InnerFactory inner_factory_;
  TableReader reader_;
  RoutingLedger ledger_;
  StopSignal* stop_ = nullptr;

  RoutingPositions positions_;
  std::unique_ptr<source::Source> source_;
  std::unique_ptr<RouterMetrics> metrics_;  // null without a registry
  RoutedTables tables_;
  std::map<int32_t, source::PartitionInfo> assigned_;
  std::map<int32_t, int64_t> polled_high_;  // the highest position polled since the assignment
  std::map<int32_t, int64_t> goals_;        // until_caught_up: the head when first seen
  bool goals_known_ = false;
  // until_caught_up: the source read through here with nothing more to deliver
  // (PartitionHead::read_through: Kafka transaction markers, aborted transactions); asked again
  // at most every kGoalsEvery while a partition is short of its goal.
  std::map<int32_t, int64_t> read_through_;
  static constexpr std::chrono::milliseconds kGoalsEvery{500};
  std::chrono::steady_clock::time_point last_goals_;
  std::map<int32_t, int64_t> acked_;
  std::chrono::steady_clock::time_point last_contact_;  // with the broker (max_wait)
  // Once everything is polled (until_caught_up): when the outstanding count last moved.
  std::chrono::steady_clock::time_point last_commit_;
  int64_t last_outstanding_ = -1;
  // Step 5's last run. It reads every partition (the book, the metrics): after every poll of a
  // steady flow (a poll every few hundred microseconds) that was a tenth of the router's time.
  static constexpr std::chrono::milliseconds kPublishEvery{10};
  std::chrono::steady_clock::time_point last_publish_;
  std::string last_source_error_;
  std::atomic<bool> restart_requested_{false};
  // until_caught_up and every partition polled to its goal: the inner pipelines seal their open
  // batches as soon as their queues are empty (InnerSpec::seal_now).
  std::atomic<bool> polled_to_goals_{false};
  int64_t restarts_ = 0;
  // Snapshots of the tables read for one assignment round (a rebalance assigns many partitions
  // at once).
  std::map<std::string, std::optional<delta::Snapshot>> fresh_;
  std::vector<source::Message> polled_;
  std::vector<RouteChoice> choices_;
  // Dispatch's scratch: the positions taken, each message's bad reason, and the group of each
  // table id chosen (-1 between Dispatch calls).
  std::vector<RoutingPositions::Taken> taken_;
  std::vector<std::string> bad_reasons_;
  std::vector<int> group_of_id_;
};

}  // namespace ferry::pipeline
