// OpenTableStore: the ObjectStore that a table location (table_uri.h) names, rooted at the
// table, so that the table's keys ("_delta_log/...", "part-....parquet", "_ferry/dedup/...") are
// relative to the store. The composition root (app/) opens every table through it; delta/ and
// pipeline/ see only the ObjectStore.
//
// Storage options (storage_options.h): canonical names, already merged from their sources.
//
// Thread-safety: the function is thread-safe; the store it returns is (object_store.h).
#pragma once

#include <memory>
#include <string>

#include "ferry/base/result.h"
#include "ferry/storage/object_store.h"
#include "ferry/storage/storage_options.h"
#include "ferry/storage/table_uri.h"

namespace ferry::storage {

enum class OpenMode {
  // The table's location must exist (a local directory); NotFound otherwise. (An object store's
  // prefix always does: a missing table shows when its log is read.)
  kExisting,
  // Create the location when it is missing (a local directory and its parents).
  kCreate,
};

Result<std::shared_ptr<ObjectStore>> OpenTableStore(const TableUri& uri,
                                                    const StorageOptions& options, OpenMode mode);

}  // namespace ferry::storage
