// Table hygiene: optimize keeps rows, ids and positions exactly (also beside concurrent
// appends), vacuum deletes orphans and expired removes but never a live file, log cleanup keeps
// every version from its checkpoint on.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "ferry/base/clock.h"
#include "ferry/columnar/column.h"
#include "ferry/delta/log_cleanup.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/optimize.h"
#include "ferry/delta/schema_history.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/delta/vacuum.h"
#include "ferry/delta/verify.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/forwarding_store.h"
#include "ferry/testing/table_verifier.h"

namespace ferry::delta {
namespace {

using columnar::DataType;
using columnar::Field;

constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;

columnar::SchemaPtr Schema() {
  return std::make_shared<const columnar::Schema>(std::vector<Field>{
      {"id", DataType::Int64(), true, {}},
      {"region", DataType::String(), true, {}},
      {"_partition", DataType::Int32(), true, {}},
      {"_offset", DataType::Int64(), true, {}},
  });
}

// Ids begin..end-1; region "eu" for even ids, "us" for odd; Kafka partition = id % 2, offset =
// id / 2.
columnar::RecordBatch Batch(int64_t begin, int64_t end) {
  auto batch = columnar::RecordBatch::MakeEmpty(Schema());
  for (int64_t id = begin; id < end; ++id) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(id);
    batch.mutable_column(1)->As<columnar::BinaryColumn>()->Append(id % 2 == 0 ? "eu" : "us");
    batch.mutable_column(2)->As<columnar::Int32Column>()->Append(static_cast<int32_t>(id % 2));
    batch.mutable_column(3)->As<columnar::Int64Column>()->Append(id / 2);
  }
  return batch;
}

class HygieneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_shared<storage::InMemoryStore>();
    table_ = *Table::Open(store_, "t");
  }

  void Create(StringMap configuration = {}) {
    TableSpec spec;
    spec.schema = Schema();
    spec.partition_columns = {"region"};
    spec.configuration = std::move(configuration);
    auto snap = table_->Create(spec);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  }

  // Appends ids begin..end-1 with the positions of pipeline "p", reloading the snapshot first;
  // retries on Aborted never happen here (one appender).
  Status Append(int64_t begin, int64_t end) {
    FERRY_ASSIGN_OR_RETURN(Snapshot snapshot, table_->LoadSnapshot());
    FERRY_ASSIGN_OR_RETURN(auto writer, TableWriter::Create(*table_, snapshot));
    FERRY_RETURN_IF_ERROR(writer->Write(Batch(begin, end)));
    FERRY_ASSIGN_OR_RETURN(auto adds, writer->Finish());
    Transaction txn(*table_, snapshot, {.initial_backoff_ms = 0, .max_backoff_ms = 0});
    txn.AddFiles(std::move(adds));
    // Partition 0 holds the even ids, partition 1 the odd ones.
    const int64_t last_even = (end - 1) % 2 == 0 ? end - 1 : end - 2;
    const int64_t last_odd = (end - 1) % 2 == 1 ? end - 1 : end - 2;
    txn.SetPosition("p/kafka/t/0", last_even / 2);
    txn.SetPosition("p/kafka/t/1", last_odd / 2);
    return txn.Commit().status();
  }

  std::vector<std::string> Rows() {
    auto snap = table_->LoadSnapshot();
    EXPECT_TRUE(snap.ok());
    auto rows = testing::ReadTableRows(*table_, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<std::string>();
  }

  std::map<std::string, Txn> Txns() { return table_->LoadSnapshot()->txns(); }

  // verify: n rows, ids 0..n-1 once each, positions agree.
  void ExpectClean(int64_t n) {
    auto snap = table_->LoadSnapshot();
    ASSERT_TRUE(snap.ok());
    auto report = VerifyTable(
        *table_, *snap,
        {.id_column = "id", .expect = n, .range = std::pair<int64_t, int64_t>(0, n - 1)});
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->ok()) << "rows " << report->rows << " distinct " << report->distinct
                              << " missing " << report->missing << " position mismatches "
                              << report->position_mismatches();
    EXPECT_EQ(report->positions.size(), 2u);
  }

  bool Exists(const std::string& relative) { return store_->Stat(table_->Key(relative)).ok(); }

  std::shared_ptr<storage::InMemoryStore> store_;
  std::unique_ptr<Table> table_;
};

TEST_F(HygieneTest, OptimizePreservesRowsIdsAndTxns) {
  Create();
  for (int64_t begin = 0; begin < 100; begin += 10) {
    ASSERT_TRUE(Append(begin, begin + 10).ok());
  }
  EXPECT_EQ(table_->LoadSnapshot()->num_files(), 20);
  const std::vector<std::string> rows_before = Rows();
  const auto txns_before = Txns();

  auto result = Optimize(*table_, {.target_size = int64_t{1} << 20});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->bins, 2);
  EXPECT_EQ(result->files_removed, 20);
  EXPECT_EQ(result->files_added, 2);
  EXPECT_EQ(result->rows, 100);
  ASSERT_TRUE(result->version.has_value());

  Snapshot after = *table_->LoadSnapshot();
  EXPECT_EQ(after.num_files(), 2);
  EXPECT_EQ(after.num_records(), 100);
  EXPECT_EQ(Rows(), rows_before);
  EXPECT_EQ(after.txns(), txns_before);
  ExpectClean(100);
  // The commit moves data: dataChange=false on every add and remove, no txn.
  auto actions = table_->ReadCommit(*result->version);
  ASSERT_TRUE(actions.ok());
  int adds = 0;
  int removes = 0;
  for (const Action& action : *actions) {
    if (const auto* add = std::get_if<AddFile>(&action)) {
      EXPECT_FALSE(add->data_change);
      ++adds;
    } else if (const auto* remove = std::get_if<RemoveFile>(&action)) {
      EXPECT_FALSE(remove->data_change);
      ++removes;
    }
    EXPECT_FALSE(std::holds_alternative<Txn>(action));
  }
  EXPECT_EQ(adds, 2);
  EXPECT_EQ(removes, 20);

  // Nothing left to pack.
  result = Optimize(*table_, {.target_size = int64_t{1} << 20});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->bins, 0);
  EXPECT_FALSE(result->version.has_value());
}

TEST_F(HygieneTest, OptimizeWhereAndDryRun) {
  Create();
  for (int64_t begin = 0; begin < 40; begin += 10) {
    ASSERT_TRUE(Append(begin, begin + 10).ok());
  }
  auto where = PartitionPredicate::Parse("region = 'eu'");
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  auto result = Optimize(*table_, {.where = *where, .dry_run = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->files_removed, 4);
  EXPECT_FALSE(result->version.has_value());
  EXPECT_EQ(table_->LoadSnapshot()->num_files(), 8);

  result = Optimize(*table_, {.where = *where});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  Snapshot after = *table_->LoadSnapshot();
  EXPECT_EQ(after.num_files(), 5);  // eu: 1, us: 4
  ExpectClean(40);

  EXPECT_EQ(Optimize(*table_, {.where = *PartitionPredicate::Parse("_offset = 1")}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(PartitionPredicateTest, Parse) {
  auto p = PartitionPredicate::Parse("a = 'x''y' and b=42 AND c IS NULL");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->Matches({{"a", "x'y"}, {"b", "42"}, {"c", std::nullopt}}));
  EXPECT_TRUE(p->Matches({{"a", "x'y"}, {"b", "42"}, {"c", ""}}));
  EXPECT_FALSE(p->Matches({{"a", "x'y"}, {"b", "43"}, {"c", std::nullopt}}));
  EXPECT_FALSE(p->Matches({{"a", "x'y"}, {"b", "42"}, {"c", "1"}}));
  EXPECT_TRUE(PartitionPredicate::Parse("")->Matches({{"a", "1"}}));
  EXPECT_TRUE(PartitionPredicate::Parse("d = 2024-01-31")->Matches({{"d", "2024-01-31"}}));
  EXPECT_FALSE(PartitionPredicate::Parse("a = 'x").ok());
  EXPECT_FALSE(PartitionPredicate::Parse("a > 1").ok());
  EXPECT_FALSE(PartitionPredicate::Parse("a = 1 OR b = 2").ok());
  EXPECT_FALSE(PartitionPredicate::Parse("a = ").ok());
}

TEST_F(HygieneTest, OptimizeAlongsideConcurrentAppends) {
  Create();
  ASSERT_TRUE(Append(0, 10).ok());
  std::atomic<bool> done{false};
  Status append_status;
  std::thread appender([&] {
    for (int64_t begin = 10; begin < 300 && append_status.ok(); begin += 10) {
      append_status = Append(begin, begin + 10);
    }
    done = true;
  });
  int optimizes = 0;
  int aborted = 0;
  while (!done || optimizes == 0) {
    auto result = Optimize(*table_, {.target_size = int64_t{1} << 20,
                                     .commit = {.initial_backoff_ms = 0, .max_backoff_ms = 0}});
    if (!result.ok()) {
      // Only a concurrent optimize could remove our files; there is none here.
      ASSERT_EQ(result.status().code(), StatusCode::kAborted) << result.status().ToString();
      ++aborted;
    }
    ++optimizes;
  }
  appender.join();
  ASSERT_TRUE(append_status.ok()) << append_status.ToString();
  auto final_result = Optimize(*table_, {.target_size = int64_t{1} << 20});
  ASSERT_TRUE(final_result.ok()) << final_result.status().ToString();
  EXPECT_EQ(aborted, 0);
  EXPECT_LE(table_->LoadSnapshot()->num_files(), 2);
  ExpectClean(300);
  EXPECT_EQ(Txns().at("p/kafka/t/0").version, 149);
  EXPECT_EQ(Txns().at("p/kafka/t/1").version, 149);
}

TEST_F(HygieneTest, TwoConcurrentOptimizesNeverPackAFileTwice) {
  Create();
  for (int64_t begin = 0; begin < 100; begin += 10) {
    ASSERT_TRUE(Append(begin, begin + 10).ok());
  }
  const std::vector<std::string> rows_before = Rows();
  Result<OptimizeResult> results[2] = {Internal("not run"), Internal("not run")};
  std::thread threads[2];
  for (int i = 0; i < 2; ++i) {
    threads[i] = std::thread([&, i] { results[i] = Optimize(*table_, {}); });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  int64_t removed = 0;
  for (const auto& result : results) {
    if (result.ok()) {
      removed += result->version ? result->files_removed : 0;
    } else {
      EXPECT_EQ(result.status().code(), StatusCode::kAborted) << result.status().ToString();
    }
  }
  EXPECT_EQ(removed, 20);  // each small file packed exactly once
  EXPECT_EQ(table_->LoadSnapshot()->num_files(), 2);
  EXPECT_EQ(Rows(), rows_before);
  ExpectClean(100);
}

TEST_F(HygieneTest, ConcurrentRemoveOfTheSameFileAborts) {
  Create();
  ASSERT_TRUE(Append(0, 10).ok());
  ASSERT_TRUE(Append(10, 20).ok());
  Snapshot read = *table_->LoadSnapshot();
  const AddFile victim = read.files().begin()->second;
  // Two compactions planned on the same snapshot; the first wins.
  Transaction first(*table_, read);
  first.Remove(RemoveFile{.path = victim.path, .data_change = false});
  Transaction second(*table_, read);
  second.Remove(RemoveFile{.path = victim.path, .data_change = false});
  ASSERT_TRUE(first.Commit().ok());
  const int64_t version = table_->LoadSnapshot()->version();
  auto lost = second.Commit();
  EXPECT_EQ(lost.status().code(), StatusCode::kAborted) << lost.status().ToString();
  EXPECT_NE(lost.status().message().find("ConcurrentDeleteDelete"), std::string::npos);
  EXPECT_EQ(table_->LoadSnapshot()->version(), version);
  // Removing a file that is not live at all aborts up front.
  Transaction third(*table_, *table_->LoadSnapshot());
  third.Remove(RemoveFile{.path = victim.path, .data_change = false});
  EXPECT_EQ(third.Commit().status().code(), StatusCode::kAborted);
}

// ferry writes no `cdc` files: a commit that removes rows (dataChange = true, an upsert) is
// refused on a table with the change data feed, before or after another writer enables it;
// a compaction (dataChange = false) is not.
TEST_F(HygieneTest, RowRemovalsRefusedWithChangeDataFeed) {
  Create({{"delta.enableChangeDataFeed", "true"}});
  ASSERT_TRUE(Append(0, 10).ok());
  ASSERT_TRUE(Append(10, 20).ok());
  Snapshot read = *table_->LoadSnapshot();
  const AddFile victim = read.files().begin()->second;
  Transaction upsert(*table_, read);
  upsert.Remove(RemoveFile{.path = victim.path, .data_change = true});
  auto refused = upsert.Commit();
  EXPECT_EQ(refused.status().code(), StatusCode::kNotSupported) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("delta.enableChangeDataFeed"), std::string::npos);
  EXPECT_EQ(table_->LoadSnapshot()->version(), read.version());
  Transaction compaction(*table_, read);
  compaction.Remove(RemoveFile{.path = victim.path, .data_change = false});
  EXPECT_TRUE(compaction.Commit().ok());
}

TEST_F(HygieneTest, RowRemovalRefusedWhenAnotherWriterEnablesChangeDataFeed) {
  Create();
  ASSERT_TRUE(Append(0, 10).ok());
  Snapshot read = *table_->LoadSnapshot();
  const AddFile victim = read.files().begin()->second;
  Transaction upsert(*table_, read);
  upsert.Remove(RemoveFile{.path = victim.path, .data_change = true});
  // Another writer sets the property first (a metaData that changes no schema: no conflict).
  Metadata metadata = read.metadata();
  metadata.configuration["delta.enableChangeDataFeed"] = "true";
  Transaction alter(*table_, read);
  alter.SetProtocol(Protocol{1, 4, std::nullopt, std::nullopt});  // changeDataFeed's version
  alter.SetMetadata(metadata);
  ASSERT_TRUE(alter.Commit().ok());
  auto refused = upsert.Commit();
  EXPECT_EQ(refused.status().code(), StatusCode::kNotSupported) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("delta.enableChangeDataFeed"), std::string::npos);
}

TEST_F(HygieneTest, VacuumDeletesOrphansAndExpiredRemovesNeverLiveFiles) {
  Create();
  for (int64_t begin = 0; begin < 40; begin += 10) {
    ASSERT_TRUE(Append(begin, begin + 10).ok());
  }
  ASSERT_TRUE(Optimize(*table_, {}).ok());  // 8 files removed, 2 live
  // Orphans: a fenced batch's file, and one in a partition directory.
  ASSERT_TRUE(store_->Put(table_->Key("part-99999-orphan.parquet"), "x").ok());
  ASSERT_TRUE(store_->Put(table_->Key("region=eu/part-99998-orphan.parquet"), "xy").ok());
  // Not data: hidden files stay.
  ASSERT_TRUE(store_->Put(table_->Key("_hidden/keep"), "x").ok());
  ASSERT_TRUE(store_->Put(table_->Key(".keep"), "x").ok());
  Snapshot snap = *table_->LoadSnapshot();
  std::vector<std::string> live;
  for (const auto& [key, add] : snap.files()) {
    live.push_back(add.path);
  }
  ASSERT_EQ(live.size(), 2u);
  auto log_before = store_->List(table_->log_dir() + "/");
  ASSERT_TRUE(log_before.ok());

  // Now: everything is younger than the retention; nothing goes.
  auto result = Vacuum(*table_, {});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->deleted.empty());
  EXPECT_EQ(result->files_kept, 12);

  // Eight days on: dry run lists 8 removed files + 2 orphans and deletes nothing.
  const int64_t later = WallMillis() + 8 * kDayMs;
  result = Vacuum(*table_, {.dry_run = true, .now_ms = later});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->deleted.size(), 10u);
  EXPECT_TRUE(Exists("part-99999-orphan.parquet"));
  for (const std::string& path : result->deleted) {
    EXPECT_TRUE(Exists(path)) << path;
  }

  result = Vacuum(*table_, {.now_ms = later});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->deleted.size(), 10u);
  EXPECT_EQ(result->files_kept, 2);
  EXPECT_FALSE(Exists("part-99999-orphan.parquet"));
  EXPECT_FALSE(Exists("region=eu/part-99998-orphan.parquet"));
  EXPECT_TRUE(Exists("_hidden/keep"));
  EXPECT_TRUE(Exists(".keep"));
  for (const std::string& path : live) {
    EXPECT_TRUE(Exists(path)) << path;
  }
  EXPECT_EQ(store_->List(table_->log_dir() + "/")->size(), log_before->size());
  ExpectClean(40);
}

TEST_F(HygieneTest, VacuumKeepsRecentRemovesAndRefusesShortRetention) {
  Create();
  ASSERT_TRUE(Append(0, 10).ok());
  ASSERT_TRUE(Append(10, 20).ok());
  ASSERT_TRUE(Optimize(*table_, {}).ok());
  EXPECT_EQ(Vacuum(*table_, {.retain_ms = 3600 * 1000}).status().code(),
            StatusCode::kInvalidArgument);
  // Files are older than one hour of retention two hours from now, but the removes are too:
  // forced, they go; the live files stay.
  auto result = Vacuum(
      *table_, {.retain_ms = 3600 * 1000, .force = true, .now_ms = WallMillis() + 2 * 3600 * 1000});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->deleted.size(), 4u);
  ExpectClean(20);
}

TEST_F(HygieneTest, LogCleanupKeepsEveryVersionFromItsCheckpoint) {
  Create({{"delta.checkpointInterval", "5"}});
  for (int64_t begin = 0; begin < 120; begin += 10) {
    ASSERT_TRUE(Append(begin, begin + 10).ok());
  }
  // Versions 0..12, checkpoints at 5 and 10. Fresh files: the automatic cleanup kept all.
  Snapshot snap = *table_->LoadSnapshot();
  ASSERT_EQ(snap.version(), 12);
  ASSERT_TRUE(table_->LoadSnapshot(0).ok());
  auto count = [&](LogFileKind kind) {
    int n = 0;
    auto listing = store_->List(table_->log_dir() + "/");
    for (const auto& info : *listing) {
      auto parsed = ParseLogFileName(info.key.substr(info.key.rfind('/') + 1));
      n += parsed && parsed->kind == kind ? 1 : 0;
    }
    return n;
  };
  EXPECT_EQ(count(LogFileKind::kCommit), 13);
  EXPECT_EQ(count(LogFileKind::kClassicCheckpoint), 2);

  auto none = CleanupLog(*table_, snap, WallMillis());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->commits_deleted, 0);

  // 31 days later everything is past the default retention: keep checkpoint 10 and on.
  auto result = CleanupLog(*table_, snap, WallMillis() + 31 * kDayMs);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->checkpoint_version, 10);
  EXPECT_EQ(result->commits_deleted, 10);
  EXPECT_EQ(result->checkpoint_files_deleted, 1);
  EXPECT_EQ(count(LogFileKind::kCommit), 3);
  EXPECT_EQ(count(LogFileKind::kClassicCheckpoint), 1);
  for (int64_t version = 10; version <= 12; ++version) {
    EXPECT_TRUE(table_->LoadSnapshot(version).ok()) << version;
  }
  EXPECT_FALSE(table_->LoadSnapshot(9).ok());
  ExpectClean(120);
  // The table stays writable.
  ASSERT_TRUE(Append(120, 130).ok());
  ExpectClean(130);
}

// The cleanup Transaction runs after each checkpoint: with no retention at all it may delete any
// commit below the newest checkpoint (how many depends on the clock), never one the latest
// version needs.
TEST_F(HygieneTest, CleanupAfterCheckpointsKeepsTheTableReadable) {
  Create({{"delta.checkpointInterval", "5"},
          {"delta.logRetentionDuration", "interval 0 milliseconds"}});
  for (int64_t begin = 0; begin < 120; begin += 10) {
    ASSERT_TRUE(Append(begin, begin + 10).ok());
  }
  auto listing = store_->List(table_->log_dir() + "/");
  ASSERT_TRUE(listing.ok());
  int commits = 0;
  for (const auto& info : *listing) {
    auto parsed = ParseLogFileName(info.key.substr(info.key.rfind('/') + 1));
    if (parsed && parsed->kind == LogFileKind::kCommit) {
      EXPECT_GE(parsed->version, 0);
      ++commits;
    }
  }
  RecordProperty("commits_left", commits);
  EXPECT_GE(commits, 3);  // 10, 11, 12 at least
  EXPECT_LE(commits, 13);
  for (int64_t version = 10; version <= 12; ++version) {
    EXPECT_TRUE(table_->LoadSnapshot(version).ok()) << version;
  }
  ExpectClean(120);
}

// The store of `table`, whose first listing of the log is followed at once by a log cleanup 31
// days later (the commits below the newest checkpoint go): what a reader sees when a writer's
// cleanup runs between its listing and its reads.
class CleanupAfterFirstListStore final : public testing::ForwardingStore {
 public:
  CleanupAfterFirstListStore(std::shared_ptr<storage::ObjectStore> base, const Table* table)
      : ForwardingStore(std::move(base)), table_(table) {}
  using ForwardingStore::List;
  Result<std::vector<storage::ObjectInfo>> List(std::string_view prefix,
                                                const storage::ListOptions& options) override {
    auto listing = ForwardingStore::List(prefix, options);
    if (!cleaned_ && prefix == table_->log_dir() + "/") {
      cleaned_ = true;
      auto snapshot = table_->LoadSnapshot();
      EXPECT_TRUE(snapshot.ok());
      auto result = CleanupLog(*table_, *snapshot, WallMillis() + 31 * kDayMs);
      EXPECT_TRUE(result.ok() && result->commits_deleted > 0);
    }
    return listing;
  }

 private:
  const Table* table_;
  bool cleaned_ = false;
};

// `ferry table inspect` beside a writer whose log cleanup deletes commits while the history is
// read (seen with delta.logRetentionDuration of minutes: "schema history: NotFound"), and after
// it: the history starts at the checkpoint the cleanup kept.
TEST_F(HygieneTest, SchemaHistoryReadsOnThroughALogCleanup) {
  Create({{"delta.checkpointInterval", "5"}});
  for (int64_t begin = 0; begin < 120; begin += 10) {
    ASSERT_TRUE(Append(begin, begin + 10).ok());
  }
  auto before = ReadSchemaHistory(*table_);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_EQ(before->size(), 1u);
  EXPECT_EQ(before->front().version, 0);

  auto racing = std::make_shared<CleanupAfterFirstListStore>(store_, table_.get());
  auto reader = Table::Open(racing, "t");
  ASSERT_TRUE(reader.ok());
  auto during = ReadSchemaHistory(**reader);
  ASSERT_TRUE(during.ok()) << during.status().ToString();
  EXPECT_FALSE(table_->LoadSnapshot(9).ok());  // the cleanup ran: versions below 10 are gone

  auto after = ReadSchemaHistory(*table_);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  for (const auto* history : {&*during, &*after}) {
    ASSERT_EQ(history->size(), 1u);
    EXPECT_EQ(history->front().version, 10);
    EXPECT_TRUE(history->front().initial);
    EXPECT_EQ(history->front().schema->ToString(), Schema()->ToString());
  }
}

TEST_F(HygieneTest, LogCleanupHonorsTheTableRetention) {
  Create({{"delta.checkpointInterval", "5"}, {"delta.logRetentionDuration", "interval 60 days"}});
  for (int64_t begin = 0; begin < 60; begin += 10) {
    ASSERT_TRUE(Append(begin, begin + 10).ok());
  }
  Snapshot snap = *table_->LoadSnapshot();
  auto result = CleanupLog(*table_, snap, WallMillis() + 31 * kDayMs);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->commits_deleted, 0);
  result = CleanupLog(*table_, snap, WallMillis() + 61 * kDayMs);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->checkpoint_version, 5);
  EXPECT_EQ(result->commits_deleted, 5);
}

}  // namespace
}  // namespace ferry::delta
