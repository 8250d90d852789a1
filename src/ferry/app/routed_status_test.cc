#include "ferry/app/routed_status.h"

#include <gtest/gtest.h>

#include <memory>

#include "ferry/delta/transaction.h"
#include "ferry/pipeline/router.h"
#include "ferry/pipeline/table_setup.h"
#include "ferry/storage/memory_store.h"

namespace ferry::app {
namespace {

TEST(RoutedStatusTest, StaticTablesAreTheRoutesAndTheFallback) {
  config::PipelineConfig templated;
  templated.table = "/lake/t_{field:kind}";
  templated.table_is_template = true;
  templated.table_name_rules.fallback = "/lake/t_unknown";
  EXPECT_EQ(StaticRoutedTables(templated), std::vector<std::string>{"/lake/t_unknown"});

  config::PipelineConfig routes;
  routes.routes.push_back({.name = "paid", .where = "kind = 'paid'", .table = "/lake/paid"});
  routes.routes.push_back({.name = "default", .table = "/lake/other"});
  EXPECT_EQ(StaticRoutedTables(routes), (std::vector<std::string>{"/lake/paid", "/lake/other"}));
}

TEST(RoutedStatusTest, TableListJoinsStaticAndRecordedTablesOnce) {
  EXPECT_EQ(RoutedTableList({"/lake/t_unknown", "/lake/b"}, {"/lake/b", "/lake/a"}),
            (std::vector<std::string>{"/lake/a", "/lake/b", "/lake/t_unknown"}));
}

// The positions table's records, committed and read back the way the router writes and reads
// them.
TEST(RoutedStatusTest, RecordedTablesAreThePipelinesTableTxns) {
  auto store = std::make_shared<storage::InMemoryStore>();
  Result<pipeline::OpenedTable> opened =
      pipeline::OpenOrCreateTable(store, "_routing", {.schema_ddl = "table STRING"});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  delta::Transaction txn(*opened->table, opened->snapshot);
  txn.SetPosition(pipeline::RoutingLedger::TableAppId("events", "s3://lake/t_paid"), 1700000000000);
  txn.SetPosition(pipeline::RoutingLedger::TableAppId("events", "/lake/t_new"), 1700000000001);
  // Another pipeline's record, a partition's resume position, an empty name: not tables.
  txn.SetPosition(pipeline::RoutingLedger::TableAppId("other", "/lake/x"), 1);
  txn.SetPosition(pipeline::RoutingLedger::ResumeAppId("events", "kafka/events/0"), 41);
  txn.SetPosition("events/table/", 2);
  ASSERT_TRUE(txn.Commit().ok());
  Result<delta::Snapshot> read = opened->table->LoadSnapshot();
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(pipeline::RoutingLedger::RecordedTables(*read, "events"),
            (std::vector<std::string>{"/lake/t_new", "s3://lake/t_paid"}));
  EXPECT_EQ(pipeline::RoutingLedger::RecordedTables(*read, "other"),
            std::vector<std::string>{"/lake/x"});
  EXPECT_TRUE(pipeline::RoutingLedger::RecordedTables(*read, "nobody").empty());
}

RoutedStatusInput TwoTablesTwoPartitions() {
  RoutedStatusInput in{.id = "events"};
  // Partition 0: L = 90 in the positions table, 80 in table a: resume after 90.
  // Partition 1: L = 30 in table b only.
  in.positions_txns = {{"events/kafka/events/0/resume", 90},
                       {"events/table//lake/a", 1},
                       {"events/table//lake/b", 2}};
  in.tables["/lake/a"] = std::map<std::string, int64_t>{{"events/kafka/events/0", 85},
                                                        {"events/kafka/events/0/resume", 80},
                                                        {"events/kafka/events/1", 20},
                                                        {"other/kafka/events/0", 999}};
  in.tables["/lake/b"] = std::map<std::string, int64_t>{{"events/kafka/events/0", 95},
                                                        {"events/kafka/events/1", 40},
                                                        {"events/kafka/events/1/resume", 30}};
  in.tables["/lake/fallback"] = std::nullopt;  // no table there yet
  in.heads = {{.key = "kafka/events/0", .last_position = 120, .first_position = 0},
              {.key = "kafka/events/1", .last_position = 40, .first_position = 0}};
  return in;
}

TEST(RoutedStatusTest, RowsPerTableAndPartitionWithResumeAndLag) {
  std::vector<RoutedStatusRow> rows = RoutedStatusRows(TwoTablesTwoPartitions());
  ASSERT_EQ(rows.size(), 6u);
  auto expect = [](const RoutedStatusRow& r, const std::string& table, const std::string& key,
                   std::optional<int64_t> position, std::optional<int64_t> resume, int64_t head,
                   int64_t lag) {
    SCOPED_TRACE(table + " " + key);
    EXPECT_EQ(r.table, table);
    EXPECT_EQ(r.partition, key);
    EXPECT_EQ(r.app_id, "events/" + key);
    EXPECT_EQ(r.position, position);
    EXPECT_EQ(r.resume, resume);
    EXPECT_EQ(r.head, head);
    EXPECT_EQ(r.lag, lag);
  };
  // Lag: head - max(position, resume).
  expect(rows[0], "/lake/a", "kafka/events/0", 85, 90, 120, 30);
  expect(rows[1], "/lake/a", "kafka/events/1", 20, 30, 40, 10);
  expect(rows[2], "/lake/b", "kafka/events/0", 95, 90, 120, 25);
  expect(rows[3], "/lake/b", "kafka/events/1", 40, 30, 40, 0);
  // A table with no position: one row per partition, its lag from the resume position.
  expect(rows[4], "/lake/fallback", "kafka/events/0", std::nullopt, 90, 120, 30);
  expect(rows[5], "/lake/fallback", "kafka/events/1", std::nullopt, 30, 40, 10);
}

TEST(RoutedStatusTest, WithoutBrokerOrResumeTheLagIsUnknownOrEverything) {
  RoutedStatusInput in = TwoTablesTwoPartitions();
  in.heads.clear();
  for (const RoutedStatusRow& r : RoutedStatusRows(in)) {
    EXPECT_FALSE(r.head) << r.table << " " << r.partition;
    EXPECT_FALSE(r.lag) << r.table << " " << r.partition;
  }
  // A new pipeline: no table, no positions; every message the broker holds is lag.
  RoutedStatusInput fresh{.id = "events"};
  fresh.tables["/lake/fallback"] = std::nullopt;
  fresh.heads = {{.key = "kafka/events/0", .last_position = 9, .first_position = 5}};
  std::vector<RoutedStatusRow> rows = RoutedStatusRows(fresh);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].position);
  EXPECT_FALSE(rows[0].resume);
  EXPECT_EQ(rows[0].lag, 5);
}

}  // namespace
}  // namespace ferry::app
