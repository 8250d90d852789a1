#include "ferry/app/status_page/status_history.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "ferry/app/status_page/status_assets.h"
#include "ferry/app/status_page/status_json.h"
#include "ferry/app/status_page/table_probe.h"
#include "ferry/columnar/ddl.h"
#include "ferry/delta/table.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/memory_store.h"

namespace ferry::app {
namespace {

using nlohmann::json;

struct Fixture {
  metrics::Registry registry;
  metrics::Counter* rows;
  metrics::Counter* bytes;
  metrics::Gauge* lag;
  metrics::Histogram* batch;
  StatusHistory history;

  Fixture()
      : rows(registry.GetCounter("ferry_rows_written_total", "h", {{"pipeline", "events"}})),
        bytes(registry.GetCounter("ferry_bytes_written_total", "h", {{"pipeline", "events"}})),
        lag(registry.GetGauge("ferry_lag_messages", "h",
                              {{"pipeline", "events"}, {"partition", "kafka/events/0"}})),
        batch(registry.GetHistogram("ferry_batch_duration_seconds", "h", {{"pipeline", "events"}})),
        history(&registry, {{"events", "kafka topics events", "/data/events"}}, nullptr) {}

  json Render(std::optional<int64_t> since = {}) {
    return json::parse(RenderStatusJson(history, {.since = since}, 99));
  }
};

TEST(StatusHistoryTest, RatesAreCounterDifferencesOverTheSampleInterval) {
  Fixture f;
  f.history.Sample(1000);
  f.rows->Increment(500);
  f.bytes->Increment(2e6);
  f.batch->Observe(0.25);
  f.batch->Observe(0.75);
  f.lag->Set(40);
  f.history.Sample(2000);
  f.rows->Increment(1000);
  f.lag->Set(0);
  f.history.Sample(4000);  // two seconds later

  json s = f.Render();
  EXPECT_EQ(s["history"]["first_tick"], 0);
  EXPECT_EQ(s["history"]["next_tick"], 3);
  EXPECT_EQ(s["history"]["times_ms"], json::array({1000, 2000, 4000}));
  const json& p = s["pipelines"][0];
  EXPECT_EQ(p["id"], "events");
  EXPECT_EQ(p["source"], "kafka topics events");
  EXPECT_EQ(p["table_uri"], "/data/events");
  EXPECT_EQ(p["series"]["rows_per_s"], json::array({nullptr, 500, 500}));
  EXPECT_EQ(p["series"]["mb_per_s"], json::array({nullptr, 2, 0}));
  EXPECT_EQ(p["series"]["batch_seconds"], json::array({nullptr, 0.5, nullptr}));
  EXPECT_EQ(p["now"]["rows_per_s"], 500);
  EXPECT_EQ(p["totals"]["rows"], 1500);
  ASSERT_EQ(p["partitions"].size(), 1u);
  EXPECT_EQ(p["partitions"][0]["key"], "kafka/events/0");
  EXPECT_EQ(p["partitions"][0]["lag_messages"], 0);
  EXPECT_EQ(p["partitions"][0]["committed"], nullptr);
  EXPECT_EQ(p["partitions"][0]["series"]["lag_messages"], json::array({0, 40, 0}));
  // No journal entry yet: the pipeline has not started.
  EXPECT_EQ(p["state"], "starting");
  EXPECT_EQ(p["tables"], json::array());  // one table: no routed tables
}

// A routed pipeline: its tables' series carry a `table` label; the router's do not.
TEST(StatusHistoryTest, RoutedTablesHaveRowsOfTheirOwnAndTheRouterIsUp) {
  Fixture f;
  const metrics::Labels table_a = {{"pipeline", "events"}, {"table", "/lake/a"}};
  const metrics::Labels table_b = {{"pipeline", "events"}, {"table", "/lake/b"}};
  f.registry.GetGauge("ferry_pipeline_up", "h", {{"pipeline", "events"}})->Set(1);
  f.registry.GetGauge("ferry_pipeline_up", "h", table_a)->Set(1);
  f.registry.GetGauge("ferry_pipeline_up", "h", table_b)->Set(1);
  f.registry.GetCounter("ferry_rows_written_total", "h", table_a)->Increment(30);
  f.registry.GetCounter("ferry_rows_written_total", "h", table_b)->Increment(12);
  auto position = [&](const metrics::Labels& table, double v) {
    metrics::Labels l = table;
    l.emplace_back("partition", "kafka/events/0");
    f.registry.GetGauge("ferry_committed_position", "h", l)->Set(v);
  };
  position(table_a, 70);
  position(table_b, 64);
  f.registry
      .GetGauge("ferry_routing_resume_position", "h",
                {{"pipeline", "events"}, {"partition", "kafka/events/0"}})
      ->Set(60);
  f.lag->Set(9);
  f.history.Sample(1000);

  json s = f.Render();
  const json& p = s["pipelines"][0];
  EXPECT_EQ(p["up"], true);  // the router's series, not 1 + one per table
  EXPECT_EQ(p["totals"]["rows"], 42);
  std::map<std::string, json> rows;
  for (const json& part : p["partitions"]) {
    rows[part["key"]] = part;
  }
  ASSERT_EQ(rows.size(), 3u) << p["partitions"].dump();
  EXPECT_EQ(rows["kafka/events/0"]["committed"], 60);  // the router's L
  EXPECT_EQ(rows["kafka/events/0"]["lag_messages"], 9);
  EXPECT_EQ(rows["kafka/events/0 @ /lake/a"]["committed"], 70);
  EXPECT_EQ(rows["kafka/events/0 @ /lake/b"]["committed"], 64);
  EXPECT_EQ(rows["kafka/events/0 @ /lake/b"]["lag_messages"], nullptr);
}

TEST(StatusHistoryTest, SinceReturnsOnlyNewPointsAndRingsStayBounded) {
  Fixture f;
  for (int i = 0; i < 1000; ++i) {
    f.rows->Increment(1);
    f.history.Sample(1000 * (i + 1));
  }
  json all = f.Render();
  EXPECT_EQ(all["history"]["first_tick"], 100);
  EXPECT_EQ(all["history"]["next_tick"], 1000);
  EXPECT_EQ(all["pipelines"][0]["series"]["rows_per_s"].size(), StatusHistory::kPoints);
  EXPECT_EQ(all["pipelines"][0]["partitions"][0]["series"]["lag_messages"].size(),
            StatusHistory::kPoints);

  f.history.Sample(1001000);
  json delta = f.Render(1000);
  EXPECT_EQ(delta["history"]["first_tick"], 1000);
  EXPECT_EQ(delta["history"]["next_tick"], 1001);
  EXPECT_EQ(delta["pipelines"][0]["series"]["rows_per_s"], json::array({0}));
  // A `since` older than the ring gives what the ring holds; a future one gives nothing.
  EXPECT_EQ(f.Render(5)["history"]["first_tick"], 101);
  EXPECT_EQ(f.Render(5000)["pipelines"][0]["series"]["rows_per_s"].size(), 0u);
  json last = json::parse(RenderStatusJson(f.history, {.points = 60}, 99));
  EXPECT_EQ(last["history"]["first_tick"], 1001 - 60);
  EXPECT_EQ(last["pipelines"][0]["series"]["rows_per_s"].size(), 60u);
}

TEST(StatusHistoryTest, StateErrorsAndEventsComeFromTheJournal) {
  Fixture f;
  metrics::Journal* j = f.registry.journal();
  j->SetState({"events"}, metrics::PipelineState::kRunning);
  f.lag->Set(12);
  f.history.Sample(1000);
  EXPECT_EQ(f.Render()["pipelines"][0]["state"], "catching_up");
  f.lag->Set(0);
  f.history.Sample(2000);
  EXPECT_EQ(f.Render()["pipelines"][0]["state"], "running");

  j->RecordCommit({"events"}, {.version = 7,
                               .time_ms = 5,
                               .rows = 10,
                               .files = 1,
                               .bytes = 1234,
                               .commit_seconds = 0.0123456,
                               .positions = {{"kafka/events/0", 3, 12}}});
  f.registry
      .GetCounter("ferry_bad_records_total", "h",
                  {{"pipeline", "events"}, {"action", "skipped"}, {"reason", "malformed"}})
      ->Increment(2);
  j->RecordBadRecord({"events"},
                     {.partition = "kafka/events/0",
                      .position = 4,
                      .action = "skipped",
                      .reason = "malformed",
                      .error = "malformed JSON"},
                     "{\"card\": \"4111");
  j->RecordFence({"events"},
                 {.time_ms = 6, .reason = "Aborted: another writer", .rows_dropped = 3});
  j->RecordDroppedField({"events"}, {.time_ms = 8, .writer = "schema id 3", .field = "loc.alt"});
  f.registry
      .GetCounter("ferry_dropped_fields_total", "h", {{"pipeline", "events"}, {"field", "loc.alt"}})
      ->Increment(5);
  j->RecordMaintenance({"events"}, {.time_ms = 7, .operation = "optimize", .detail = "4 files"});
  j->SetTable({"events"}, {.version = 7, .num_files = 4, .size_bytes = 4096, .small_files = 4});
  j->SetState({"events"}, metrics::PipelineState::kFailed, "InvalidArgument: bad message");

  json p = f.Render()["pipelines"][0];
  EXPECT_EQ(p["state"], "failed");
  EXPECT_EQ(p["error"], "InvalidArgument: bad message");
  ASSERT_EQ(p["commits"].size(), 1u);
  EXPECT_EQ(p["commits"][0]["version"], 7);
  EXPECT_EQ(p["commits"][0]["commit_seconds"], 0.01235);
  EXPECT_EQ(p["commits"][0]["positions"][0],
            json({{"partition", "kafka/events/0"}, {"first", 3}, {"last", 12}}));
  EXPECT_EQ(p["bad_records"]["by_reason"][0]["count"], 2);
  EXPECT_EQ(p["bad_records"]["samples"][0]["position"], 4);
  // Payload bytes only when the operator asked for them.
  EXPECT_FALSE(p["bad_records"]["samples"][0].contains("payload"));
  EXPECT_EQ(p["fences"][0]["rows_dropped"], 3);
  EXPECT_EQ(
      p["dropped_fields"][0],
      json({{"time_ms", 8}, {"writer", "schema id 3"}, {"field", "loc.alt"}, {"messages", 5}}));
  EXPECT_EQ(p["maintenance"][0]["operation"], "optimize");
  EXPECT_EQ(p["maintenance"][0]["outcome"], "ok");
  EXPECT_EQ(p["table"]["version"], 7);
  EXPECT_EQ(p["table"]["small_files"], 4);
  EXPECT_EQ(p["table"]["optimize_ms"], nullptr);
}

// A routed pipeline's tables each have a journal record of their own: /api/status lists them
// under `tables`, each with its own commits, state and figures; the pipeline's state is its most
// urgent table's while it has no record of its own.
TEST(StatusHistoryTest, EachRoutedTableListsItsOwnCommitsAndState) {
  Fixture f;
  metrics::Journal* j = f.registry.journal();
  const metrics::JournalKey a{"events", "/lake/a"};
  const metrics::JournalKey b{"events", "/lake/b"};
  j->SetState(a, metrics::PipelineState::kRunning);
  j->SetState(b, metrics::PipelineState::kRunning);
  j->RecordCommit(a, {.version = 3, .rows = 30, .positions = {{"kafka/events/0", 0, 40}}});
  j->RecordCommit(b, {.version = 9, .rows = 12, .positions = {{"kafka/events/0", 2, 41}}});
  j->RecordCommit(a, {.version = 4, .rows = 5, .positions = {{"kafka/events/0", 42, 50}}});
  j->SetTable(a, {.version = 4, .num_files = 2});
  j->SetTable(b, {.version = 9, .num_files = 7});
  j->RecordMaintenance(b, {.time_ms = 7, .operation = "vacuum", .detail = "/lake/b: 0 files"});
  f.registry
      .GetCounter("ferry_bad_records_total", "h",
                  {{"pipeline", "events"},
                   {"table", "/lake/b"},
                   {"action", "skipped"},
                   {"reason", "malformed"}})
      ->Increment(3);
  f.history.Sample(1000);

  json p = f.Render()["pipelines"][0];
  EXPECT_EQ(p["state"], "running");
  EXPECT_TRUE(p["commits"].empty()) << "no commit of the pipeline's own";
  ASSERT_EQ(p["tables"].size(), 2u) << p["tables"].dump();
  const json& ta = p["tables"][0];
  const json& tb = p["tables"][1];
  EXPECT_EQ(ta["table_uri"], "/lake/a");
  ASSERT_EQ(ta["commits"].size(), 2u);
  EXPECT_EQ(ta["commits"][0]["version"], 4);  // newest first
  EXPECT_EQ(ta["commits"][0]["rows"], 5);
  EXPECT_EQ(ta["commits"][1]["version"], 3);
  EXPECT_EQ(ta["table"]["version"], 4);
  EXPECT_TRUE(ta["maintenance"].empty());
  EXPECT_TRUE(ta["bad_records"]["by_reason"].empty());
  EXPECT_EQ(tb["table_uri"], "/lake/b");
  ASSERT_EQ(tb["commits"].size(), 1u);
  EXPECT_EQ(tb["commits"][0]["version"], 9);
  EXPECT_EQ(tb["commits"][0]["rows"], 12);
  EXPECT_EQ(tb["table"]["version"], 9);
  EXPECT_EQ(tb["table"]["files"], 7);
  EXPECT_EQ(tb["maintenance"][0]["operation"], "vacuum");
  EXPECT_EQ(tb["bad_records"]["by_reason"][0]["count"], 3);

  j->SetState(b, metrics::PipelineState::kRetrying, "EIO writing to /lake/b");
  p = f.Render()["pipelines"][0];
  EXPECT_EQ(p["state"], "retrying");
  EXPECT_EQ(p["error"], "EIO writing to /lake/b");
  EXPECT_EQ(p["tables"][0]["state"], "running");
  EXPECT_EQ(p["tables"][0]["error"], nullptr);
  EXPECT_EQ(p["tables"][1]["state"], "retrying");
  EXPECT_EQ(p["tables"][1]["error"], "EIO writing to /lake/b");
}

// An elastic JetStream pipeline: /api/status lists every partition's lease as the keeper last
// listed the bucket (owner, whether it is this process, lease age, renewal) and, for the
// partitions this process holds, their lag; a free partition has no owner and no age.
TEST(StatusHistoryTest, AnElasticPipelineListsEachPartitionsOwnerLeaseAgeAndLag) {
  metrics::Registry registry;
  registry
      .GetGauge("ferry_lag_messages", "h",
                {{"pipeline", "orders"}, {"partition", "jetstream/ORDERS/orders.0.>"}})
      ->Set(120);
  registry
      .GetGauge("ferry_lag_messages", "h",
                {{"pipeline", "orders"}, {"partition", "jetstream/ORDERS/orders.1.>"}})
      ->Set(7);  // read before the lease moved to process b: not this process's figure now
  StatusHistory history(&registry, {{"orders", "jetstream stream ORDERS", "/lake/orders"}},
                        nullptr);
  registry.journal()->SetLeases({"orders", ""}, {{.partition = "jetstream/ORDERS/orders.0.>",
                                                  .owner = "host-a-1",
                                                  .mine = true,
                                                  .taken_unix_ms = 40000,
                                                  .renewed_unix_ms = 95000},
                                                 {.partition = "jetstream/ORDERS/orders.1.>",
                                                  .owner = "host-b-2",
                                                  .taken_unix_ms = 90000,
                                                  .renewed_unix_ms = 96000},
                                                 {.partition = "jetstream/ORDERS/orders.2.>"}});
  history.Sample(1000);

  json s = json::parse(RenderStatusJson(history, {}, 100000));
  const json& p = s["pipelines"][0];
  ASSERT_EQ(p["leases"].size(), 3u) << p["leases"].dump();
  const json& mine = p["leases"][0];
  EXPECT_EQ(mine["partition"], "jetstream/ORDERS/orders.0.>");
  EXPECT_EQ(mine["owner"], "host-a-1");
  EXPECT_EQ(mine["mine"], true);
  EXPECT_EQ(mine["lease_age_ms"], 60000);
  EXPECT_EQ(mine["renewed_ms"], 95000);
  EXPECT_EQ(mine["lag_messages"], 120);
  EXPECT_TRUE(mine["listed_ms"].is_number_integer());
  const json& other = p["leases"][1];
  EXPECT_EQ(other["owner"], "host-b-2");
  EXPECT_EQ(other["mine"], false);
  EXPECT_EQ(other["lease_age_ms"], 10000);
  EXPECT_EQ(other["lag_messages"], nullptr) << "another process's lag is on its own page";
  const json& free = p["leases"][2];
  EXPECT_EQ(free["owner"], nullptr);
  EXPECT_EQ(free["mine"], false);
  EXPECT_EQ(free["lease_age_ms"], nullptr);
  EXPECT_EQ(free["renewed_ms"], nullptr);
  EXPECT_EQ(free["lag_messages"], nullptr);

  // A pipeline that is not elastic lists none.
  Fixture f;
  f.history.Sample(1000);
  EXPECT_EQ(f.Render()["pipelines"][0]["leases"], json::array());
}

TEST(TableProbeTest, FindsTheLastOptimizeAndTheCheckpointTime) {
  auto store = std::make_shared<storage::InMemoryStore>();
  Result<std::unique_ptr<delta::Table>> table = delta::Table::Open(store, "t");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  Result<columnar::Schema> schema = columnar::ParseDdlSchema("id BIGINT");
  ASSERT_TRUE(schema.ok());
  Result<delta::Snapshot> snap =
      (*table)->Create({.schema = std::make_shared<columnar::Schema>(*schema)});
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  auto commit = [&](const std::string& operation) {
    delta::Transaction txn(**table, *snap);
    txn.SetOperation(operation, {});
    Result<delta::CommitResult> r = txn.Commit();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    snap = r->snapshot;
  };
  commit("STREAMING UPDATE");  // 1
  commit("OPTIMIZE");          // 2
  commit("STREAMING UPDATE");  // 3

  TableProbe probe([&](const std::string& path) { return delta::Table::Open(store, path); });
  TableProbe::Times t = probe.Update("t", 3, 3);
  EXPECT_EQ(t.error, "");
  EXPECT_EQ(t.optimize_version, 2);
  EXPECT_GT(t.optimize_ms.value_or(0), 0);
  EXPECT_EQ(t.checkpoint_version, 3);
  EXPECT_GT(t.checkpoint_ms.value_or(0), 0);

  commit("OPTIMIZE");  // 4
  commit("STREAMING UPDATE");
  t = probe.Update("t", 5, 3);
  EXPECT_EQ(t.optimize_version, 4);

  TableProbe missing([](const std::string& path) -> Result<std::unique_ptr<delta::Table>> {
    return NotFound("{}: no table", path);
  });
  EXPECT_NE(missing.Update("/nowhere", 1, {}).error.find("/nowhere"), std::string::npos);
}

TEST(StatusAssetsTest, ThePageAndItsFilesAreEmbedded) {
  std::map<std::string, StatusAsset> by_path;
  for (const StatusAsset& a : StatusAssets()) {
    by_path[std::string(a.path)] = a;
  }
  ASSERT_TRUE(by_path.count("/index.html"));
  EXPECT_EQ(by_path["/index.html"].content_type, "text/html; charset=utf-8");
  EXPECT_NE(by_path["/index.html"].body.find("status.js"), std::string::npos);
  ASSERT_TRUE(by_path.count("/status.js"));
  ASSERT_TRUE(by_path.count("/status.css"));
  ASSERT_TRUE(by_path.count("/status_api.schema.json"));
  EXPECT_TRUE(json::accept(by_path["/status_api.schema.json"].body));
  // Nothing is loaded from elsewhere: no absolute URL in the page's files.
  for (const auto& [path, asset] : by_path) {
    if (path != "/status_api.schema.json") {
      EXPECT_EQ(asset.body.find("http://"), std::string::npos) << path;
      EXPECT_EQ(asset.body.find("https://"), std::string::npos) << path;
      EXPECT_EQ(asset.body.find("//cdn"), std::string::npos) << path;
    }
  }
}

}  // namespace
}  // namespace ferry::app
