// The schema history of a table (`ferry table inspect`): which version set which schema, and
// what each change did compared with the schema before it (columns added, types widened, or a
// schema replaced). Read from the commits still in the log, oldest first; when log cleanup removed
// the first commits, the history starts with the schema of the oldest version that can be loaded.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"

namespace ferry::delta {

class Table;

struct SchemaVersion {
  int64_t version = 0;
  int64_t timestamp_ms = 0;  // commitInfo's, else the commit file's modification time
  std::string operation;     // commitInfo.operation ("" without one)
  // True for the first entry: the schema the table was created with (version 0) or, after log
  // cleanup, the schema at the oldest version the log still holds.
  bool initial = false;
  columnar::SchemaPtr schema;
  // "add column loc.alt BIGINT", "widen column id from INT to BIGINT", "drop column x",
  // "replace the schema: (...)"; empty for the initial entry and for a metaData that kept the
  // schema (a property change).
  std::vector<std::string> changes;
};

// One entry per version at or below `up_to` (default: the latest) whose commit holds a
// metaData, plus the initial entry.
Result<std::vector<SchemaVersion>> ReadSchemaHistory(const Table& table,
                                                     std::optional<int64_t> up_to = {});

// What turned `before` into `after`, as in SchemaVersion::changes.
std::vector<std::string> DescribeSchemaChanges(const columnar::Schema& before,
                                               const columnar::Schema& after);

}  // namespace ferry::delta
