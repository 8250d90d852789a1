#include "ferry/delta/schema_history.h"

#include <algorithm>

#include "ferry/columnar/column_conform.h"
#include "ferry/delta/log_files.h"
#include "ferry/delta/schema_evolution.h"
#include "ferry/delta/schema_json.h"
#include "ferry/delta/table.h"

namespace ferry::delta {

std::vector<std::string> DescribeSchemaChanges(const columnar::Schema& before,
                                               const columnar::Schema& after) {
  std::vector<std::string> out;
  if (before.Equals(after)) {
    return out;
  }
  for (const columnar::Field& f : before.fields()) {
    if (!columnar::FindFieldIgnoringCase(after.fields(), f.name)) {
      out.push_back(fmt::format("drop column {}", f.name));
    }
  }
  Result<SchemaMerge> merge =
      MergeSchema(before, after,
                  {.mode = SchemaEvolution::kAddColumnsAndWiden,
                   .limits = {.max_new_fields = INT64_MAX, .max_fields = INT64_MAX}});
  if (!merge.ok() || (out.empty() && !merge->changed())) {
    // Not columns added or widened (a narrowing, a renamed or reordered column, nullability).
    return {fmt::format("replace the schema: ({})", after.ToString())};
  }
  for (const SchemaChange& change : merge->changes) {
    out.push_back(change.Describe());
  }
  return out;
}

namespace {

Result<std::vector<SchemaVersion>> ReadOnce(const Table& table, std::optional<int64_t> up_to) {
  FERRY_ASSIGN_OR_RETURN(auto infos, table.store().List(table.log_dir() + "/"));
  std::vector<std::pair<int64_t, int64_t>> commits;  // version, modification time
  for (const storage::ObjectInfo& info : infos) {
    std::optional<LogFileName> name = ParseLogFileName(info.key);
    if (name && name->kind == LogFileKind::kCommit && (!up_to || name->version <= *up_to)) {
      commits.emplace_back(name->version, info.modification_time_ms);
    }
  }
  std::sort(commits.begin(), commits.end());
  std::vector<SchemaVersion> out;
  columnar::SchemaPtr current;
  std::optional<int64_t> initial_version;
  if (!commits.empty() && commits.front().first > 0) {
    // The first commits were cleaned up: start from the oldest commit left. A cleanup keeps a
    // checkpoint at that commit and deletes every file below it, so no earlier version loads.
    Result<Snapshot> start = table.LoadSnapshot(commits.front().first);
    if (start.ok()) {
      current = start->schema();
      initial_version = start->version();
      out.push_back({.version = start->version(),
                     .timestamp_ms = start->timestamp_ms(),
                     .initial = true,
                     .schema = current});
    }
  }
  for (const auto& [version, mtime] : commits) {
    if (initial_version && version <= *initial_version) {
      continue;  // in the initial entry
    }
    FERRY_ASSIGN_OR_RETURN(std::vector<Action> actions, table.ReadCommit(version));
    const Metadata* metadata = nullptr;
    SchemaVersion entry{.version = version, .timestamp_ms = mtime};
    for (const Action& action : actions) {
      if (const auto* m = std::get_if<Metadata>(&action)) {
        metadata = m;
      } else if (const auto* info = std::get_if<CommitInfo>(&action)) {
        entry.operation = info->operation.value_or("");
        entry.timestamp_ms = info->in_commit_timestamp.value_or(info->timestamp.value_or(mtime));
      }
    }
    if (metadata == nullptr) {
      continue;
    }
    Result<columnar::SchemaPtr> schema = ParseSchemaJson(metadata->schema_string);
    if (!schema.ok()) {
      return schema.status().WithContext("{}: metaData of version {}", table.Describe(), version);
    }
    entry.schema = *schema;
    if (current == nullptr) {
      entry.initial = true;
    } else {
      entry.changes = DescribeSchemaChanges(*current, *entry.schema);
    }
    current = entry.schema;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

Result<std::vector<SchemaVersion>> ReadSchemaHistory(const Table& table,
                                                     std::optional<int64_t> up_to) {
  // A writer's log cleanup (log_cleanup.h) may delete the oldest commits between the listing and
  // their reading: a commit that was listed and is gone was cleaned up, and a new listing starts
  // after it. Cleanup never deletes the newest checkpoint or what follows it, so this ends.
  constexpr int kAttempts = 5;
  Result<std::vector<SchemaVersion>> history = ReadOnce(table, up_to);
  for (int attempt = 1; attempt < kAttempts && history.status().code() == StatusCode::kNotFound;
       ++attempt) {
    history = ReadOnce(table, up_to);
  }
  return history;
}

}  // namespace ferry::delta
