#include "ferry/pipeline/dedup_index.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "ferry/columnar/ddl.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/memory_store.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::pipeline {
namespace {

// Now, ms since the epoch: data files get the real time as their modificationTime.
const int64_t kNow = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
constexpr int64_t kHour = 3'600'000;

// A table of (id, msg) rows, commits written the way the pipeline writes them, and DedupIndex
// instances over it as successive "processes" would create them.
class DedupIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    schema_ = std::make_shared<const columnar::Schema>(
        *columnar::ParseDdlSchema("id BIGINT NOT NULL, msg STRING"));
    table_ = std::move(*delta::Table::Open(store_, "events"));
    auto created = table_->Create({.schema = schema_});
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    snapshot_ = *created;
  }

  std::unique_ptr<DedupIndex> NewIndex(std::string index_name = "events", int compact_every = 64,
                                       std::string key = "msg") {
    auto index = DedupIndex::Create(schema_, {.key = std::move(key),
                                              .window = std::chrono::hours(24),
                                              .index_name = std::move(index_name),
                                              .compact_every = compact_every});
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return std::move(*index);
  }

  columnar::RecordBatch Batch(const std::vector<std::string>& msgs) {
    columnar::RecordBatch batch = columnar::RecordBatch::MakeEmpty(schema_);
    auto decoder = std::move(*transform::JsonDecoder::Create(schema_, {}));
    for (const std::string& m : msgs) {
      EXPECT_TRUE(
          decoder->Append(fmt::format(R"({{"id": {}, "msg": "{}"}})", next_id_++, m), &batch).ok());
    }
    return batch;
  }

  // Filters `msgs` through `index`, commits what is kept, remembers and persists it, like one
  // batch of the pipeline. Returns the messages kept.
  std::vector<std::string> CommitBatch(DedupIndex* index, const std::vector<std::string>& msgs,
                                       bool persist = true) {
    columnar::RecordBatch batch = Batch(msgs);
    EXPECT_TRUE(index->CatchUp(*table_, snapshot_).ok());
    std::vector<std::string> keys;
    std::vector<int64_t> keep = index->Filter(batch, &keys);
    columnar::RecordBatch rows = batch.Take(keep);
    int64_t version = CommitRows(rows);
    index->Remember(keys, version, kNow);
    if (persist) {
      Status st = index->Persist(*table_, snapshot_, version, keys, kNow);
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
    return keys;
  }

  // Another writer's commit (no index involved).
  int64_t CommitRows(const columnar::RecordBatch& rows) {
    auto writer = std::move(*delta::TableWriter::Create(*table_, snapshot_));
    if (rows.num_rows() > 0) {
      EXPECT_TRUE(writer->Write(rows).ok());
    }
    delta::Transaction txn(*table_, snapshot_, {});
    txn.AddFiles(std::move(*writer->Finish()));
    auto result = txn.Commit();
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    snapshot_ = result->snapshot;
    return result->version;
  }

  std::vector<std::string> Keys(const std::string& prefix) {
    std::vector<std::string> out;
    auto listed = store_->List(prefix, {.recursive = true});
    EXPECT_TRUE(listed.ok());
    for (const auto& info : *listed) {
      out.push_back(info.key.substr(prefix.size()));
    }
    return out;
  }

  // Deletes every data file of the table: an index that still answers right did not read them.
  void DeleteDataFiles() {
    auto listed = store_->List("events/", {});
    ASSERT_TRUE(listed.ok());
    for (const auto& info : *listed) {
      if (info.key.ends_with(".parquet")) {
        ASSERT_TRUE(store_->Delete(info.key).ok());
      }
    }
  }

  std::shared_ptr<storage::InMemoryStore> store_ = std::make_shared<storage::InMemoryStore>();
  columnar::SchemaPtr schema_;
  std::unique_ptr<delta::Table> table_;
  delta::Snapshot snapshot_;
  int64_t next_id_ = 1;
};

TEST_F(DedupIndexTest, FirstLoadRebuildsAndWritesABaseBesideTheTable) {
  CommitRows(Batch({"a", "b"}));
  auto index = NewIndex();
  ASSERT_TRUE(index->Load(*table_, snapshot_, kNow).ok());
  EXPECT_TRUE(index->last_load().rebuilt);
  EXPECT_EQ(index->size(), 2u);
  EXPECT_EQ(Keys("events/_ferry/dedup/"), std::vector<std::string>{"events/base.idx"});
}

TEST_F(DedupIndexTest, RestartLoadsBaseAndSegmentsWithoutReadingDataFiles) {
  auto first = NewIndex();
  ASSERT_TRUE(first->Load(*table_, snapshot_, kNow).ok());
  EXPECT_EQ(CommitBatch(first.get(), {"a", "b", "a"}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(CommitBatch(first.get(), {"b", "c"}), std::vector<std::string>{"c"});
  EXPECT_EQ(Keys("events/_ferry/dedup/events/"),
            (std::vector<std::string>{"00000000000000000001.seg", "00000000000000000002.seg",
                                      "base.idx"}));

  DeleteDataFiles();
  auto second = NewIndex();
  ASSERT_TRUE(second->Load(*table_, snapshot_, kNow).ok());
  EXPECT_FALSE(second->last_load().rebuilt) << second->last_load().rebuild_reason;
  EXPECT_EQ(second->last_load().base_version, 0);
  EXPECT_EQ(second->last_load().segments, 2);
  EXPECT_EQ(second->last_load().files_read, 0);
  EXPECT_EQ(second->version(), 2);
  EXPECT_EQ(CommitBatch(second.get(), {"a", "c", "d"}), std::vector<std::string>{"d"});
}

TEST_F(DedupIndexTest, AnotherWritersCommitIsReadFromTheLog) {
  auto first = NewIndex();
  ASSERT_TRUE(first->Load(*table_, snapshot_, kNow).ok());
  CommitBatch(first.get(), {"a"});
  CommitRows(Batch({"x", "y"}));  // version 2: no segment
  CommitBatch(first.get(), {"b"});

  auto second = NewIndex();
  ASSERT_TRUE(second->Load(*table_, snapshot_, kNow).ok());
  EXPECT_FALSE(second->last_load().rebuilt);
  EXPECT_EQ(second->last_load().segments, 2);
  EXPECT_EQ(second->last_load().commits_from_log, 1);
  EXPECT_EQ(second->last_load().files_read, 1);
  EXPECT_EQ(CommitBatch(second.get(), {"a", "b", "x", "y", "z"}), std::vector<std::string>{"z"});
}

TEST_F(DedupIndexTest, ACrashBeforeTheSegmentIsCoveredByTheLog) {
  auto first = NewIndex();
  ASSERT_TRUE(first->Load(*table_, snapshot_, kNow).ok());
  CommitBatch(first.get(), {"a"}, /*persist=*/false);  // killed after the commit

  auto second = NewIndex();
  ASSERT_TRUE(second->Load(*table_, snapshot_, kNow).ok());
  EXPECT_EQ(second->last_load().commits_from_log, 1);
  EXPECT_EQ(CommitBatch(second.get(), {"a", "b"}), std::vector<std::string>{"b"});
}

TEST_F(DedupIndexTest, CompactionFoldsSegmentsIntoANewBase) {
  auto index = NewIndex("events", /*compact_every=*/3);
  ASSERT_TRUE(index->Load(*table_, snapshot_, kNow).ok());
  for (int i = 0; i < 7; ++i) {
    CommitBatch(index.get(), {"k" + std::to_string(i)});
  }
  // Bases at versions 3 and 6; the segment of version 7 is left.
  EXPECT_EQ(Keys("events/_ferry/dedup/events/"),
            (std::vector<std::string>{"00000000000000000007.seg", "base.idx"}));
  DeleteDataFiles();
  auto second = NewIndex("events", 3);
  ASSERT_TRUE(second->Load(*table_, snapshot_, kNow).ok());
  EXPECT_EQ(second->last_load().base_version, 6);
  EXPECT_EQ(second->last_load().segments, 1);
  EXPECT_EQ(second->size(), 7u);
}

TEST_F(DedupIndexTest, ADamagedBaseIsRebuiltFromTheTable) {
  auto first = NewIndex();
  ASSERT_TRUE(first->Load(*table_, snapshot_, kNow).ok());
  CommitBatch(first.get(), {"a", "b"});
  std::string base = *store_->Read("events/_ferry/dedup/events/base.idx");
  base[base.size() / 2] ^= 0x5A;
  ASSERT_TRUE(store_->Put("events/_ferry/dedup/events/base.idx", base).ok());

  auto second = NewIndex();
  ASSERT_TRUE(second->Load(*table_, snapshot_, kNow).ok());
  EXPECT_TRUE(second->last_load().rebuilt);
  EXPECT_NE(second->last_load().rebuild_reason.find("checksum"), std::string::npos)
      << second->last_load().rebuild_reason;
  EXPECT_EQ(second->size(), 2u);
  // A truncated base too.
  ASSERT_TRUE(store_->Put("events/_ferry/dedup/events/base.idx", base.substr(0, 5)).ok());
  ASSERT_TRUE(second->Load(*table_, snapshot_, kNow).ok());
  EXPECT_TRUE(second->last_load().rebuilt);
  EXPECT_EQ(second->size(), 2u);
}

TEST_F(DedupIndexTest, AnIndexOfAnotherTableOrKeyIsNotUsed) {
  auto first = NewIndex();
  ASSERT_TRUE(first->Load(*table_, snapshot_, kNow).ok());
  CommitBatch(first.get(), {"a"});

  // Same directory, another key expression.
  auto by_id = NewIndex("events", 64, "id");
  ASSERT_TRUE(by_id->Load(*table_, snapshot_, kNow).ok());
  EXPECT_TRUE(by_id->last_load().rebuilt);
  EXPECT_NE(by_id->last_load().rebuild_reason.find("another key"), std::string::npos);

  // The table recreated at the same path (a new metaData id) while the index stayed.
  std::string base = *store_->Read("events/_ferry/dedup/events/base.idx");
  auto listed = store_->List("events/", {.recursive = true});
  ASSERT_TRUE(listed.ok());
  for (const auto& info : *listed) {
    ASSERT_TRUE(store_->Delete(info.key).ok());
  }
  ASSERT_TRUE(store_->Put("events/_ferry/dedup/events/base.idx", base).ok());
  snapshot_ = *table_->Create({.schema = schema_});
  auto fresh = NewIndex();
  ASSERT_TRUE(fresh->Load(*table_, snapshot_, kNow).ok());
  EXPECT_TRUE(fresh->last_load().rebuilt);
  EXPECT_EQ(fresh->size(), 0u);
  EXPECT_EQ(CommitBatch(fresh.get(), {"a"}), std::vector<std::string>{"a"});
}

TEST_F(DedupIndexTest, KeysOutsideTheWindowAreNotLoaded) {
  auto first = NewIndex();
  ASSERT_TRUE(first->Load(*table_, snapshot_, kNow).ok());
  CommitBatch(first.get(), {"a"});
  auto later = NewIndex();
  ASSERT_TRUE(later->Load(*table_, snapshot_, kNow + 25 * kHour).ok());
  EXPECT_FALSE(later->last_load().rebuilt);
  EXPECT_EQ(later->size(), 0u);
}

TEST_F(DedupIndexTest, NotPersistedWithoutAName) {
  auto index = NewIndex("");
  ASSERT_TRUE(index->Load(*table_, snapshot_, kNow).ok());
  CommitBatch(index.get(), {"a"});
  EXPECT_TRUE(Keys("events/_ferry/").empty());
}

TEST_F(DedupIndexTest, MaxKeysForgetsTheOldestAndARefreshedKeyStays) {
  auto index = std::move(*DedupIndex::Create(
      schema_, {.key = "msg", .window = std::chrono::hours(24), .max_keys = 2}));
  index->Remember({"a", "b"}, 1, kNow);
  index->Remember({"a"}, 2, kNow + 1);  // "a" is now newer than "b"
  index->Remember({"c"}, 3, kNow + 2);  // over max_keys: "b" goes
  std::vector<std::string> kept;
  columnar::RecordBatch batch = Batch({"a", "b", "c"});
  index->Filter(batch, &kept);
  EXPECT_EQ(kept, std::vector<std::string>{"b"});
}

}  // namespace
}  // namespace ferry::pipeline
