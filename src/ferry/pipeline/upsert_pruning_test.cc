// Partition pruning of the upsert key index: a table partitioned by a key column, or by a column
// derived from the key (KeyDerivedPartitions), reads at start no data file and for a batch only
// the files of the partitions its keys live in; on copy-on-write tables and on tables with
// deletion vectors (upsert_commit_fixture.h).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/delta/table.h"
#include "ferry/metrics/metrics.h"
#include "ferry/pipeline/key_index.h"
#include "ferry/pipeline/pipeline_metrics.h"
#include "ferry/pipeline/upsert_commit.h"
#include "ferry/testing/upsert_commit_fixture.h"

namespace ferry::pipeline::upsert_test {
namespace {

class UpsertPruningTest : public UpsertCommitTest {
 protected:
  // The table "buckets" of (id, v, seq, bucket), partitioned by bucket.
  void CreateBucketTable() {
    schema_ = UpsertSchema("id BIGINT NOT NULL, v STRING, seq BIGINT, bucket BIGINT");
    delta::StringMap config;
    if (GetParam()) {
      config["delta.enableDeletionVectors"] = "true";
    }
    table_ = std::move(*delta::Table::Open(store_, "buckets"));
    auto created = table_->Create(
        {.schema = schema_, .partition_columns = {"bucket"}, .configuration = config});
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    snapshot_ = *created;
  }

  // An UpsertCommit keyed by id whose pipeline derives bucket by `expr` in `time_zone`, as
  // Pipeline makes it (KeyDerivedPartitions, KeyPartitionDefinitions), its index persisted as
  // pipeline `index_name` after every commit ("": not persisted), loaded through `table`
  // (default: the fixture's).
  std::unique_ptr<UpsertCommit> NewBucketed(const char* index_name, const char* expr,
                                            const char* time_zone, KeyIndexMetrics metrics = {},
                                            const delta::Table* table = nullptr) {
    const std::vector<DerivedColumnSpec> derived = {{.name = "bucket", .expr = expr}};
    const std::vector<std::string> key_partitions =
        KeyDerivedPartitions(*schema_, {"bucket"}, {"id"}, derived, time_zone);
    EXPECT_EQ(key_partitions, std::vector<std::string>{"bucket"});
    auto upsert = UpsertCommit::Create(
        *schema_,
        {.key = {"id"},
         .index_name = index_name,
         .persist_every = 1,
         .metrics = metrics,
         .key_partitions = key_partitions,
         .key_partition_definitions = KeyPartitionDefinitions(key_partitions, derived, time_zone)});
    EXPECT_TRUE(upsert.ok()) << upsert.status().ToString();
    Status st = (*upsert)->Load(table != nullptr ? *table : *table_, snapshot_);
    EXPECT_TRUE(st.ok()) << st.ToString();
    (*upsert)->index().WaitForWrite();
    return std::move(*upsert);
  }

  // "+id:v" upserts, "-id" deletes; bucket = id % `modulo`, as the pipeline's derived column
  // computes it.
  columnar::RecordBatch BucketRows(const std::vector<std::string>& changes, int64_t modulo,
                                   std::vector<ChangeOp>* ops) {
    std::vector<std::string> json;
    ops->clear();
    for (const std::string& c : changes) {
      const size_t colon = c.find(':');
      const int64_t id = std::stoll(c.substr(1, colon == std::string::npos ? colon : colon - 1));
      json.push_back(c[0] == '+' ? fmt::format(R"({{"id": {}, "v": "{}", "bucket": {}}})", id,
                                               c.substr(colon + 1), id % modulo)
                                 : fmt::format(R"({{"id": {}, "bucket": {}}})", id, id % modulo));
      ops->push_back(c[0] == '+' ? ChangeOp::kUpsert : ChangeOp::kDelete);
    }
    return UpsertRows(schema_, json);
  }
};

TEST_P(UpsertPruningTest, AKeyThatDeterminesThePartitionReadsOnlyTheTouchedPartitions) {
  schema_ = UpsertSchema("region STRING NOT NULL, id BIGINT NOT NULL, v STRING, seq BIGINT");
  delta::StringMap config;
  if (GetParam()) {
    config["delta.enableDeletionVectors"] = "true";
  }
  table_ = std::move(*delta::Table::Open(store_, "parts"));
  auto created =
      table_->Create({.schema = schema_, .partition_columns = {"region"}, .configuration = config});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  snapshot_ = *created;
  auto make = [&](const delta::Table& table) {
    auto upsert = UpsertCommit::Create(*schema_, {.key = {"region", "id"}});
    EXPECT_TRUE(upsert.ok()) << upsert.status().ToString();
    EXPECT_TRUE((*upsert)->Load(table, snapshot_).ok());
    EXPECT_TRUE((*upsert)->index().prunes());
    return std::move(*upsert);
  };
  // "a:1:x" upserts (region a, id 1) with value x.
  auto batch = [&](const std::vector<std::string>& changes) {
    std::vector<std::string> json;
    for (const std::string& c : changes) {
      json.push_back(fmt::format(R"({{"region": "{}", "id": {}, "v": "{}"}})", c.substr(0, 1),
                                 c.substr(2, c.rfind(':') - 2), c.substr(c.rfind(':') + 1)));
    }
    return UpsertRows(schema_, json);
  };
  auto upserts = [](size_t n) { return std::vector<ChangeOp>(n, ChangeOp::kUpsert); };
  auto first = make(*table_);
  auto rows = batch({"a:1:a1", "a:2:a2", "b:3:b3", "b:4:b4", "c:5:c5", "c:6:c6"});
  ASSERT_TRUE(Commit(first.get(), rows, upserts(6)).ok());
  rows = batch({"a:2:A2", "b:3:B3", "c:7:c7"});
  ASSERT_TRUE(Commit(first.get(), rows, upserts(3)).ok());

  // A new process: no data file read at start, the files of partition a only for a batch of a.
  auto counting = std::make_shared<CountingStore>(store_);
  auto counted = std::move(*delta::Table::Open(counting, "parts"));
  auto restarted = make(*counted);
  EXPECT_EQ(counting->data_files_read, 0);
  rows = batch({"a:1:A1", "a:2:AA2", "a:8:a8"});
  auto plan = Commit(restarted.get(), rows, upserts(3), counted.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->replaced, 2);  // a/1 and a/2 were found
  EXPECT_GE(counting->data_files_read, 1);
  for (const std::string& key : counting->opened) {
    EXPECT_NE(key.find("/region=a/"), std::string::npos) << key << " is not of partition a";
  }
  // A batch of b later reads b's files then, and finds its keys.
  rows = batch({"b:4:B4"});
  plan = Commit(restarted.get(), rows, upserts(1), counted.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->replaced, 1);
  std::map<int64_t, std::string> want = {{1, "A1"}, {2, "AA2"}, {3, "B3"}, {4, "B4"},
                                         {5, "c5"}, {6, "c6"},  {7, "c7"}, {8, "a8"}};
  EXPECT_EQ(State(), want);
}

TEST(KeyDerivedPartitionsTest, OnlyExpressionsOfTheKeyAloneWithoutAClock) {
  auto schema = UpsertSchema("id BIGINT NOT NULL, v STRING, seq BIGINT, bucket BIGINT, day DATE");
  auto derived = [](const char* expr) {
    return std::vector<DerivedColumnSpec>{{.name = "bucket", .expr = expr}};
  };
  EXPECT_EQ(KeyDerivedPartitions(*schema, {"bucket"}, {"id"}, derived("id % 4"), "UTC"),
            std::vector<std::string>{"bucket"});
  // Another column, a clock, a partition column that is neither: no pruning.
  EXPECT_TRUE(KeyDerivedPartitions(*schema, {"bucket"}, {"id"}, derived("seq % 4"), "UTC").empty());
  EXPECT_TRUE(
      KeyDerivedPartitions(*schema, {"bucket"}, {"id"}, derived("id + unix_timestamp()"), "UTC")
          .empty());
  EXPECT_TRUE(
      KeyDerivedPartitions(*schema, {"bucket", "day"}, {"id"}, derived("id % 4"), "UTC").empty());
  // A partition column that is a key column needs nothing derived.
  EXPECT_TRUE(KeyDerivedPartitions(*schema, {"id"}, {"id"}, derived("id % 4"), "UTC").empty());
}

// A partition column derived from the key (bucket = id % 3): the index keys by (id, bucket),
// which the id determines, and reads only the partitions a batch touches.
TEST_P(UpsertPruningTest, APartitionDerivedFromTheKeyReadsOnlyTheTouchedPartitions) {
  CreateBucketTable();
  auto make = [&](const delta::Table& table) {
    auto upsert = NewBucketed("", "id % 3", "UTC", {}, &table);
    EXPECT_TRUE(upsert->index().prunes());
    return upsert;
  };
  std::vector<ChangeOp> ops;
  auto first = make(*table_);
  auto rows = BucketRows({"+1:a", "+2:b", "+3:c", "+4:d", "+5:e", "+6:f"}, 3, &ops);
  ASSERT_TRUE(Commit(first.get(), rows, ops).ok());

  // A new process: no data file read at start, then only bucket 1's files (ids 1, 4, 7).
  auto counting = std::make_shared<CountingStore>(store_);
  auto counted = std::move(*delta::Table::Open(counting, "buckets"));
  auto restarted = make(*counted);
  EXPECT_EQ(counting->data_files_read, 0);
  rows = BucketRows({"+1:A", "-4", "+7:g"}, 3, &ops);
  auto plan = Commit(restarted.get(), rows, ops, counted.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->replaced, 2);  // 1 and 4 were found
  EXPECT_GE(counting->data_files_read, 1);
  for (const std::string& key : counting->opened) {
    EXPECT_NE(key.find("/bucket=1/"), std::string::npos) << key << " is not of bucket 1";
  }
  rows = BucketRows({"+2:B", "-6"}, 3, &ops);
  plan = Commit(restarted.get(), rows, ops, counted.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->replaced, 2);
  std::map<int64_t, std::string> want = {{1, "A"}, {2, "B"}, {3, "c"}, {5, "e"}, {7, "g"}};
  EXPECT_EQ(State(), want);
}

// The persisted index records how each partition column derived from the key is computed: a
// start under another expression or time zone rebuilds the index instead of using the file,
// whose keys hold the values of the old definition.
TEST_P(UpsertPruningTest, AnotherPartitionExpressionThanTheIndexedRowsIsRefused) {
  CreateBucketTable();
  // Which way each start loaded the index, by its load counters (a registry per start, alive
  // as long as the starts).
  std::vector<std::unique_ptr<metrics::Registry>> registries;
  auto start = [&](const char* expr, const char* time_zone) {
    registries.push_back(std::make_unique<metrics::Registry>());
    const KeyIndexMetrics series = KeyIndexSeries(registries.back().get(), "p");
    auto upsert = NewBucketed("p", expr, time_zone, series);
    EXPECT_EQ(series.loaded->value() + series.rebuilt->value(), 1);
    EXPECT_EQ(series.rebuilt->value() == 1, upsert->index().last_load().rebuilt);
    return upsert;
  };
  // A start under `expr` that must fail: its Load's status.
  auto refused = [&](const char* expr, const char* time_zone) {
    const std::vector<DerivedColumnSpec> derived = {{.name = "bucket", .expr = expr}};
    const std::vector<std::string> key_partitions =
        KeyDerivedPartitions(*schema_, {"bucket"}, {"id"}, derived, time_zone);
    auto upsert = UpsertCommit::Create(
        *schema_,
        {.key = {"id"},
         .index_name = "p",
         .key_partitions = key_partitions,
         .key_partition_definitions = KeyPartitionDefinitions(key_partitions, derived, time_zone)});
    EXPECT_TRUE(upsert.ok()) << upsert.status().ToString();
    return (*upsert)->Load(*table_, snapshot_);
  };
  auto first = start("id % 3", "UTC");
  EXPECT_TRUE(first->index().last_load().rebuilt);  // no file yet
  std::vector<ChangeOp> ops;
  auto rows = BucketRows({"+1:a", "+2:b", "+3:c", "+4:d"}, 3, &ops);
  ASSERT_TRUE(Commit(first.get(), rows, ops).ok());
  EXPECT_FALSE(start("id % 3", "UTC")->index().last_load().rebuilt);

  // Rows 1..4 lie in buckets id % 3: under id % 4 an upsert of id 3 would look in bucket 3 and
  // insert a second row, so the start is refused, naming both definitions and the way out.
  Status other = refused("id % 4", "UTC");
  EXPECT_EQ(other.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other.message().find("(bucket = id % 3 (time zone UTC); now bucket = id % 4 (time "
                                 "zone UTC))"),
            std::string::npos)
      << other.ToString();
  EXPECT_NE(other.message().find("keys.idx"), std::string::npos) << other.ToString();
  // The time zone is part of the definition.
  EXPECT_EQ(refused("id % 3", "+01:00").code(), StatusCode::kInvalidArgument);
  // The refusal changed nothing: the old definition still loads the file.
  EXPECT_FALSE(start("id % 3", "UTC")->index().last_load().rebuilt);
  // Deleting the file (the user rewrote the column) lets the new definition rebuild and keep it.
  ASSERT_TRUE(store_->Delete(KeyIndex::IndexFileKey(*table_, "p")).ok());
  EXPECT_TRUE(start("id % 4", "UTC")->index().last_load().rebuilt);
  EXPECT_FALSE(start("id % 4", "UTC")->index().last_load().rebuilt);
  // A partition derived from the key by no known expression is refused.
  auto unknown = UpsertCommit::Create(*schema_, {.key = {"id"}, .key_partitions = {"bucket"}});
  EXPECT_EQ(unknown.status().code(), StatusCode::kInternal);
}

INSTANTIATE_TEST_SUITE_P(CopyOnWriteAndDeletionVectors, UpsertPruningTest, ::testing::Bool(),
                         UpsertStoreKind);

}  // namespace
}  // namespace ferry::pipeline::upsert_test
