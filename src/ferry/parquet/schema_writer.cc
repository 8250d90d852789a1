#include "ferry/parquet/schema_writer.h"

#include <charconv>

namespace ferry::parquet {
namespace {

using columnar::DataType;
using columnar::Field;
using columnar::TypeId;
using LogicalKind = LogicalType::Kind;

LogicalType IntLogical(int8_t bits, bool is_signed) {
  LogicalType t = LogicalType::Of(LogicalKind::kInteger);
  t.bit_width = bits;
  t.is_signed = is_signed;
  return t;
}

// Fills the type fields of a leaf element.
Status SetLeafType(const DataType& type, SchemaElement* e) {
  switch (type.id()) {
    case TypeId::kBoolean:
      e->type = PhysicalType::kBoolean;
      break;
    case TypeId::kInt8:
      e->type = PhysicalType::kInt32;
      e->logical_type = IntLogical(8, true);
      e->converted_type = ConvertedType::kInt8;
      break;
    case TypeId::kInt16:
      e->type = PhysicalType::kInt32;
      e->logical_type = IntLogical(16, true);
      e->converted_type = ConvertedType::kInt16;
      break;
    case TypeId::kInt32:
      e->type = PhysicalType::kInt32;
      break;
    case TypeId::kInt64:
      e->type = PhysicalType::kInt64;
      break;
    case TypeId::kUInt8:
      e->type = PhysicalType::kInt32;
      e->logical_type = IntLogical(8, false);
      e->converted_type = ConvertedType::kUint8;
      break;
    case TypeId::kUInt16:
      e->type = PhysicalType::kInt32;
      e->logical_type = IntLogical(16, false);
      e->converted_type = ConvertedType::kUint16;
      break;
    case TypeId::kUInt32:
      e->type = PhysicalType::kInt32;
      e->logical_type = IntLogical(32, false);
      e->converted_type = ConvertedType::kUint32;
      break;
    case TypeId::kUInt64:
      e->type = PhysicalType::kInt64;
      e->logical_type = IntLogical(64, false);
      e->converted_type = ConvertedType::kUint64;
      break;
    case TypeId::kFloat32:
      e->type = PhysicalType::kFloat;
      break;
    case TypeId::kFloat64:
      e->type = PhysicalType::kDouble;
      break;
    case TypeId::kString:
      e->type = PhysicalType::kByteArray;
      e->logical_type = LogicalType::Of(LogicalKind::kString);
      e->converted_type = ConvertedType::kUtf8;
      break;
    case TypeId::kJson:
      e->type = PhysicalType::kByteArray;
      e->logical_type = LogicalType::Of(LogicalKind::kJson);
      e->converted_type = ConvertedType::kJson;
      break;
    case TypeId::kBinary:
      e->type = PhysicalType::kByteArray;
      break;
    case TypeId::kFixedBinary:
      e->type = PhysicalType::kFixedLenByteArray;
      e->type_length = type.byte_width();
      break;
    case TypeId::kDate:
      e->type = PhysicalType::kInt32;
      e->logical_type = LogicalType::Of(LogicalKind::kDate);
      e->converted_type = ConvertedType::kDate;
      break;
    case TypeId::kTimestamp: {
      e->type = PhysicalType::kInt64;
      LogicalType t = LogicalType::Of(LogicalKind::kTimestamp);
      t.unit = type.unit();
      t.is_adjusted_to_utc = type.utc_adjusted();
      e->logical_type = t;
      if (type.utc_adjusted() && type.unit() != columnar::TimeUnit::kNanos) {
        e->converted_type = type.unit() == columnar::TimeUnit::kMillis
                                ? ConvertedType::kTimestampMillis
                                : ConvertedType::kTimestampMicros;
      }
      break;
    }
    case TypeId::kDecimal: {
      int32_t p = type.precision();
      if (p < 1 || p > 38) {
        return NotSupported("decimal precision {} (1..38 supported)", p);
      }
      if (p <= 9) {
        e->type = PhysicalType::kInt32;
      } else if (p <= 18) {
        e->type = PhysicalType::kInt64;
      } else {
        e->type = PhysicalType::kFixedLenByteArray;
        e->type_length = DecimalByteWidth(p);
      }
      LogicalType t = LogicalType::Of(LogicalKind::kDecimal);
      t.precision = p;
      t.scale = type.scale();
      e->logical_type = t;
      e->converted_type = ConvertedType::kDecimal;
      e->precision = p;
      e->scale = type.scale();
      break;
    }
    default:
      return Internal("SetLeafType on a nested type");
  }
  return Status::OK();
}

// The field_id a field's metadata asks for (kFieldIdMetadataKey), if any.
Result<std::optional<int32_t>> FieldId(const Field& field) {
  for (const auto& [key, value] : field.metadata) {
    if (key != kFieldIdMetadataKey) {
      continue;
    }
    int32_t id = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), id);
    if (ec != std::errc() || end != value.data() + value.size()) {
      return InvalidArgument("field '{}': {} '{}' is not a 32-bit integer", field.name, key, value);
    }
    return std::optional<int32_t>(id);
  }
  return std::optional<int32_t>();
}

class SchemaBuilder {
 public:
  explicit SchemaBuilder(ParquetSchema* out) : out_(out) {}

  // Adds the elements of a field (and its subtree). `path` holds the columnar nodes above it,
  // with the last one's step still to be set by the caller.
  // `field` supplies the field_id (its metadata), if it has one.
  Status AddField(const std::string& name, const columnar::DataTypePtr& type, bool nullable,
                  std::vector<PathNode>* path, int16_t rep, const Field& field) {
    if (name.empty()) {
      return InvalidArgument("field with an empty name");
    }
    SchemaElement e;
    e.name = name;
    FERRY_ASSIGN_OR_RETURN(e.field_id, FieldId(field));
    e.repetition_type = nullable ? FieldRepetitionType::kOptional : FieldRepetitionType::kRequired;
    PathNode node;
    node.nullable = nullable;
    node.name = name;
    path->push_back(node);
    Status s = AddTyped(std::move(e), type, path, rep);
    path->pop_back();
    return s.WithContext("field '{}'", name);
  }

 private:
  Status AddTyped(SchemaElement e, const columnar::DataTypePtr& type, std::vector<PathNode>* path,
                  int16_t rep) {
    switch (type->id()) {
      case TypeId::kStruct: {
        if (type->fields().empty()) {
          return InvalidArgument("a struct needs at least one field in Parquet");
        }
        e.num_children = static_cast<int32_t>(type->fields().size());
        out_->elements.push_back(std::move(e));
        for (size_t i = 0; i < type->fields().size(); ++i) {
          const Field& f = type->fields()[i];
          path->back().step = PathNode::Step::kStructChild;
          path->back().child = static_cast<int>(i);
          FERRY_RETURN_IF_ERROR(AddField(f.name, f.type, f.nullable, path, rep, f));
        }
        return Status::OK();
      }
      case TypeId::kList: {
        e.num_children = 1;
        e.logical_type = LogicalType::Of(LogicalKind::kList);
        e.converted_type = ConvertedType::kList;
        out_->elements.push_back(std::move(e));
        out_->elements.push_back(RepeatedGroup("list", 1));
        path->back().step = PathNode::Step::kListElement;
        path->back().repetition_level = static_cast<int16_t>(rep + 1);
        const Field& element = type->element();
        return AddField("element", element.type, element.nullable, path,
                        static_cast<int16_t>(rep + 1), element);
      }
      case TypeId::kMap: {
        e.num_children = 1;
        e.logical_type = LogicalType::Of(LogicalKind::kMap);
        e.converted_type = ConvertedType::kMap;
        out_->elements.push_back(std::move(e));
        out_->elements.push_back(RepeatedGroup("key_value", 2));
        path->back().repetition_level = static_cast<int16_t>(rep + 1);
        path->back().step = PathNode::Step::kMapKey;
        FERRY_RETURN_IF_ERROR(AddField("key", type->key().type, false, path,
                                       static_cast<int16_t>(rep + 1), type->key()));
        path->back().step = PathNode::Step::kMapValue;
        return AddField("value", type->value().type, type->value().nullable, path,
                        static_cast<int16_t>(rep + 1), type->value());
      }
      default: {
        FERRY_RETURN_IF_ERROR(SetLeafType(*type, &e));
        out_->elements.push_back(std::move(e));
        path->back().step = PathNode::Step::kLeaf;
        LeafPath leaf;
        leaf.top_level_column = top_level_column_;
        leaf.nodes = *path;
        leaf.has_repetition = rep > 0;
        leaf.leaf_type = type;
        out_->paths.push_back(std::move(leaf));
        return Status::OK();
      }
    }
  }

  static SchemaElement RepeatedGroup(const char* name, int32_t children) {
    SchemaElement g;
    g.name = name;
    g.repetition_type = FieldRepetitionType::kRepeated;
    g.num_children = children;
    return g;
  }

 public:
  int top_level_column_ = 0;

 private:
  ParquetSchema* out_;
};

}  // namespace

int32_t DecimalByteWidth(int32_t precision) {
  // Largest unscaled value 10^p - 1 must fit in 8n - 1 bits.
  columnar::UInt128 max_digits = 1;
  for (int32_t i = 0; i < precision; ++i) {
    max_digits *= 10;
  }
  max_digits -= 1;
  for (int32_t n = 1; n < 16; ++n) {
    columnar::UInt128 limit = (columnar::UInt128{1} << (8 * n - 1)) - 1;
    if (max_digits <= limit) {
      return n;
    }
  }
  return 16;
}

Result<ParquetSchema> BuildParquetSchema(const columnar::Schema& schema) {
  ParquetSchema out;
  SchemaElement root;
  root.name = "schema";
  root.num_children = schema.num_fields();
  out.elements.push_back(std::move(root));
  SchemaBuilder b(&out);
  std::vector<PathNode> path;
  for (int i = 0; i < schema.num_fields(); ++i) {
    const Field& f = schema.field(i);
    b.top_level_column_ = i;
    FERRY_RETURN_IF_ERROR(b.AddField(f.name, f.type, f.nullable, &path, 0, f));
  }
  FERRY_ASSIGN_OR_RETURN(out.leaves, DescribeLeaves(out.elements));
  if (out.leaves.size() != out.paths.size()) {
    return Internal("schema conversion produced {} leaves and {} paths", out.leaves.size(),
                    out.paths.size());
  }
  return out;
}

}  // namespace ferry::parquet
