// Checkpoints off the commit path (checkpointer.h): commits go on while a checkpoint is held in
// the store, the next due offer after a failure writes one, Finish writes the last one due, and a
// fresh reader starts from what was written.
#include "ferry/delta/checkpointer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "ferry/columnar/types.h"
#include "ferry/delta/last_checkpoint.h"
#include "ferry/delta/table.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/memory_store.h"
#include "ferry/testing/forwarding_store.h"

namespace ferry::delta {
namespace {

// Holds (or fails) the writes of checkpoint files until told otherwise.
class CheckpointGate : public testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  Result<std::unique_ptr<OutputStream>> OpenAtomicWriter(std::string_view key) override {
    if (key.find(".checkpoint.parquet") != std::string_view::npos) {
      std::unique_lock lock(mu_);
      ++checkpoint_writes_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return !held_; });
      if (fail_next_) {
        fail_next_ = false;
        return IOError("{}: injected checkpoint write failure", key);
      }
    }
    return ForwardingStore::OpenAtomicWriter(key);
  }

  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void Release() {
    std::lock_guard lock(mu_);
    held_ = false;
    cv_.notify_all();
  }
  void FailNext() {
    std::lock_guard lock(mu_);
    fail_next_ = true;
  }
  // Waits until `n` checkpoint writes have begun (false after 30 s).
  bool WaitForWrites(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [&] { return checkpoint_writes_ >= n; });
  }
  int writes() {
    std::lock_guard lock(mu_);
    return checkpoint_writes_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  bool fail_next_ = false;
  int checkpoint_writes_ = 0;
};

class CheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    memory_ = std::make_shared<storage::InMemoryStore>();
    gate_ = std::make_shared<CheckpointGate>(memory_);
    table_ = *Table::Open(gate_, "t");
    TableSpec spec;
    spec.schema = std::make_shared<const columnar::Schema>(
        std::vector<columnar::Field>{{"id", columnar::DataType::Int64(), true, {}}});
    spec.configuration = {{"delta.checkpointInterval", "5"}};
    auto created = table_->Create(spec);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    snapshot_ = *created;
  }

  // One commit setting the position of "p/0" to the new version, without an inline checkpoint.
  Status CommitOne() {
    Transaction txn(*table_, snapshot_,
                    {.initial_backoff_ms = 0, .max_backoff_ms = 0, .checkpoint = false});
    txn.SetPosition("p/0", snapshot_.version() + 1);
    FERRY_ASSIGN_OR_RETURN(CommitResult result, txn.Commit());
    snapshot_ = std::move(result.snapshot);
    return Status::OK();
  }

  std::optional<int64_t> LastCheckpointVersion() {
    auto text = memory_->Read(table_->Key("_delta_log/_last_checkpoint"));
    if (!text.ok()) {
      return std::nullopt;
    }
    auto hint = ParseLastCheckpoint(*text);
    return hint ? std::optional<int64_t>(hint->version) : std::nullopt;
  }

  // The outcomes finished so far, waiting up to 30 s for `n` of them.
  std::vector<CheckpointOutcome> WaitForOutcomes(BackgroundCheckpointer& checkpointer, size_t n) {
    std::vector<CheckpointOutcome> all;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (all.size() < n && std::chrono::steady_clock::now() < deadline) {
      for (CheckpointOutcome& done : checkpointer.TakeFinished()) {
        all.push_back(std::move(done));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return all;
  }

  std::shared_ptr<storage::InMemoryStore> memory_;
  std::shared_ptr<CheckpointGate> gate_;
  std::unique_ptr<Table> table_;
  Snapshot snapshot_;
};

TEST(CheckpointDueTest, TheLastMultipleOfTheIntervalDecides) {
  EXPECT_FALSE(CheckpointDue(4, 5, std::nullopt));
  EXPECT_TRUE(CheckpointDue(5, 5, std::nullopt));
  EXPECT_TRUE(CheckpointDue(7, 5, std::nullopt));  // 5 was skipped: 7 writes it
  EXPECT_TRUE(CheckpointDue(7, 5, 4));
  EXPECT_FALSE(CheckpointDue(7, 5, 5));
  EXPECT_FALSE(CheckpointDue(9, 5, 6));
  EXPECT_TRUE(CheckpointDue(10, 5, 6));
  EXPECT_FALSE(CheckpointDue(10, 0, std::nullopt));
}

TEST_F(CheckpointerTest, CommitsGoOnWhileACheckpointIsHeldInTheStore) {
  BackgroundCheckpointer checkpointer(*table_);
  gate_->Hold();
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(CommitOne().ok());
    checkpointer.Offer(snapshot_);
    if (snapshot_.version() == 5) {
      ASSERT_TRUE(gate_->WaitForWrites(1));  // the checkpoint of 5 is held from here on
    }
  }
  // Versions 6..12 committed while the checkpoint of 5 was held; 10 was due but one was running.
  EXPECT_EQ(snapshot_.version(), 12);
  EXPECT_EQ(gate_->writes(), 1);
  EXPECT_TRUE(checkpointer.TakeFinished().empty());
  gate_->Release();
  std::vector<CheckpointOutcome> done = WaitForOutcomes(checkpointer, 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].version, 5);
  EXPECT_TRUE(done[0].status.ok()) << done[0].status.ToString();
  EXPECT_EQ(checkpointer.newest(), 5);
  // The next offer is due again (10 > 5) and checkpoints its own, newer, version.
  ASSERT_TRUE(CommitOne().ok());
  checkpointer.Offer(snapshot_);
  checkpointer.Finish(&snapshot_);
  done = checkpointer.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].version, 13);
  EXPECT_TRUE(done[0].status.ok()) << done[0].status.ToString();
  EXPECT_EQ(LastCheckpointVersion(), 13);

  // A reader starts from checkpoint 13 and sees every position.
  auto fresh = Table::Open(memory_, "t");
  ASSERT_TRUE(fresh.ok());
  auto loaded = (*fresh)->LoadSnapshot();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->version(), 13);
  EXPECT_EQ(loaded->newest_checkpoint_version(), 13);
  EXPECT_EQ(loaded->position("p/0"), 13);
}

TEST_F(CheckpointerTest, AFailedCheckpointIsWrittenByTheNextDueOffer) {
  BackgroundCheckpointer checkpointer(*table_);
  gate_->FailNext();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(CommitOne().ok());
    checkpointer.Offer(snapshot_);
  }
  std::vector<CheckpointOutcome> done = WaitForOutcomes(checkpointer, 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].version, 5);
  EXPECT_EQ(done[0].status.code(), StatusCode::kIOError) << done[0].status.ToString();
  EXPECT_EQ(checkpointer.newest(), std::nullopt);
  EXPECT_EQ(LastCheckpointVersion(), std::nullopt);
  ASSERT_TRUE(CommitOne().ok());
  checkpointer.Offer(snapshot_);  // 6: still due (no checkpoint at or after 5)
  done = WaitForOutcomes(checkpointer, 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].version, 6);
  EXPECT_TRUE(done[0].status.ok()) << done[0].status.ToString();
  EXPECT_EQ(LastCheckpointVersion(), 6);
  checkpointer.Finish(&snapshot_);  // nothing due: writes nothing more
  EXPECT_TRUE(checkpointer.TakeFinished().empty());
  EXPECT_EQ(gate_->writes(), 2);
}

TEST_F(CheckpointerTest, FinishDoesNotTryAgainRightAfterAFailure) {
  BackgroundCheckpointer checkpointer(*table_);
  gate_->FailNext();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(CommitOne().ok());
    checkpointer.Offer(snapshot_);
  }
  std::vector<CheckpointOutcome> done = WaitForOutcomes(checkpointer, 1);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_FALSE(done[0].status.ok());
  // The store may be down: stopping does not wait for its retries once more.
  checkpointer.Finish(&snapshot_);
  EXPECT_TRUE(checkpointer.TakeFinished().empty());
  EXPECT_EQ(gate_->writes(), 1);
  EXPECT_EQ(LastCheckpointVersion(), std::nullopt);
}

TEST_F(CheckpointerTest, FinishWritesTheCheckpointDueAtTheLastSnapshot) {
  BackgroundCheckpointer checkpointer(*table_);
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(CommitOne().ok());  // never offered
  }
  checkpointer.Finish(&snapshot_);
  std::vector<CheckpointOutcome> done = checkpointer.TakeFinished();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].version, 7);
  EXPECT_TRUE(done[0].status.ok());
  EXPECT_EQ(LastCheckpointVersion(), 7);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(CommitOne().ok());  // 10: due again
  }
  checkpointer.Offer(snapshot_);  // after Finish: ignored
  checkpointer.Finish(nullptr);
  EXPECT_TRUE(checkpointer.TakeFinished().empty());
  EXPECT_EQ(gate_->writes(), 1);
  EXPECT_EQ(LastCheckpointVersion(), 7);
}

TEST_F(CheckpointerTest, TheHintNeverMovesBackToAnOlderCheckpoint) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(CommitOne().ok());
  }
  Snapshot at5 = snapshot_;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(CommitOne().ok());
  }
  {
    BackgroundCheckpointer newer(*table_);
    newer.Finish(&snapshot_);  // checkpoint 10 and its hint
  }
  ASSERT_EQ(LastCheckpointVersion(), 10);
  {
    BackgroundCheckpointer older(*table_);
    older.Finish(&at5);  // a slow writer's checkpoint of 5 ends after it
    std::vector<CheckpointOutcome> done = older.TakeFinished();
    ASSERT_EQ(done.size(), 1u);
    EXPECT_TRUE(done[0].status.ok());
  }
  EXPECT_EQ(LastCheckpointVersion(), 10);
  EXPECT_TRUE(
      memory_->Stat(table_->Key("_delta_log/00000000000000000005.checkpoint.parquet")).ok());
}

TEST_F(CheckpointerTest, AnOfferedSnapshotThatKnowsANewerCheckpointIsNotCheckpointedAgain) {
  // Another writer's checkpoint of 5, seen through the loaded snapshot.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(CommitOne().ok());
  }
  {
    BackgroundCheckpointer other(*table_);
    other.Finish(&snapshot_);
  }
  ASSERT_EQ(gate_->writes(), 1);
  auto loaded = table_->LoadSnapshot();
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->newest_checkpoint_version(), 5);
  BackgroundCheckpointer checkpointer(*table_);
  checkpointer.Offer(*loaded);
  checkpointer.Finish(&*loaded);
  EXPECT_TRUE(checkpointer.TakeFinished().empty());
  EXPECT_EQ(gate_->writes(), 1);
}

}  // namespace
}  // namespace ferry::delta
