// UpsertCommitTest: a table of (id, v, seq) in an in-memory store, copy-on-write or with deletion
// vectors (the test parameter), and an UpsertCommit whose plans are committed the way
// BatchCommitter commits them, with readers of the table's rows, row ids and key index; shared by
// upsert_test.cc (plans, row tracking), upsert_pruning_test.cc (partition pruning) and
// key_index_persist_test.cc (the persisted key index), each of which instantiates its own
// subclass over both table kinds (UpsertStoreKind names them).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/columnar/column.h"
#include "ferry/columnar/ddl.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/transaction.h"
#include "ferry/pipeline/change_keys.h"
#include "ferry/pipeline/key_index.h"
#include "ferry/pipeline/upsert_commit.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/forwarding_store.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::pipeline::upsert_test {

using transform::ChangeOp;

inline columnar::SchemaPtr UpsertSchema(const char* ddl) {
  return std::make_shared<const columnar::Schema>(*columnar::ParseDdlSchema(ddl));
}

inline columnar::RecordBatch UpsertRows(const columnar::SchemaPtr& schema,
                                        const std::vector<std::string>& json) {
  columnar::RecordBatch batch = columnar::RecordBatch::MakeEmpty(schema);
  auto decoder = std::move(*transform::JsonDecoder::Create(schema, {}));
  for (const std::string& row : json) {
    Status st = decoder->Append(row, &batch);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  return batch;
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

  // Brings the table back to `version` as Delta's RESTORE does, in one commit: every live file
  // that version does not hold is removed and every file of it that is not live is added again,
  // a file under another deletion vector counting as another file (so a file that version held
  // with a smaller vector is removed and added again with that vector).
  void Restore(int64_t version) {
    auto old = table_->LoadSnapshot(version);
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    delta::Transaction restore(*table_, snapshot_);
    for (const auto& [key, add] : snapshot_.files()) {
      if (old->files().count(key) == 0) {
        restore.Remove(
            {.path = add.path, .data_change = true, .deletion_vector = add.deletion_vector});
      }
    }
    std::vector<delta::AddFile> adds;
    for (const auto& [key, add] : old->files()) {
      if (snapshot_.files().count(key) == 0) {
        adds.push_back(add);
        adds.back().data_change = true;
      }
    }
    restore.AddFiles(std::move(adds));
    restore.SetOperation("RESTORE", {{"version", std::to_string(version)}});
    auto committed = restore.Commit();
    ASSERT_TRUE(committed.ok()) << committed.status().ToString();
    snapshot_ = std::move(committed->snapshot);
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

// "CopyOnWrite" / "DeletionVectors" for the test names.
inline std::string UpsertStoreKind(const ::testing::TestParamInfo<bool>& param) {
  return param.param ? "DeletionVectors" : "CopyOnWrite";
}

}  // namespace ferry::pipeline::upsert_test
