// Log cleanup: deletes the log files no reader within `delta.logRetentionDuration` (default 30
// days) needs, as Delta writers do after a checkpoint (PROTOCOL.md "Metadata Cleanup").
//
// Cleanup, numbered:
//   1. List _delta_log. E = the newest version whose commit file is older than the retention.
//   2. C = the newest complete checkpoint at or below E + 1. Without one, stop: every commit is
//      still needed to build the table.
//   3. Delete (in store batches, oldest first) the commit files of versions below C that are
//      older than the retention, and the checkpoint files (every part) of versions below C.
//      Checkpoint C, the commits from C on and _last_checkpoint are never touched, so every
//      version from C on stays readable and only versions older than the retention become
//      unreadable.
// Transaction runs it after each checkpoint it writes; a failure there is logged, never fails
// the commit (the next checkpoint retries).
//
// Thread-safety: stateless; safe beside concurrent commits (it only deletes files below a
// checkpoint, which no commit or snapshot load of a newer version reads).
#pragma once

#include <cstdint>
#include <optional>

#include "ferry/base/result.h"
#include "ferry/delta/snapshot.h"

namespace ferry::delta {

class Table;

struct LogCleanupResult {
  std::optional<int64_t> checkpoint_version;  // C, when one was found
  int64_t commits_deleted = 0;
  int64_t checkpoint_files_deleted = 0;
};

// `snapshot` supplies the table properties; `now_ms` is the current wall time.
Result<LogCleanupResult> CleanupLog(const Table& table, const Snapshot& snapshot, int64_t now_ms);

}  // namespace ferry::delta
