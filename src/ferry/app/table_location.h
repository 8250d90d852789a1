// OpenTableAt: the Delta table at a location a user wrote (a local path or a URI, parsed by
// storage/table_uri.h), opened on the store that location names. Every command that takes a
// table (`table inspect|history`, `verify`, `optimize`, `vacuum`, `status`, the maintenance
// scheduler of `run`) opens it here, so all of them accept the same locations and refuse the
// same unsupported schemes with the same message.
//
// Thread-safety: thread-safe.
#pragma once

#include <memory>
#include <string>

#include "ferry/base/result.h"
#include "ferry/delta/table.h"
#include "ferry/storage/store_factory.h"

namespace ferry::app {

// InvalidArgument for a location ferry does not serve (the message names the scheme and lists
// the supported ones); NotFound when the location does not exist (kExisting). The table itself
// need not exist yet: LoadSnapshot answers NotFound then.
Result<std::unique_ptr<delta::Table>> OpenTableAt(
    const std::string& location, const storage::StorageOptions& options,
    storage::OpenMode mode = storage::OpenMode::kExisting);

}  // namespace ferry::app
