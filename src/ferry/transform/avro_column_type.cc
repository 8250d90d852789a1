// The columnar type of an Avro schema node, as Spark's from_avro maps it (declared and described
// in avro_schema.h; kept apart from the parser in avro_schema.cc).
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "ferry/transform/avro_schema.h"
#include "ferry/transform/avro_schema_internal.h"

namespace ferry::transform::avro {

namespace {

using schema_internal::Join;
using schema_internal::Where;

// The records open on the path (recursion), and the types made so far: named types referenced
// many times expand into a tree that can be exponentially larger than the schema's text.
struct ConvertState {
  std::vector<const Node*> records;
  size_t types = 0;
};

Result<ColumnType> Convert(const Node& node, const std::string& path, ConvertState* state) {
  using columnar::DataType;
  if (state->records.size() > static_cast<size_t>(Schema::kMaxDepth) ||
      ++state->types > kMaxColumnTypes) {
    return InvalidArgument(
        "Avro schema: {}: the column type would nest more than {} records or hold more than {} "
        "types",
        Where(path), Schema::kMaxDepth, kMaxColumnTypes);
  }
  switch (node.type) {
    case AvroType::kNull:
      return NotSupported("Avro schema: {}: a null-only type has no column type", Where(path));
    case AvroType::kBoolean:
      return ColumnType{DataType::Boolean()};
    case AvroType::kInt:
      return ColumnType{node.logical == LogicalType::kDate ? DataType::Date() : DataType::Int32()};
    case AvroType::kLong:
      switch (node.logical) {
        case LogicalType::kTimestampMillis:
        case LogicalType::kTimestampMicros:
          return ColumnType{DataType::Timestamp(columnar::TimeUnit::kMicros, true)};
        case LogicalType::kLocalTimestampMillis:
        case LogicalType::kLocalTimestampMicros:
          return ColumnType{DataType::Timestamp(columnar::TimeUnit::kMicros, false)};
        default:
          return ColumnType{DataType::Int64()};
      }
    case AvroType::kFloat:
      return ColumnType{DataType::Float32()};
    case AvroType::kDouble:
      return ColumnType{DataType::Float64()};
    case AvroType::kString:
    case AvroType::kEnum:
      return ColumnType{DataType::String()};
    case AvroType::kBytes:
    case AvroType::kFixed:
      if (node.logical == LogicalType::kDecimal) {
        if (node.precision > 38) {
          return NotSupported("Avro schema: {}: decimal({}, {}) is wider than DECIMAL(38)",
                              Where(path), node.precision, node.scale);
        }
        return ColumnType{DataType::Decimal(node.precision, node.scale)};
      }
      return ColumnType{DataType::Binary()};
    case AvroType::kRecord: {
      for (const Node* open : state->records) {
        if (open == &node) {
          return NotSupported(
              "Avro schema: {}: record \"{}\" contains itself; a recursive type has no column "
              "type",
              Where(path), node.name);
        }
      }
      state->records.push_back(&node);
      std::vector<columnar::Field> fields;
      for (const FieldDef& f : node.fields) {
        FERRY_ASSIGN_OR_RETURN(ColumnType t, Convert(*f.type, Join(path, f.name), state));
        fields.push_back({f.name, t.type, t.nullable, {}});
      }
      state->records.pop_back();
      return ColumnType{DataType::Struct(std::move(fields))};
    }
    case AvroType::kArray: {
      FERRY_ASSIGN_OR_RETURN(ColumnType t, Convert(*node.items, Join(path, "[]"), state));
      return ColumnType{DataType::List(t.type, t.nullable)};
    }
    case AvroType::kMap: {
      FERRY_ASSIGN_OR_RETURN(ColumnType t, Convert(*node.values, Join(path, "{}"), state));
      return ColumnType{DataType::Map(DataType::String(), t.type, t.nullable)};
    }
    case AvroType::kUnion: {
      std::vector<const Node*> others;
      for (const Node* b : node.branches) {
        if (b->type != AvroType::kNull) {
          others.push_back(b);
        }
      }
      const bool has_null = others.size() < node.branches.size();
      switch (ShapeOfUnion(node)) {
        case UnionShape::kNullOnly:
          return NotSupported("Avro schema: {}: a union of null only has no column type",
                              Where(path));
        case UnionShape::kSingle: {
          FERRY_ASSIGN_OR_RETURN(ColumnType t, Convert(*others[0], path, state));
          t.nullable = t.nullable || has_null;
          return t;
        }
        case UnionShape::kLong:
          return ColumnType{DataType::Int64(), has_null};
        case UnionShape::kDouble:
          return ColumnType{DataType::Float64(), has_null};
        case UnionShape::kMembers:
          break;
      }
      std::vector<columnar::Field> members;
      for (size_t i = 0; i < others.size(); ++i) {
        std::string name = fmt::format("member{}", i);
        FERRY_ASSIGN_OR_RETURN(ColumnType t, Convert(*others[i], Join(path, name), state));
        members.push_back({name, t.type, true, {}});
      }
      return ColumnType{DataType::Struct(std::move(members)), has_null};
    }
  }
  return Internal("Avro schema: {}: unknown node type", Where(path));
}

}  // namespace

UnionShape ShapeOfUnion(const Node& union_node) {
  size_t others = 0;
  bool ints = true;
  bool floats = true;
  for (const Node* b : union_node.branches) {
    if (b->type == AvroType::kNull) {
      continue;
    }
    ++others;
    ints = ints && (b->type == AvroType::kInt || b->type == AvroType::kLong);
    floats = floats && (b->type == AvroType::kFloat || b->type == AvroType::kDouble);
  }
  if (others == 0) {
    return UnionShape::kNullOnly;
  }
  if (others == 1) {
    return UnionShape::kSingle;
  }
  return ints ? UnionShape::kLong : floats ? UnionShape::kDouble : UnionShape::kMembers;
}

Result<ColumnType> ToColumnType(const Node& node, std::string_view path) {
  ConvertState state;
  return Convert(node, std::string(path), &state);
}

Result<columnar::SchemaPtr> ToTableSchema(const Schema& schema) {
  const Node& root = schema.root();
  if (root.type != AvroType::kRecord) {
    return InvalidArgument("Avro schema: the top level is {}, not a record: a table needs a record",
                           AvroTypeName(root.type));
  }
  FERRY_ASSIGN_OR_RETURN(ColumnType t, ToColumnType(root));
  return std::make_shared<const columnar::Schema>(t.type->fields());
}

}  // namespace ferry::transform::avro
