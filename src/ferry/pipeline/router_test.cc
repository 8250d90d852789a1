// The routed pipeline (router.h) over a fake broker: messages to tables by a field, every id in
// exactly one table once across aborts at many points, resume at the largest low-water mark, a
// quiet table that does not hold the resume position back, tables made on their first message,
// and two routers on the same partitions (fencing restarts).

#include "ferry/pipeline/router.h"

#include <gtest/gtest.h>

#include <future>
#include <map>
#include <string>
#include <vector>

#include "ferry/testing/router_fixture.h"

namespace ferry::pipeline::router_test {
namespace {

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
    EXPECT_EQ((*control)->position(RoutingLedger::ResumeAppId("routed", key)), per_partition_ - 1);
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

// Each table keeps its own journal record (the status page's per-table commits, state and table
// figures): a table's commits are its own rows and versions, never another table's.
TEST_F(RouterTest, EachTableHasAJournalOfItsOwn) {
  auto router = MakeRouter({.until_caught_up = true, .registry = &registry_}, /*max_rows=*/100);
  ASSERT_TRUE(router.ok()) << router.status().ToString();
  StopSignal stop;
  ASSERT_TRUE((*router)->Run(&stop).ok());
  ExpectExactlyOnce(per_partition_);
  std::map<metrics::JournalKey, metrics::PipelineRecord> journal = registry_.journal()->Read();
  std::map<std::string, std::vector<int64_t>> ids = TableIds();
  ASSERT_GE(ids.size(), 2u);
  for (const auto& [table, table_ids] : ids) {
    auto it = journal.find({"routed", table});
    ASSERT_NE(it, journal.end()) << table;
    const metrics::PipelineRecord& r = it->second;
    auto snap = Reader()(table);
    ASSERT_TRUE(snap.ok() && snap->has_value());
    ASSERT_TRUE(r.table.has_value()) << table;
    EXPECT_EQ(r.table->version, (*snap)->version()) << table;
    ASSERT_FALSE(r.commits.empty()) << table;
    ASSERT_LT(r.commits.size(), metrics::Journal::kMaxCommits) << table << ": all commits listed";
    int64_t rows = 0;
    int64_t version = -1;
    for (const metrics::CommitRecord& c : r.commits) {
      EXPECT_GT(c.version, version) << table << ": this table's versions, in order";
      version = c.version;
      rows += c.rows;
    }
    EXPECT_EQ(version, (*snap)->version()) << table;
    EXPECT_EQ(rows, static_cast<int64_t>(table_ids.size())) << table;
    EXPECT_EQ(r.state, metrics::PipelineState::kStopped) << table;
  }
  // Nothing but the tables' own records: none shared under the pipeline's id.
  EXPECT_EQ(journal.size(), ids.size());
  EXPECT_EQ(journal.count({"routed", ""}), 0u);
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

}  // namespace
}  // namespace ferry::pipeline::router_test
