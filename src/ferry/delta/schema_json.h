// Delta's schema serialization (PROTOCOL.md "Schema Serialization Format", Spark's StructType
// JSON) to and from columnar::Schema. metaData.schemaString holds this JSON.
//
//   Delta type            columnar type
//   string                String          binary        Binary
//   long/integer/short/byte  Int64/32/16/8  boolean     Boolean
//   float/double          Float32/64      date          Date
//   timestamp             Timestamp(kMicros, utc=true)
//   timestamp_ntz         Timestamp(kMicros, utc=false)
//   decimal(p,s)          Decimal(p, s)
//   struct/array/map      Struct/List/Map (containsNull / valueContainsNull -> nullability)
// Column metadata is kept as raw JSON text per key (columnar::FieldMetadata), so it round-trips.
// `variant` and `void` have no columnar equivalent: NotSupported naming the column. Types Delta
// lacks (unsigned integers, JSON, fixed binary, millisecond timestamps): InvalidArgument.
//
// Thread-safety: stateless functions.
#pragma once

#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"

namespace ferry::delta {

// DataLoss for text that is not a Delta schema (the schemaString of a log is corrupt);
// NotSupported for a type ferry cannot represent.
Result<columnar::SchemaPtr> ParseSchemaJson(std::string_view json);

// The compact JSON Spark writes: {"type":"struct","fields":[{"name":..,"type":..,
// "nullable":..,"metadata":{..}}]}.
Result<std::string> SchemaToJson(const columnar::Schema& schema);

// A primitive type from its Delta name ("long", "decimal(12, 2)", "timestamp_ntz"): DataLoss for
// an unknown name, NotSupported for variant and void.
Result<columnar::DataTypePtr> ParseDeltaTypeName(std::string_view name);

// The Delta name of a primitive type ("long", "decimal(12,2)", "timestamp_ntz").
// InvalidArgument for nested types and types Delta lacks.
Result<std::string> DeltaTypeName(const columnar::DataType& type);

}  // namespace ferry::delta
