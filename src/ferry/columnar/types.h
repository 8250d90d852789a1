// Logical data types and schemas of ferry's columnar data: what a table column holds, independent
// of how Parquet or Delta spell it. The Parquet layer maps these to physical/logical types, the
// Delta layer to schemaString JSON, the DDL parser (ddl.h) from Spark's type names.
//
//   TypeId        storage (column.h)        Spark/Delta name
//   kBoolean      uint8_t 0/1               boolean
//   kInt8..64     int8_t..int64_t           byte, short, integer, long
//   kUInt8..64    uint8_t..uint64_t         (Parquet only: INT(n, unsigned))
//   kFloat32/64   float, double             float, double
//   kString       BinaryColumn (UTF-8)      string
//   kJson         BinaryColumn (UTF-8)      (Parquet only: JSON logical type)
//   kBinary       BinaryColumn              binary
//   kFixedBinary  BinaryColumn, width n     (Parquet FIXED_LEN_BYTE_ARRAY)
//   kDate         int32_t days since epoch  date
//   kTimestamp    int64_t in unit()         timestamp (micros, UTC) / timestamp_ntz (not UTC)
//   kDecimal      Int128 unscaled           decimal(p,s)
//   kStruct       StructColumn              struct<...>
//   kList         ListColumn                array<...>
//   kMap          MapColumn                 map<...>
//
// Types are immutable and shared (DataTypePtr). Thread-safety: immutable, safe to share.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::columnar {

__extension__ typedef __int128 Int128;  // NOLINT(modernize-use-using): __extension__ needs typedef
__extension__ typedef unsigned __int128 UInt128;  // NOLINT(modernize-use-using)

enum class TypeId : uint8_t {
  kBoolean,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat32,
  kFloat64,
  kString,
  kJson,
  kBinary,
  kFixedBinary,
  kDate,
  kTimestamp,
  kDecimal,
  kStruct,
  kList,
  kMap,
};

// Signed and unsigned integers of every width (not Boolean, Date or Timestamp).
constexpr bool IsIntegerType(TypeId id) {
  switch (id) {
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kUInt8:
    case TypeId::kUInt16:
    case TypeId::kUInt32:
    case TypeId::kUInt64:
      return true;
    default:
      return false;
  }
}

enum class TimeUnit : uint8_t { kMillis, kMicros, kNanos };

class DataType;
using DataTypePtr = std::shared_ptr<const DataType>;

// Key/value metadata carried by a field. Values are raw JSON text (the Delta schema keeps
// column metadata as arbitrary JSON: comments, column-mapping ids, invariants).
using FieldMetadata = std::vector<std::pair<std::string, std::string>>;

struct Field {
  std::string name;
  DataTypePtr type;
  bool nullable = true;
  FieldMetadata metadata;

  bool Equals(const Field& other, bool check_metadata = false) const;
  // "name TYPE [NOT NULL] [COMMENT '...']" (Spark DDL; odd names in backquotes, ddl.h).
  std::string ToString() const;
};

class DataType {
 public:
  // Factories. Primitive types are singletons.
  static DataTypePtr Boolean();
  static DataTypePtr Int8();
  static DataTypePtr Int16();
  static DataTypePtr Int32();
  static DataTypePtr Int64();
  static DataTypePtr UInt8();
  static DataTypePtr UInt16();
  static DataTypePtr UInt32();
  static DataTypePtr UInt64();
  static DataTypePtr Float32();
  static DataTypePtr Float64();
  static DataTypePtr String();
  static DataTypePtr Json();
  static DataTypePtr Binary();
  static DataTypePtr Date();
  // REQUIRES: width > 0
  static DataTypePtr FixedBinary(int32_t width);
  // Spark `timestamp` = Timestamp(kMicros, true); `timestamp_ntz` = Timestamp(kMicros, false).
  static DataTypePtr Timestamp(TimeUnit unit = TimeUnit::kMicros, bool utc_adjusted = true);
  // REQUIRES: 1 <= precision <= 38, 0 <= scale <= precision
  static DataTypePtr Decimal(int32_t precision, int32_t scale);
  static DataTypePtr Struct(std::vector<Field> fields);
  // The element field is named "element".
  static DataTypePtr List(DataTypePtr element, bool element_nullable = true);
  // Keys are never null; fields are named "key" and "value".
  static DataTypePtr Map(DataTypePtr key, DataTypePtr value, bool value_nullable = true);

  TypeId id() const { return id_; }
  bool is_nested() const {
    return id_ == TypeId::kStruct || id_ == TypeId::kList || id_ == TypeId::kMap;
  }
  // True for types stored in a BinaryColumn.
  bool is_binary_like() const {
    return id_ == TypeId::kString || id_ == TypeId::kJson || id_ == TypeId::kBinary ||
           id_ == TypeId::kFixedBinary;
  }

  int32_t byte_width() const { return width_; }        // kFixedBinary
  int32_t precision() const { return precision_; }     // kDecimal
  int32_t scale() const { return scale_; }             // kDecimal
  TimeUnit unit() const { return unit_; }              // kTimestamp
  bool utc_adjusted() const { return utc_adjusted_; }  // kTimestamp
  // kStruct: the fields; kList: one field, the element; kMap: two fields, key and value.
  const std::vector<Field>& fields() const { return fields_; }
  const Field& element() const { return fields_[0]; }  // kList
  const Field& key() const { return fields_[0]; }      // kMap
  const Field& value() const { return fields_[1]; }    // kMap
  // Index of the struct field called `name`, if any (exact, case-sensitive).
  std::optional<size_t> FieldIndex(std::string_view name) const;

  bool Equals(const DataType& other, bool check_metadata = false) const;
  // Spark DDL spelling: BIGINT, DECIMAL(12,2), ARRAY<STRING>, STRUCT<a: INT, b: STRING NOT NULL>.
  // Types Spark lacks print as UINT32, JSON, FIXED(16), TIMESTAMP_MILLIS and the like.
  std::string ToString() const;

  // Public for make_shared; use the factories.
  explicit DataType(TypeId id) : id_(id) {}

 private:
  TypeId id_;
  int32_t width_ = 0;
  int32_t precision_ = 0;
  int32_t scale_ = 0;
  TimeUnit unit_ = TimeUnit::kMicros;
  bool utc_adjusted_ = true;
  std::vector<Field> fields_;
};

// The top-level schema of a table or record batch: an ordered list of fields.
class Schema {
 public:
  Schema() = default;
  explicit Schema(std::vector<Field> fields) : fields_(std::move(fields)) {}

  const std::vector<Field>& fields() const { return fields_; }
  int num_fields() const { return static_cast<int>(fields_.size()); }
  const Field& field(int i) const { return fields_[static_cast<size_t>(i)]; }
  std::optional<int> FieldIndex(std::string_view name) const;
  bool Equals(const Schema& other, bool check_metadata = false) const;
  // "id BIGINT NOT NULL, name STRING" (parses back with ddl.h).
  std::string ToString() const;

 private:
  std::vector<Field> fields_;
};
using SchemaPtr = std::shared_ptr<const Schema>;

}  // namespace ferry::columnar
