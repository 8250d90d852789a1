// Shredding: turns the rows of a columnar column (column.h) into the definition and repetition
// levels of one Parquet leaf, plus the leaf rows that hold values (Dremel's record shredding).
//
// For each top-level row the shredder walks the LeafPath (schema_writer.h):
//   - a null at a nullable node ends the walk: one level entry with the definition level
//     reached so far (struct children of a null row are placeholders and are never read);
//   - a valid nullable node adds one to the definition level;
//   - a list or map adds one more for its repeated group and emits each element with
//     repetition level = the parent's for the first element and the group's own for the rest;
//     an empty one emits a single entry without that extra definition level;
//   - the leaf, when reached with the maximum definition level, contributes a value.
// A null in a non-nullable column (outside a null parent) is an InvalidArgument error.
//
// Paths without lists or maps keep leaf rows equal to top-level rows, so the result is "dense":
// no row list, the values are the rows of [begin, end) whose level is the maximum (all of them
// when the maximum is 0). This is the fast path for flat tables.
//
// Thread-safety: a Shredder is not thread-safe; its buffers are reused between calls.
#pragma once

#include <cstdint>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/columnar/column.h"
#include "ferry/parquet/column_descriptor.h"
#include "ferry/parquet/schema_writer.h"

namespace ferry::parquet {

struct ShreddedLeaf {
  const columnar::Column* leaf = nullptr;  // the leaf column the value rows index
  int64_t num_levels = 0;                  // level entries (values + nulls + empty lists)
  int64_t num_rows = 0;                    // top-level rows covered
  int64_t num_values = 0;                  // entries at the maximum definition level
  std::vector<int16_t> def_levels;         // num_levels entries, empty if max def is 0
  std::vector<int16_t> rep_levels;         // num_levels entries, empty if max rep is 0
  // dense: values are leaf rows [begin, end) at the maximum definition level.
  bool dense = true;
  int64_t begin = 0;
  int64_t end = 0;
  // !dense: leaf rows of the values, in order.
  std::vector<int64_t> value_rows;
};

class Shredder {
 public:
  // Shreds rows [begin, end) of `top` (the top-level column of `path`) into *out, replacing its
  // contents (capacity is kept).
  static Status Shred(const LeafPath& path, const ColumnDescriptor& column,
                      const columnar::Column& top, int64_t begin, int64_t end, ShreddedLeaf* out);
};

}  // namespace ferry::parquet
