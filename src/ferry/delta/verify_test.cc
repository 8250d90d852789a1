// verify: tables built with TableWriter + Transaction, checked for duplicates, missing ids,
// positions that disagree with the data, and unreadable files.
#include "ferry/delta/verify.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ferry/columnar/column.h"
#include "ferry/delta/deletion_vector.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/memory_store.h"

namespace ferry::delta {
namespace {

using columnar::DataType;
using columnar::Field;

struct Row {
  int64_t id;
  int32_t partition;
  int64_t offset;
};

columnar::SchemaPtr KafkaSchema() {
  return std::make_shared<const columnar::Schema>(std::vector<Field>{
      {"id", DataType::Int64(), true, {}},
      {"_topic", DataType::String(), true, {}},
      {"_partition", DataType::Int32(), true, {}},
      {"_offset", DataType::Int64(), true, {}},
  });
}

columnar::RecordBatch KafkaBatch(const std::vector<Row>& rows, const std::string& topic = "t") {
  auto batch = columnar::RecordBatch::MakeEmpty(KafkaSchema());
  for (const Row& r : rows) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(r.id);
    batch.mutable_column(1)->As<columnar::BinaryColumn>()->Append(topic);
    batch.mutable_column(2)->As<columnar::Int32Column>()->Append(r.partition);
    batch.mutable_column(3)->As<columnar::Int64Column>()->Append(r.offset);
  }
  return batch;
}

// Rows id = begin..end-1 spread over partitions 0 and 1; offset = id / 2 within each.
std::vector<Row> Rows(int64_t begin, int64_t end) {
  std::vector<Row> rows;
  for (int64_t id = begin; id < end; ++id) {
    rows.push_back({id, static_cast<int32_t>(id % 2), id / 2});
  }
  return rows;
}

class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_shared<storage::InMemoryStore>();
    table_ = *Table::Open(store_, "t");
  }

  void Create(columnar::SchemaPtr schema, std::vector<std::string> partition_columns = {}) {
    TableSpec spec;
    spec.schema = std::move(schema);
    spec.partition_columns = std::move(partition_columns);
    auto snap = table_->Create(spec);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
    snapshot_ = *snap;
  }

  void Append(const columnar::RecordBatch& batch,
              const std::map<std::string, int64_t>& positions = {}) {
    auto writer = TableWriter::Create(*table_, snapshot_);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->Write(batch).ok());
    auto adds = (*writer)->Finish();
    ASSERT_TRUE(adds.ok()) << adds.status().ToString();
    Transaction txn(*table_, snapshot_);
    txn.AddFiles(std::move(*adds));
    for (const auto& [app_id, version] : positions) {
      txn.SetPosition(app_id, version);
    }
    auto result = txn.Commit();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    snapshot_ = result->snapshot;
  }

  VerifyReport Verify(const VerifyOptions& options) {
    auto snap = table_->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    auto report = VerifyTable(*table_, *snap, options);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? *report : VerifyReport();
  }

  // Three batches of ids 0..29 with the positions a pipeline "p" would commit.
  void CleanKafkaTable() {
    Create(KafkaSchema());
    for (int64_t begin = 0; begin < 30; begin += 10) {
      const int64_t last = (begin + 9) / 2;  // both partitions end at offset (begin+9)/2
      Append(KafkaBatch(Rows(begin, begin + 10)), {{"p/kafka/t/0", last}, {"p/kafka/t/1", last}});
    }
  }

  std::shared_ptr<storage::InMemoryStore> store_;
  std::unique_ptr<Table> table_;
  Snapshot snapshot_;
};

TEST_F(VerifyTest, CleanTableIsOk) {
  CleanKafkaTable();
  VerifyReport report =
      Verify({.id_column = "id", .expect = 30, .range = std::pair<int64_t, int64_t>(0, 29)});
  EXPECT_EQ(report.files, 3);
  EXPECT_EQ(report.rows, 30);
  EXPECT_EQ(report.distinct, 30);
  EXPECT_EQ(report.duplicates, 0);
  EXPECT_EQ(report.missing, 0);
  EXPECT_EQ(report.out_of_range, 0);
  EXPECT_EQ(report.expect_ok, true);
  ASSERT_TRUE(report.positions_checked);
  ASSERT_EQ(report.positions.size(), 2u);
  for (const PositionCheck& check : report.positions) {
    EXPECT_TRUE(check.ok()) << check.app_id;
    EXPECT_EQ(check.data_max, 14);
  }
  EXPECT_TRUE(report.ok());
}

TEST_F(VerifyTest, ExpectMismatchIsNotClean) {
  CleanKafkaTable();
  VerifyReport report = Verify({.id_column = "id", .expect = 31});
  EXPECT_EQ(report.expect_ok, false);
  EXPECT_FALSE(report.ok());
}

TEST_F(VerifyTest, DuplicatesAreListedWithTheirFiles) {
  CleanKafkaTable();
  // A batch replayed without its txn: ids 20..24 land twice.
  Append(KafkaBatch({{20, 0, 10}, {21, 1, 10}, {22, 0, 11}, {23, 1, 11}, {24, 0, 12}}));
  VerifyReport report = Verify({.id_column = "id", .max_listed = 3});
  EXPECT_EQ(report.rows, 35);
  EXPECT_EQ(report.distinct, 30);
  EXPECT_EQ(report.duplicates, 5);
  EXPECT_EQ(report.duplicate_ids, 5);
  ASSERT_EQ(report.duplicates_listed.size(), 3u);
  for (const DuplicateId& dup : report.duplicates_listed) {
    EXPECT_EQ(dup.count, 2);
    ASSERT_EQ(dup.files.size(), 2u);
    EXPECT_NE(dup.files[0], dup.files[1]);
  }
  EXPECT_FALSE(report.ok());
}

TEST_F(VerifyTest, MissingIdsOfTheRange) {
  CleanKafkaTable();
  VerifyReport report =
      Verify({.id_column = "id", .range = std::pair<int64_t, int64_t>(-2, 33), .max_listed = 4});
  EXPECT_EQ(report.missing, 6);  // -2, -1, 30, 31, 32, 33
  EXPECT_EQ(report.missing_listed, (std::vector<int64_t>{-2, -1, 30, 31}));
  EXPECT_FALSE(report.ok());

  report = Verify({.id_column = "id", .range = std::pair<int64_t, int64_t>(5, 9)});
  EXPECT_EQ(report.missing, 0);
  EXPECT_EQ(report.out_of_range, 25);
  EXPECT_TRUE(report.ok());
}

TEST_F(VerifyTest, TxnThatDisagreesWithTheDataIsReported) {
  Create(KafkaSchema());
  Append(KafkaBatch(Rows(0, 10)), {{"p/kafka/t/0", 4}, {"p/kafka/t/1", 7}});
  // Partition 2 has data but no txn.
  Append(KafkaBatch({{10, 2, 0}}));
  VerifyReport report = Verify({.id_column = "id"});
  EXPECT_EQ(report.duplicates, 0);
  ASSERT_EQ(report.positions.size(), 3u);
  EXPECT_TRUE(report.positions[0].ok());
  EXPECT_EQ(report.positions[1].app_id, "p/kafka/t/1");
  EXPECT_EQ(report.positions[1].txn_version, 7);
  EXPECT_EQ(report.positions[1].data_max, 4);
  EXPECT_FALSE(report.positions[1].ok());
  EXPECT_EQ(report.positions[2].app_id, "");
  EXPECT_EQ(report.positions[2].source, "kafka/t/2");
  EXPECT_EQ(report.positions[2].data_max, 0);
  EXPECT_EQ(report.position_mismatches(), 2);
  EXPECT_FALSE(report.ok());
}

TEST_F(VerifyTest, TopicColumnSeparatesTopics) {
  Create(KafkaSchema());
  Append(KafkaBatch({{1, 0, 5}}, "a"), {{"p/kafka/a/0", 5}});
  Append(KafkaBatch({{2, 0, 9}}, "b"), {{"p/kafka/b/0", 9}});
  VerifyReport report = Verify({.id_column = "id"});
  ASSERT_EQ(report.positions.size(), 2u);
  EXPECT_TRUE(report.ok());
  // Renamed position columns that do not exist: no position check at all.
  report = Verify({.id_column = "id", .partition_column = "part", .offset_column = "off"});
  EXPECT_FALSE(report.positions_checked);
  EXPECT_TRUE(report.positions.empty());
}

TEST_F(VerifyTest, PartitionedTableReadsPartitionColumnsFromTheLog) {
  Create(KafkaSchema(), {"_partition"});
  Append(KafkaBatch(Rows(0, 20)), {{"p/kafka/t/0", 9}, {"p/kafka/t/1", 9}});
  Append(KafkaBatch(Rows(20, 40)), {{"p/kafka/t/0", 19}, {"p/kafka/t/1", 19}});
  VerifyReport report =
      Verify({.id_column = "id", .expect = 40, .range = std::pair<int64_t, int64_t>(0, 39)});
  EXPECT_EQ(report.files, 4);
  EXPECT_EQ(report.rows, 40);
  ASSERT_EQ(report.positions.size(), 2u);
  EXPECT_EQ(report.positions[0].data_max, 19);
  EXPECT_EQ(report.positions[1].data_max, 19);
  EXPECT_TRUE(report.ok());
}

TEST_F(VerifyTest, StringIdsAndJetStreamPositions) {
  auto schema = std::make_shared<const columnar::Schema>(std::vector<Field>{
      {"msg_id", DataType::String(), true, {}},
      {"_subject", DataType::String(), true, {}},
      {"_sequence", DataType::Int64(), true, {}},
  });
  Create(schema);
  auto batch = columnar::RecordBatch::MakeEmpty(schema);
  const std::vector<std::pair<std::string, int64_t>> messages = {
      {"orders.eu", 1}, {"orders.us", 2}, {"audit.x.y", 3}, {"orders.eu", 4}, {"audit.z", 5}};
  for (size_t i = 0; i < messages.size(); ++i) {
    batch.mutable_column(0)->As<columnar::BinaryColumn>()->Append(std::to_string(i + 1));
    batch.mutable_column(1)->As<columnar::BinaryColumn>()->Append(messages[i].first);
    batch.mutable_column(2)->As<columnar::Int64Column>()->Append(messages[i].second);
  }
  Append(batch, {{"p/jetstream/S/orders.*", 4}, {"p/jetstream/S/audit.>", 3}});
  VerifyReport report =
      Verify({.id_column = "msg_id", .expect = 5, .range = std::pair<int64_t, int64_t>(1, 5)});
  EXPECT_EQ(report.distinct, 5);
  EXPECT_EQ(report.missing, 0);
  ASSERT_EQ(report.positions.size(), 2u);
  // txns are ordered by appId: audit.> first.
  EXPECT_EQ(report.positions[0].source, "jetstream/S/audit.>");
  EXPECT_EQ(report.positions[0].data_max, 5);
  EXPECT_FALSE(report.positions[0].ok());
  EXPECT_EQ(report.positions[1].data_max, 4);
  EXPECT_TRUE(report.positions[1].ok());
  EXPECT_FALSE(report.ok());
}

TEST_F(VerifyTest, MissingDataFileIsAClearError) {
  CleanKafkaTable();
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok());
  const std::string path = snap->files().begin()->second.path;
  ASSERT_TRUE(store_->Delete(table_->Key(path)).ok());
  auto report = VerifyTable(*table_, *snap, {.id_column = "id"});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(report.status().message().find(path), std::string::npos) << report.status().ToString();
  EXPECT_NE(report.status().message().find("memory://t"), std::string::npos)
      << report.status().ToString();
}

TEST_F(VerifyTest, StatsThatDisagreeWithTheFileAreReported) {
  Create(KafkaSchema());
  auto writer = TableWriter::Create(*table_, snapshot_);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Write(KafkaBatch(Rows(0, 4))).ok());
  auto adds = (*writer)->Finish();
  ASSERT_TRUE(adds.ok());
  (*adds)[0].stats = R"({"numRecords":5})";
  Transaction txn(*table_, snapshot_);
  txn.AddFiles(std::move(*adds));
  ASSERT_TRUE(txn.Commit().ok());
  VerifyReport report = Verify({.id_column = "id"});
  EXPECT_EQ(report.rows, 4);
  ASSERT_EQ(report.stats_mismatches.size(), 1u);
  EXPECT_NE(report.stats_mismatches[0].find("stats.numRecords 5 but the file has 4 rows"),
            std::string::npos)
      << report.stats_mismatches[0];
  EXPECT_FALSE(report.ok());
}

TEST_F(VerifyTest, BadIdColumn) {
  CleanKafkaTable();
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok());
  auto report = VerifyTable(*table_, *snap, {.id_column = "nope"});
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
}

TEST(SubjectMatchesTest, Wildcards) {
  EXPECT_TRUE(SubjectMatches("a.b", "a.b"));
  EXPECT_FALSE(SubjectMatches("a.b", "a.b.c"));
  EXPECT_FALSE(SubjectMatches("a.b.c", "a.b"));
  EXPECT_TRUE(SubjectMatches("a.*", "a.b"));
  EXPECT_FALSE(SubjectMatches("a.*", "a.b.c"));
  EXPECT_TRUE(SubjectMatches("a.>", "a.b.c"));
  EXPECT_FALSE(SubjectMatches("a.>", "a"));
  EXPECT_TRUE(SubjectMatches(">", "x"));
  EXPECT_TRUE(SubjectMatches("*.b.>", "a.b.c.d"));
  EXPECT_FALSE(SubjectMatches("*.b.>", "a.c.c.d"));
}

TEST(ParseSourceAppIdTest, SplitsFromTheRight) {
  auto kafka = ParseSourceAppId("team/pipe/kafka/orders/3");
  ASSERT_TRUE(kafka.has_value());
  EXPECT_EQ(kafka->pipeline, "team/pipe");
  EXPECT_EQ(kafka->kind, "kafka");
  EXPECT_EQ(kafka->name, "orders");
  EXPECT_EQ(kafka->part, "3");
  auto js = ParseSourceAppId("p/jetstream/S/orders.>");
  ASSERT_TRUE(js.has_value());
  EXPECT_EQ(js->part, "orders.>");
  EXPECT_FALSE(ParseSourceAppId("spark-query-id").has_value());
  EXPECT_FALSE(ParseSourceAppId("kafka/orders/3").has_value());
  EXPECT_FALSE(ParseSourceAppId("p/other/orders/3").has_value());
}

}  // namespace
}  // namespace ferry::delta

namespace ferry::delta {
namespace {

// The tables of a routed pipeline, together: each id in exactly one of them, once.
TEST_F(VerifyTest, RoutedTablesTogether) {
  Create(KafkaSchema());
  Append(KafkaBatch(Rows(0, 20)));
  auto first = std::move(table_);
  table_ = *Table::Open(store_, "t2");
  Create(KafkaSchema());
  Append(KafkaBatch(Rows(20, 30)));
  auto verify = [&]() {
    auto a = first->LoadSnapshot();
    auto b = table_->LoadSnapshot();
    EXPECT_TRUE(a.ok() && b.ok());
    auto report = VerifyRoutedTables(
        {{.table = first.get(), .snapshot = &*a}, {.table = table_.get(), .snapshot = &*b}},
        {.id_column = "id", .expect = 30, .range = {{0, 29}}});
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return *report;
  };
  RoutedVerifyReport clean = verify();
  EXPECT_TRUE(clean.ok());
  EXPECT_EQ(clean.rows, 30);
  EXPECT_EQ(clean.distinct, 30);
  EXPECT_EQ(clean.in_several_tables, 0);
  EXPECT_EQ(clean.missing, 0);
  EXPECT_EQ(clean.expect_ok, true);
  ASSERT_EQ(clean.tables.size(), 2u);

  // Id 5 lands in the second table too: a duplicate across tables, each table clean alone.
  Append(KafkaBatch({{5, 1, 100}}));
  RoutedVerifyReport twice = verify();
  EXPECT_FALSE(twice.ok());
  EXPECT_TRUE(twice.tables[0].second.ok());
  EXPECT_TRUE(twice.tables[1].second.ok());
  EXPECT_EQ(twice.in_several_tables, 1);
  ASSERT_EQ(twice.several_listed.size(), 1u);
  EXPECT_EQ(twice.several_listed[0].first, "5");
  EXPECT_EQ(twice.several_listed[0].second.size(), 2u);
  EXPECT_EQ(twice.expect_ok, false);
}

// Key mode (an upsert table, docs/cdc.md): a key of two columns, a key held by two live rows
// in two files, then a deletion vector that deletes the older row.
columnar::SchemaPtr KeyedSchema() {
  return std::make_shared<const columnar::Schema>(std::vector<Field>{
      {"id", DataType::Int64(), true, {}},
      {"region", DataType::String(), true, {}},
      {"day", DataType::Date(), true, {}},
      {"_partition", DataType::Int32(), true, {}},
      {"_offset", DataType::Int64(), true, {}},
  });
}

struct KeyedRow {
  int64_t id;
  std::optional<std::string> region;
  int64_t offset;
};

columnar::RecordBatch KeyedBatch(const std::vector<KeyedRow>& rows) {
  auto batch = columnar::RecordBatch::MakeEmpty(KeyedSchema());
  for (const KeyedRow& r : rows) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(r.id);
    if (r.region) {
      batch.mutable_column(1)->As<columnar::BinaryColumn>()->Append(*r.region);
    } else {
      batch.mutable_column(1)->AppendNull();
    }
    batch.mutable_column(2)->As<columnar::Int32Column>()->Append(19000);  // 2022-01-08
    batch.mutable_column(3)->As<columnar::Int32Column>()->Append(0);
    batch.mutable_column(4)->As<columnar::Int64Column>()->Append(r.offset);
  }
  return batch;
}

TEST_F(VerifyTest, KeyModeFindsKeysWithTwoLiveRowsAndAppliesDeletionVectors) {
  TableSpec spec;
  spec.schema = KeyedSchema();
  spec.configuration = {{"delta.enableDeletionVectors", "true"}};
  auto created = table_->Create(spec);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  snapshot_ = *created;
  // The key (2, "eu") twice: in the first file (row 1) and in the second; (1, "eu") and
  // (1, "us") are different keys. The txn is past the data (the last changes were deletes).
  Append(KeyedBatch({{1, "eu", 0}, {2, "eu", 1}, {1, "us", 2}}));
  ASSERT_EQ(snapshot_.files().size(), 1u);
  const AddFile first = snapshot_.files().begin()->second;
  Append(KeyedBatch({{2, "eu", 3}, {3, "a\"b", 4}}), {{"p/kafka/t/0", 6}});
  const VerifyOptions by_key{.key_columns = {"id", "region"}};
  VerifyReport report = Verify(by_key);
  EXPECT_EQ(report.rows, 5);
  EXPECT_EQ(report.distinct, 4);
  EXPECT_EQ(report.duplicates, 1);
  ASSERT_EQ(report.duplicates_listed.size(), 1u);
  EXPECT_EQ(report.duplicates_listed[0].id, "(2, \"eu\")");
  EXPECT_EQ(report.duplicates_listed[0].count, 2);
  ASSERT_EQ(report.duplicates_listed[0].files.size(), 2u);
  EXPECT_NE(report.duplicates_listed[0].files[0], report.duplicates_listed[0].files[1]);
  ASSERT_EQ(report.positions.size(), 1u);
  EXPECT_TRUE(report.positions[0].ok()) << "data max 4 <= txn 6 in key mode";
  EXPECT_FALSE(report.ok());
  // The same table by id: equality of positions, so the txn past the data is a mismatch.
  VerifyReport by_id = Verify({.id_column = "id"});
  EXPECT_EQ(by_id.position_mismatches(), 1);

  // An upsert's commit: the first file again with a deletion vector on its row 1.
  RoaringBitmap64 deleted;
  deleted.Add(1);
  AddFile again = first;
  again.deletion_vector = InlineDeletionVector(deleted);
  Transaction txn(*table_, snapshot_);
  txn.Remove(RemoveFile{.path = first.path, .data_change = true});
  txn.AddFiles({again});
  auto committed = txn.Commit();
  ASSERT_TRUE(committed.ok()) << committed.status().ToString();
  report = Verify(by_key);
  EXPECT_EQ(report.rows, 4);
  EXPECT_EQ(report.distinct, 4);
  EXPECT_EQ(report.duplicates, 0);
  EXPECT_TRUE(report.stats_mismatches.empty());
  EXPECT_TRUE(report.ok());
  VerifyOptions keep = by_key;
  keep.keep_ids = true;
  std::vector<std::string> ids = Verify(keep).ids;
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"(1, \"eu\")", "(1, \"us\")", "(2, \"eu\")",
                                           "(3, \"a\\\"b\")"}));
  // A date key is rendered as the log spells it; a null part makes a null key.
  Append(KeyedBatch({{4, std::nullopt, 5}}));
  report = Verify({.key_columns = {"day"}, .max_listed = 1});
  EXPECT_EQ(report.distinct, 1);
  ASSERT_EQ(report.duplicates_listed.size(), 1u);
  EXPECT_EQ(report.duplicates_listed[0].id, "2022-01-08");
  report = Verify(by_key);
  EXPECT_EQ(report.null_ids, 1);
  EXPECT_FALSE(report.ok());
}

TEST_F(VerifyTest, KeyModeRefusesBadColumns) {
  CleanKafkaTable();
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(VerifyTable(*table_, *snap, {.key_columns = {"id", "nope"}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyTable(*table_, *snap, {.id_column = "id", .key_columns = {"id"}}).status().code(),
            StatusCode::kInvalidArgument);
  // One integer key column counts like an id column.
  auto report = VerifyTable(*table_, *snap, {.key_columns = {"id"}, .expect = 30});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok());
}

}  // namespace
}  // namespace ferry::delta
