// Record assembly: definition and repetition levels plus leaf values → nested columnar columns
// (Dremel's record shredding in reverse), for any depth of structs, lists and maps.
//
// Every node of the columnar tree carries four thresholds (schema_from_parquet.h, AssemblyNode):
// a level position starts a row of the node when rep <= rep_level and def >= slot_def; the row
// is non-null when def >= valid_def; a list or map row has elements when def >= elements_def, and
// each position with rep == rep_level + 1 (and def >= elements_def) adds one. A struct's fields
// have a row wherever the struct does, so a null struct gets a null placeholder in each field,
// as columnar/column.h requires.
//
// The reader works column by column:
//   1. each leaf column chunk is decoded page by page; AppendLeafSlots() appends one row to the
//      leaf's column per slot (a value, or a null); the levels are kept for nested fields;
//   2. AssembleNested() then appends validity (structs) and offsets (lists, maps) to the
//      interior columns, reading each node's first leaf's levels, and checks that every child
//      ended up exactly as long as its parent says: leaves that disagree are corrupt (DataLoss).
//
// Thread-safety: thread-safe functions over caller-owned data.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/columnar/column.h"
#include "ferry/parquet/schema_from_parquet.h"

namespace ferry::parquet {

// The levels of one leaf column over one row group.
struct LeafLevels {
  std::vector<int16_t> def;  // one per position; empty means all 0 (max_def == 0)
  std::vector<int16_t> rep;  // one per position; empty means all 0 (max_rep == 0)
  int64_t size = 0;          // level positions

  int16_t def_at(int64_t i) const { return def.empty() ? 0 : def[static_cast<size_t>(i)]; }
  int16_t rep_at(int64_t i) const { return rep.empty() ? 0 : rep[static_cast<size_t>(i)]; }
};

// Appends a row to `out` for every position i of `def` with def[i] >= slot_def: the next value of
// `values` from values[first] (or values[indices[k]] when `indices` is set; `first` is then
// unused) if def[i] == max_def, else a null. An empty `def` means every position is max_def:
// `positions` values, appended in bulk (callers pass it so when they have counted the page's
// values). Returns the values consumed.
// REQUIRES: `values` and `out` have the same storage class; enough values (indices) for every
// def == max_def; every index < values.length().
int64_t AppendLeafSlots(std::span<const int16_t> def, int64_t positions, int16_t slot_def,
                        int16_t max_def, const columnar::Column& values, const uint32_t* indices,
                        columnar::Column* out, int64_t first = 0);

// Step 2 above for the field `node` whose leaves were filled. `levels` is indexed by leaf
// number and holds at least the levels of every leaf of `node`. Errors: DataLoss when the leaves
// disagree or a map key is null.
Status AssembleNested(const AssemblyNode& node, const std::vector<LeafLevels>& levels,
                      columnar::Column* column);

// The columns of `node`'s leaves inside `column`, indexed like `node`'s leaves (leaf numbers
// minus node.first_leaf).
void CollectLeafColumns(const AssemblyNode& node, columnar::Column* column,
                        std::vector<columnar::Column*>* leaves);

}  // namespace ferry::parquet
