// The writer features ferry implements for appends (table_features.h): In-Commit Timestamps,
// row tracking, clustering, domain metadata. Each test reads the commit files ferry wrote and
// checks what PROTOCOL.md requires of them, including after a lost race (a retry at a later
// version) and after a foreign commit written by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "ferry/base/clock.h"
#include "ferry/columnar/column.h"
#include "ferry/delta/actions_json.h"
#include "ferry/delta/checkpoint_reader.h"
#include "ferry/delta/checkpoint_writer.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/optimize.h"
#include "ferry/delta/schema_json.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/table_verifier.h"

namespace ferry::delta {
namespace {

using columnar::DataType;
using columnar::Field;

columnar::SchemaPtr FeatureSchema() {
  return std::make_shared<const columnar::Schema>(std::vector<Field>{
      {"id", DataType::Int64(), true, {}},
      {"p", DataType::String(), true, {}},
  });
}

// Ids begin..end-1 in partitions p=a (even) and p=b (odd): two files per commit.
columnar::RecordBatch FeatureBatch(int64_t begin, int64_t end) {
  auto batch = columnar::RecordBatch::MakeEmpty(FeatureSchema());
  for (int64_t id = begin; id < end; ++id) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(id);
    batch.mutable_column(1)->As<columnar::BinaryColumn>()->Append(id % 2 == 0 ? "a" : "b");
  }
  return batch;
}

struct CommitText {
  std::string text;
  std::vector<Action> actions;
};

class WriterFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_shared<storage::InMemoryStore>();
    table_ = *Table::Open(store_, "t");
  }

  Snapshot Create(StringMap configuration) {
    TableSpec spec;
    spec.schema = FeatureSchema();
    spec.partition_columns = {"p"};
    spec.configuration = std::move(configuration);
    auto snap = table_->Create(spec);
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return snap.ok() ? *snap : Snapshot();
  }

  Result<CommitResult> Append(const Snapshot& snapshot, const columnar::RecordBatch& batch) {
    FERRY_ASSIGN_OR_RETURN(auto writer, TableWriter::Create(*table_, snapshot));
    FERRY_RETURN_IF_ERROR(writer->Write(batch));
    FERRY_ASSIGN_OR_RETURN(auto adds, writer->Finish());
    CommitOptions options;
    options.initial_backoff_ms = 0;
    Transaction txn(*table_, snapshot, options);
    txn.AddFiles(std::move(adds));
    return txn.Commit();
  }

  CommitText Read(int64_t version) {
    auto text = store_->Read("t/_delta_log/" + CommitFileName(version));
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    auto actions = ParseActions(*text);
    EXPECT_TRUE(actions.ok()) << actions.status().ToString();
    return CommitText{*text, *actions};
  }

  // A commit by another writer, written as given.
  void PutForeign(int64_t version, const std::vector<Action>& actions) {
    std::string text;
    for (const Action& action : actions) {
      text += ActionToJson(action) + "\n";
    }
    ASSERT_TRUE(store_->PutIfAbsent("t/_delta_log/" + CommitFileName(version), text).ok());
  }

  static std::optional<int64_t> Ict(const CommitText& commit) {
    for (const Action& action : commit.actions) {
      if (const auto* info = std::get_if<CommitInfo>(&action)) {
        return info->in_commit_timestamp;
      }
    }
    return std::nullopt;
  }

  static std::vector<AddFile> Adds(const CommitText& commit) {
    std::vector<AddFile> out;
    for (const Action& action : commit.actions) {
      if (const auto* add = std::get_if<AddFile>(&action)) {
        out.push_back(*add);
      }
    }
    return out;
  }

  static std::optional<std::string> Domain(const CommitText& commit, const std::string& name) {
    for (const Action& action : commit.actions) {
      if (const auto* d = std::get_if<DomainMetadata>(&action); d && d->domain == name) {
        return d->configuration;
      }
    }
    return std::nullopt;
  }

  // Every live file's [baseRowId, baseRowId + numRecords) range: disjoint and, sorted, exactly
  // [0, total). Returns the total.
  static int64_t CheckRowIdsContiguous(const Snapshot& snap) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (const auto& [key, add] : snap.files()) {
      EXPECT_TRUE(add.base_row_id.has_value()) << add.path;
      EXPECT_TRUE(add.default_row_commit_version.has_value()) << add.path;
      ranges.emplace_back(add.base_row_id.value_or(-1), *StatsNumRecords(*add.stats));
    }
    std::sort(ranges.begin(), ranges.end());
    int64_t next = 0;
    for (const auto& [base, rows] : ranges) {
      EXPECT_EQ(base, next) << "row id ranges must be disjoint and contiguous";
      next = base + rows;
    }
    return next;
  }

  std::shared_ptr<storage::InMemoryStore> store_;
  std::unique_ptr<Table> table_;
};

// --- In-Commit Timestamps ---

TEST_F(WriterFeaturesTest, InCommitTimestampLeadsEveryCommitAndIncreases) {
  Snapshot snap = Create({{"delta.enableInCommitTimestamps", "true"}});
  EXPECT_EQ(snap.protocol().min_writer_version, 7);
  EXPECT_TRUE(snap.protocol().WriterLists("inCommitTimestamp"));
  // Version 0 has no commits before it: no enablement properties (as Spark).
  EXPECT_EQ(snap.metadata().configuration.count("delta.inCommitTimestampEnablementVersion"), 0u);
  for (int64_t i = 0; i < 3; ++i) {
    auto result = Append(snap, FeatureBatch(i * 10, i * 10 + 10));
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    snap = result->snapshot;
  }
  std::optional<int64_t> previous;
  for (int64_t v = 0; v <= 3; ++v) {
    CommitText commit = Read(v);
    EXPECT_EQ(commit.text.rfind("{\"commitInfo\":{\"inCommitTimestamp\":", 0), 0u) << commit.text;
    ASSERT_TRUE(std::holds_alternative<CommitInfo>(commit.actions.front()));
    std::optional<int64_t> ict = Ict(commit);
    ASSERT_TRUE(ict.has_value()) << "version " << v;
    if (previous.has_value()) {
      EXPECT_GT(*ict, *previous) << "version " << v;
    }
    previous = ict;
  }
  EXPECT_EQ(snap.in_commit_timestamp(), previous);
  EXPECT_EQ(snap.timestamp_ms(), *previous);
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->in_commit_timestamp(), previous);
}

// A winner whose inCommitTimestamp lies an hour ahead (a clock ahead of ours): the loser's retry
// at the next version takes the winner's + 1, not its own clock.
// A property spelled "True" enables the feature as table_features.cc reads it back, and the
// upgrade to writer version 7 keeps the features version 2 implied: Spark refuses a table with a
// NOT NULL column whose protocol does not list `invariants`.
TEST_F(WriterFeaturesTest, FeaturesFromPropertiesKeepTheImpliedLegacyFeatures) {
  Snapshot snap = Create({{"delta.enableRowTracking", "True"}});
  EXPECT_EQ(snap.protocol().min_writer_version, 7);
  EXPECT_TRUE(snap.protocol().WriterLists("rowTracking"));
  EXPECT_TRUE(snap.protocol().WriterLists("domainMetadata"));
  EXPECT_TRUE(snap.protocol().WriterLists("appendOnly"));
  EXPECT_TRUE(snap.protocol().WriterLists("invariants"));
}

TEST_F(WriterFeaturesTest, InCommitTimestampAfterALostRaceFollowsTheWinner) {
  Snapshot base = Create({{"delta.enableInCommitTimestamps", "true"}});
  const int64_t ahead = WallMillis() + 3600 * 1000;
  CommitInfo info;
  info.json = "{\"inCommitTimestamp\":" + std::to_string(ahead) +
              ",\"timestamp\":" + std::to_string(ahead) + ",\"operation\":\"WRITE\"}";
  PutForeign(1, {info, Txn{"other", 1, ahead}});
  auto result = Append(base, FeatureBatch(0, 10));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->version, 2);
  EXPECT_EQ(Ict(Read(2)), ahead + 1);
  EXPECT_EQ(result->snapshot.in_commit_timestamp(), ahead + 1);
  // The next commit builds on the snapshot the retry returned.
  auto next = Append(result->snapshot, FeatureBatch(10, 20));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(Ict(Read(3)), ahead + 2);
}

// A snapshot that ends at a checkpoint does not know the last inCommitTimestamp (checkpoints
// keep no commitInfo): the commit reads it from the commit file.
TEST_F(WriterFeaturesTest, InCommitTimestampAfterACheckpointIsReadFromTheCommit) {
  Snapshot base =
      Create({{"delta.enableInCommitTimestamps", "true"}, {"delta.checkpointInterval", "2"}});
  const int64_t ahead = WallMillis() + 3600 * 1000;
  CommitInfo info;
  info.json = "{\"inCommitTimestamp\":" + std::to_string(ahead) + "}";
  PutForeign(1, {info});
  auto second = Append(base, FeatureBatch(0, 10));  // lands at 2 and checkpoints there
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(second->checkpoint_version, 2);
  ASSERT_TRUE(second->checkpoint_status.ok()) << second->checkpoint_status.ToString();
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok());
  EXPECT_FALSE(loaded->in_commit_timestamp().has_value());
  auto third = Append(*loaded, FeatureBatch(10, 20));
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(Ict(Read(2)), ahead + 1);
  EXPECT_EQ(Ict(Read(3)), ahead + 2);
}

// Turning In-Commit Timestamps on after version 0 records where they start.
TEST_F(WriterFeaturesTest, EnablingInCommitTimestampsLaterRecordsTheEnablement) {
  Snapshot base = Create({});
  auto first = Append(base, FeatureBatch(0, 10));
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(Ict(Read(1)).has_value());
  Transaction enable(*table_, first->snapshot);
  enable.SetProtocol(Protocol{1, 7, std::nullopt, std::vector<std::string>{"inCommitTimestamp"}});
  Metadata metadata = first->snapshot.metadata();
  metadata.configuration["delta.enableInCommitTimestamps"] = "true";
  enable.SetMetadata(metadata);
  auto enabled = enable.Commit();
  ASSERT_TRUE(enabled.ok()) << enabled.status().ToString();
  std::optional<int64_t> ict = Ict(Read(2));
  ASSERT_TRUE(ict.has_value());
  EXPECT_GT(*ict, first->snapshot.timestamp_ms());
  const StringMap& config = enabled->snapshot.metadata().configuration;
  EXPECT_EQ(config.at("delta.inCommitTimestampEnablementVersion"), "2");
  EXPECT_EQ(config.at("delta.inCommitTimestampEnablementTimestamp"), std::to_string(*ict));
  auto loaded = table_->LoadSnapshot();
  EXPECT_EQ(loaded->metadata().configuration, config);
  auto later = Append(*loaded, FeatureBatch(10, 20));
  ASSERT_TRUE(later.ok());
  EXPECT_GT(*Ict(Read(3)), *ict);
}

// --- Row tracking ---

TEST_F(WriterFeaturesTest, RowIdsAreContiguousAcrossCommitsAndARetry) {
  Snapshot base = Create({{"delta.enableRowTracking", "true"}});
  EXPECT_TRUE(base.protocol().WriterLists("rowTracking"));
  EXPECT_TRUE(base.protocol().WriterLists("domainMetadata"));
  EXPECT_EQ(base.metadata()
                .configuration.at("delta.rowTracking.materializedRowIdColumnName")
                .rfind("_row-id-col-", 0),
            0u);
  // Version 1: 7 rows in two files (p=a: 4, p=b: 3).
  auto first = Append(base, FeatureBatch(0, 7));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  CommitText v1 = Read(1);
  std::vector<AddFile> adds = Adds(v1);
  ASSERT_EQ(adds.size(), 2u);
  EXPECT_EQ(adds[0].base_row_id, 0);
  EXPECT_EQ(adds[1].base_row_id, *StatsNumRecords(*adds[0].stats));
  EXPECT_EQ(adds[0].default_row_commit_version, 1);
  EXPECT_EQ(adds[1].default_row_commit_version, 1);
  EXPECT_EQ(Domain(v1, kRowTrackingDomain), "{\"rowIdHighWaterMark\":6}");
  EXPECT_NE(v1.text.find("\"delta.rowTracking.preserved\":\"true\""), std::string::npos);
  // Two writers from version 1: the second loses version 2 and must reassign at version 3.
  auto winner = Append(first->snapshot, FeatureBatch(100, 105));
  ASSERT_TRUE(winner.ok());
  auto loser = Append(first->snapshot, FeatureBatch(200, 211));
  ASSERT_TRUE(loser.ok()) << loser.status().ToString();
  ASSERT_EQ(loser->version, 3);
  EXPECT_EQ(loser->attempts, 2);
  EXPECT_EQ(Domain(Read(2), kRowTrackingDomain), "{\"rowIdHighWaterMark\":11}");
  CommitText v3 = Read(3);
  EXPECT_EQ(Domain(v3, kRowTrackingDomain), "{\"rowIdHighWaterMark\":22}");
  for (const AddFile& add : Adds(v3)) {
    EXPECT_GE(*add.base_row_id, 12);
    EXPECT_EQ(add.default_row_commit_version, 3);
  }
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(CheckRowIdsContiguous(*loaded), 23);
  EXPECT_EQ(*RowIdHighWaterMark(loaded->domain_metadata()), 22);
  EXPECT_EQ(loaded->files(), loser->snapshot.files());
  auto rows = testing::ReadTableRows(*table_, *loaded);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 23u);
}

// Another writer reserved row ids (raised the high-water mark without adding files, as the
// protocol allows): ferry's retry starts above the reservation, never inside it.
TEST_F(WriterFeaturesTest, RowIdsStartAboveAConcurrentlyRaisedHighWaterMark) {
  Snapshot base = Create({{"delta.enableRowTracking", "true"}});
  CommitInfo info;
  info.json = "{\"operation\":\"RESERVE\"}";
  PutForeign(1, {info, RowIdHighWaterMarkDomain(999)});
  auto result = Append(base, FeatureBatch(0, 4));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->version, 2);
  std::vector<AddFile> adds = Adds(Read(2));
  ASSERT_EQ(adds.size(), 2u);
  EXPECT_EQ(adds[0].base_row_id, 1000);
  EXPECT_EQ(adds[1].base_row_id, 1002);
  EXPECT_EQ(Domain(Read(2), kRowTrackingDomain), "{\"rowIdHighWaterMark\":1003}");
  EXPECT_EQ(*RowIdHighWaterMark(result->snapshot.domain_metadata()), 1003);
}

TEST_F(WriterFeaturesTest, SuspendedRowTrackingAssignsNothing) {
  Snapshot base = Create({{"delta.enableRowTracking", "true"}});
  Transaction suspend(*table_, base);
  Metadata metadata = base.metadata();
  metadata.configuration["delta.enableRowTracking"] = "false";
  metadata.configuration["delta.rowTrackingSuspended"] = "true";
  suspend.SetMetadata(metadata);
  auto suspended = suspend.Commit();
  ASSERT_TRUE(suspended.ok()) << suspended.status().ToString();
  auto result = Append(suspended->snapshot, FeatureBatch(0, 4));
  ASSERT_TRUE(result.ok());
  CommitText v2 = Read(2);
  for (const AddFile& add : Adds(v2)) {
    EXPECT_FALSE(add.base_row_id.has_value());
    EXPECT_FALSE(add.default_row_commit_version.has_value());
  }
  EXPECT_FALSE(Domain(v2, kRowTrackingDomain).has_value());
}

// Optimize of a table with row tracking enabled keeps every row's id: optimize_features_test.cc.

// Row tracking supported but not enabled: stable ids need not be preserved, so optimize runs;
// its new files get fresh ids above the mark, and its removes carry the ids of the adds they end.
TEST_F(WriterFeaturesTest, OptimizeOfASupportedButNotEnabledTableAssignsFreshIds) {
  Snapshot base = Create({});
  Transaction support(*table_, base);
  support.SetProtocol(
      Protocol{1, 7, std::nullopt, std::vector<std::string>{"rowTracking", "domainMetadata"}});
  auto supported = support.Commit();
  ASSERT_TRUE(supported.ok()) << supported.status().ToString();
  auto first = Append(supported->snapshot, FeatureBatch(0, 4));
  ASSERT_TRUE(first.ok());
  auto second = Append(first->snapshot, FeatureBatch(4, 8));
  ASSERT_TRUE(second.ok());
  std::map<std::string, AddFile> before;
  for (const auto& [key, add] : second->snapshot.files()) {
    before[add.path] = add;
  }
  auto optimized = Optimize(*table_, OptimizeOptions{});
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  ASSERT_EQ(optimized->version, 4);
  CommitText v4 = Read(4);
  int removes = 0;
  for (const Action& action : v4.actions) {
    if (const auto* remove = std::get_if<RemoveFile>(&action)) {
      ++removes;
      ASSERT_EQ(before.count(remove->path), 1u);
      EXPECT_EQ(remove->base_row_id, before[remove->path].base_row_id);
      EXPECT_EQ(remove->default_row_commit_version,
                before[remove->path].default_row_commit_version);
    }
  }
  EXPECT_EQ(removes, 4);
  for (const AddFile& add : Adds(v4)) {
    EXPECT_GE(*add.base_row_id, 8);
    EXPECT_EQ(add.default_row_commit_version, 4);
  }
  EXPECT_EQ(Domain(v4, kRowTrackingDomain), "{\"rowIdHighWaterMark\":15}");
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(testing::ReadTableRows(*table_, *loaded)->size(), 8u);
}

// --- Clustering and domain metadata ---

// A clustered table as Spark writes it (the domain holds name paths), with a clustering column
// beyond the first 32 leaves: ferry's stats cover it, and the domain is kept untouched.
TEST_F(WriterFeaturesTest, ClusteredTableKeepsItsDomainAndGetsStatsForClusteringColumns) {
  std::vector<Field> fields;
  for (int i = 0; i < 40; ++i) {
    fields.push_back({"c" + std::to_string(i), DataType::Int64(), true, {}});
  }
  auto schema = std::make_shared<const columnar::Schema>(fields);
  Metadata metadata;
  metadata.id = "0b1c2d3e-0000-4000-8000-000000000000";
  metadata.schema_string = *SchemaToJson(*schema);
  metadata.created_time = 1;
  const std::string clustering = "{\"clusteringColumns\":[[\"c35\"],[\"c1\"]]}";
  CommitInfo info;
  info.json = "{\"operation\":\"CREATE TABLE\"}";
  PutForeign(
      0,
      {info, Protocol{1, 7, std::nullopt, std::vector<std::string>{"domainMetadata", "clustering"}},
       metadata, DomainMetadata{kClusteringDomain, clustering, false},
       DomainMetadata{"com.example.app", "{\"x\":1}", false}});
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(*ClusteringColumns(snap->protocol(), snap->domain_metadata()),
            (std::vector<std::string>{"c35", "c1"}));
  auto batch = columnar::RecordBatch::MakeEmpty(schema);
  for (int64_t row = 0; row < 5; ++row) {
    for (int i = 0; i < 40; ++i) {
      batch.mutable_column(i)->As<columnar::Int64Column>()->Append(row * 100 + i);
    }
  }
  auto writer = TableWriter::Create(*table_, *snap);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  ASSERT_TRUE((*writer)->Write(batch).ok());
  auto adds = (*writer)->Finish();
  ASSERT_TRUE(adds.ok());
  Transaction txn(*table_, *snap);
  txn.AddFiles(std::move(*adds));
  auto result = txn.Commit();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  std::vector<AddFile> written = Adds(Read(1));
  ASSERT_EQ(written.size(), 1u);
  const std::string& stats = *written[0].stats;
  EXPECT_NE(stats.find("\"c35\":35"), std::string::npos) << stats;   // min, a clustering column
  EXPECT_NE(stats.find("\"c35\":435"), std::string::npos) << stats;  // max
  EXPECT_NE(stats.find("\"c31\":31"), std::string::npos) << stats;   // the 32nd leaf
  EXPECT_EQ(stats.find("\"c32\""), std::string::npos) << stats;      // beyond, not clustering
  EXPECT_EQ(stats.find("\"c36\""), std::string::npos) << stats;
  // Domains: ferry wrote none, and both survive as they were.
  EXPECT_FALSE(Domain(Read(1), kClusteringDomain).has_value());
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->domain_metadata().at(kClusteringDomain).configuration, clustering);
  EXPECT_EQ(loaded->domain_metadata().at("com.example.app").configuration, "{\"x\":1}");
  // ferry's optimize clusters the file (optimize_features_test.cc has the order) and keeps both
  // domains.
  auto optimized = Optimize(*table_, OptimizeOptions{});
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  EXPECT_EQ(optimized->clustering_columns, (std::vector<std::string>{"c35", "c1"}));
  std::vector<AddFile> clustered = Adds(Read(*optimized->version));
  ASSERT_EQ(clustered.size(), 1u);
  EXPECT_EQ(clustered[0].clustering_provider, "liquid");
  loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->domain_metadata().at(kClusteringDomain).configuration, clustering);
  EXPECT_EQ(loaded->domain_metadata().at("com.example.app").configuration, "{\"x\":1}");
}

TEST_F(WriterFeaturesTest, ClusteringColumnsReadBothSpellings) {
  Protocol clustered{1, 7, std::nullopt, std::vector<std::string>{"clustering"}};
  std::map<std::string, DomainMetadata> domains;
  domains[kClusteringDomain] =
      DomainMetadata{kClusteringDomain, "{\"clusteringColumns\":[\"a\",[\"s\",\"b\"]]}", false};
  EXPECT_EQ(*ClusteringColumns(clustered, domains), (std::vector<std::string>{"a", "s.b"}));
  EXPECT_TRUE(ClusteringColumns(Protocol{}, domains)->empty());
  domains[kClusteringDomain].configuration = "{\"columns\":1}";
  EXPECT_EQ(ClusteringColumns(clustered, domains).status().code(), StatusCode::kDataLoss);
  domains.clear();
  EXPECT_EQ(*RowIdHighWaterMark(domains), -1);
  domains[kRowTrackingDomain] = DomainMetadata{kRowTrackingDomain, "{}", false};
  EXPECT_EQ(RowIdHighWaterMark(domains).status().code(), StatusCode::kDataLoss);
}

// --- Checkpoints ---

std::shared_ptr<const RandomAccessFile> FileOf(std::string bytes, std::string name) {
  return std::make_shared<StringRandomAccessFile>(std::move(bytes), std::move(name));
}

// A table that asks for V2 checkpoints (v2Checkpoint + delta.checkpointPolicy=v2) gets a
// classic-named V2 spec checkpoint: one checkpointMetadata row beside the usual actions, in a
// column shaped like the one in Spark's V2 checkpoint (golden table v2-checkpoint-parquet), read
// back by ferry's own reader at that version. Without the policy the checkpoint stays V1.
TEST_F(WriterFeaturesTest, V2CheckpointPolicyWritesAClassicNamedV2Checkpoint) {
  Snapshot base = Create({{"delta.checkpointInterval", "2"}, {"delta.checkpointPolicy", "v2"}});
  Transaction upgrade(*table_, base);
  upgrade.SetProtocol(
      Protocol{3, 7, std::vector<std::string>{"v2Checkpoint"},
               std::vector<std::string>{"v2Checkpoint", "rowTracking", "domainMetadata"}});
  auto upgraded = upgrade.Commit();
  ASSERT_TRUE(upgraded.ok()) << upgraded.status().ToString();
  EXPECT_TRUE(WritesV2Checkpoints(upgraded->snapshot));
  auto second = Append(upgraded->snapshot, FeatureBatch(0, 9));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(second->checkpoint_version, 2);
  ASSERT_TRUE(second->checkpoint_status.ok()) << second->checkpoint_status.ToString();
  auto bytes = store_->Read("t/_delta_log/" + ClassicCheckpointFileName(2));
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto actions = ReadParquetActions(FileOf(*bytes, "checkpoint"));
  ASSERT_TRUE(actions.ok()) << actions.status().ToString();
  int checkpoint_metadata = 0;
  int adds = 0;
  for (const Action& action : *actions) {
    if (const auto* cm = std::get_if<CheckpointMetadata>(&action)) {
      ++checkpoint_metadata;
      EXPECT_EQ(cm->version, 2);
    } else if (const auto* add = std::get_if<AddFile>(&action)) {
      ++adds;
      EXPECT_TRUE(add->base_row_id.has_value());  // row ids survive the checkpoint
    }
  }
  EXPECT_EQ(checkpoint_metadata, 1);
  EXPECT_EQ(adds, 2);
  // The column has the type of Spark's.
  auto ours = parquet::FileReader::Open(FileOf(*bytes, "ours"));
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  auto spark = parquet::FileReader::OpenLocal(
      std::string(FERRY_TESTDATA_DIR) +
      "/delta-golden/v2-checkpoint-parquet/_delta_log/"
      "00000000000000000002.checkpoint.e8fa2696-9728-4e9c-b285-634743fdd4fb.parquet");
  ASSERT_TRUE(spark.ok()) << spark.status().ToString();
  auto ours_index = (*ours)->schema()->FieldIndex("checkpointMetadata");
  auto spark_index = (*spark)->schema()->FieldIndex("checkpointMetadata");
  ASSERT_TRUE(ours_index.has_value() && spark_index.has_value());
  const columnar::Field& a = (*ours)->schema()->field(*ours_index);
  const columnar::Field& b = (*spark)->schema()->field(*spark_index);
  EXPECT_TRUE(a.type->Equals(*b.type)) << a.ToString() << " vs " << b.ToString();
  // ferry's reader loads the table from it.
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->newest_checkpoint_version(), 2);
  EXPECT_EQ(loaded->files(), second->snapshot.files());
  EXPECT_EQ(loaded->domain_metadata(), second->snapshot.domain_metadata());
  auto rows = testing::ReadTableRows(*table_, *loaded);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 9u);
}

TEST_F(WriterFeaturesTest, V2CheckpointFeatureWithoutThePolicyKeepsV1Checkpoints) {
  Snapshot base = Create({{"delta.checkpointInterval", "2"}});
  Transaction upgrade(*table_, base);
  upgrade.SetProtocol(Protocol{3, 7, std::vector<std::string>{"v2Checkpoint"},
                               std::vector<std::string>{"v2Checkpoint"}});
  auto upgraded = upgrade.Commit();
  ASSERT_TRUE(upgraded.ok()) << upgraded.status().ToString();
  EXPECT_FALSE(WritesV2Checkpoints(upgraded->snapshot));
  auto second = Append(upgraded->snapshot, FeatureBatch(0, 9));
  ASSERT_TRUE(second.ok() && second->checkpoint_status.ok());
  auto bytes = store_->Read("t/_delta_log/" + ClassicCheckpointFileName(2));
  ASSERT_TRUE(bytes.ok());
  auto reader = parquet::FileReader::Open(FileOf(*bytes, "v1"));
  ASSERT_TRUE(reader.ok());
  EXPECT_FALSE((*reader)->schema()->FieldIndex("checkpointMetadata").has_value());
}

}  // namespace
}  // namespace ferry::delta
