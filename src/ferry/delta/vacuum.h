// Vacuum: deletes the files under a table that no snapshot within the retention can reference
// (`ferry vacuum`): files removed longer ago than the retention, and orphans -- files no commit
// ever named (batches fenced by another writer, crashed writes, aborted optimizes) -- once they
// are older than the retention. A live file is never deleted.
//
// Vacuuming, numbered:
//   1. Refuse a retention below 168 hours unless forced (a writer may still be about to commit
//      files it wrote, and readers of older versions may still open removed files).
//   2. Load the latest snapshot. Protected: its live files, and its tombstones whose
//      deletionTimestamp lies within the retention (readers of versions within it use them),
//      with the files of their deletion vectors (NotSupported for a DV at an absolute path).
//   3. List every object under the table root except _delta_log and hidden paths (a segment
//      starting with '_' or '.', unless it holds '=' like a partition directory `_p=1`).
//      Candidates: unprotected files whose modification time is older than the retention
//      (so the files of a batch still being written, not yet committed, are kept).
//   4. Reload the latest snapshot and drop any candidate it made live since step 2.
//   5. Delete the candidates in store batches (ObjectStore::DeleteMany; none with dry_run).
//
// Thread-safety: stateless; safe beside ingestion and optimize.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::delta {

class Table;

inline constexpr int64_t kMinVacuumRetentionMs = int64_t{168} * 3600 * 1000;

struct VacuumOptions {
  int64_t retain_ms = kMinVacuumRetentionMs;
  bool dry_run = false;
  // Allows retain_ms below kMinVacuumRetentionMs.
  bool force = false;
  // The current time (tests); nullopt = the wall clock.
  std::optional<int64_t> now_ms;
};

struct VacuumResult {
  int64_t version = -1;              // the snapshot vacuumed against
  std::vector<std::string> deleted;  // table-relative paths (would be deleted, with dry_run)
  int64_t bytes = 0;
  int64_t files_kept = 0;  // data files left in place
};

// Step 1-5. InvalidArgument for a retention below the minimum without force; NotSupported for
// a table with a live file named by an absolute path (it could not be told from an orphan).
Result<VacuumResult> Vacuum(const Table& table, const VacuumOptions& options);

}  // namespace ferry::delta
