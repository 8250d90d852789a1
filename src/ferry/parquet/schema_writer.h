// Maps a columnar schema (columnar/types.h) to a Parquet schema, the writer's side of the schema
// conversion. Every field becomes REQUIRED or OPTIONAL by its nullability; the legacy
// ConvertedType is set beside every LogicalType that has one.
//
//   columnar            physical                 logical (converted)
//   kBoolean            BOOLEAN
//   kInt8 / kInt16      INT32                    INTEGER(8|16, signed) (INT_8|INT_16)
//   kInt32 / kInt64     INT32 / INT64            none (as Spark writes them)
//   kUInt8/16/32        INT32                    INTEGER(n, unsigned) (UINT_n)
//   kUInt64             INT64                    INTEGER(64, unsigned) (UINT_64)
//   kFloat32/64         FLOAT / DOUBLE
//   kString             BYTE_ARRAY               STRING (UTF8)
//   kJson               BYTE_ARRAY               JSON (JSON)
//   kBinary             BYTE_ARRAY
//   kFixedBinary(n)     FIXED_LEN_BYTE_ARRAY(n)
//   kDate               INT32                    DATE (DATE)
//   kTimestamp(u, utc)  INT64                    TIMESTAMP(u, utc) (TIMESTAMP_MILLIS|MICROS
//                                                only when utc, as Arrow does; none for NANOS)
//   kDecimal(p, s)      INT32 if p <= 9, INT64 if p <= 18, else FIXED_LEN_BYTE_ARRAY of the
//                       fewest bytes holding p digits            DECIMAL(p, s) (DECIMAL)
//   kStruct             group
//   kList               <name> (LIST) { repeated group list { <element> } }
//   kMap                <name> (MAP) { repeated group key_value { required key; <value> } }
//
// A field whose metadata holds kFieldIdMetadataKey (metadata.h) gets that SchemaElement.field_id
// (Delta column mapping, Iceberg); the key is how the reader reports field ids too.
//
// Alongside the elements, BuildParquetSchema describes each leaf (column_descriptor.h) and how to
// reach it from its top-level columnar column (LeafPath), which the shredder (shredder.h) follows.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/parquet/column_descriptor.h"
#include "ferry/parquet/metadata.h"

namespace ferry::parquet {

// One columnar column on the way from a top-level column to a leaf.
struct PathNode {
  enum class Step : uint8_t {
    kLeaf,         // this column holds the leaf values
    kStructChild,  // continue with struct child `child`
    kListElement,  // continue with the list's elements
    kMapKey,       // continue with the map's keys
    kMapValue,     // continue with the map's values
  };
  Step step = Step::kLeaf;
  int child = 0;                 // kStructChild
  bool nullable = true;          // this column may hold nulls (OPTIONAL)
  int16_t repetition_level = 0;  // for list/map steps: the level of their repeated group
  std::string name;              // for error messages
};

struct LeafPath {
  int top_level_column = 0;
  std::vector<PathNode> nodes;  // nodes[0] is the top-level column, nodes.back() the leaf
  bool has_repetition = false;  // a list or map is on the path
  columnar::DataTypePtr leaf_type;
};

struct ParquetSchema {
  std::vector<SchemaElement> elements;   // FileMetaData::schema
  std::vector<ColumnDescriptor> leaves;  // depth-first
  std::vector<LeafPath> paths;           // one per leaf
};

// Errors: InvalidArgument for a struct without fields, an empty field name or a field id that is
// not a 32-bit integer; NotSupported for
// a decimal precision above 38.
Result<ParquetSchema> BuildParquetSchema(const columnar::Schema& schema);

// The fewest bytes of a big-endian two's complement integer holding `precision` decimal digits.
int32_t DecimalByteWidth(int32_t precision);

}  // namespace ferry::parquet
