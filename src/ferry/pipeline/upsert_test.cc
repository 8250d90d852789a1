// Upsert pipelines' commit side: the collapse of a batch's changes, the key index, and
// UpsertCommit's plans committed the way BatchCommitter commits them, on copy-on-write tables and
// on tables with deletion vectors, with another writer removing the files a plan marks.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ferry/columnar/column.h"
#include "ferry/columnar/ddl.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/stats.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/parquet/file_reader.h"
#include "ferry/pipeline/change_keys.h"
#include "ferry/pipeline/key_index.h"
#include "ferry/pipeline/pipeline_metrics.h"
#include "ferry/pipeline/upsert_commit.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/forwarding_store.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::pipeline {
namespace {

using transform::ChangeOp;

columnar::SchemaPtr UpsertSchema(const char* ddl) {
  return std::make_shared<const columnar::Schema>(*columnar::ParseDdlSchema(ddl));
}

columnar::RecordBatch UpsertRows(const columnar::SchemaPtr& schema,
                                 const std::vector<std::string>& json) {
  columnar::RecordBatch batch = columnar::RecordBatch::MakeEmpty(schema);
  auto decoder = std::move(*transform::JsonDecoder::Create(schema, {}));
  for (const std::string& row : json) {
    Status st = decoder->Append(row, &batch);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  return batch;
}

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

// A table of (id, v, seq) and the batches an upsert pipeline commits to it.
class UpsertCommitTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    schema_ = UpsertSchema("id BIGINT NOT NULL, v STRING, seq BIGINT");
    table_ = std::move(*delta::Table::Open(store_, "t"));
    delta::StringMap config;
    if (GetParam()) {
      config["delta.enableDeletionVectors"] = "true";
    }
    auto created = table_->Create({.schema = schema_, .configuration = config});
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    snapshot_ = *created;
    ASSERT_EQ(UsesDeletionVectors(snapshot_), GetParam());
    upsert_ = NewUpsert("");
  }

  std::unique_ptr<UpsertCommit> NewUpsert(std::string sequence) {
    auto upsert = UpsertCommit::Create(*schema_, {.key = {"id"}, .sequence = std::move(sequence)});
    EXPECT_TRUE(upsert.ok()) << upsert.status().ToString();
    Status st = (*upsert)->Load(*table_, snapshot_);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return std::move(*upsert);
  }

  // An UpsertCommit whose key index is persisted beside the table as pipeline "p", loaded
  // through `table` (default: the fixture's).
  std::unique_ptr<UpsertCommit> NewPersisted(int64_t persist_every,
                                             const delta::Table* table = nullptr,
                                             UpsertSpec spec = {.key = {"id"}, .sequence = "seq"}) {
    spec.index_name = "p";
    spec.persist_every = persist_every;
    auto upsert = UpsertCommit::Create(*schema_, spec);
    EXPECT_TRUE(upsert.ok()) << upsert.status().ToString();
    Status st = (*upsert)->Load(table != nullptr ? *table : *table_, snapshot_);
    EXPECT_TRUE(st.ok()) << st.ToString();
    (*upsert)->index().WaitForWrite();  // the file is written by a thread of the index's
    return std::move(*upsert);
  }

  // Where the index says each of ids 0..99 is (path, row, sequence), or "-" when deleted or
  // never seen.
  std::vector<std::string> Locations(const KeyIndex& index) {
    std::vector<std::string> json;
    for (int id = 0; id < 100; ++id) {
      json.push_back(fmt::format(R"({{"id": {}}})", id));
    }
    auto keys = index.keys().Encode(UpsertRows(schema_, json));
    EXPECT_TRUE(keys.ok());
    std::vector<std::string> out;
    for (const std::string& key : *keys) {
      const KeyIndex::Entry* e = index.Find(key);
      out.push_back(e == nullptr ? "-"
                    : e->file < 0
                        ? fmt::format("deleted@{}", e->sequence)
                        : fmt::format("{}:{}@{}", index.path(e->file), e->row, e->sequence));
    }
    return out;
  }

  // One batch: "+id:v[:seq]" upserts, "-id[:seq]" deletes. Returns the plan's counts.
  Result<UpsertActions> Apply(const std::vector<std::string>& changes,
                              UpsertCommit* upsert = nullptr) {
    upsert = upsert != nullptr ? upsert : upsert_.get();
    std::vector<std::string> json;
    std::vector<ChangeOp> ops;
    for (const std::string& c : changes) {
      std::vector<std::string> parts;
      size_t start = 1;
      while (start <= c.size()) {
        size_t end = c.find(':', start);
        end = end == std::string::npos ? c.size() : end;
        parts.push_back(c.substr(start, end - start));
        start = end + 1;
      }
      if (c[0] == '+') {
        json.push_back(fmt::format(R"({{"id": {}, "v": "{}", "seq": {}}})", parts[0], parts[1],
                                   parts.size() > 2 ? parts[2] : "null"));
        ops.push_back(ChangeOp::kUpsert);
      } else {
        json.push_back(fmt::format(R"({{"id": {}, "seq": {}}})", parts[0],
                                   parts.size() > 1 ? parts[1] : "null"));
        ops.push_back(ChangeOp::kDelete);
      }
    }
    return Commit(upsert, UpsertRows(schema_, json), ops);
  }

  // Plans `rows` (through `plan_table`, default the fixture's) and commits the plan the way
  // BatchCommitter does.
  Result<UpsertActions> Commit(UpsertCommit* upsert, const columnar::RecordBatch& rows,
                               const std::vector<ChangeOp>& ops,
                               const delta::Table* plan_table = nullptr) {
    FERRY_ASSIGN_OR_RETURN(UpsertActions actions,
                           upsert->PlanChanges(plan_table != nullptr ? *plan_table : *table_,
                                               snapshot_, rows, ops, {}));
    UpsertActions counts = actions;
    delta::Transaction txn(*table_, snapshot_);
    if (actions.preserves_row_ids) {
      txn.PreserveRowTracking();
    }
    txn.AddFiles(std::move(actions.adds));
    for (delta::RemoveFile& r : actions.removes) {
      txn.Remove(std::move(r));
    }
    txn.SetPosition("p/0", ++position_);
    FERRY_ASSIGN_OR_RETURN(delta::CommitResult result, txn.Commit());
    snapshot_ = std::move(result.snapshot);
    FERRY_RETURN_IF_ERROR(upsert->Committed(*table_, snapshot_, snapshot_.version()));
    upsert->index().WaitForWrite();
    return counts;
  }

  // id -> v of the table at its latest version, read through a fresh snapshot.
  std::map<int64_t, std::string> State() {
    auto snapshot = table_->LoadSnapshot();
    EXPECT_TRUE(snapshot.ok());
    std::map<int64_t, std::string> out;
    for (const auto& [key, add] : snapshot->files()) {
      auto batch = delta::ReadLiveFile(*table_, *snapshot, add, {"id", "v"});
      EXPECT_TRUE(batch.ok()) << batch.status().ToString();
      const auto& ids = static_cast<const columnar::Int64Column&>(batch->column(0));
      const auto& vs = static_cast<const columnar::BinaryColumn&>(batch->column(1));
      for (int64_t r = 0; r < batch->num_rows(); ++r) {
        EXPECT_TRUE(out.emplace(ids.Value(r), std::string(vs.Value(r))).second)
            << "id " << ids.Value(r) << " twice";
      }
    }
    return out;
  }

  // Each live row's stable row id and row commit version, as a reader derives them (the
  // materialized columns, else baseRowId + position and defaultRowCommitVersion), by id.
  struct RowIds {
    int64_t row_id = 0;
    int64_t version = 0;
    bool operator==(const RowIds&) const = default;
  };
  std::map<int64_t, RowIds> StableRowIds() {
    std::map<int64_t, RowIds> out;
    auto names = delta::MaterializedRowTrackingColumns(snapshot_.metadata());
    EXPECT_TRUE(names.ok()) << names.status().ToString();
    if (!names.ok()) {
      return out;
    }
    for (const auto& [key, add] : snapshot_.files()) {
      Status st = delta::ScanLiveFileWithRowTracking(
          *table_, snapshot_, add, *names, 1000, [&](columnar::RecordBatch& batch) {
            const auto& ids = static_cast<const columnar::Int64Column&>(*batch.GetColumn("id"));
            const auto& row_ids =
                static_cast<const columnar::Int64Column&>(*batch.GetColumn(names->row_id));
            const auto& versions = static_cast<const columnar::Int64Column&>(
                *batch.GetColumn(names->row_commit_version));
            for (int64_t r = 0; r < batch.num_rows(); ++r) {
              EXPECT_TRUE(
                  out.emplace(ids.Value(r), RowIds{row_ids.Value(r), versions.Value(r)}).second);
            }
            return Status::OK();
          });
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
    return out;
  }

  int64_t FilesWithDv() {
    int64_t n = 0;
    for (const auto& [key, add] : snapshot_.files()) {
      n += add.deletion_vector ? 1 : 0;
    }
    return n;
  }

  std::shared_ptr<storage::InMemoryStore> store_ = std::make_shared<storage::InMemoryStore>();
  columnar::SchemaPtr schema_;
  std::unique_ptr<delta::Table> table_;
  delta::Snapshot snapshot_;
  std::unique_ptr<UpsertCommit> upsert_;
  int64_t position_ = 0;
};

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

// A store that counts the data files read through it.
class CountingStore : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Result<std::shared_ptr<const RandomAccessFile>> OpenForRead(std::string_view key) override {
    if (key.ends_with(".parquet")) {
      ++data_files_read;
      opened.emplace_back(key);
    }
    return ForwardingStore::OpenForRead(key);
  }
  int64_t data_files_read = 0;
  std::vector<std::string> opened;
};

TEST_P(UpsertCommitTest, AKeyThatDeterminesThePartitionReadsOnlyTheTouchedPartitions) {
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
TEST_P(UpsertCommitTest, APartitionDerivedFromTheKeyReadsOnlyTheTouchedPartitions) {
  schema_ = UpsertSchema("id BIGINT NOT NULL, v STRING, seq BIGINT, bucket BIGINT");
  delta::StringMap config;
  if (GetParam()) {
    config["delta.enableDeletionVectors"] = "true";
  }
  table_ = std::move(*delta::Table::Open(store_, "buckets"));
  auto created =
      table_->Create({.schema = schema_, .partition_columns = {"bucket"}, .configuration = config});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  snapshot_ = *created;
  const std::vector<std::string> key_partitions = KeyDerivedPartitions(
      *schema_, {"bucket"}, {"id"}, {{.name = "bucket", .expr = "id % 3"}}, "UTC");
  ASSERT_EQ(key_partitions, std::vector<std::string>{"bucket"});
  auto make = [&](const delta::Table& table) {
    auto upsert = UpsertCommit::Create(*schema_, {.key = {"id"}, .key_partitions = key_partitions});
    EXPECT_TRUE(upsert.ok()) << upsert.status().ToString();
    EXPECT_TRUE((*upsert)->Load(table, snapshot_).ok());
    EXPECT_TRUE((*upsert)->index().prunes());
    return std::move(*upsert);
  };
  // "+id:v" upserts, "-id" deletes; bucket as the pipeline's derived column computes it.
  auto batch = [&](const std::vector<std::string>& changes, std::vector<ChangeOp>* ops) {
    std::vector<std::string> json;
    ops->clear();
    for (const std::string& c : changes) {
      const size_t colon = c.find(':');
      const int64_t id = std::stoll(c.substr(1, colon == std::string::npos ? colon : colon - 1));
      json.push_back(c[0] == '+' ? fmt::format(R"({{"id": {}, "v": "{}", "bucket": {}}})", id,
                                               c.substr(colon + 1), id % 3)
                                 : fmt::format(R"({{"id": {}, "bucket": {}}})", id, id % 3));
      ops->push_back(c[0] == '+' ? ChangeOp::kUpsert : ChangeOp::kDelete);
    }
    return UpsertRows(schema_, json);
  };
  std::vector<ChangeOp> ops;
  auto first = make(*table_);
  auto rows = batch({"+1:a", "+2:b", "+3:c", "+4:d", "+5:e", "+6:f"}, &ops);
  ASSERT_TRUE(Commit(first.get(), rows, ops).ok());

  // A new process: no data file read at start, then only bucket 1's files (ids 1, 4, 7).
  auto counting = std::make_shared<CountingStore>(store_);
  auto counted = std::move(*delta::Table::Open(counting, "buckets"));
  auto restarted = make(*counted);
  EXPECT_EQ(counting->data_files_read, 0);
  rows = batch({"+1:A", "-4", "+7:g"}, &ops);
  auto plan = Commit(restarted.get(), rows, ops, counted.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->replaced, 2);  // 1 and 4 were found
  EXPECT_GE(counting->data_files_read, 1);
  for (const std::string& key : counting->opened) {
    EXPECT_NE(key.find("/bucket=1/"), std::string::npos) << key << " is not of bucket 1";
  }
  rows = batch({"+2:B", "-6"}, &ops);
  plan = Commit(restarted.get(), rows, ops, counted.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->replaced, 2);
  std::map<int64_t, std::string> want = {{1, "A"}, {2, "B"}, {3, "c"}, {5, "e"}, {7, "g"}};
  EXPECT_EQ(State(), want);
}

TEST_P(UpsertCommitTest, APersistedKeyIndexStartsWithoutReadingTheTable) {
  auto upsert = NewPersisted(/*persist_every=*/1);
  EXPECT_TRUE(upsert->index().last_load().rebuilt);
  ASSERT_TRUE(Apply({"+1:a:1", "+2:b:1", "+3:c:1", "+4:d:1"}, upsert.get()).ok());
  ASSERT_TRUE(Apply({"+2:B:2", "-3:2", "+5:e:1"}, upsert.get()).ok());
  ASSERT_TRUE(Apply({"+4:D:3", "+6:f:1", "-1:3"}, upsert.get()).ok());
  const std::vector<std::string> want = Locations(upsert->index());
  EXPECT_TRUE(store_->Read(KeyIndex::IndexFileKey(*table_, "p")).ok());

  // A new process: the file of the last commit's version, no data file read, the same answers
  // (deleted keys with their sequence included).
  auto counting = std::make_shared<CountingStore>(store_);
  auto counted = std::move(*delta::Table::Open(counting, "t"));
  auto restarted = NewPersisted(1, counted.get());
  const KeyIndexLoad& load = restarted->index().last_load();
  EXPECT_FALSE(load.rebuilt) << load.reason;
  EXPECT_EQ(load.base_version, snapshot_.version());
  EXPECT_EQ(load.files_read, 0);
  EXPECT_EQ(counting->data_files_read, 0);
  EXPECT_EQ(Locations(restarted->index()), want);
  // It goes on exactly like the process before it.
  ASSERT_TRUE(Apply({"+2:B2:1", "+1:back:4"}, restarted.get()).ok());  // 2's change is stale
  std::map<int64_t, std::string> state = {{1, "back"}, {2, "B"}, {4, "D"}, {5, "e"}, {6, "f"}};
  EXPECT_EQ(State(), state);
}

TEST_P(UpsertCommitTest, AKeyIndexPersistedEarlierCatchesUpFromTheLog) {
  auto upsert = NewPersisted(/*persist_every=*/1000);  // written at Load only (a rebuild)
  ASSERT_TRUE(Apply({"+1:a:1", "+2:b:1", "+3:c:1"}, upsert.get()).ok());
  ASSERT_TRUE(Apply({"+2:B:2", "+4:d:1"}, upsert.get()).ok());
  const std::vector<std::string> want = Locations(upsert->index());
  auto counting = std::make_shared<CountingStore>(store_);
  auto counted = std::move(*delta::Table::Open(counting, "t"));
  auto restarted = NewPersisted(1000, counted.get());
  const KeyIndexLoad& load = restarted->index().last_load();
  EXPECT_FALSE(load.rebuilt) << load.reason;
  EXPECT_EQ(load.base_version, 0);  // the empty table's
  EXPECT_EQ(load.commits_from_log, 2);
  // Only the files those commits added: the first batch's and the second's new one (which,
  // copy-on-write, also holds the rows of the first file it rewrote; with deletion vectors the
  // first file is re-added and only its vector is read).
  EXPECT_EQ(load.files_read, 2);
  EXPECT_EQ(Locations(restarted->index()), want);
}

TEST_P(UpsertCommitTest, ADamagedStaleOrForeignKeyIndexIsRebuiltWithTheSameAnswers) {
  auto upsert = NewPersisted(/*persist_every=*/1);
  ASSERT_TRUE(Apply({"+1:a:1", "+2:b:1", "+3:c:1"}, upsert.get()).ok());
  ASSERT_TRUE(Apply({"+2:B:2", "-1:2"}, upsert.get()).ok());
  ASSERT_TRUE(Apply({"+4:d:1"}, upsert.get()).ok());
  const std::string key = KeyIndex::IndexFileKey(*table_, "p");
  std::string good = *store_->Read(key);
  // Deleted keys are remembered only by a persisted index; a rebuild answers for the live keys.
  std::vector<std::string> want = Locations(upsert->index());
  for (std::string& w : want) {
    w = w.starts_with("deleted@") ? "-" : w;
  }
  auto expect_rebuilt = [&](const std::string& why, bool written_again = true) {
    auto restarted = NewPersisted(1);
    const KeyIndexLoad& load = restarted->index().last_load();
    EXPECT_TRUE(load.rebuilt) << why;
    EXPECT_NE(load.reason.find(why), std::string::npos) << load.reason;
    EXPECT_EQ(Locations(restarted->index()), want) << why;
    // The rebuilt index was written again: the next start uses it.
    EXPECT_EQ(NewPersisted(1)->index().last_load().rebuilt, !written_again) << why;
  };
  std::string damaged = good;
  const size_t middle = damaged.size() / 2;
  damaged[middle] = static_cast<char>(damaged[middle] ^ 0x20);
  ASSERT_TRUE(store_->Put(key, damaged).ok());
  expect_rebuilt("checksum mismatch");
  ASSERT_TRUE(store_->Put(key, good.substr(0, good.size() - 3)).ok());
  expect_rebuilt("checksum mismatch");  // torn
  ASSERT_TRUE(store_->Delete(key).ok());
  expect_rebuilt("no index beside the table yet");

  // Stale beyond the log: the file of version 1, and commit 2 gone from the log (cleaned up
  // after a checkpoint; the snapshot of the start was read before).
  ASSERT_TRUE(Apply({"+5:e:1"}, upsert.get()).ok());
  std::string at_last = *store_->Read(key);
  ASSERT_TRUE(Apply({"+6:f:1"}, upsert.get()).ok());  // persisted again (every commit)
  ASSERT_TRUE(store_->Put(key, at_last).ok());        // back to the version before it
  ASSERT_TRUE(
      store_
          ->Delete(table_->Key("_delta_log/" + delta::PaddedVersion(snapshot_.version()) + ".json"))
          .ok());
  want = Locations(upsert->index());
  for (std::string& w : want) {
    w = w.starts_with("deleted@") ? "-" : w;
  }
  // (The start's snapshot is of a version whose commit file is gone: the index cannot be pinned
  // to that commit, so it is not written.)
  expect_rebuilt("no longer in the log", /*written_again=*/false);
}

// Deletes every commit file after `version` from the log: a table restored from an older backup,
// or commits lost.
void TruncateLog(storage::ObjectStore& store, const delta::Table& table, int64_t version,
                 int64_t latest) {
  for (int64_t v = version + 1; v <= latest; ++v) {
    ASSERT_TRUE(store.Delete(table.log_dir() + "/" + delta::CommitFileName(v)).ok());
  }
}

TEST_P(UpsertCommitTest, AKeyIndexNewerThanTheTableIsRebuilt) {
  auto upsert = NewPersisted(/*persist_every=*/1);
  ASSERT_TRUE(Apply({"+1:a:1", "+2:b:1", "+3:c:1"}, upsert.get()).ok());
  const int64_t restored = snapshot_.version();
  ASSERT_TRUE(Apply({"+2:B:2", "-1:2", "+4:d:1"}, upsert.get()).ok());
  ASSERT_TRUE(Apply({"+5:e:1"}, upsert.get()).ok());
  ASSERT_FALSE(NewPersisted(1)->index().last_load().rebuilt);  // the file is of the last version

  // The table goes back to `restored`: the index file is of a version it no longer has.
  TruncateLog(*store_, *table_, restored, snapshot_.version());
  snapshot_ = *table_->LoadSnapshot();
  ASSERT_EQ(snapshot_.version(), restored);
  auto restarted = NewPersisted(1);
  const KeyIndexLoad& load = restarted->index().last_load();
  EXPECT_TRUE(load.rebuilt);
  EXPECT_NE(load.reason.find("newer than the table"), std::string::npos) << load.reason;
  auto fresh = UpsertCommit::Create(*schema_, {.key = {"id"}, .sequence = "seq"});
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE((*fresh)->Load(*table_, snapshot_).ok());
  EXPECT_EQ(Locations(restarted->index()), Locations((*fresh)->index()));
  // It goes on against the restored table.
  ASSERT_TRUE(Apply({"+2:again:3"}, restarted.get()).ok());
  std::map<int64_t, std::string> want = {{1, "a"}, {2, "again"}, {3, "c"}};
  EXPECT_EQ(State(), want);
}

TEST_P(UpsertCommitTest, AKeyIndexOfAnotherHistoryOfTheTableIsRebuilt) {
  auto upsert = NewPersisted(/*persist_every=*/1);
  ASSERT_TRUE(Apply({"+1:a:1", "+2:b:1"}, upsert.get()).ok());
  const int64_t restored = snapshot_.version();
  ASSERT_TRUE(Apply({"-1:2", "+3:c:1"}, upsert.get()).ok());
  const int64_t indexed = snapshot_.version();

  // Restored to `restored`, then another commit takes the index's version number.
  TruncateLog(*store_, *table_, restored, indexed);
  snapshot_ = *table_->LoadSnapshot();
  auto other = NewUpsert("seq");
  ASSERT_TRUE(Apply({"+4:d:1"}, other.get()).ok());
  ASSERT_EQ(snapshot_.version(), indexed);
  auto restarted = NewPersisted(1);
  const KeyIndexLoad& load = restarted->index().last_load();
  EXPECT_TRUE(load.rebuilt);
  EXPECT_NE(load.reason.find("replaced or restored"), std::string::npos) << load.reason;
  EXPECT_EQ(Locations(restarted->index()), Locations(other->index()));
  EXPECT_EQ(restarted->index().live_keys(), 3u);  // 1, 2 and 4; 3 never was in this history
}

TEST_P(UpsertCommitTest, AKeyIndexOfAnotherKeyTypeIsRebuilt) {
  auto upsert = NewPersisted(/*persist_every=*/1);
  ASSERT_TRUE(Apply({"+1:a:1", "+2:b:1"}, upsert.get()).ok());
  const std::string key = KeyIndex::IndexFileKey(*table_, "p");
  std::string bytes = *store_->Read(key);
  // The header names the key column with its type; make it another type (the checksum made
  // good again, as a file written for that type would be).
  const std::string signature = "id " + schema_->field(0).type->ToString();
  const size_t at = bytes.find(signature);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(static_cast<size_t>(bytes[at - 1]), signature.size());
  const std::string other = "id STRING";
  ASSERT_NE(other, signature);
  bytes = bytes.substr(0, at - 1) + static_cast<char>(other.size()) + other +
          bytes.substr(at + signature.size());
  const uint64_t checksum = XXH64(bytes.data(), bytes.size() - 8, 0);
  bytes.replace(bytes.size() - 8, 8, reinterpret_cast<const char*>(&checksum), 8);
  ASSERT_TRUE(store_->Put(key, bytes).ok());
  auto restarted = NewPersisted(1);
  const KeyIndexLoad& load = restarted->index().last_load();
  EXPECT_TRUE(load.rebuilt);
  EXPECT_NE(load.reason.find("another key (id STRING"), std::string::npos) << load.reason;
  EXPECT_EQ(Locations(restarted->index()), Locations(upsert->index()));
}

TEST_P(UpsertCommitTest, TombstonesAreKeptOnlyWithinTheRetentionAndTheCap) {
  metrics::Registry registry;
  UpsertSpec spec = {.key = {"id"},
                     .sequence = "seq",
                     .tombstone_retention = 25,
                     .max_tombstones = 2,
                     .metrics = KeyIndexSeries(&registry, "p")};
  auto upsert = NewPersisted(/*persist_every=*/1, nullptr, spec);
  EXPECT_EQ(spec.metrics.rebuilt->value(), 1);
  ASSERT_TRUE(
      Apply({"+1:a:1", "+2:b:1", "+3:c:1", "+4:d:1", "+5:e:1", "+6:f:1"}, upsert.get()).ok());
  // Highest sequence 40: the delete at 5 is more than 25 below it (retention); of 20, 30 and 40,
  // past the cap of 2, the lowest (20) goes.
  ASSERT_TRUE(Apply({"-1:5", "-2:20", "-3:30", "-4:40"}, upsert.get()).ok());
  EXPECT_EQ(upsert->index().tombstones(), 2u);
  EXPECT_EQ(spec.metrics.tombstones->value(), 2);
  EXPECT_EQ(spec.metrics.tombstones_dropped->value(), 2);
  EXPECT_EQ(spec.metrics.keys->value(), 2);  // 5 and 6
  // A third one: 30 goes (the cap).
  ASSERT_TRUE(Apply({"-5:41"}, upsert.get()).ok());
  EXPECT_EQ(upsert->index().tombstones(), 2u);
  EXPECT_EQ(spec.metrics.tombstones_dropped->value(), 3);
  // Older changes: 4's delete (40) still refuses 39, and 5's (41) refuses 6; 2's delete was
  // dropped, so 15 is applied like a change to a key never seen.
  auto plan = Apply({"+4:old:39", "+2:back:15", "+5:old:6"}, upsert.get());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->stale, 2);
  std::map<int64_t, std::string> want = {{2, "back"}, {6, "f"}};
  EXPECT_EQ(State(), want);
  // The file keeps what the index keeps, and the next start loads it.
  metrics::Registry second;
  spec.metrics = KeyIndexSeries(&second, "p");
  auto restarted = NewPersisted(1, nullptr, spec);
  EXPECT_FALSE(restarted->index().last_load().rebuilt) << restarted->index().last_load().reason;
  EXPECT_EQ(spec.metrics.loaded->value(), 1);
  EXPECT_EQ(spec.metrics.rebuilt->value(), 0);
  EXPECT_EQ(restarted->index().tombstones(), 2u);
  EXPECT_EQ(Locations(restarted->index()), Locations(upsert->index()));
}

std::string StoreKind(const ::testing::TestParamInfo<bool>& param) {
  return param.param ? "DeletionVectors" : "CopyOnWrite";
}

INSTANTIATE_TEST_SUITE_P(CopyOnWriteAndDeletionVectors, UpsertCommitTest, ::testing::Bool(),
                         StoreKind);

}  // namespace
}  // namespace ferry::pipeline
