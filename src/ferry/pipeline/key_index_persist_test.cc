// The upsert key index persisted beside the table (key_index.h): a start loads it without
// reading the table and catches up from the log; a damaged, stale, foreign, too new file, one of
// another history of the table or of another key type is rebuilt with the same answers; the
// tombstones it keeps. On copy-on-write tables and on tables with deletion vectors
// (upsert_commit_fixture.h).
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/delta/log_files.h"
#include "ferry/delta/table.h"
#include "ferry/metrics/metrics.h"
#include "ferry/pipeline/key_index.h"
#include "ferry/pipeline/pipeline_metrics.h"
#include "ferry/pipeline/upsert_commit.h"
#include "ferry/testing/upsert_commit_fixture.h"

namespace ferry::pipeline::upsert_test {
namespace {

class KeyIndexPersistTest : public UpsertCommitTest {};

TEST_P(KeyIndexPersistTest, APersistedKeyIndexStartsWithoutReadingTheTable) {
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

TEST_P(KeyIndexPersistTest, AKeyIndexPersistedEarlierCatchesUpFromTheLog) {
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

TEST_P(KeyIndexPersistTest, ADamagedStaleOrForeignKeyIndexIsRebuiltWithTheSameAnswers) {
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

TEST_P(KeyIndexPersistTest, AKeyIndexNewerThanTheTableIsRebuilt) {
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

TEST_P(KeyIndexPersistTest, AKeyIndexOfAnotherHistoryOfTheTableIsRebuilt) {
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

TEST_P(KeyIndexPersistTest, AKeyIndexOfAnotherKeyTypeIsRebuilt) {
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

// Format 2 (before the derived key columns were recorded) is read as recording none: an index
// without them written by an older ferry is still used.
TEST_P(KeyIndexPersistTest, AKeyIndexOfFormat2IsStillRead) {
  auto upsert = NewPersisted(/*persist_every=*/1);
  ASSERT_TRUE(Apply({"+1:a:1", "+2:b:1", "+3:c:1"}, upsert.get()).ok());
  ASSERT_TRUE(Apply({"+2:B:2", "-1:2"}, upsert.get()).ok());
  const std::string key = KeyIndex::IndexFileKey(*table_, "p");
  std::string bytes = *store_->Read(key);
  ASSERT_EQ(bytes.substr(0, 9), std::string("FERRYKIX\x03"));
  // Past the table id, key, sequence and pruning strings (each shorter than 128 bytes: a
  // one-byte length), the count of derived key columns: none. Format 2 has no count.
  size_t at = 9;
  for (int field = 0; field < 4; ++field) {
    ASSERT_LT(static_cast<uint8_t>(bytes[at]), 128);
    at += 1 + static_cast<uint8_t>(bytes[at]);
  }
  ASSERT_EQ(bytes[at], '\0');
  bytes.erase(at, 1);
  bytes[8] = '\x02';
  const uint64_t checksum = XXH64(bytes.data(), bytes.size() - 8, 0);
  bytes.replace(bytes.size() - 8, 8, reinterpret_cast<const char*>(&checksum), 8);
  ASSERT_TRUE(store_->Put(key, bytes).ok());
  auto restarted = NewPersisted(1);
  EXPECT_FALSE(restarted->index().last_load().rebuilt) << restarted->index().last_load().reason;
  EXPECT_EQ(Locations(restarted->index()), Locations(upsert->index()));
}

TEST_P(KeyIndexPersistTest, TombstonesAreKeptOnlyWithinTheRetentionAndTheCap) {
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

INSTANTIATE_TEST_SUITE_P(CopyOnWriteAndDeletionVectors, KeyIndexPersistTest, ::testing::Bool(),
                         UpsertStoreKind);

}  // namespace
}  // namespace ferry::pipeline::upsert_test
