// Leaf columns of a Parquet schema: what the writer and the reader need to know about each
// primitive column (its path, physical type and the maximum definition and repetition levels),
// derived from the flattened SchemaElement list of a FileMetaData.
//
// Levels: walking from the root to a leaf, every OPTIONAL node adds one to the maximum
// definition level, every REPEATED node one to both the definition and the repetition level;
// REQUIRED nodes add nothing. Leaves are numbered in depth-first order, which is also the order
// of the column chunks in every row group.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/parquet/metadata.h"

namespace ferry::parquet {

// How min/max statistics of a column compare (parquet.thrift, ColumnOrder TYPE_ORDER).
enum class SortOrder : uint8_t { kSigned, kUnsigned, kUnknown };

struct ColumnDescriptor {
  std::vector<std::string> path;  // names below the root: path_in_schema
  PhysicalType physical_type = PhysicalType::kBoolean;
  int32_t type_length = 0;  // FIXED_LEN_BYTE_ARRAY width
  int16_t max_definition_level = 0;
  int16_t max_repetition_level = 0;
  FieldRepetitionType repetition = FieldRepetitionType::kRequired;  // of the leaf itself
  std::optional<LogicalType> logical_type;
  std::optional<ConvertedType> converted_type;
  int32_t precision = 0;  // DECIMAL (from the logical type, else the element)
  int32_t scale = 0;
  int schema_index = 0;  // the leaf's position in FileMetaData::schema

  // "a.b.c"
  std::string PathString() const;
};

// The sort order of a column's statistics, from its logical, converted and physical type.
SortOrder ColumnSortOrder(const ColumnDescriptor& column);

// The leaves of a flattened schema (root first, depth-first, num_children on groups).
// Errors (DataLoss): an empty schema, num_children running past the end or negative, elements
// left over after the root's subtree, a leaf without a physical type, a FIXED_LEN_BYTE_ARRAY
// without a positive type_length, nesting deeper than kMaxSchemaDepth, a non-root node without a
// repetition type.
inline constexpr int kMaxSchemaDepth = 100;
Result<std::vector<ColumnDescriptor>> DescribeLeaves(const std::vector<SchemaElement>& schema);

}  // namespace ferry::parquet
