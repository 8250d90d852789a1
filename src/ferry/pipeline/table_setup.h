// Table setup for a pipeline: open the Delta table, or create it from the declared schema, and
// check that the table and the configuration agree before any message is read.
//
//   schema declared, table missing   create it (when `create` is on), metadata columns appended
//   schema declared, table present   every declared column, metadata column and derived column
//                                    must be in the table with the same type or one that holds
//                                    it (the table's columns may have widened; nullability may be
//                                    stricter in the table), and the partition columns must
//                                    match; the table may have more columns (schema evolution or
//                                    `ferry table add-columns` added them: the pipeline fills
//                                    them too)
//   no schema, table present         the table's schema is used; metadata columns must exist
//   no schema, table missing         NotFound: nothing to create it from
//
// Thread-safety: stateless functions.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/pipeline/transform_stage.h"
#include "ferry/storage/object_store.h"

namespace ferry::pipeline {

struct TableSetupOptions {
  // Spark DDL; empty = take the table's schema.
  std::string schema_ddl;
  // For messages: where the DDL came from ("ferry.toml:4:10: pipeline[0].schema").
  std::string schema_origin = "schema";
  std::vector<std::string> partition_by;
  std::map<std::string, std::string> properties;
  bool create = true;
  // Metadata kind -> column name (metadata_columns.h).
  std::map<std::string, std::string> metadata_columns;
  // Derived columns, appended after the declared and metadata columns (transform_stage.h).
  TransformSpec transform;
  // Declared columns the table lacks are accepted (the dead-letter table under schema
  // evolution: its first commit adds them).
  bool allow_missing_columns = false;
  // A store that does not answer (Unavailable: refused, timed out, throttled past the store's
  // own retries) is tried again, with backoff, for this long before the error is returned; zero
  // = not at all. `ferry run` waits as its source does: until a stop, or --max-wait.
  std::chrono::milliseconds unavailable_patience{0};
  // Polled between attempts: true ends the waiting with the last error.
  std::function<bool()> cancelled;
};

struct OpenedTable {
  std::unique_ptr<delta::Table> table;
  delta::Snapshot snapshot;
  bool created = false;
};

// `path` is the table root as a key of `store`. Errors name the table.
Result<OpenedTable> OpenOrCreateTable(std::shared_ptr<storage::ObjectStore> store,
                                      const std::string& path, const TableSetupOptions& options);

}  // namespace ferry::pipeline
