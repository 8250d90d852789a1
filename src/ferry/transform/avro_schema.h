// Avro schemas (Avro 1.11 specification, "Schema Declaration" and "Logical Types"): the JSON
// form parsed into a graph of nodes, and the columnar type of each node as Spark's `from_avro`
// maps it (docs/formats.md).
//
//   FERRY_ASSIGN_OR_RETURN(avro::Schema schema, avro::Schema::Parse(text));
//   FERRY_ASSIGN_OR_RETURN(columnar::SchemaPtr table, avro::ToTableSchema(schema));
//
// Parsing:
// - A schema is a JSON string (a primitive type or the name of a named type defined before), an
//   object ({"type": ...}) or an array (a union).
// - Named types (record, error, enum, fixed) have a full name: `name` if it holds a dot, else
//   `namespace.name` with the namespace given or inherited from the enclosing named type. A name
//   is used after its definition (a record may refer to itself: recursive schemas parse, but
//   have no columnar type). Defining a name twice, a malformed name, an unknown type, a union in
//   a union, two branches of one unnamed type or one name, a field named twice, an enum symbol
//   twice or an enum default that is not a symbol: InvalidArgument naming where.
// - Logical types are kept when valid for their underlying type (decimal on bytes or fixed with
//   0 < precision, 0 <= scale <= precision, precision within the fixed size; uuid on string;
//   date and time-millis on int; time-micros, timestamp-millis/micros and
//   local-timestamp-millis/micros on long; duration on fixed 12). Unknown or invalid ones are
//   ignored, as the specification asks: the underlying type is used.
// - References (the Schema Registry's schema references): schema texts parsed first, in order,
//   into the same schema, so the named types they define (with their namespaces) may be used by
//   full name in the references after them and in the main text. A reference that does not
//   parse is InvalidArgument "Avro schema: reference <i>: ..." (1-based); a name a reference
//   defines again is "defined twice (first by reference <i>)". Their root types are not used.
// - Kafka Connect's "connect.name" attribute is kept on the node (Node::connect_name): the
//   reader (avro_reader.h) reads Debezium's time and decimal types by it.
// - Bounds: nesting deeper than kMaxDepth or more than kMaxNodes nodes (references included) is
//   InvalidArgument, so a hostile schema cannot exhaust the stack or memory.
//
// Columnar types (Spark's SchemaConverters.toSqlType): boolean, int, long, float, double, string
// and bytes as themselves (INT, BIGINT, FLOAT, DOUBLE, STRING, BINARY); enum STRING; fixed
// BINARY; decimal DECIMAL(p, s) (NotSupported above precision 38); date DATE; timestamp-millis
// and -micros TIMESTAMP; local-timestamp-* TIMESTAMP_NTZ; time-millis INT and time-micros BIGINT;
// uuid STRING; duration BINARY; record STRUCT; array ARRAY; map MAP<STRING, _>. Unions: the null
// branch makes the type nullable; one other branch is that type; only int and long is BIGINT,
// only float and double is DOUBLE; anything else is a STRUCT with a nullable field `member<i>`
// per non-null branch, in order. A null-only type and a recursive record have no columnar type
// (NotSupported naming the path). A type nesting more than Schema::kMaxDepth records or made of
// more than kMaxColumnTypes types (named types used many times expand) is InvalidArgument.
//
// Thread-safety: a Schema is immutable after Parse.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"

namespace ferry::transform::avro {

enum class AvroType : uint8_t {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kRecord,
  kEnum,
  kArray,
  kMap,
  kUnion,
  kFixed,
};

enum class LogicalType : uint8_t {
  kNone,
  kDecimal,
  kUuid,
  kDate,
  kTimeMillis,
  kTimeMicros,
  kTimestampMillis,
  kTimestampMicros,
  kLocalTimestampMillis,
  kLocalTimestampMicros,
  kDuration,
};

// "record", "int", ...
std::string_view AvroTypeName(AvroType type);

struct Node;

struct FieldDef {
  std::string name;
  const Node* type = nullptr;
  std::optional<nlohmann::json> default_value;  // as written; checked when resolving
  std::vector<std::string> aliases;
};

struct Node {
  AvroType type = AvroType::kNull;
  LogicalType logical = LogicalType::kNone;
  int32_t precision = 0;  // decimal
  int32_t scale = 0;      // decimal
  int32_t size = 0;       // fixed: bytes
  std::string name;       // named types: the full name
  // Kafka Connect's semantic name ("connect.name", as Confluent's AvroConverter writes it:
  // io.debezium.time.MicroTimestamp, ...), on any type; empty when absent.
  std::string connect_name;
  std::vector<std::string> aliases;  // named types: full names
  std::vector<FieldDef> fields;      // record
  std::vector<std::string> symbols;  // enum
  std::optional<std::string> enum_default;
  const Node* items = nullptr;        // array
  const Node* values = nullptr;       // map
  std::vector<const Node*> branches;  // union

  bool named() const {
    return type == AvroType::kRecord || type == AvroType::kEnum || type == AvroType::kFixed;
  }
};

class Schema {
 public:
  static constexpr int kMaxDepth = 64;
  static constexpr size_t kMaxNodes = 100000;

  // InvalidArgument ("Avro schema: ...", naming the path of the bad part) for text that is not
  // a valid schema. `references`: the texts of the schemas it references, dependencies before
  // dependents (see above).
  static Result<Schema> Parse(std::string_view text, std::span<const std::string> references = {});

  const Node& root() const { return *root_; }
  // A named type by full name (the references' too), or null.
  const Node* Find(std::string_view full_name) const;

 private:
  friend class SchemaParser;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::map<std::string, const Node*, std::less<>> named_;
  const Node* root_ = nullptr;
};

// How a union maps to a column (see above): its non-null branches are none, one (that type),
// only int and long (BIGINT), only float and double (DOUBLE), or anything else (the STRUCT of
// member<i>). The writer-to-column reader (avro_reader.h) follows the same rule.
enum class UnionShape : uint8_t { kNullOnly, kSingle, kLong, kDouble, kMembers };
UnionShape ShapeOfUnion(const Node& union_node);

constexpr size_t kMaxColumnTypes = 10000;

struct ColumnType {
  columnar::DataTypePtr type;
  bool nullable = false;
};

// The columnar type of `node` as Spark's from_avro maps it (see above). `path` names the node in
// errors (e.g. "order.items").
Result<ColumnType> ToColumnType(const Node& node, std::string_view path = "");

// A record schema's fields as a table schema. InvalidArgument when the top level is not a record.
Result<columnar::SchemaPtr> ToTableSchema(const Schema& schema);

}  // namespace ferry::transform::avro
