#include "ferry/delta/history.h"

#include "ferry/delta/log_files.h"
#include "ferry/delta/table.h"

namespace ferry::delta {

Result<std::vector<CommitSummary>> ReadHistory(const Table& table,
                                               std::optional<int64_t> from_version,
                                               std::optional<int64_t> to_version) {
  FERRY_ASSIGN_OR_RETURN(auto infos, table.store().List(table.log_dir() + "/"));
  std::vector<CommitSummary> out;
  for (const storage::ObjectInfo& info : infos) {
    std::optional<LogFileName> name = ParseLogFileName(info.key);
    if (!name.has_value() || name->kind != LogFileKind::kCommit ||
        (from_version.has_value() && name->version < *from_version) ||
        (to_version.has_value() && name->version > *to_version)) {
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(auto actions, table.ReadCommit(name->version));
    CommitSummary summary;
    summary.version = name->version;
    summary.timestamp_ms = info.modification_time_ms;
    for (const Action& action : actions) {
      if (const auto* commit_info = std::get_if<CommitInfo>(&action)) {
        summary.operation = commit_info->operation.value_or("");
        summary.engine_info = commit_info->engine_info.value_or("");
        summary.commit_info_json = commit_info->json;
        if (commit_info->in_commit_timestamp) {
          summary.timestamp_ms = *commit_info->in_commit_timestamp;
        } else if (commit_info->timestamp) {
          summary.timestamp_ms = *commit_info->timestamp;
        }
      } else if (std::holds_alternative<AddFile>(action)) {
        summary.files_added++;
      } else if (std::holds_alternative<RemoveFile>(action)) {
        summary.files_removed++;
      } else if (const auto* txn = std::get_if<Txn>(&action)) {
        summary.txns[txn->app_id] = txn->version;
      }
    }
    out.push_back(std::move(summary));
  }
  return out;
}

}  // namespace ferry::delta
