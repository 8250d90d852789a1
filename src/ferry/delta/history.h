// The commit history of a table (`ferry table history`): one summary per commit file still in
// the log, oldest first. Commits removed by log cleanup are simply absent.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::delta {

class Table;

struct CommitSummary {
  int64_t version = 0;
  // commitInfo.inCommitTimestamp, else commitInfo.timestamp, else the file's modification time.
  int64_t timestamp_ms = 0;
  std::string operation;    // "" when the commit has no commitInfo
  std::string engine_info;  // ditto
  int64_t files_added = 0;
  int64_t files_removed = 0;
  std::map<std::string, int64_t> txns;  // appId -> version set by this commit
  std::string commit_info_json = "{}";  // the whole commitInfo, as written
};

// Summaries of the commits in [from_version, to_version] (all when unset).
Result<std::vector<CommitSummary>> ReadHistory(const Table& table,
                                               std::optional<int64_t> from_version = {},
                                               std::optional<int64_t> to_version = {});

}  // namespace ferry::delta
