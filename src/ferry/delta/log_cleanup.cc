#include "ferry/delta/log_cleanup.h"

#include <map>
#include <string>
#include <vector>

#include "ferry/delta/log_files.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_properties.h"

namespace ferry::delta {
namespace {

constexpr int64_t kDefaultLogRetentionMs = int64_t{30} * 24 * 3600 * 1000;

Result<int64_t> LogRetentionMs(const Snapshot& snapshot) {
  const StringMap& configuration = snapshot.metadata().configuration;
  auto it = configuration.find("delta.logRetentionDuration");
  if (it == configuration.end()) {
    return kDefaultLogRetentionMs;
  }
  auto ms = ParseIntervalMillis(it->second);
  if (!ms.ok()) {
    return ms.status().WithContext("delta.logRetentionDuration");
  }
  return *ms;
}

struct CheckpointParts {
  int32_t num_parts = 0;  // 0 for a single-file checkpoint
  std::vector<std::string> keys;
};

}  // namespace

Result<LogCleanupResult> CleanupLog(const Table& table, const Snapshot& snapshot, int64_t now_ms) {
  FERRY_ASSIGN_OR_RETURN(int64_t retention_ms, LogRetentionMs(snapshot));
  const int64_t cutoff_ms = now_ms - retention_ms;
  // Step 1.
  FERRY_ASSIGN_OR_RETURN(auto listing, table.store().List(table.log_dir() + "/"));
  std::map<int64_t, storage::ObjectInfo> commits;
  std::map<int64_t, CheckpointParts> checkpoints;
  for (const storage::ObjectInfo& info : listing) {
    std::string_view name = info.key;
    name.remove_prefix(name.rfind('/') + 1);
    std::optional<LogFileName> parsed = ParseLogFileName(name);
    if (!parsed) {
      continue;
    }
    if (parsed->kind == LogFileKind::kCommit) {
      commits[parsed->version] = info;
    } else {
      CheckpointParts& parts = checkpoints[parsed->version];
      if (parsed->kind == LogFileKind::kMultiPartCheckpoint) {
        parts.num_parts = parsed->num_parts;
      }
      parts.keys.push_back(info.key);
    }
  }
  std::optional<int64_t> expired;
  for (const auto& [version, info] : commits) {
    if (info.modification_time_ms < cutoff_ms) {
      expired = version;
    }
  }
  LogCleanupResult result;
  if (!expired) {
    return result;
  }
  // Step 2: a checkpoint is complete when it is one file or has all its parts (a classic and a
  // v2 checkpoint of one version may both be present: any complete one will do).
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    const auto& [version, parts] = *it;
    const bool complete =
        parts.num_parts == 0 || static_cast<int32_t>(parts.keys.size()) >= parts.num_parts;
    if (version <= *expired + 1 && complete) {
      result.checkpoint_version = version;
      break;
    }
  }
  if (!result.checkpoint_version) {
    return result;
  }
  const int64_t keep_from = *result.checkpoint_version;
  // Step 3: commits oldest first (one store batch at a time: on S3 a DeleteObjects request of up
  // to 1000 keys), so an interrupted cleanup leaves at most one batch out of order, every key of
  // it older than the kept checkpoint that readers start from.
  std::vector<std::string> doomed;
  for (const auto& [version, info] : commits) {
    if (version >= keep_from) {
      break;
    }
    if (info.modification_time_ms >= cutoff_ms) {
      continue;
    }
    doomed.push_back(info.key);
  }
  FERRY_RETURN_IF_ERROR(table.store().DeleteMany(doomed));
  result.commits_deleted = static_cast<int64_t>(doomed.size());
  doomed.clear();
  for (const auto& [version, parts] : checkpoints) {
    if (version >= keep_from) {
      break;
    }
    doomed.insert(doomed.end(), parts.keys.begin(), parts.keys.end());
  }
  FERRY_RETURN_IF_ERROR(table.store().DeleteMany(doomed));
  result.checkpoint_files_deleted = static_cast<int64_t>(doomed.size());
  return result;
}

}  // namespace ferry::delta
