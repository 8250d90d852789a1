// Clustering order: the order in which ferry's optimize writes the rows of a clustered table
// (PROTOCOL.md "Clustered Table"; optimize.h), so that files cut from it in sequence cover
// narrow, mostly disjoint ranges of the clustering columns and data skipping can prune them.
//
//   1. Each clustering column is ranked: nulls first (rank 0), then its distinct values in
//      ascending order (integers, dates, timestamps and decimals by value; floats by value with
//      NaN last; strings and binary bytewise, as Spark compares them; false before true).
//   2. The ranks are spread over 32 bits in proportion to the column's distinct values
//      (rank * 2^32 / (distinct + 1)), so every column weighs the same whatever its cardinality
//      (Spark's multi-dimensional clustering ranks by range buckets for the same reason).
//   3. One column: the rows sorted by it. Several: the rows sorted along a Z-order (Morton)
//      curve over the spread ranks, their bits interleaved from the most significant, columns in
//      the order the table lists them. Ties keep the input order (a stable sort).
// Spark's liquid clustering orders several columns along a Hilbert curve; Z-order is the other
// space-filling curve Delta uses (OPTIMIZE ZORDER BY) and clusters as well for pruning, with
// somewhat longer jumps between neighbouring ranges.
//
// Clustering columns of type struct, array or map are refused (Spark refuses them too).
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/column_mapping.h"

namespace ferry::delta {

// A clustering column as the field indices leading to it from the top of `schema` (one index
// for a top-level column, more for a struct field).
using ColumnPath = std::vector<int>;

// The paths of `columns` (ClusteringColumns in table_features.h: dotted paths of physical names
// under column mapping, else of the table's names, matched ignoring case). NotSupported naming
// a column that is not in the schema or is not of a type that can be ordered.
Result<std::vector<ColumnPath>> ResolveClusteringColumns(const columnar::Schema& schema,
                                                         const std::vector<std::string>& columns,
                                                         ColumnMappingMode mode);

// The permutation of `batch`'s rows in clustering order (steps 1-3): row indices, for Take().
// REQUIRES: `paths` resolved against the batch's leading columns (the table's schema).
// InvalidArgument for 2^32 rows or more.
Result<std::vector<int64_t>> ClusteringOrder(const columnar::RecordBatch& batch,
                                             const std::vector<ColumnPath>& paths);

}  // namespace ferry::delta
