// Deletion vectors honoured by the maintenance scans (file_scan.h): on the golden tables Spark
// wrote with DELETEs (../shared/testdata/delta-golden, read in place or from a temporary copy),
// the scan gives exactly the rows Spark left live, verify counts them net of the DVs, optimize
// rewrites the files with DVs into files without, and vacuum keeps the DV files live files use.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <set>

#include "ferry/base/clock.h"
#include "ferry/columnar/column.h"
#include "ferry/delta/deletion_vector.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/optimize.h"
#include "ferry/delta/table.h"
#include "ferry/delta/vacuum.h"
#include "ferry/delta/verify.h"
#include "ferry/storage/local_store.h"

namespace ferry::delta {
namespace {

const std::string kGoldenDir = std::string(FERRY_TESTDATA_DIR) + "/delta-golden";

std::unique_ptr<Table> OpenAt(const std::string& root, const std::string& name) {
  auto store = storage::LocalStore::Create(root);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  auto table = Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(*store)), name);
  EXPECT_TRUE(table.ok()) << table.status().ToString();
  return std::move(*table);
}

// Every value of integer column `column` over the live rows of the latest snapshot.
std::multiset<int64_t> LiveValues(const Table& table, const std::string& column) {
  std::multiset<int64_t> out;
  auto snapshot = table.LoadSnapshot();
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  for (const auto& [key, add] : snapshot->files()) {
    auto batch = ReadLiveFile(table, *snapshot, add, {column});
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    if (!batch.ok()) {
      continue;
    }
    const columnar::Column& values = batch->column(0);
    for (int64_t row = 0; row < batch->num_rows(); ++row) {
      const auto* ints = dynamic_cast<const columnar::Int64Column*>(&values);
      const auto* int32s = dynamic_cast<const columnar::Int32Column*>(&values);
      out.insert(ints != nullptr ? ints->Value(row) : int32s->Value(row));
    }
  }
  return out;
}

// dv-partitioned-with-checkpoint: 50 rows col1 = 0..49 (part = col1 % 10, two files per
// partition), then 15 DELETEs `col1 = 0, 2, ..., 28` (its commitInfo predicates), the first
// ten before the checkpoint at version 10: 35 rows live.
std::multiset<int64_t> SparkLiveCol1() {
  std::multiset<int64_t> out;
  for (int64_t v = 0; v < 50; ++v) {
    if (v >= 30 || v % 2 == 1) {
      out.insert(v);
    }
  }
  return out;
}

class TempCopy {
 public:
  explicit TempCopy(const std::string& table) {
    char pattern[] = "/tmp/ferry_dv_XXXXXX";
    root_ = mkdtemp(pattern);
    std::filesystem::copy(kGoldenDir + "/" + table, root_ + "/" + table,
                          std::filesystem::copy_options::recursive);
  }
  ~TempCopy() { std::filesystem::remove_all(root_); }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// LRS 'DV cases': DELETEs of id 0, 7 and 14 from one file of ids 0..49.
TEST(DeletionVectorScanTest, SkipsTheRowsSparkDeleted) {
  auto table = OpenAt(kGoldenDir, "log-replay-dv-key-cases");
  std::multiset<int64_t> expected;
  for (int64_t id = 0; id < 50; ++id) {
    if (id != 0 && id != 7 && id != 14) {
      expected.insert(id);
    }
  }
  EXPECT_EQ(LiveValues(*table, "id"), expected);
}

TEST(DeletionVectorScanTest, PartitionedTableWithCheckpointGivesSparksLiveRows) {
  auto table = OpenAt(kGoldenDir, "dv-partitioned-with-checkpoint");
  EXPECT_EQ(LiveValues(*table, "col1"), SparkLiveCol1());
  // Partition values are rebuilt for live rows only.
  EXPECT_EQ(LiveValues(*table, "part").size(), 35u);

  auto snapshot = table->LoadSnapshot();
  ASSERT_TRUE(snapshot.ok());
  int with_dv = 0;
  for (const auto& [key, add] : snapshot->files()) {
    if (!add.deletion_vector) {
      continue;
    }
    ++with_dv;
    // ferry's encoding of each DV Spark wrote is byte for byte Spark's.
    auto rows = LoadDeletionVector(*table, add, 100);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    auto relative = DeletionVectorRelativePath(*add.deletion_vector);
    ASSERT_TRUE(relative.ok());
    auto spark = table->store().ReadRange(
        table->Key(*relative), static_cast<uint64_t>(*add.deletion_vector->offset),
        static_cast<uint64_t>(add.deletion_vector->size_in_bytes) + 8);
    ASSERT_TRUE(spark.ok());
    EXPECT_EQ(spark->substr(4, static_cast<size_t>(add.deletion_vector->size_in_bytes)),
              SerializeDeletionVector(*rows));
  }
  // Spark removed the files whose rows were all deleted; two live files carry a DV.
  EXPECT_EQ(with_dv, 2);

  VerifyOptions options;
  options.id_column = "col1";
  options.expect = 35;
  auto report = VerifyTable(*table, *snapshot, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->rows, 35);
  EXPECT_EQ(report->distinct, 35);
  EXPECT_TRUE(report->stats_mismatches.empty());
  EXPECT_EQ(report->expect_ok, true);
}

// A damaged DV file stops the scan with DataLoss naming the data file and the DV file.
TEST(DeletionVectorScanTest, DamagedDeletionVectorIsDataLoss) {
  TempCopy copy("log-replay-dv-key-cases");
  auto table = OpenAt(copy.root(), "log-replay-dv-key-cases");
  auto snapshot = table->LoadSnapshot();
  ASSERT_TRUE(snapshot.ok());
  const AddFile& add = snapshot->files().begin()->second;
  const std::string relative = *DeletionVectorRelativePath(*add.deletion_vector);
  auto bytes = table->store().Read(table->Key(relative));
  ASSERT_TRUE(bytes.ok());
  (*bytes)[static_cast<size_t>(*add.deletion_vector->offset) + 12] ^= 0x10;
  ASSERT_TRUE(table->store().Put(table->Key(relative), *bytes).ok());
  Status st = ReadLiveFile(*table, *snapshot, add).status();
  EXPECT_EQ(st.code(), StatusCode::kDataLoss);
  EXPECT_NE(st.ToString().find(add.path), std::string::npos) << st.ToString();
  EXPECT_NE(st.ToString().find(relative), std::string::npos) << st.ToString();
}

// Optimize on a copy: every live file (two with DVs; a lone file with a DV is rewritten too)
// becomes one file per partition without DVs holding exactly the live rows; the removes name the
// logical files (path + DV); vacuum keeps the DV files while a live file or an unexpired tombstone
// uses them, and deletes them after.
TEST(DeletionVectorScanTest, OptimizePurgesDeletionVectors) {
  TempCopy copy("dv-partitioned-with-checkpoint");
  auto table = OpenAt(copy.root(), "dv-partitioned-with-checkpoint");
  auto before = table->LoadSnapshot();
  ASSERT_TRUE(before.ok());
  std::set<std::string> live_dv_files;
  for (const auto& [key, add] : before->files()) {
    if (add.deletion_vector) {
      live_dv_files.insert(*DeletionVectorRelativePath(*add.deletion_vector));
    }
  }
  ASSERT_EQ(live_dv_files.size(), 2u);
  // Spark's files are years old: a vacuum now must still keep the DV files live files use.
  VacuumOptions keep;
  keep.dry_run = true;
  auto dry = Vacuum(*table, keep);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  for (const std::string& path : dry->deleted) {
    EXPECT_EQ(live_dv_files.count(path), 0u) << path;
  }

  auto result = Optimize(*table, OptimizeOptions{});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  // 15 live files: partitions 0, 2 and 4 lost a file to the DELETEs and keep their lone file
  // (no DV: nothing to gain); the other 12 files, 29 live rows, are rewritten.
  EXPECT_EQ(before->files().size(), 15u);
  EXPECT_EQ(result->files_removed, 12);
  EXPECT_EQ(result->rows, 29);
  ASSERT_TRUE(result->version.has_value());
  auto after = table->LoadSnapshot();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->files().size(), 10u);  // one per partition
  for (const auto& [key, add] : after->files()) {
    EXPECT_FALSE(add.deletion_vector.has_value()) << add.path;
  }
  EXPECT_EQ(LiveValues(*table, "col1"), SparkLiveCol1());
  auto actions = table->ReadCommit(*result->version);
  ASSERT_TRUE(actions.ok());
  int removes_with_dv = 0;
  for (const Action& action : *actions) {
    if (const auto* remove = std::get_if<RemoveFile>(&action)) {
      removes_with_dv += remove->deletion_vector.has_value() ? 1 : 0;
    }
  }
  EXPECT_EQ(removes_with_dv, 2);
  VerifyOptions options;
  options.id_column = "col1";
  options.expect = 35;
  auto report = VerifyTable(*table, *after, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->expect_ok, true);
  EXPECT_TRUE(report->stats_mismatches.empty());

  // Within the retention the tombstones keep their DV files; once they expire, they go.
  auto within = Vacuum(*table, keep);
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  for (const std::string& path : within->deleted) {
    EXPECT_EQ(live_dv_files.count(path), 0u) << path;
  }
  VacuumOptions expire;
  expire.now_ms = WallMillis() + kMinVacuumRetentionMs + 60'000;
  auto purged = Vacuum(*table, expire);
  ASSERT_TRUE(purged.ok()) << purged.status().ToString();
  std::set<std::string> deleted(purged->deleted.begin(), purged->deleted.end());
  for (const std::string& path : live_dv_files) {
    EXPECT_EQ(deleted.count(path), 1u) << path;
    EXPECT_FALSE(std::filesystem::exists(copy.root() + "/dv-partitioned-with-checkpoint/" + path));
  }
  EXPECT_EQ(LiveValues(*table, "col1"), SparkLiveCol1());
}

}  // namespace
}  // namespace ferry::delta
