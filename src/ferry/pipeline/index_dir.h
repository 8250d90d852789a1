// Where a pipeline's indexes live beside its table: `_ferry/<kind>/<pipeline id>/` under the
// table root, the id escaped to one key segment. A hidden directory (its name starts with `_`):
// Delta readers and both ferry's and Spark's VACUUM leave it alone. Used by the dedup index
// (dedup_index.h, kind "dedup") and the upsert key index (key_index.h, kind "upsert").
//
// Thread-safety: stateless functions.
#pragma once

#include <string>
#include <string_view>

#include "ferry/delta/table.h"

namespace ferry::pipeline {

// The key prefix (ends with '/') of `kind`'s index files of pipeline `name` beside `table`.
std::string IndexDir(const delta::Table& table, std::string_view kind, std::string_view name);

}  // namespace ferry::pipeline
