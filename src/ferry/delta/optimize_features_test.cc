// ferry's optimize on tables with row tracking enabled and on clustered tables (optimize.h,
// clustering_order.h): every live row keeps its stable row id and row commit version
// (deletion vectors honoured, materialized columns written and read back, a concurrent append
// and a concurrent remove handled as for any optimize), and a clustered table's rows come back
// from the new files in clustering order with disjoint ranges per file. Row ids read through
// ferry's row tracking reader are checked against ids the test computes itself from the raw
// Parquet files (materialized columns, else baseRowId + physical position).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include "ferry/base/failpoint.h"
#include "ferry/columnar/column.h"
#include "ferry/delta/actions_json.h"
#include "ferry/delta/clustering_order.h"
#include "ferry/delta/deletion_vector.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/optimize.h"
#include "ferry/delta/roaring_bitmap.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/storage/memory_store.h"

namespace ferry::delta {
namespace {

using columnar::DataType;
using columnar::Field;

columnar::SchemaPtr TwoColumns() {
  return std::make_shared<const columnar::Schema>(std::vector<Field>{
      {"id", DataType::Int64(), true, {}},
      {"k", DataType::Int64(), true, {}},
  });
}

// (id, k) rows.
columnar::RecordBatch Rows(const std::vector<std::pair<int64_t, std::optional<int64_t>>>& rows) {
  auto batch = columnar::RecordBatch::MakeEmpty(TwoColumns());
  for (const auto& [id, k] : rows) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(id);
    if (k.has_value()) {
      batch.mutable_column(1)->As<columnar::Int64Column>()->Append(*k);
    } else {
      batch.mutable_column(1)->AppendNull();
    }
  }
  return batch;
}

columnar::RecordBatch Ids(int64_t begin, int64_t end) {
  std::vector<std::pair<int64_t, std::optional<int64_t>>> rows;
  for (int64_t id = begin; id < end; ++id) {
    rows.emplace_back(id, id * 7 % 13);
  }
  return Rows(rows);
}

struct Tracked {
  int64_t row_id;
  int64_t commit_version;
  bool operator==(const Tracked&) const = default;
};

class OptimizeFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::make_shared<storage::InMemoryStore>();
    table_ = *Table::Open(store_, "t");
  }
  void TearDown() override { failpoint::DisarmAll(); }

  Snapshot Create(StringMap configuration) {
    TableSpec spec;
    spec.schema = TwoColumns();
    spec.configuration = std::move(configuration);
    auto snap = table_->Create(spec);
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return snap.ok() ? *snap : Snapshot();
  }

  Snapshot Latest() {
    auto snap = table_->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return *snap;
  }

  Status Append(const columnar::RecordBatch& batch) {
    Snapshot snapshot = Latest();
    FERRY_ASSIGN_OR_RETURN(auto writer, TableWriter::Create(*table_, snapshot));
    FERRY_RETURN_IF_ERROR(writer->Write(batch));
    FERRY_ASSIGN_OR_RETURN(auto adds, writer->Finish());
    Transaction txn(*table_, snapshot, CommitOptions{.initial_backoff_ms = 0});
    txn.AddFiles(std::move(adds));
    return txn.Commit().status();
  }

  // Another writer's commit: the live file holding id `id` gets a deletion vector deleting it
  // (remove + add of the same path, as Spark's DELETE writes them).
  void DeleteRow(int64_t id) {
    deleted_.insert(id);
    Snapshot snapshot = Latest();
    for (const auto& [key, add] : snapshot.files()) {
      // Physical positions: the file's rows in order, those deleted already included.
      auto all = ReadAllIds(add);
      auto it = std::find(all.begin(), all.end(), id);
      if (it == all.end()) {
        continue;
      }
      RoaringBitmap64 rows;
      if (add.deletion_vector.has_value()) {
        rows = *LoadDeletionVector(*table_, add, all.size());
      }
      rows.Add(static_cast<uint64_t>(it - all.begin()));
      AddFile with_dv = add;
      with_dv.deletion_vector = InlineDeletionVector(rows);
      with_dv.data_change = true;
      Transaction txn(*table_, snapshot);
      txn.Remove(RemoveFile{.path = add.path,
                            .deletion_timestamp = 1,
                            .data_change = true,
                            .deletion_vector = add.deletion_vector});
      txn.Add(with_dv);
      txn.SetOperation("DELETE", {});
      auto committed = txn.Commit();
      ASSERT_TRUE(committed.ok()) << committed.status().ToString();
      return;
    }
    FAIL() << "no file holds id " << id;
  }

  // The ids of a file in physical order (deleted rows included).
  std::vector<int64_t> ReadAllIds(const AddFile& add) {
    auto file = store_->OpenForRead(table_->Key(*RelativeFilePath(add)));
    EXPECT_TRUE(file.ok());
    auto reader = parquet::FileReader::Open(*file);
    EXPECT_TRUE(reader.ok());
    auto batch = (*reader)->ReadAll();
    EXPECT_TRUE(batch.ok());
    const auto* ids = batch->GetColumn("id")->As<columnar::Int64Column>();
    return ids->values();
  }

  // Stable row id and commit version of every live row, by id, computed the way a reader must
  // (PROTOCOL.md "Reader Requirements for Row Tracking").
  std::map<int64_t, Tracked> RowIds() {
    Snapshot snapshot = Latest();
    auto names = MaterializedRowTrackingColumns(snapshot.metadata());
    EXPECT_TRUE(names.ok()) << names.status().ToString();
    std::map<int64_t, Tracked> out;
    for (const auto& [key, add] : snapshot.files()) {
      Status st = ScanLiveFileWithRowTracking(
          *table_, snapshot, add, *names, 1000, [&](columnar::RecordBatch& batch) {
            const auto* ids = batch.column(0).As<columnar::Int64Column>();
            const auto* row_ids = batch.column(2).As<columnar::Int64Column>();
            const auto* versions = batch.column(3).As<columnar::Int64Column>();
            for (int64_t row = 0; row < batch.num_rows(); ++row) {
              EXPECT_TRUE(
                  out.emplace(ids->Value(row), Tracked{row_ids->Value(row), versions->Value(row)})
                      .second)
                  << "id " << ids->Value(row) << " twice";
            }
            return Status::OK();
          });
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
    return out;
  }

  // The same pairs computed by the test alone, as an independent check of RowIds(): every live
  // file read whole by ferry's Parquet reader (no Delta code), the materialized columns looked
  // up by the names in the table's configuration, and where a row has no materialized value,
  // baseRowId + its physical position and defaultRowCommitVersion (PROTOCOL.md "Row Tracking").
  // Deleted rows are known by id from DeleteRow (the ids are unique), so no DV is decoded.
  std::map<int64_t, Tracked> RawRowIds() {
    Snapshot snapshot = Latest();
    const StringMap& config = snapshot.metadata().configuration;
    const std::string id_name = config.at("delta.rowTracking.materializedRowIdColumnName");
    const std::string version_name =
        config.at("delta.rowTracking.materializedRowCommitVersionColumnName");
    std::map<int64_t, Tracked> out;
    for (const auto& [key, add] : snapshot.files()) {
      auto file = store_->OpenForRead(table_->Key(*RelativeFilePath(add)));
      EXPECT_TRUE(file.ok());
      auto reader = parquet::FileReader::Open(*file);
      EXPECT_TRUE(reader.ok());
      auto batch = (*reader)->ReadAll();
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      EXPECT_TRUE(add.base_row_id.has_value()) << add.path;
      EXPECT_TRUE(add.default_row_commit_version.has_value()) << add.path;
      if (!batch.ok() || !add.base_row_id || !add.default_row_commit_version) {
        continue;
      }
      const auto* ids = batch->GetColumn("id")->As<columnar::Int64Column>();
      const columnar::Column* row_ids = batch->GetColumn(id_name);  // null: not in the file
      const columnar::Column* versions = batch->GetColumn(version_name);
      for (int64_t position = 0; position < ids->length(); ++position) {
        const int64_t id = ids->Value(position);
        if (deleted_.count(id) != 0) {
          continue;
        }
        Tracked tracked{*add.base_row_id + position, *add.default_row_commit_version};
        if (row_ids != nullptr && row_ids->IsValid(position)) {
          tracked.row_id = row_ids->As<columnar::Int64Column>()->Value(position);
        }
        if (versions != nullptr && versions->IsValid(position)) {
          tracked.commit_version = versions->As<columnar::Int64Column>()->Value(position);
        }
        EXPECT_TRUE(out.emplace(id, tracked).second) << "id " << id << " twice";
      }
    }
    return out;
  }

  // RowIds(), checked against RawRowIds().
  std::map<int64_t, Tracked> CheckedRowIds() {
    std::map<int64_t, Tracked> ids = RowIds();
    EXPECT_EQ(RawRowIds(), ids) << "ferry's row tracking reader and the raw files disagree";
    return ids;
  }

  // The row ids of a map, which must all differ.
  static void ExpectUnique(const std::map<int64_t, Tracked>& ids) {
    std::set<int64_t> seen;
    for (const auto& [id, tracked] : ids) {
      EXPECT_TRUE(seen.insert(tracked.row_id).second) << "row id " << tracked.row_id << " twice";
    }
  }

  // Four appends of 1,000 rows, ids 0..3999, whose k values (0..3999 shuffled with `seed`) span
  // the whole range of k in every append: nothing is clustered before optimize.
  void AppendShuffledKs(uint64_t seed) {
    std::vector<int64_t> ks(4000);
    std::iota(ks.begin(), ks.end(), 0);
    std::shuffle(ks.begin(), ks.end(), std::mt19937_64(seed));
    for (int part = 0; part < 4; ++part) {
      std::vector<std::pair<int64_t, std::optional<int64_t>>> rows;
      for (int i = part * 1000; i < (part + 1) * 1000; ++i) {
        rows.emplace_back(i, ks[static_cast<size_t>(i)]);
      }
      ASSERT_TRUE(Append(Rows(rows)).ok());
    }
  }

  std::string CommitText(int64_t version) {
    auto text = store_->Read("t/_delta_log/" + CommitFileName(version));
    EXPECT_TRUE(text.ok());
    return text.ok() ? *text : "";
  }

  // Makes the table clustered by `columns` (a foreign commit, as Spark's CLUSTER BY leaves it).
  void Cluster(const std::string& columns_json, bool row_tracking) {
    Snapshot snapshot = Latest();
    std::vector<std::string> features = {"appendOnly", "invariants", "domainMetadata",
                                         "clustering"};
    if (row_tracking) {
      features.push_back("rowTracking");
    }
    Transaction txn(*table_, snapshot);
    txn.SetProtocol(Protocol{1, 7, std::nullopt, features});
    auto committed = txn.Commit();
    ASSERT_TRUE(committed.ok()) << committed.status().ToString();
    CommitInfo info;
    info.json = "{\"operation\":\"CLUSTER BY\"}";
    std::string text =
        ActionToJson(info) + "\n" +
        ActionToJson(DomainMetadata{kClusteringDomain,
                                    "{\"clusteringColumns\":" + columns_json + "}", false}) +
        "\n";
    ASSERT_TRUE(
        store_->PutIfAbsent("t/_delta_log/" + CommitFileName(committed->version + 1), text).ok());
  }

  // The live files' (k min, k max, clusteringProvider) in the order of their first row's k.
  std::vector<std::vector<int64_t>> FileRanges(const Snapshot& snapshot, bool* all_clustered) {
    std::vector<std::vector<int64_t>> out;
    *all_clustered = true;
    for (const auto& [key, add] : snapshot.files()) {
      *all_clustered &= add.clustering_provider == std::optional<std::string>("liquid");
      auto batch = ReadLiveFile(*table_, snapshot, add, {"k"});
      EXPECT_TRUE(batch.ok());
      const auto* k = batch->column(0).As<columnar::Int64Column>();
      std::vector<int64_t> values(k->values().begin(), k->values().end());
      // Written in clustering order: each file sorted.
      EXPECT_TRUE(std::is_sorted(values.begin(), values.end())) << add.path;
      out.push_back({values.front(), values.back()});
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::shared_ptr<storage::InMemoryStore> store_;
  std::unique_ptr<Table> table_;
  std::set<int64_t> deleted_;  // ids DeleteRow deleted
};

// --- Row tracking ---

TEST_F(OptimizeFeaturesTest, RowIdsAndCommitVersionsSurviveOptimizeWithDeletionVectors) {
  Create({{"delta.enableRowTracking", "true"}, {"delta.enableDeletionVectors", "true"}});
  ASSERT_TRUE(Append(Ids(0, 10)).ok());   // version 1: row ids 0..9
  ASSERT_TRUE(Append(Ids(10, 25)).ok());  // version 2: 10..24
  DeleteRow(3);                           // version 3: DVs shift no positions
  DeleteRow(12);                          // version 4
  ASSERT_TRUE(Append(Ids(25, 30)).ok());  // version 5: 25..29
  const std::map<int64_t, Tracked> before = CheckedRowIds();
  ASSERT_EQ(before.size(), 28u);
  EXPECT_EQ(before.at(4).row_id, 4);  // position 4 of the first file, row 3 deleted before it
  EXPECT_EQ(before.at(13).row_id, 13);
  EXPECT_EQ(before.at(13).commit_version, 2);

  auto optimized = Optimize(*table_, OptimizeOptions{});
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  ASSERT_EQ(optimized->version, 6);
  EXPECT_TRUE(optimized->row_ids_preserved);
  EXPECT_EQ(optimized->files_removed, 3);
  EXPECT_EQ(optimized->rows, 28);
  Snapshot after = Latest();
  ASSERT_EQ(after.num_files(), 1);
  const AddFile& add = after.files().begin()->second;
  EXPECT_FALSE(add.deletion_vector.has_value());
  EXPECT_EQ(add.base_row_id, 30);  // fresh ids above the mark
  EXPECT_EQ(add.default_row_commit_version, 6);
  EXPECT_EQ(*RowIdHighWaterMark(after.domain_metadata()), 57);
  EXPECT_EQ(CheckedRowIds(), before);
  const std::string text = CommitText(6);
  EXPECT_NE(text.find("\"delta.rowTracking.preserved\":\"true\""), std::string::npos) << text;

  // The materialized columns are in the file, by the configured names, hidden from the schema.
  auto file = store_->OpenForRead(table_->Key(*RelativeFilePath(add)));
  ASSERT_TRUE(file.ok());
  auto reader = parquet::FileReader::Open(*file);
  ASSERT_TRUE(reader.ok());
  const columnar::Schema& file_schema = *(*reader)->schema();
  ASSERT_EQ(file_schema.num_fields(), 4);
  EXPECT_EQ(file_schema.field(2).name,
            after.metadata().configuration.at("delta.rowTracking.materializedRowIdColumnName"));
  EXPECT_EQ(file_schema.field(3).name,
            after.metadata().configuration.at(
                "delta.rowTracking.materializedRowCommitVersionColumnName"));
  EXPECT_EQ(after.schema()->num_fields(), 2);
  // Every row of the rewritten file carries both values (RawRowIds relies on them, not on
  // baseRowId 30 + position).
  auto raw = (*reader)->ReadAll();
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_EQ(raw->column(2).null_count(), 0);
  EXPECT_EQ(raw->column(3).null_count(), 0);
  // Stats cover the table's columns only.
  EXPECT_EQ(add.stats->find("_row-"), std::string::npos) << *add.stats;
  // Readers by name see the table's columns only.
  auto rows = ReadLiveFile(*table_, after, add);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->num_columns(), 2);
  EXPECT_EQ(rows->num_rows(), 28);

  // New rows, then a second optimize mixing materialized and default ids.
  ASSERT_TRUE(Append(Ids(30, 34)).ok());  // version 7: 58..61
  DeleteRow(20);                          // version 8, in the optimized file
  std::map<int64_t, Tracked> expected = CheckedRowIds();
  EXPECT_EQ(expected.at(31).row_id, 59);
  EXPECT_EQ(expected.at(31).commit_version, 7);
  auto again = Optimize(*table_, OptimizeOptions{});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(CheckedRowIds(), expected);
  ExpectUnique(expected);
}

TEST_F(OptimizeFeaturesTest, AConcurrentAppendGetsFreshIdsAndOptimizeKeepsTheOldOnes) {
  Create({{"delta.enableRowTracking", "true"}});
  ASSERT_TRUE(Append(Ids(0, 10)).ok());
  ASSERT_TRUE(Append(Ids(10, 20)).ok());
  const std::map<int64_t, Tracked> before = CheckedRowIds();
  // The optimize stalls before its first put; an append commits meanwhile.
  ASSERT_TRUE(failpoint::Arm("delta.commit.before_put", "sleep(1000)@1").ok());
  Result<OptimizeResult> optimized = Internal("not run");
  std::thread optimizer([&] { optimized = Optimize(*table_, OptimizeOptions{}); });
  while (failpoint::HitCount("delta.commit.before_put") < 1) {
    std::this_thread::yield();
  }
  Status appended = Append(Ids(20, 25));
  optimizer.join();
  ASSERT_TRUE(appended.ok()) << appended.ToString();
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  std::map<int64_t, Tracked> after = CheckedRowIds();
  ASSERT_EQ(after.size(), 25u);
  for (const auto& [id, tracked] : before) {
    EXPECT_EQ(after.at(id), tracked) << "id " << id;
  }
  ExpectUnique(after);
  // Every fresh id, the optimized file's included, is at or below the high-water mark.
  Snapshot snapshot = Latest();
  const int64_t mark = *RowIdHighWaterMark(snapshot.domain_metadata());
  for (const auto& [key, add] : snapshot.files()) {
    EXPECT_LE(*add.base_row_id + *StatsNumRecords(*add.stats) - 1, mark);
  }
}

TEST_F(OptimizeFeaturesTest, AConcurrentRemoveAbortsAndChangesNothing) {
  Create({{"delta.enableRowTracking", "true"}, {"delta.enableDeletionVectors", "true"}});
  ASSERT_TRUE(Append(Ids(0, 10)).ok());
  ASSERT_TRUE(Append(Ids(10, 20)).ok());
  ASSERT_TRUE(failpoint::Arm("delta.commit.before_put", "sleep(1000)@1").ok());
  Result<OptimizeResult> optimized = Internal("not run");
  std::thread optimizer([&] { optimized = Optimize(*table_, OptimizeOptions{}); });
  while (failpoint::HitCount("delta.commit.before_put") < 1) {
    std::this_thread::yield();
  }
  DeleteRow(5);  // removes (and re-adds with a DV) a file the optimize rewrites
  optimizer.join();
  EXPECT_EQ(optimized.status().code(), StatusCode::kAborted) << optimized.status().ToString();
  EXPECT_NE(optimized.status().message().find("ConcurrentDeleteDelete"), std::string::npos);
  EXPECT_EQ(Latest().num_files(), 2);
  std::map<int64_t, Tracked> ids = CheckedRowIds();
  EXPECT_EQ(ids.size(), 19u);
  EXPECT_EQ(ids.count(5), 0u);
  EXPECT_EQ(ids.at(6).row_id, 6);
  EXPECT_EQ(ids.at(15).row_id, 15);
}

TEST_F(OptimizeFeaturesTest, ATableNamingNoMaterializedColumnsIsLeftAlone) {
  Create({{"delta.enableRowTracking", "true"}});
  ASSERT_TRUE(Append(Ids(0, 10)).ok());
  ASSERT_TRUE(Append(Ids(10, 20)).ok());
  Snapshot snapshot = Latest();
  Metadata metadata = snapshot.metadata();
  metadata.configuration.erase("delta.rowTracking.materializedRowIdColumnName");
  Transaction txn(*table_, snapshot);
  txn.SetMetadata(metadata);
  ASSERT_TRUE(txn.Commit().ok());
  auto optimized = Optimize(*table_, OptimizeOptions{});
  EXPECT_EQ(optimized.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(optimized.status().message().find("materializedRowIdColumnName"), std::string::npos)
      << optimized.status().ToString();
  EXPECT_EQ(Latest().version(), 3);
}

// --- Clustering ---

TEST_F(OptimizeFeaturesTest, ClusteredTableIsSortedIntoFilesWithDisjointRanges) {
  Create({{"delta.enableRowTracking", "true"}});
  Cluster("[[\"k\"]]", /*row_tracking=*/true);
  ASSERT_NO_FATAL_FAILURE(AppendShuffledKs(42));
  const std::map<int64_t, Tracked> before = CheckedRowIds();
  const std::string domain = Latest().domain_metadata().at(kClusteringDomain).configuration;

  auto optimized = Optimize(*table_, OptimizeOptions{.target_size = 8 << 10});
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  EXPECT_EQ(optimized->clustering_columns, std::vector<std::string>{"k"});
  EXPECT_EQ(optimized->cluster_parts, 1);
  EXPECT_EQ(optimized->files_removed, 4);
  EXPECT_EQ(optimized->rows, 4000);
  ASSERT_GT(optimized->files_added, 2);
  Snapshot after = Latest();
  bool all_clustered = false;
  std::vector<std::vector<int64_t>> ranges = FileRanges(after, &all_clustered);
  EXPECT_TRUE(all_clustered);
  ASSERT_EQ(ranges.size(), static_cast<size_t>(optimized->files_added));
  for (size_t i = 1; i < ranges.size(); ++i) {
    EXPECT_LT(ranges[i - 1][1], ranges[i][0]) << "files " << i - 1 << " and " << i << " overlap";
  }
  EXPECT_EQ(ranges.front()[0], 0);
  EXPECT_EQ(ranges.back()[1], 3999);
  EXPECT_EQ(after.domain_metadata().at(kClusteringDomain).configuration, domain);
  EXPECT_EQ(CheckedRowIds(), before);
  const std::string text = CommitText(after.version());
  EXPECT_NE(text.find("\"clusterBy\":\"[\\\"k\\\"]\""), std::string::npos) << text;

  // Everything is clustered now: nothing to do, unless asked to recluster.
  auto idle = Optimize(*table_, OptimizeOptions{.target_size = 8 << 10});
  ASSERT_TRUE(idle.ok());
  EXPECT_EQ(idle->bins, 0);
  EXPECT_FALSE(idle->version.has_value());
  auto full = Optimize(*table_, OptimizeOptions{.target_size = 8 << 10, .full = true});
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->files_removed, optimized->files_added);
  EXPECT_EQ(CheckedRowIds(), before);
}

// A group whose decoded rows pass max_cluster_memory is sorted and written in parts: every file
// still sorted, every row and row id kept, each part's files disjoint.
TEST_F(OptimizeFeaturesTest, AGroupPastTheMemoryBoundIsClusteredInParts) {
  Create({{"delta.enableRowTracking", "true"}});
  Cluster("[[\"k\"]]", /*row_tracking=*/true);
  ASSERT_NO_FATAL_FAILURE(AppendShuffledKs(43));
  const std::map<int64_t, Tracked> before = CheckedRowIds();
  // 1,000 rows of four BIGINTs (two of them the row tracking columns) hold about 32 KiB: a part
  // closes after the second file, and another after the fourth.
  auto optimized =
      Optimize(*table_, OptimizeOptions{.target_size = 8 << 10, .max_cluster_memory = 40 << 10});
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  EXPECT_EQ(optimized->cluster_parts, 2);
  EXPECT_EQ(optimized->files_removed, 4);
  EXPECT_EQ(optimized->rows, 4000);
  Snapshot after = Latest();
  bool all_clustered = false;
  std::vector<std::vector<int64_t>> ranges = FileRanges(after, &all_clustered);  // each sorted
  EXPECT_TRUE(all_clustered);
  ASSERT_GE(ranges.size(), 4u);
  // Two parts, each covering about the whole range of k with disjoint files: every value of k
  // lies in at most two files.
  for (int64_t k : {int64_t{0}, int64_t{1999}, int64_t{3999}}) {
    int64_t holding = 0;
    for (const std::vector<int64_t>& range : ranges) {
      holding += range[0] <= k && k <= range[1] ? 1 : 0;
    }
    EXPECT_LE(holding, 2) << k;
  }
  EXPECT_EQ(CheckedRowIds(), before);
}

TEST_F(OptimizeFeaturesTest, FilesOfAnotherClusteringProviderAreLeftAlone) {
  Create({});
  Cluster("[\"k\"]", /*row_tracking=*/false);
  // A file another clustering implementation wrote.
  Snapshot snapshot = Latest();
  auto writer = TableWriter::Create(*table_, snapshot);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Write(Ids(0, 10)).ok());
  auto adds = (*writer)->Finish();
  ASSERT_TRUE(adds.ok());
  for (AddFile& add : *adds) {
    add.clustering_provider = "someone-else";
  }
  Transaction txn(*table_, snapshot);
  txn.AddFiles(std::move(*adds));
  ASSERT_TRUE(txn.Commit().ok());
  ASSERT_TRUE(Append(Ids(10, 20)).ok());
  auto optimized = Optimize(*table_, OptimizeOptions{.full = true});
  ASSERT_TRUE(optimized.ok()) << optimized.status().ToString();
  EXPECT_EQ(optimized->files_removed, 1);  // a lone unclustered file is clustered too
  Snapshot after = Latest();
  EXPECT_EQ(after.num_files(), 2);
  int others = 0;
  for (const auto& [key, add] : after.files()) {
    others += add.clustering_provider == std::optional<std::string>("someone-else") ? 1 : 0;
  }
  EXPECT_EQ(others, 1);
}

TEST(ClusteringOrderTest, NullsFirstThenAscendingForOneColumn) {
  columnar::RecordBatch batch = Rows({{0, 5}, {1, std::nullopt}, {2, -3}, {3, 5}, {4, 0}});
  auto paths = ResolveClusteringColumns(batch.schema(), {"K"}, ColumnMappingMode::kNone);
  ASSERT_TRUE(paths.ok()) << paths.status().ToString();
  auto order = ClusteringOrder(batch, *paths);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<int64_t>{1, 2, 4, 0, 3}));  // ties keep their order
  EXPECT_EQ(
      ResolveClusteringColumns(batch.schema(), {"nope"}, ColumnMappingMode::kNone).status().code(),
      StatusCode::kNotSupported);
}

// Two columns on a 16 x 16 grid, shuffled: a Z-order visits the quadrants one after the other
// (the first column's top bit first), and so on inside each quadrant.
TEST(ClusteringOrderTest, TwoColumnsFollowAZOrderCurve) {
  std::vector<std::pair<int64_t, std::optional<int64_t>>> points;
  for (int64_t x = 0; x < 16; ++x) {
    for (int64_t y = 0; y < 16; ++y) {
      points.emplace_back(x, y);
    }
  }
  std::shuffle(points.begin(), points.end(), std::mt19937_64(7));
  columnar::RecordBatch batch = Rows(points);  // id = x, k = y
  auto paths = ResolveClusteringColumns(batch.schema(), {"id", "k"}, ColumnMappingMode::kNone);
  ASSERT_TRUE(paths.ok());
  auto order = ClusteringOrder(batch, *paths);
  ASSERT_TRUE(order.ok());
  const auto* xs = batch.column(0).As<columnar::Int64Column>();
  const auto* ys = batch.column(1).As<columnar::Int64Column>();
  for (size_t i = 0; i < order->size(); ++i) {
    const int64_t x = xs->Value((*order)[i]);
    const int64_t y = ys->Value((*order)[i]);
    const size_t quadrant = i / 64;  // 0: x<8,y<8; 1: x<8,y>=8; 2: x>=8,y<8; 3: both >= 8
    EXPECT_EQ(x >= 8, quadrant >= 2) << i;
    EXPECT_EQ(y >= 8, quadrant % 2 == 1) << i;
    const size_t sub = (i % 64) / 16;  // the same inside the quadrant, on bit 2
    EXPECT_EQ((x % 8) >= 4, sub >= 2) << i;
    EXPECT_EQ((y % 8) >= 4, sub % 2 == 1) << i;
  }
}

}  // namespace
}  // namespace ferry::delta
