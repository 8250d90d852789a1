// Checkpoints after commits: when one is due, writing it (checkpoint_writer.h) and the log
// cleanup after it (log_cleanup.h), either on the committing thread (Transaction, step 6) or on a
// thread of its own (BackgroundCheckpointer), so that a writer committing several times a second
// does not wait for checkpoints that grow with the table.
//
// Due: a checkpoint is due at version v when the newest checkpoint known is older than the last
// multiple of delta.checkpointInterval at or below v (so one that a crash or a failure skipped
// is written by the next commit after it).
//
// BackgroundCheckpointer:
//
//   BackgroundCheckpointer checkpointer(table);
//   ... after each commit of this writer (the post-commit snapshot):
//   checkpointer.Offer(snapshot);          // starts one if due and none is running
//   for (const CheckpointOutcome& done : checkpointer.TakeFinished()) { ...metrics, logs... }
//   ... at a clean end, with the last snapshot:
//   checkpointer.Finish(&snapshot);        // waits; writes the one due, if any, on this thread
//
// At most one checkpoint runs at a time, and an offer while one runs is not kept: the first
// offer after it ends starts the next one if it is still due (the newest version then). So
// checkpoints follow the commit rate when they are quick and run back to back when they are not,
// and a commit never waits for one. The running checkpoint shares the state of the snapshot it
// was offered, so the writer's next commit copies that state once (Snapshot is copy-on-write);
// no snapshot is held otherwise. Checkpoints are an optimisation for readers, never needed for
// correctness (PROTOCOL.md): one lost to a crash costs the replay of a few more commits, and
// the next due offer writes it.
//
// Thread-safety: thread-safe (one mutex); the checkpoints run on the checkpointer's own thread.
// `table` must outlive the checkpointer.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/delta/snapshot.h"

namespace ferry::delta {

class Table;

// Whether a checkpoint is due at `version` (see above).
bool CheckpointDue(int64_t version, int64_t interval, std::optional<int64_t> newest);

// The checkpoint interval of `snapshot` (delta.checkpointInterval; 10 when unreadable).
int64_t CheckpointInterval(const Snapshot& snapshot);

struct CheckpointOutcome {
  int64_t version = -1;
  Status status;        // the checkpoint's; the log cleanup after it is best effort (logged)
  int64_t micros = 0;   // writing it, the cleanup excluded
  int64_t wall_ms = 0;  // when it was written
};

// [delta.commit.before_checkpoint] Writes the checkpoint of `snapshot`'s version, then cleans
// up the log (failures of the cleanup are logged, not returned).
CheckpointOutcome WriteCheckpointAndCleanUp(const Table& table, const Snapshot& snapshot);

class BackgroundCheckpointer {
 public:
  explicit BackgroundCheckpointer(const Table& table);
  ~BackgroundCheckpointer();  // Finish(nullptr): waits for a running checkpoint
  BackgroundCheckpointer(const BackgroundCheckpointer&) = delete;
  BackgroundCheckpointer& operator=(const BackgroundCheckpointer&) = delete;

  // A snapshot of the table (committed or loaded by this writer). Starts a checkpoint of it
  // when one is due and none runs.
  void Offer(const Snapshot& snapshot);
  // The checkpoints finished since the last call, oldest first.
  std::vector<CheckpointOutcome> TakeFinished();
  // Waits for the running checkpoint and stops the thread; then, if `last` (the writer's latest
  // committed snapshot) is given, a checkpoint is due at it and the last one tried here did not
  // fail, writes it on the calling thread. Later offers are ignored.
  void Finish(const Snapshot* last);
  // The newest checkpoint known: of the offered snapshots' logs, or written here.
  std::optional<int64_t> newest() const;

 private:
  void Run();
  // Waits for the running checkpoint and joins the thread.
  void Stop();
  // REQUIRES: mu_ held.
  bool DueLocked(const Snapshot& snapshot) const;
  // REQUIRES: mu_ held.
  void RecordLocked(CheckpointOutcome outcome);

  const Table& table_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Snapshot> job_;  // the checkpoint the thread is to write
  std::optional<int64_t> newest_;
  bool running_ = false;  // job_ set or being written
  bool stop_ = false;
  bool last_failed_ = false;  // the last checkpoint written here failed
  std::vector<CheckpointOutcome> done_;
  std::thread thread_;
};

}  // namespace ferry::delta
