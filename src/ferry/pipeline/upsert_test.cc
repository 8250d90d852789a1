// Upsert pipelines' commit side: the collapse of a batch's changes, the change keys, and
// UpsertCommit's plans committed the way BatchCommitter commits them, on copy-on-write tables and
// on tables with deletion vectors: replaces and deletes, sequences, a plan aborted by another
// writer removing the files it marks and planned again, row tracking. Partition pruning is in
// upsert_pruning_test.cc, the persisted key index in key_index_persist_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ferry/delta/file_scan.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/pipeline/change_keys.h"
#include "ferry/pipeline/upsert_commit.h"
#include "ferry/testing/upsert_commit_fixture.h"

namespace ferry::pipeline::upsert_test {
namespace {

TEST(CollapseChangesTest, LastInSourceOrderWins) {
  std::vector<std::string> keys = {"a", "b", "a", "c", "b", "a"};
  EXPECT_EQ(CollapseChanges(keys, {}), (std::vector<int64_t>{3, 4, 5}));
}

TEST(CollapseChangesTest, HighestSequenceWinsTiesGoToTheLater) {
  std::vector<std::string> keys = {"a", "a", "a", "b", "b"};
  std::vector<int64_t> seq = {5, 9, 7, 3, 3};
  EXPECT_EQ(CollapseChanges(keys, seq), (std::vector<int64_t>{1, 4}));
}

TEST(ChangeKeysTest, EncodesByValueAcrossIntegerWidthsAndRefusesNullKeys) {
  auto narrow = UpsertSchema("id INT, name STRING");
  auto wide = UpsertSchema("id BIGINT, name STRING");
  auto k1 = ChangeKeys::Create(*narrow, {"id", "name"}, "");
  auto k2 = ChangeKeys::Create(*wide, {"id", "name"}, "");
  ASSERT_TRUE(k1.ok() && k2.ok());
  auto e1 =
      k1->Encode(UpsertRows(narrow, {R"({"id": 7, "name": "x"})", R"({"id": 7, "name": "y"})"}));
  auto e2 = k2->Encode(UpsertRows(wide, {R"({"id": 7, "name": "x"})"}));
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_EQ((*e1)[0], (*e2)[0]);
  EXPECT_NE((*e1)[0], (*e1)[1]);
  auto null_key = k1->Encode(UpsertRows(narrow, {R"({"name": "x"})"}));
  EXPECT_EQ(null_key.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ChangeKeys::Create(*narrow, {"nope"}, "").ok());
  EXPECT_FALSE(ChangeKeys::Create(*narrow, {"id"}, "name").ok());  // a STRING sequence
}

TEST_P(UpsertCommitTest, UpsertsReplaceAndDeletesRemoveExactlyTheirKeys) {
  ASSERT_TRUE(Apply({"+1:a", "+2:b", "+3:c", "+4:d", "+5:e"}).ok());
  auto second = Apply({"+2:B", "-3", "+6:f", "-99", "+2:BB", "+7:g", "-7"});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->upserts, 2);   // 2 (collapsed to BB) and 6; 7 ends deleted
  EXPECT_EQ(second->deletes, 3);   // 3, 99, 7
  EXPECT_EQ(second->replaced, 2);  // the old rows of 2 and 3
  EXPECT_EQ(second->collapsed, 2);
  EXPECT_EQ(second->removes.size(), 1u);
  EXPECT_EQ(second->dv_files, GetParam() ? 1 : 0);
  EXPECT_EQ(second->rewritten_files, GetParam() ? 0 : 1);
  std::map<int64_t, std::string> want = {{1, "a"}, {2, "BB"}, {4, "d"}, {5, "e"}, {6, "f"}};
  EXPECT_EQ(State(), want);
  EXPECT_EQ(upsert_->index().live_keys(), 5u);

  // A third batch over the file that already has a deletion vector: the vectors merge.
  ASSERT_TRUE(Apply({"-1", "+5:E", "+3:c2"}).ok());
  want = {{2, "BB"}, {3, "c2"}, {4, "d"}, {5, "E"}, {6, "f"}};
  EXPECT_EQ(State(), want);
  if (GetParam()) {
    EXPECT_GE(FilesWithDv(), 1);
  }
  // A new process rebuilds the index from the table (deletion vectors applied) and goes on.
  auto restarted = NewUpsert("");
  EXPECT_EQ(restarted->index().live_keys(), 5u);
  ASSERT_TRUE(Apply({"-2", "+4:D"}, restarted.get()).ok());
  want = {{3, "c2"}, {4, "D"}, {5, "E"}, {6, "f"}};
  EXPECT_EQ(State(), want);
}

TEST_P(UpsertCommitTest, AnOlderSequenceNeverOverwritesANewerRow) {
  auto upsert = NewUpsert("seq");
  ASSERT_TRUE(Apply({"+1:a:10", "+2:b:10", "+3:c:10"}, upsert.get()).ok());
  auto plan = Apply({"+1:old:5", "+2:new:11", "-3:9", "+4:x:2", "+4:y:1"}, upsert.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->stale, 2);  // 1 and the delete of 3
  std::map<int64_t, std::string> want = {{1, "a"}, {2, "new"}, {3, "c"}, {4, "x"}};
  EXPECT_EQ(State(), want);
  // A delete with a newer sequence wins, and an older upsert after it does not bring it back.
  ASSERT_TRUE(Apply({"-3:12"}, upsert.get()).ok());
  ASSERT_TRUE(Apply({"+3:back:11"}, upsert.get()).ok());
  want = {{1, "a"}, {2, "new"}, {4, "x"}};
  EXPECT_EQ(State(), want);
}

TEST_P(UpsertCommitTest, ARemovedFileMakesTheCommitAbortAndTheNextPlanUsesTheNewFiles) {
  ASSERT_TRUE(Apply({"+1:a", "+2:b", "+3:c"}).ok());
  ASSERT_TRUE(Apply({"+4:d", "+5:e"}).ok());
  // Plan against the current version...
  columnar::RecordBatch rows = UpsertRows(schema_, {R"({"id": 2, "v": "B"})", R"({"id": 5})"});
  std::vector<ChangeOp> ops = {ChangeOp::kUpsert, ChangeOp::kDelete};
  auto plan = upsert_->PlanChanges(*table_, snapshot_, rows, ops, {});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  // ...while another writer compacts the table (an OPTIMIZE: every file into one).
  {
    delta::Snapshot other = *table_->LoadSnapshot();
    auto writer = std::move(*delta::TableWriter::Create(*table_, other));
    delta::Transaction compact(*table_, other);
    for (const auto& [key, add] : other.files()) {
      auto batch = delta::ReadLiveFile(*table_, other, add);
      ASSERT_TRUE(batch.ok());
      ASSERT_TRUE(writer->Write(*batch).ok());
      compact.Remove(
          {.path = add.path, .data_change = false, .deletion_vector = add.deletion_vector});
    }
    compact.AddFiles(std::move(*writer->Finish()));
    compact.SetOperation("OPTIMIZE", {});
    ASSERT_TRUE(compact.Commit().ok());
  }
  delta::Transaction txn(*table_, snapshot_);
  txn.AddFiles(plan->adds);
  for (const delta::RemoveFile& r : plan->removes) {
    txn.Remove(r);
  }
  auto committed = txn.Commit();
  ASSERT_EQ(committed.status().code(), StatusCode::kAborted);
  EXPECT_EQ(txn.conflict(), delta::Conflict::kDeleteDelete);
  // What BatchCommitter does: the snapshot forward, plan again.
  snapshot_ = *table_->Update(snapshot_);
  ASSERT_TRUE(Apply({"+2:B", "-5"}).ok());
  std::map<int64_t, std::string> want = {{1, "a"}, {2, "B"}, {3, "c"}, {4, "d"}};
  EXPECT_EQ(State(), want);
}

// A RESTORE brings back rows: with deletion vectors, by adding a file again under a smaller
// vector than the one it has. The index finds them again, so an upsert of their keys replaces
// them instead of leaving the key twice; a start from an index persisted before catches up over
// the RESTORE the same way. (Copy-on-write: the RESTORE adds the rewritten files again.)
TEST_P(UpsertCommitTest, RowsARestoreBringsBackAreFoundAgain) {
  auto persisted = NewPersisted(/*persist_every=*/1000, nullptr, {.key = {"id"}});  // version 0
  ASSERT_TRUE(Apply({"+1:a", "+2:b", "+3:c", "+4:d", "+5:e"}).ok());
  ASSERT_TRUE(Apply({"+2:B"}).ok());  // the first file's vector: 2's row
  const int64_t restored = snapshot_.version();
  ASSERT_TRUE(Apply({"-3", "+4:D"}).ok());  // the first file's vector: 2's, 3's and 4's rows
  if (GetParam()) {
    int64_t largest = 0;
    for (const auto& [key, add] : snapshot_.files()) {
      largest = std::max(largest, add.deletion_vector ? add.deletion_vector->cardinality : 0);
    }
    ASSERT_EQ(largest, 3);
  }
  Restore(restored);
  std::map<int64_t, std::string> want = {{1, "a"}, {2, "B"}, {3, "c"}, {4, "d"}, {5, "e"}};
  ASSERT_EQ(State(), want);

  auto plan = Apply({"+3:C", "+4:DD", "-5"});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->replaced, 3);  // 3 and 4 (back in the first file) and 5
  want = {{1, "a"}, {2, "B"}, {3, "C"}, {4, "DD"}};
  EXPECT_EQ(State(), want);  // which fails on a key held twice
  EXPECT_EQ(upsert_->index().live_keys(), 4u);
  // A rebuild agrees, and so does a start from the index persisted at version 0.
  const std::vector<std::string> rebuilt = Locations(NewUpsert("")->index());
  EXPECT_EQ(Locations(upsert_->index()), rebuilt);
  auto restarted = NewPersisted(1000, nullptr, {.key = {"id"}});
  EXPECT_FALSE(restarted->index().last_load().rebuilt) << restarted->index().last_load().reason;
  EXPECT_EQ(Locations(restarted->index()), rebuilt);
}

TEST_P(UpsertCommitTest, RowTrackingKeepsTheRowIdsOfCopiedAndUpdatedRows) {
  // A table with row tracking (and, in the deletion-vector variant, deletion vectors).
  delta::StringMap config = {{"delta.enableRowTracking", "true"}};
  if (GetParam()) {
    config["delta.enableDeletionVectors"] = "true";
  }
  table_ = std::move(*delta::Table::Open(store_, "tracked"));
  auto created = table_->Create({.schema = schema_, .configuration = config});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  snapshot_ = *created;
  upsert_ = NewUpsert("");
  ASSERT_TRUE(Apply({"+1:a", "+2:b", "+3:c", "+4:d", "+5:e"}).ok());
  ASSERT_EQ(snapshot_.num_files(), 1);
  const delta::AddFile first = snapshot_.files().begin()->second;
  ASSERT_EQ(first.base_row_id, 0);
  const int64_t v1 = snapshot_.version();
  ASSERT_EQ(first.default_row_commit_version, v1);
  const std::map<int64_t, RowIds> before = StableRowIds();
  ASSERT_EQ(before.size(), 5u);
  for (int64_t id = 1; id <= 5; ++id) {
    EXPECT_EQ(before.at(id), (RowIds{id - 1, v1})) << id;
  }

  // 2 is updated, 4 deleted, 6 inserted.
  auto second = Apply({"+2:B", "-4", "+6:f"});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->preserves_row_ids);
  const int64_t v2 = snapshot_.version();
  std::map<int64_t, RowIds> after = StableRowIds();
  // The rows kept (1, 3, 5) keep id and commit version, whether their file was re-added with a
  // deletion vector or copied; the updated row keeps its id with the new commit version (as
  // Spark's MERGE and UPDATE); the new row has a fresh id.
  EXPECT_EQ(after.at(1), before.at(1));
  EXPECT_EQ(after.at(3), before.at(3));
  EXPECT_EQ(after.at(5), before.at(5));
  EXPECT_EQ(after.at(2), (RowIds{1, v2}));
  EXPECT_EQ(after.count(4), 0u);
  // The new file: copy-on-write holds 1, 3, 5, then 2 and 6 (ids 5-9, 6 at position 4); with
  // deletion vectors 2 and 6 (ids 5-6).
  EXPECT_EQ(after.at(6), (RowIds{GetParam() ? 6 : 9, v2}));
  std::set<int64_t> distinct;
  for (const auto& [id, ids] : after) {
    EXPECT_TRUE(distinct.insert(ids.row_id).second) << "row id " << ids.row_id << " twice";
  }
  auto mark = delta::RowIdHighWaterMark(snapshot_.domain_metadata());
  ASSERT_TRUE(mark.ok());
  EXPECT_EQ(*mark, GetParam() ? 6 : 9);
  bool kept = false;
  for (const auto& [key, add] : snapshot_.files()) {
    ASSERT_TRUE(add.base_row_id.has_value()) << add.path;
    if (add.path == first.path) {
      // Re-added with a deletion vector: its baseRowId and defaultRowCommitVersion stay.
      kept = true;
      EXPECT_TRUE(add.deletion_vector.has_value());
      EXPECT_EQ(add.base_row_id, first.base_row_id);
      EXPECT_EQ(add.default_row_commit_version, v1);
      continue;
    }
    EXPECT_EQ(add.default_row_commit_version, v2) << add.path;
    // The new file holds the materialized columns, named by the table's configuration, after
    // the data columns; the table's readers do not see them.
    auto path = delta::RelativeFilePath(add);
    ASSERT_TRUE(path.ok());
    auto file = store_->OpenForRead(table_->Key(*path));
    ASSERT_TRUE(file.ok());
    auto reader = parquet::FileReader::Open(*file);
    ASSERT_TRUE(reader.ok());
    const columnar::Schema& file_schema = *(*reader)->schema();
    ASSERT_EQ(file_schema.num_fields(), 5);
    EXPECT_EQ(file_schema.field(3).name, snapshot_.metadata().configuration.at(
                                             "delta.rowTracking.materializedRowIdColumnName"));
    EXPECT_EQ(file_schema.field(4).name,
              snapshot_.metadata().configuration.at(
                  "delta.rowTracking.materializedRowCommitVersionColumnName"));
    auto rows = delta::ReadLiveFile(*table_, snapshot_, add);
    ASSERT_TRUE(rows.ok());
    EXPECT_EQ(rows->num_columns(), 3);
  }
  EXPECT_EQ(kept, GetParam());
  auto commit = store_->Read("tracked/_delta_log/" + delta::CommitFileName(v2));
  ASSERT_TRUE(commit.ok());
  EXPECT_NE(commit->find("\"delta.rowTracking.preserved\":\"true\""), std::string::npos) << *commit;

  // Again, over files whose ids are materialized now: 2 and 1 updated, 3 deleted.
  ASSERT_TRUE(Apply({"+2:BB", "+1:A", "-3"}).ok());
  const int64_t v3 = snapshot_.version();
  std::map<int64_t, RowIds> third = StableRowIds();
  EXPECT_EQ(third.at(1), (RowIds{0, v3}));
  EXPECT_EQ(third.at(2), (RowIds{1, v3}));
  EXPECT_EQ(third.at(5), before.at(5));
  EXPECT_EQ(third.at(6), after.at(6));
  EXPECT_EQ(third.count(3), 0u);
  std::map<int64_t, std::string> want = {{1, "A"}, {2, "BB"}, {5, "e"}, {6, "f"}};
  EXPECT_EQ(State(), want);
}

INSTANTIATE_TEST_SUITE_P(CopyOnWriteAndDeletionVectors, UpsertCommitTest, ::testing::Bool(),
                         UpsertStoreKind);

}  // namespace
}  // namespace ferry::pipeline::upsert_test
