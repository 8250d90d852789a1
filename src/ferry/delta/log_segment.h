// LogSegment: the files a snapshot of one version is built from, found by listing _delta_log.
//
// Listing, numbered:
//   1. Read _last_checkpoint (a hint, last_checkpoint.h). If it names a version at or below the
//      target, list from that version on (ListOptions::start_after). Otherwise, for a target
//      more than 1,000 versions in, list from 1,000 versions before it; else (or when that
//      window holds no complete checkpoint at or below the target) list everything.
//   2. Group checkpoint files by version. A classic or UUID-named (v2) checkpoint is one file;
//      a multi-part checkpoint is complete only when every part 1..n is present (the protocol
//      tells readers to ignore incomplete ones). Take the newest complete checkpoint at or
//      below the target. If the hint led nowhere (stale, or its checkpoint is incomplete), go
//      back to step 1 with a full listing.
//   3. Take the commits after that checkpoint up to the target. They must be contiguous and,
//      without a checkpoint, start at version 0; a gap is DataLoss naming the missing version.
//
// Errors: NotFound when the directory holds no log (no table) or the target version does not
// exist (or no longer can be reconstructed); DataLoss for a broken log.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/log_files.h"
#include "ferry/storage/object_store.h"

namespace ferry::delta {

struct CheckpointFiles {
  int64_t version = 0;
  LogFileKind kind = LogFileKind::kClassicCheckpoint;
  std::vector<storage::ObjectInfo> files;  // one, or the parts in order
};

struct CommitFile {
  int64_t version = 0;
  storage::ObjectInfo info;
};

struct LogSegment {
  int64_t version = -1;  // the version a snapshot of this segment has
  std::optional<CheckpointFiles> checkpoint;
  std::vector<CommitFile> commits;  // after the checkpoint, ascending, contiguous
  // The newest complete checkpoint version seen in the listing, even one above the target
  // (the commit path uses it to decide when to write the next checkpoint).
  std::optional<int64_t> newest_checkpoint_version;
};

// Step 1-3 above. `log_dir` is the key of the _delta_log directory ("t/_delta_log").
Result<LogSegment> ListLogSegment(storage::ObjectStore& store, const std::string& log_dir,
                                  std::optional<int64_t> target_version);

// Commits after `version`, ascending and contiguous from version + 1 (possibly none); for
// incremental snapshot updates. `newest_checkpoint` receives the newest complete checkpoint
// version seen (unchanged if none).
Result<std::vector<CommitFile>> ListCommitsAfter(storage::ObjectStore& store,
                                                 const std::string& log_dir, int64_t version,
                                                 std::optional<int64_t>* newest_checkpoint);

}  // namespace ferry::delta
