// The routed pipeline (router.h) over a fake broker: messages to tables by a field, every id in
// exactly one table once across aborts at many points, resume at the largest low-water mark, a
// quiet table that does not hold the resume position back, tables made on their first message,
// and two routers on the same partitions (fencing restarts).

#include "ferry/pipeline/router.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "ferry/columnar/ddl.h"
#include "ferry/pipeline/routing_positions.h"
#include "ferry/pipeline/table_setup.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/fake_source.h"
#include "ferry/testing/table_verifier.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::pipeline {
namespace {

using testing::FakeSource;
using testing::SharedSource;

// Partition p's message n: id p * 1'000'000 + n, kind from `kind_of`.
std::string RoutedMessage(int64_t id, std::string_view kind) {
  return fmt::format(R"({{"id": {}, "kind": "{}"}})", id, kind);
}

TEST(RoutingPositionsTest, LowWaterMarkSkipsTheBatchAndWaitsForOthers) {
  RoutingPositions p;
  p.Reset(0, std::nullopt);
  // Positions 0..5: route 1 gets 0, 2, 4; route 2 gets 1, 3, 5.
  for (int64_t pos = 0; pos < 6; ++pos) {
    p.Take(0, pos, pos % 2 == 0 ? 1 : 2);
  }
  // Route 1 seals 0..2 (its 0 and 2): 1 of route 2 is outstanding: L = 0.
  EXPECT_EQ(p.Seal(0, 1, 2), 0);
  EXPECT_EQ(p.Durable(0), std::nullopt);  // not durable before the commit is acknowledged
  p.Committed(0, 1, 2);
  EXPECT_EQ(p.Durable(0), 0);
  // Route 2 seals up to 5: its own 1, 3, 5; route 1's 4 is outstanding: L = 3.
  EXPECT_EQ(p.Seal(0, 2, 5), 3);
  p.Committed(0, 2, 5);
  EXPECT_EQ(p.Durable(0), 3);
  // Route 1 seals 4: nothing else outstanding: L = 4 (capped at its sealed position).
  EXPECT_EQ(p.Seal(0, 1, 4), 4);
  p.Committed(0, 1, 4);
  EXPECT_EQ(p.Durable(0), 4);
  EXPECT_EQ(p.Outstanding(), 0);
  EXPECT_EQ(p.HighestWhenIdle(), (std::map<int32_t, int64_t>{{0, 5}}));
}

TEST(RoutingPositionsTest, AStaleBatchAfterReassignmentClaimsNothingNew) {
  RoutingPositions p;
  p.Reset(0, std::nullopt);
  for (int64_t pos = 10; pos <= 20; ++pos) {
    p.Take(0, pos, pos <= 15 ? 1 : 2);
  }
  // Revoked and assigned again, resuming after 12: route 1's batch of 10..15 is sealed late.
  p.Reset(0, 12);
  EXPECT_EQ(p.Seal(0, 1, 15), 12);
  p.Take(0, 13, 2);
  EXPECT_EQ(p.Seal(0, 1, 15), 12);
  // A message the table held already is durable.
  p.Skipped(0, 2, 13);
  EXPECT_EQ(p.Outstanding(), 0);
  EXPECT_EQ(p.skipped(), 1);
}

// A batch of the positions book's Take equals one Take per message.
TEST(RoutingPositionsTest, TakingAPollAtOnceEqualsOneByOne) {
  RoutingPositions one;
  RoutingPositions all;
  std::vector<RoutingPositions::Taken> taken;
  for (int32_t partition : {0, 1}) {
    one.Reset(partition, std::nullopt);
    all.Reset(partition, std::nullopt);
  }
  for (int64_t pos = 0; pos < 6; ++pos) {
    for (int32_t partition : {0, 1}) {
      taken.push_back({.partition = partition, .position = pos, .route = pos % 2 == 0 ? 1 : 2});
      one.Take(partition, pos, pos % 2 == 0 ? 1 : 2);
    }
  }
  all.Take(taken);
  EXPECT_EQ(all.Outstanding(), 12);
  EXPECT_EQ(all.Outstanding(1), one.Outstanding(1));
  EXPECT_EQ(all.Seal(0, 1, 4), one.Seal(0, 1, 4));
  all.Committed(0, 1, 4);
  one.Committed(0, 1, 4);
  EXPECT_EQ(all.LowNow(), one.LowNow());
  EXPECT_EQ(all.Outstanding(), 9);
}

// WaitWhileOutstanding returns when a commit moves the count, not at its timeout.
TEST(RoutingPositionsTest, AWaitForTheOutstandingCountEndsAtACommit) {
  RoutingPositions p;
  p.Reset(0, std::nullopt);
  p.Take(0, 1, 1);
  p.Take(0, 2, 1);
  auto waited =
      std::async(std::launch::async, [&] { p.WaitWhileOutstanding(2, std::chrono::minutes(2)); });
  p.Committed(0, 1, 2);
  ASSERT_EQ(waited.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the wait did not end at the commit";
  EXPECT_EQ(p.Outstanding(), 0);
}

MessageChunk QueuedMessages(int32_t partition, std::vector<int64_t> positions) {
  MessageChunk chunk;
  for (int64_t position : positions) {
    chunk.messages.push_back({.partition = partition, .position = position});
  }
  return chunk;
}

// Wake ends a reader's wait with nothing; after SetSealHint, the Pop after one that took
// messages returns at once on an empty queue (so its pipeline seals), and the next one waits.
TEST(RouteQueueTest, WakeAndTheSealHintEndAWaitEarly) {
  RouteQueue queue(100);
  std::vector<RouteItem> out;
  auto popped = std::async(std::launch::async, [&] {
    std::vector<RouteItem> items;
    queue.Pop(10, std::chrono::minutes(2), &items);
    return items.size();
  });
  queue.Wake();
  ASSERT_EQ(popped.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "Wake did not end the wait";
  EXPECT_EQ(popped.get(), 0u);

  MessageChunk two = QueuedMessages(0, {1, 2});
  ASSERT_TRUE(queue.PushMessages(&two, [] { return false; }));
  queue.SetSealHint();
  queue.Pop(10, std::chrono::minutes(2), &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].chunk.messages.size(), 2u);
  // Empty right after taking messages: back at once.
  auto empty = std::async(std::launch::async, [&] {
    std::vector<RouteItem> items;
    queue.Pop(10, std::chrono::minutes(2), &items);
    return items.size();
  });
  ASSERT_EQ(empty.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the Pop after the last messages waited";
  EXPECT_EQ(empty.get(), 0u);
  // Then a Pop waits for what comes (it does not return empty again at once).
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    MessageChunk one = QueuedMessages(0, {3});
    ASSERT_TRUE(queue.PushMessages(&one, [] { return false; }));
  });
  queue.Pop(10, std::chrono::minutes(2), &out);
  later.join();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].chunk.messages.size(), 1u);
  EXPECT_EQ(out[0].chunk.messages[0].position, 3);
}

// Chunks: a Pop takes whole chunks up to its count (at least one), a revocation drops a
// partition's messages inside them, and the routed source delivers a chunk larger than a poll
// over several polls, in order, views valid until the next poll.
TEST(RouteQueueTest, ChunksAreTakenWholeAndDeliveredAcrossPolls) {
  auto queue = std::make_shared<RouteQueue>(100);
  MessageChunk a = QueuedMessages(0, {1, 2, 3});
  MessageChunk b = QueuedMessages(1, {1, 2});
  MessageChunk c = QueuedMessages(0, {4, 5});
  ASSERT_TRUE(queue->PushMessages(&a, [] { return false; }));
  ASSERT_TRUE(queue->PushMessages(&b, [] { return false; }));
  ASSERT_TRUE(queue->PushMessages(&c, [] { return false; }));
  EXPECT_EQ(queue->messages(), 7u);
  EXPECT_EQ(queue->DropPartition(1), 2u);
  EXPECT_EQ(queue->messages(), 5u);
  std::vector<RouteItem> out;
  queue->Pop(1, std::chrono::milliseconds(0), &out);
  ASSERT_EQ(out.size(), 1u);  // one chunk of 3, though 1 was asked for
  EXPECT_EQ(out[0].chunk.messages.size(), 3u);
  queue->Pop(100, std::chrono::milliseconds(0), &out);
  ASSERT_EQ(out.size(), 2u);  // the emptied chunk of partition 1 and the last one
  EXPECT_EQ(out[0].chunk.messages.size(), 0u);
  EXPECT_EQ(queue->messages(), 0u);
}

// A listener that takes every partition from the start.
class TakeAllListener final : public source::PartitionListener {
 public:
  Result<std::optional<int64_t>> OnAssigned(const source::PartitionInfo&) override {
    return std::optional<int64_t>();
  }
  void OnRevoked(const source::PartitionInfo&) override {}
};

TEST(RoutedSourceTest, AChunkLargerThanAPollIsDeliveredInOrderOverSeveralPolls) {
  auto queue = std::make_shared<RouteQueue>(100);
  RoutingPositions positions;
  positions.Reset(0, std::nullopt);
  std::vector<std::string> payloads = {"a", "bb", "ccc", "dddd", "eeeee"};
  std::vector<source::Message> polled;
  for (size_t i = 0; i < payloads.size(); ++i) {
    polled.push_back({.partition = 0, .position = static_cast<int64_t>(i), .payload = payloads[i]});
    positions.Take(0, static_cast<int64_t>(i), 0);
  }
  std::vector<uint32_t> rows = {0, 1, 2, 3, 4};
  std::vector<std::string> bad(payloads.size());
  bad[3] = "odd";
  MessageChunk chunk = MessageChunk::Copy(polled, rows, bad);
  payloads.assign(payloads.size(), "overwritten");  // the chunk holds its own bytes
  queue->PushEvent({.kind = RouteItem::Kind::kAssign, .partition = {.index = 0, .key = "p0"}});
  ASSERT_TRUE(queue->PushMessages(&chunk, [] { return false; }));
  RoutedSource source(queue, &positions, 0, /*inert=*/false);
  TakeAllListener listener;
  ASSERT_TRUE(source.Start(&listener).ok());
  std::vector<std::string> seen;
  std::vector<source::Message> out;
  for (int poll = 0; poll < 4 && seen.size() < 5; ++poll) {
    ASSERT_TRUE(source.Poll(2, std::chrono::milliseconds(0), &out).ok());
    EXPECT_LE(out.size(), 2u);
    for (const source::Message& m : out) {
      seen.push_back(fmt::format("{}:{}:{}", m.position, m.payload, m.bad_reason));
    }
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"0:a:", "1:bb:", "2:ccc:", "3:dddd:odd", "4:eeeee:"}));
}

// A table's decoder whose schema registry never answers for messages of one kind: its pipeline
// waits (nothing taken), so the router's queue for it fills.
class RegistryStuckDecoder final : public transform::Decoder {
 public:
  RegistryStuckDecoder(std::unique_ptr<transform::Decoder> inner, std::string stuck)
      : inner_(std::move(inner)), stuck_(std::move(stuck)) {}
  const std::vector<int>& output_columns() const override { return inner_->output_columns(); }
  Status Append(std::string_view payload, columnar::RecordBatch* batch) override {
    if (payload.find(stuck_) != std::string_view::npos) {
      return Unavailable("schema registry at http://r:8081 unreachable");
    }
    return inner_->Append(payload, batch);
  }

 private:
  std::unique_ptr<transform::Decoder> inner_;
  std::string stuck_;
};

class RouterTest : public ::testing::Test {
 protected:
  std::shared_ptr<storage::ObjectStore> store_ = std::make_shared<storage::InMemoryStore>();
  metrics::Registry registry_;
  int partitions_ = 3;
  int64_t per_partition_ = 300;
  bool assign_at_start_ = true;
  std::string stuck_kind_;  // not empty: the tables' decoders wait forever on this kind
  // The kind (and so the table) of partition p's message n.
  std::function<std::string(int, int64_t)> kind_of_ = [](int, int64_t n) {
    static const char* kKinds[] = {"created", "paid", "shipped"};
    return std::string(kKinds[(n * 7 + n / 5) % 3]);
  };
  std::mutex sources_mu_;
  std::vector<std::shared_ptr<FakeSource>> sources_;

  SourceFactory Factory() {
    return [this]() -> Result<std::unique_ptr<source::Source>> {
      auto s = std::make_shared<FakeSource>(
          FakeSource::Options{.prefix = "kafka/events",
                              .partitions = partitions_,
                              .assign_all_at_start = assign_at_start_});
      for (int p = 0; p < partitions_; ++p) {
        for (int64_t n = 0; n < per_partition_; ++n) {
          s->Produce(p, RoutedMessage(p * 1'000'000 + n, kind_of_(p, n)));
        }
      }
      std::lock_guard lock(sources_mu_);
      sources_.push_back(s);
      return std::unique_ptr<source::Source>(std::make_unique<SharedSource>(std::move(s)));
    };
  }

  InnerFactory Inners(int64_t max_rows) {
    return [this, max_rows, max_latency = inner_max_latency_,
            budget = inner_budget_](const InnerSpec& spec) -> Result<std::unique_ptr<Pipeline>> {
      FERRY_ASSIGN_OR_RETURN(OpenedTable opened,
                             OpenOrCreateTable(store_, spec.table,
                                               {.schema_ddl = "id BIGINT NOT NULL, kind STRING",
                                                .metadata_columns = {{"offset", "_offset"}}}));
      FERRY_ASSIGN_OR_RETURN(
          std::unique_ptr<transform::Decoder> decoder,
          transform::JsonDecoder::Create(opened.snapshot.schema(), {.columns = {"id", "kind"}}));
      if (!stuck_kind_.empty()) {
        decoder = std::make_unique<RegistryStuckDecoder>(
            std::move(decoder), fmt::format(R"("kind": "{}")", stuck_kind_));
      }
      PipelineOptions options{.id = "routed",
                              .max_rows = max_rows,
                              .max_latency = max_latency,
                              .metadata_columns = {{"offset", "_offset"}},
                              .on_bad_record = OnBadRecord::kDeadLetter,
                              .poll_timeout = std::chrono::milliseconds(10),
                              .initial_backoff = std::chrono::milliseconds(1),
                              .dead_letter_id = spec.dead_letter_id,
                              .metrics_table = spec.table,
                              .seal_hook = spec.seal_hook,
                              .seal_now = spec.seal_now,
                              .shared_batch_budget = budget};
      FERRY_ASSIGN_OR_RETURN(
          auto pipeline,
          Pipeline::Create(std::move(options), std::move(opened.table), std::move(opened.snapshot),
                           spec.source, std::move(decoder), &registry_));
      FERRY_ASSIGN_OR_RETURN(OpenedTable dead,
                             OpenOrCreateTable(store_, "dead", {.schema_ddl = kDeadLetterSchema}));
      FERRY_RETURN_IF_ERROR(
          pipeline->SetDeadLetterTable(std::move(dead.table), std::move(dead.snapshot)));
      return pipeline;
    };
  }

  TableReader Reader() {
    return [this](const std::string& table) -> Result<std::optional<delta::Snapshot>> {
      FERRY_ASSIGN_OR_RETURN(auto t, delta::Table::Open(store_, table));
      Result<delta::Snapshot> snap = t->LoadSnapshot();
      if (snap.status().code() == StatusCode::kNotFound) {
        return std::optional<delta::Snapshot>();
      }
      FERRY_RETURN_IF_ERROR(snap.status());
      return std::optional<delta::Snapshot>(std::move(*snap));
    };
  }

  Result<std::unique_ptr<Router>> MakeRouter(RouterOptions options, int64_t max_rows = 25,
                                             std::unique_ptr<RouteSelector> selector = nullptr) {
    if (selector == nullptr) {
      FERRY_ASSIGN_OR_RETURN(auto templ, TableTemplate::Parse("t_{field:kind}", {}));
      selector = std::make_unique<TemplateSelector>(std::move(templ), "t_unknown");
    }
    FERRY_ASSIGN_OR_RETURN(OpenedTable positions,
                           OpenOrCreateTable(store_, "_routing", {.schema_ddl = "table STRING"}));
    options.id = "routed";
    options.poll_timeout = std::chrono::milliseconds(10);
    options.max_poll = 37;
    return Router::Create(std::move(options), Factory(), std::move(selector), Inners(max_rows),
                          Reader(), std::move(positions.table), std::move(positions.snapshot));
  }

  // Every table's ids (table -> ids, sorted), with ferry's reader.
  std::map<std::string, std::vector<int64_t>> TableIds() {
    std::map<std::string, std::vector<int64_t>> out;
    for (const char* name : {"t_created", "t_paid", "t_shipped", "t_unknown", "t_refunded"}) {
      auto table = delta::Table::Open(store_, name);
      auto snap = (*table)->LoadSnapshot();
      if (!snap.ok()) {
        continue;
      }
      auto rows = testing::ReadTableRows(**table, *snap);
      EXPECT_TRUE(rows.ok()) << rows.status().ToString();
      for (const std::string& row : *rows) {
        out[name].push_back(std::stoll(row.substr(3, row.find('|') - 3)));
      }
      std::sort(out[name].begin(), out[name].end());
    }
    return out;
  }

  // Checks every id is in exactly one table, once, and in its kind's table.
  void ExpectExactlyOnce(int64_t per_partition) {
    std::map<int64_t, int> seen;
    for (const auto& [table, ids] : TableIds()) {
      for (int64_t id : ids) {
        ++seen[id];
        int p = static_cast<int>(id / 1'000'000);
        EXPECT_EQ(table, "t_" + kind_of_(p, id % 1'000'000)) << id;
      }
    }
    for (int p = 0; p < partitions_; ++p) {
      for (int64_t n = 0; n < per_partition; ++n) {
        int64_t id = p * 1'000'000 + n;
        EXPECT_EQ(seen[id], 1) << "id " << id;
        seen.erase(id);
      }
    }
    EXPECT_TRUE(seen.empty()) << seen.size() << " ids that were never produced";
  }

  // The largest resume position of `key` over the tables and the positions table.
  std::optional<int64_t> MaxLow(const std::string& key) {
    std::optional<int64_t> best;
    for (const char* name : {"t_created", "t_paid", "t_shipped", "t_unknown", "_routing"}) {
      auto snap = Reader()(name);
      if (snap.ok() && snap->has_value()) {
        auto low = (*snap)->position(Router::ResumeAppId("routed", key));
        if (low && (!best || *low > *best)) {
          best = low;
        }
      }
    }
    return best;
  }

  // The inner pipelines' max_latency, and the budget their open batches share (null: none).
  std::chrono::milliseconds inner_max_latency_{20};
  std::shared_ptr<SharedBatchBudget> inner_budget_;

  // Over the tables (each inner pipeline's series has a `table` label).
  double Received() {
    double total = 0;
    for (const auto& [labels, value] : registry_.Values("ferry_messages_received_total")) {
      total += value;
    }
    return total;
  }
};

// `--until-caught-up` with a max_latency of an hour and batches larger than the stream: once
// everything is polled, the tables commit what they hold at once (InnerSpec::seal_now), and the
// run ends with every message in its table.
TEST_F(RouterTest, UntilCaughtUpCommitsWithoutWaitingForMaxLatency) {
  inner_max_latency_ = std::chrono::hours(1);
  auto router = MakeRouter({.until_caught_up = true}, /*max_rows=*/1'000'000);
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  std::promise<Status> done;
  std::future<Status> result = done.get_future();
  std::thread run([&] { done.set_value((*router)->Run(&stop)); });
  // A guard against a hang, not a time limit on the work: without the hook this waits an hour.
  const bool returned = result.wait_for(std::chrono::minutes(2)) == std::future_status::ready;
  if (!returned) {
    stop.RequestAbort();
  }
  run.join();
  ASSERT_TRUE(returned) << "the routed run waited for max_latency after polling everything";
  ASSERT_TRUE(result.get().ok());
  ExpectExactlyOnce(per_partition_);
}

// The open batches of the tables share one small budget: batches are sealed early (the largest
// first), never dropped; every message still lands once, and the budget ends at zero.
TEST_F(RouterTest, TablesSharingABatchBudgetStillHoldEveryMessageOnce) {
  inner_budget_ = std::make_shared<SharedBatchBudget>(2048);
  inner_max_latency_ = std::chrono::hours(1);
  auto router = MakeRouter({.until_caught_up = true}, /*max_rows=*/1'000'000);
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  ASSERT_TRUE((*router)->Run(&stop).ok());
  ExpectExactlyOnce(per_partition_);
  // The tables' pipelines have stopped: their last batches are no longer counted.
  EXPECT_EQ(inner_budget_->total(), 0);
}

TEST(SharedBatchBudgetTest, TheLargestBatchesSealOnceTheSumPassesTheLimit) {
  SharedBatchBudget budget(1000);
  budget.Report(0, 300);  // a
  budget.Report(0, 500);  // b
  EXPECT_FALSE(budget.ShouldSeal(500)) << "800 of 1000";
  budget.Report(0, 400);  // c: 1200 over 3 open batches, average 400
  EXPECT_TRUE(budget.ShouldSeal(500));
  EXPECT_TRUE(budget.ShouldSeal(400));
  EXPECT_FALSE(budget.ShouldSeal(300));
  EXPECT_FALSE(budget.ShouldSeal(0)) << "an empty batch has nothing to seal";
  budget.Report(500, 0);  // b sealed: 700
  EXPECT_FALSE(budget.ShouldSeal(400));
  EXPECT_EQ(budget.total(), 700);
}

TEST_F(RouterTest, MessagesGoToTheirTablesOnce) {
  auto router = MakeRouter({.until_caught_up = true});
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectExactlyOnce(per_partition_);
  // The drained router's last word: every partition resumes after its last message.
  for (int p = 0; p < partitions_; ++p) {
    std::string key = fmt::format("kafka/events/{}", p);
    EXPECT_EQ(MaxLow(key), per_partition_ - 1) << key;
    auto control = Reader()("_routing");
    EXPECT_EQ((*control)->position(Router::ResumeAppId("routed", key)), per_partition_ - 1);
  }
  // The real source heard of the low-water marks only.
  std::map<int32_t, int64_t> acked;
  for (const auto& a : sources_.back()->acknowledged()) {
    EXPECT_GE(a.position, acked[a.partition]);
    acked[a.partition] = a.position;
  }
  EXPECT_EQ(acked.size(), 3u);
  EXPECT_EQ((*router)->rereads(), 0);
  // A second run reads nothing again and writes nothing.
  auto again = MakeRouter({.until_caught_up = true});
  ASSERT_TRUE(again.ok());
  StopSignal stop2;
  ASSERT_TRUE((*again)->Run(&stop2).ok());
  ExpectExactlyOnce(per_partition_);
  EXPECT_EQ((*again)->rereads(), 0);
}

TEST_F(RouterTest, MetricsArePerTableAndTheRoutersOwn) {
  auto router = MakeRouter({.until_caught_up = true, .registry = &registry_});
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  ASSERT_TRUE((*router)->Run(&stop).ok());
  ExpectExactlyOnce(per_partition_);
  const metrics::Labels routed = {{"pipeline", "routed"}};
  // Every table's own series: its rows and its version, as the table holds them.
  double rows = 0;
  for (const auto& [table, ids] : TableIds()) {
    const metrics::Labels labels = {{"pipeline", "routed"}, {"table", table}};
    EXPECT_EQ(registry_.Value("ferry_rows_written_total", labels), static_cast<double>(ids.size()))
        << table;
    auto snap = Reader()(table);
    ASSERT_TRUE(snap.ok() && snap->has_value());
    EXPECT_EQ(registry_.Value("ferry_table_version", labels),
              static_cast<double>((*snap)->version()))
        << table;
    rows += static_cast<double>(ids.size());
  }
  EXPECT_EQ(rows, static_cast<double>(partitions_ * per_partition_));
  EXPECT_EQ(registry_.Value("ferry_rows_written_total", routed), 0) << "no per-pipeline series";
  // The router's: t_created, t_paid, t_shipped and the fallback t_unknown; none open after it
  // stopped; every partition resumes after its last message, which is the head: no lag.
  EXPECT_EQ(registry_.Value("ferry_routing_tables_known", routed), 4);
  EXPECT_EQ(registry_.Value("ferry_routing_tables_open", routed), 0);
  EXPECT_EQ(registry_.Value("ferry_routing_rereads_total", routed), 0);
  EXPECT_EQ(registry_.Value("ferry_pipeline_up", routed), 0);
  for (int p = 0; p < partitions_; ++p) {
    const metrics::Labels part = {{"pipeline", "routed"},
                                  {"partition", fmt::format("kafka/events/{}", p)}};
    EXPECT_EQ(registry_.Value("ferry_routing_resume_position", part), per_partition_ - 1);
    EXPECT_EQ(registry_.Value("ferry_broker_head_position", part), per_partition_ - 1);
    EXPECT_EQ(registry_.Value("ferry_lag_messages", part), 0);
  }
  for (const auto& [labels, value] : registry_.Values("ferry_routing_queue_messages")) {
    EXPECT_EQ(value, 0);
  }
}

TEST_F(RouterTest, AbortsAtManyPointsNeitherLoseNorDuplicate) {
  // Each run is abandoned after a different number of messages: open batches of some tables are
  // dropped, batches of others in flight or committed; the next run resumes from the tables.
  int64_t total_rereads = 0;
  for (int run = 0; run < 12; ++run) {
    // until_caught_up: a run that reaches the end returns by itself.
    auto router = MakeRouter({.until_caught_up = true}, /*max_rows=*/7 + run);
    ASSERT_TRUE(router.ok()) << router.status().ToString();
    StopSignal stop;
    Status result;
    std::atomic<bool> finished = false;
    std::thread t([&] {
      result = (*router)->Run(&stop);
      finished = true;
    });
    const double goal = Received() + 40 + run * 23;
    while (!finished && Received() < goal) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    stop.RequestAbort();
    t.join();
    EXPECT_TRUE(result.ok() || result.code() == StatusCode::kCancelled) << result.ToString();
    total_rereads += (*router)->rereads();
  }
  auto last = MakeRouter({.until_caught_up = true});
  ASSERT_TRUE(last.ok());
  StopSignal stop;
  Status st = (*last)->Run(&stop);
  ASSERT_TRUE(st.ok()) << st.ToString();
  total_rereads += (*last)->rereads();
  ExpectExactlyOnce(per_partition_);
  std::printf("[ router ] 13 runs, 12 aborted: %lld messages re-read that a table held already\n",
              static_cast<long long>(total_rereads));
}

TEST_F(RouterTest, AQuietTableDoesNotHoldTheResumePositionBack) {
  // "shipped" stops after the first 10 messages of each partition.
  kind_of_ = [](int, int64_t n) {
    if (n < 10) {
      return std::string(n % 3 == 0 ? "shipped" : "created");
    }
    return std::string(n % 2 == 0 ? "created" : "paid");
  };
  auto router = MakeRouter({.position_commit_interval = std::chrono::milliseconds(1)});
  ASSERT_TRUE(router.ok());
  StopSignal stop;
  Status result;
  std::thread t([&] { result = (*router)->Run(&stop); });
  // The process dies (an abort) once every partition's resume position passed position 50:
  // long after the quiet table's last message (a guard of 10^5 rounds keeps a failure from
  // hanging).
  for (int round = 0; round < 100000; ++round) {
    bool past = true;
    for (int p = 0; p < partitions_; ++p) {
      past = past && MaxLow(fmt::format("kafka/events/{}", p)).value_or(-1) > 50;
    }
    if (past) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  stop.RequestAbort();
  t.join();
  for (int p = 0; p < partitions_; ++p) {
    std::string key = fmt::format("kafka/events/{}", p);
    std::optional<int64_t> low = MaxLow(key);
    ASSERT_TRUE(low.has_value()) << key;
    // Far past the quiet table's last message (position 9).
    EXPECT_GT(*low, 50) << key;
    // And true: every message at or below it is in its table.
    auto ids = TableIds();
    std::set<int64_t> all;
    for (const auto& [table, list] : ids) {
      all.insert(list.begin(), list.end());
    }
    for (int64_t n = 0; n <= *low; ++n) {
      EXPECT_EQ(all.count(p * 1'000'000 + n), 1u) << key << " position " << n;
    }
  }
}

TEST_F(RouterTest, ATableIsMadeOnItsFirstMessage) {
  per_partition_ = 30;
  {
    auto router = MakeRouter({.until_caught_up = true});
    ASSERT_TRUE(router.ok());
    StopSignal stop;
    ASSERT_TRUE((*router)->Run(&stop).ok());
  }
  EXPECT_EQ(Reader()("t_refunded")->has_value(), false);
  // The producers go on with a new kind.
  per_partition_ = 60;
  auto old_kind = kind_of_;
  kind_of_ = [old_kind](int p, int64_t n) {
    return n >= 45 && n % 2 == 0 ? std::string("refunded") : old_kind(p, n);
  };
  auto router = MakeRouter({.until_caught_up = true});
  ASSERT_TRUE(router.ok());
  StopSignal stop;
  ASSERT_TRUE((*router)->Run(&stop).ok());
  ASSERT_TRUE(Reader()("t_refunded")->has_value());
  EXPECT_EQ(TableIds()["t_refunded"].size(), 3u * 7);
  ExpectExactlyOnce(per_partition_);
  EXPECT_EQ((*router)->tables().size(), 5u);  // the fallback too
  // The positions table records every table routed to, for the next start's resume read.
  auto control = Reader()("_routing");
  ASSERT_TRUE(control.ok() && control->has_value());
  std::set<std::string> recorded;
  for (const auto& [app_id, txn] : (*control)->txns()) {
    if (app_id.starts_with("routed/table/")) {
      recorded.insert(app_id.substr(13));
    }
  }
  EXPECT_EQ(recorded, (std::set<std::string>{"t_created", "t_paid", "t_shipped", "t_refunded"}));
}

TEST_F(RouterTest, StaticRoutesFirstMatchWinsAndUnmatchedAreDeadLetters) {
  // Kinds created / paid / shipped; routes take created and paid; shipped matches none.
  auto make = [&](bool unmatched_default) {
    auto schema = columnar::ParseDdlSchema("kind STRING, id BIGINT");
    EXPECT_TRUE(schema.ok());
    std::vector<PredicateRoute> routes = {
        {.name = "created", .where = "kind = 'created'", .table = "t_created", .origin = "r0"},
        {.name = "paid",
         .where = "kind = 'paid' OR kind = 'created'",
         .table = "t_paid",
         .origin = "r1"}};
    if (unmatched_default) {
      routes.push_back({.name = "default", .table = "t_unknown"});
    }
    auto selector =
        PredicateSelector::Create(std::make_shared<const columnar::Schema>(std::move(*schema)),
                                  std::move(routes), unmatched_default, "UTC");
    EXPECT_TRUE(selector.ok()) << selector.status().ToString();
    return std::unique_ptr<RouteSelector>(std::move(*selector));
  };
  per_partition_ = 60;
  auto router = MakeRouter({.until_caught_up = true}, 25, make(false));
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto ids = TableIds();
  std::map<std::string, size_t> expected_counts;
  size_t shipped = 0;
  for (int p = 0; p < partitions_; ++p) {
    for (int64_t n = 0; n < per_partition_; ++n) {
      std::string kind = kind_of_(p, n);
      if (kind == "shipped") {
        ++shipped;
      } else {
        ++expected_counts["t_" + kind];  // created: the first route, though paid matches too
      }
    }
  }
  EXPECT_EQ(ids["t_created"].size(), expected_counts["t_created"]);
  EXPECT_EQ(ids["t_paid"].size(), expected_counts["t_paid"]);
  EXPECT_EQ(ids.count("t_unknown"), 0u);
  // What no route matches is a dead letter of the first route's pipeline, once, named.
  auto dead = delta::Table::Open(store_, "dead");
  auto snap = (*dead)->LoadSnapshot();
  ASSERT_TRUE(snap.ok());
  auto rows = testing::ReadTableRows(**dead, *snap);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), shipped);
  EXPECT_NE(rows->front().find("no route matches"), std::string::npos) << rows->front();
  EXPECT_NE(rows->front().find("topic events partition"), std::string::npos) << rows->front();
  // Its dead-letter positions are its own (appId "<id>@<table>/<partition>").
  EXPECT_TRUE(snap->position("routed@t_created/kafka/events/0").has_value());

  // The same messages again with a default route: nothing new anywhere (every table resumes
  // from its own positions), and the positions table says the partitions are done.
  auto again = MakeRouter({.until_caught_up = true}, 25, make(true));
  ASSERT_TRUE(again.ok());
  StopSignal stop2;
  ASSERT_TRUE((*again)->Run(&stop2).ok());
  EXPECT_EQ(TableIds().count("t_unknown"), 0u);
  EXPECT_EQ((*again)->rereads(), 0);
}

TEST_F(RouterTest, MaxTablesIsAHardLimitNamingTheTable) {
  auto router = MakeRouter({.max_tables = 2, .until_caught_up = true});
  ASSERT_TRUE(router.ok());
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("routing.max_tables = 2"), std::string::npos) << st.ToString();
}

TEST_F(RouterTest, FewOpenTablesStillExactlyOnce) {
  auto router = MakeRouter({.max_open_tables = 1, .until_caught_up = true});
  ASSERT_TRUE(router.ok());
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectExactlyOnce(per_partition_);
}

TEST_F(RouterTest, TwoRoutersOnTheSamePartitionsFenceAndRestart) {
  per_partition_ = 150;
  auto a = MakeRouter({.until_caught_up = true}, 9);
  auto b = MakeRouter({.until_caught_up = true}, 13);
  ASSERT_TRUE(a.ok() && b.ok());
  StopSignal stop;
  Status sa, sb;
  std::thread ta([&] { sa = (*a)->Run(&stop); });
  std::thread tb([&] { sb = (*b)->Run(&stop); });
  ta.join();
  tb.join();
  ASSERT_TRUE(sa.ok()) << sa.ToString();
  ASSERT_TRUE(sb.ok()) << sb.ToString();
  ExpectExactlyOnce(per_partition_);
  std::printf("[ router ] restarts after fencing: %lld + %lld\n",
              static_cast<long long>((*a)->restarts()), static_cast<long long>((*b)->restarts()));
}

// A selector whose routing decoder's schema registry does not answer for its first `outages`
// calls (negative: never answers).
class RegistryDownSelector final : public RouteSelector {
 public:
  RegistryDownSelector(std::unique_ptr<RouteSelector> inner, int outages)
      : inner_(std::move(inner)), outages_(outages) {}
  Status Select(std::span<const source::Message> messages, std::vector<RouteChoice>* out) override {
    if (outages_ != 0) {
      outages_ -= outages_ > 0 ? 1 : 0;
      out->clear();
      return Unavailable("schema registry at http://r:8081 unreachable");
    }
    return inner_->Select(messages, out);
  }
  std::vector<std::string> StaticTables() const override { return inner_->StaticTables(); }

 private:
  std::unique_ptr<RouteSelector> inner_;
  int outages_;
};

std::unique_ptr<RouteSelector> KindSelector(int outages) {
  auto templ = TableTemplate::Parse("t_{field:kind}", {});
  EXPECT_TRUE(templ.ok());
  return std::make_unique<RegistryDownSelector>(
      std::make_unique<TemplateSelector>(std::move(*templ), "t_unknown"), outages);
}

TEST_F(RouterTest, ARegistryOutageWhileRoutingSkipsNothing) {
  // The routing decoder fails the first polls: their messages wait, none is taken past.
  auto router = MakeRouter({.until_caught_up = true,
                            .initial_backoff = std::chrono::milliseconds(1),
                            .max_backoff = std::chrono::milliseconds(4)},
                           25, KindSelector(6));
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectExactlyOnce(per_partition_);
}

TEST_F(RouterTest, MaxWaitStopsARegistryOutageWithoutClaimingAnything) {
  auto router = MakeRouter({.until_caught_up = true,
                            .max_wait = std::chrono::milliseconds(100),
                            .initial_backoff = std::chrono::milliseconds(1),
                            .max_backoff = std::chrono::milliseconds(10)},
                           25, KindSelector(-1));
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("schema registry"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("max wait 100 ms"), std::string::npos) << st.ToString();
  EXPECT_TRUE(TableIds().empty());
  for (int p = 0; p < partitions_; ++p) {
    EXPECT_EQ(MaxLow(fmt::format("kafka/events/{}", p)), std::nullopt) << p;
  }
  // The next run, with the registry back, routes everything once.
  auto next = MakeRouter({.until_caught_up = true});
  ASSERT_TRUE(next.ok());
  StopSignal stop2;
  ASSERT_TRUE((*next)->Run(&stop2).ok());
  ExpectExactlyOnce(per_partition_);
}

TEST_F(RouterTest, MaxWaitStopsWhenTheBrokerAssignsNothing) {
  assign_at_start_ = false;
  auto router = MakeRouter({.until_caught_up = true, .max_wait = std::chrono::milliseconds(100)});
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("no contact with the broker"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("0 partition(s) assigned"), std::string::npos) << st.ToString();
}

TEST_F(RouterTest, MaxWaitStopsATableThatTakesNoMessages) {
  // The table of "paid" waits for its registry forever: its queue fills, the router waits on it
  // at most max_wait, then drains the others and says which table.
  stuck_kind_ = "paid";
  auto router = MakeRouter({.queue_messages = 5,
                            .until_caught_up = true,
                            .max_wait = std::chrono::milliseconds(200),
                            .initial_backoff = std::chrono::milliseconds(1),
                            .max_backoff = std::chrono::milliseconds(10)});
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  Status st = (*router)->Run(&stop);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("table t_paid taking no message"), std::string::npos)
      << st.ToString();
  EXPECT_TRUE(TableIds()["t_paid"].empty());
  // The next run, with the registry back, leaves every id in its table once.
  stuck_kind_.clear();
  auto next = MakeRouter({.until_caught_up = true});
  ASSERT_TRUE(next.ok());
  StopSignal stop2;
  ASSERT_TRUE((*next)->Run(&stop2).ok());
  ExpectExactlyOnce(per_partition_);
}

}  // namespace
}  // namespace ferry::pipeline
