// The Parquet schema (FileMetaData.schema, a depth-first list of SchemaElements) mapped to a
// columnar schema, plus what the reader needs to rebuild nested columns from the leaf columns'
// definition and repetition levels (record_assembly.h).
//
// Nested layouts (parquet-format LogicalTypes.md, including its backward-compatibility rules):
//   - group without annotation → STRUCT
//   - LIST group with one repeated child R → ARRAY. The element is R itself (required) when R is
//     a primitive, a group of several fields, or a one-field group named `array` or
//     `<list name>_tuple` (2-level lists); otherwise R's only field, with its own repetition
//     (the standard 3-level list).
//   - MAP (or MAP_KEY_VALUE outside a MAP) group with one repeated group child of two fields →
//     MAP<first, second> (names are not enforced). A key/value group with only a key is read as
//     ARRAY<key> (there is no value to map to); other shapes fall back to the rules above.
//   - a repeated field outside those annotations → a required ARRAY of required elements.
// Leaf types: INT32/INT64 per their INT, DATE, TIME, TIMESTAMP, DECIMAL annotations (TIME has no
// columnar type: it reads as the raw INT32/INT64 count of its unit); INT96 → timestamp (micros,
// UTC); BYTE_ARRAY STRING/UTF8/ENUM → STRING, JSON → JSON, otherwise (BSON, none) BINARY;
// FIXED_LEN_BYTE_ARRAY DECIMAL → DECIMAL, FLOAT16 → FLOAT, otherwise (UUID, INTERVAL, none)
// FIXED(n). Decimals wider than 38 digits, or with a bad scale, read as their raw physical type.
// Unknown logical types are ignored (the physical type decides). A field's Parquet field_id, if
// any, is kept in its metadata as "parquet.field.id".
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/parquet/metadata.h"
#include "ferry/parquet/value_conversion.h"
#include "ferry/parquet/value_decoder.h"

namespace ferry::parquet {

// One leaf (primitive) column of the file: a column chunk in every row group, in schema order.
struct LeafColumn {
  std::vector<std::string> path;  // path_in_schema
  std::string dotted_path;        // "a.b.c", for messages
  PhysicalSpec physical;
  int16_t max_def = 0;
  int16_t max_rep = 0;
  // The leaf has a row (a value, a null, or a placeholder under a null struct) at every level
  // position whose definition level is at least slot_def: the def level of its innermost
  // repeated ancestor (0 without one). Positions below it are empty or null lists above it.
  int16_t slot_def = 0;
  columnar::DataTypePtr type;  // what the values are read as
  ValueConversion conversion = ValueConversion::kNone;
};

// A node of the columnar type tree with the level thresholds that describe it; see
// record_assembly.h for how they are used.
struct AssemblyNode {
  enum class Kind : uint8_t { kLeaf, kStruct, kList, kMap };
  Kind kind = Kind::kLeaf;
  // A row of this node starts at each level position with rep <= rep_level and
  // def >= slot_def; it is non-null when def >= valid_def.
  int16_t rep_level = 0;
  int16_t slot_def = 0;
  int16_t valid_def = 0;
  // kList, kMap: the row has elements when def >= elements_def; a new element starts at each
  // position with rep <= rep_level + 1 (and def >= elements_def).
  int16_t elements_def = 0;
  int leaf = -1;       // kLeaf: index into FileSchema::leaves
  int first_leaf = 0;  // the first leaf below (or this leaf): its levels describe this node
  int num_leaves = 0;  // leaves below (1 for a leaf), numbered from first_leaf
  std::vector<AssemblyNode> children;  // struct fields; list element; map key and value
};

struct FileSchema {
  columnar::SchemaPtr schema;
  std::vector<AssemblyNode> fields;  // one per top-level field of `schema`
  std::vector<LeafColumn> leaves;
};

// Errors: DataLoss for a malformed schema (child counts that run past the list, a group without
// children, a leaf without a type, nesting deeper than 100), NotSupported for a leaf type ferry
// cannot read.
Result<FileSchema> SchemaFromParquet(const std::vector<SchemaElement>& elements);

}  // namespace ferry::parquet
