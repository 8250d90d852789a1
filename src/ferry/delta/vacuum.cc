#include "ferry/delta/vacuum.h"

#include <set>
#include <string_view>

#include "ferry/base/clock.h"
#include "ferry/delta/deletion_vector.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/table.h"

namespace ferry::delta {
namespace {

// Step 3's rule for hidden paths.
bool IsHidden(std::string_view relative) {
  while (!relative.empty()) {
    size_t slash = relative.find('/');
    std::string_view segment = relative.substr(0, slash);
    if (!segment.empty() && (segment[0] == '_' || segment[0] == '.') &&
        segment.find('=') == std::string_view::npos) {
      return true;
    }
    if (slash == std::string_view::npos) {
      break;
    }
    relative.remove_prefix(slash + 1);
  }
  return false;
}

// The table-relative path of a log path; nullopt for absolute paths (not under the table).
std::optional<std::string> Relative(const std::string& path) {
  AddFile add;
  add.path = path;
  auto relative = RelativeFilePath(add);
  if (!relative.ok()) {
    return std::nullopt;
  }
  return *relative;
}

// Adds the file of a deletion vector stored beside the data ('u'); an inline one has none.
// NotSupported for a DV at an absolute path ('p'): vacuum could not tell it from an orphan.
Status AddDeletionVectorFile(const std::optional<DeletionVector>& dv, std::set<std::string>* out) {
  if (!dv || dv->storage_type == "i") {
    return Status::OK();
  }
  auto path = DeletionVectorRelativePath(*dv);
  if (!path.ok()) {
    return NotSupported(
        "vacuum: deletion vector {} is not stored relative to the table root; ferry only vacuums "
        "tables whose DV files it can name",
        dv->UniqueId());
  }
  out->insert(*path);
  return Status::OK();
}

// NotSupported for a live file outside the table root's relative paths (an absolute path
// written by another engine): vacuum could not tell it from an orphan. The files of the live
// files' deletion vectors are live too.
Status AddLiveFiles(const Snapshot& snapshot, std::set<std::string>* out) {
  for (const auto& [key, add] : snapshot.files()) {
    std::optional<std::string> path = Relative(add.path);
    if (!path) {
      return NotSupported(
          "vacuum: live file {} has an absolute path; ferry only vacuums tables "
          "whose files are named relative to the table root",
          add.path);
    }
    out->insert(*path);
    FERRY_RETURN_IF_ERROR(AddDeletionVectorFile(add.deletion_vector, out));
  }
  return Status::OK();
}

}  // namespace

Result<VacuumResult> Vacuum(const Table& table, const VacuumOptions& options) {
  // Step 1.
  if (options.retain_ms < kMinVacuumRetentionMs && !options.force) {
    return InvalidArgument(
        "vacuum of {}: a retention of {} ms is below 168 hours; files a writer is about to "
        "commit or a reader of an older version needs could be deleted (force to override)",
        table.Describe(), options.retain_ms);
  }
  const int64_t now = options.now_ms.value_or(WallMillis());
  const int64_t cutoff = now - options.retain_ms;
  // Step 2.
  FERRY_ASSIGN_OR_RETURN(Snapshot snapshot, table.LoadSnapshot());
  std::set<std::string> protected_paths;
  FERRY_RETURN_IF_ERROR(AddLiveFiles(snapshot, &protected_paths));
  for (const auto& [key, remove] : snapshot.tombstones()) {
    if (remove.deletion_timestamp.value_or(0) >= cutoff) {
      if (auto path = Relative(remove.path)) {
        protected_paths.insert(*path);
      }
      FERRY_RETURN_IF_ERROR(AddDeletionVectorFile(remove.deletion_vector, &protected_paths));
    }
  }
  // Step 3.
  const std::string root = table.path().empty() ? "" : table.path() + "/";
  FERRY_ASSIGN_OR_RETURN(auto listing, table.store().List(root, {.recursive = true}));
  VacuumResult result;
  result.version = snapshot.version();
  std::vector<storage::ObjectInfo> candidates;
  for (storage::ObjectInfo& info : listing) {
    std::string_view relative = std::string_view(info.key).substr(root.size());
    if (relative.starts_with(std::string(kLogDirName) + "/") || IsHidden(relative)) {
      continue;
    }
    if (protected_paths.count(std::string(relative)) != 0 || info.modification_time_ms >= cutoff) {
      ++result.files_kept;
      continue;
    }
    candidates.push_back(std::move(info));
  }
  // Step 4.
  FERRY_ASSIGN_OR_RETURN(snapshot, table.Update(std::move(snapshot)));
  std::set<std::string> live_now;
  FERRY_RETURN_IF_ERROR(AddLiveFiles(snapshot, &live_now));
  // Step 5.
  std::vector<std::string> doomed;
  for (const storage::ObjectInfo& info : candidates) {
    std::string relative = info.key.substr(root.size());
    if (live_now.count(relative) != 0) {
      ++result.files_kept;
      continue;
    }
    doomed.push_back(info.key);
    result.bytes += static_cast<int64_t>(info.size);
    result.deleted.push_back(std::move(relative));
  }
  if (!options.dry_run) {
    FERRY_RETURN_IF_ERROR(table.store().DeleteMany(doomed));
  }
  return result;
}

}  // namespace ferry::delta
