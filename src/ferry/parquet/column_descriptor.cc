#include "ferry/parquet/column_descriptor.h"

namespace ferry::parquet {
namespace {

struct Walker {
  const std::vector<SchemaElement>& schema;
  std::vector<ColumnDescriptor>* leaves;
  size_t next = 1;  // the root is element 0
  std::vector<std::string> path;

  // Walks the subtree of element `next`, whose parent sits at the given levels and depth.
  Status Node(int16_t def, int16_t rep, int depth) {
    if (depth > kMaxSchemaDepth) {
      return DataLoss("schema nested deeper than {} levels", kMaxSchemaDepth);
    }
    if (next >= schema.size()) {
      return DataLoss("schema: num_children points past the last element");
    }
    size_t index = next++;
    const SchemaElement& e = schema[index];
    if (!e.repetition_type) {
      return DataLoss("schema element '{}' has no repetition type", e.name);
    }
    FieldRepetitionType r = *e.repetition_type;
    if (r == FieldRepetitionType::kOptional) {
      ++def;
    } else if (r == FieldRepetitionType::kRepeated) {
      ++def;
      ++rep;
    } else if (r != FieldRepetitionType::kRequired) {
      return DataLoss("schema element '{}' has repetition type {}", e.name, static_cast<int>(r));
    }
    path.push_back(e.name);
    if (e.num_children.has_value() && !e.type.has_value()) {
      if (*e.num_children < 0) {
        return DataLoss("schema element '{}' has {} children", e.name, *e.num_children);
      }
      if (static_cast<size_t>(*e.num_children) > schema.size() - next) {
        return DataLoss("schema element '{}' claims more children than the schema holds", e.name);
      }
      for (int32_t i = 0; i < *e.num_children; ++i) {
        FERRY_RETURN_IF_ERROR(Node(def, rep, depth + 1));
      }
    } else {
      FERRY_RETURN_IF_ERROR(Leaf(e, index, def, rep));
    }
    path.pop_back();
    return Status::OK();
  }

  Status Leaf(const SchemaElement& e, size_t index, int16_t def, int16_t rep) {
    if (!e.type.has_value()) {
      return DataLoss("schema leaf '{}' has no physical type", e.name);
    }
    ColumnDescriptor c;
    c.path = path;
    c.physical_type = *e.type;
    if (c.physical_type == PhysicalType::kFixedLenByteArray) {
      if (e.type_length.value_or(0) <= 0) {
        return DataLoss("FIXED_LEN_BYTE_ARRAY column '{}' has no positive type_length", e.name);
      }
      c.type_length = *e.type_length;
    }
    c.max_definition_level = def;
    c.max_repetition_level = rep;
    c.repetition = *e.repetition_type;
    c.logical_type = e.logical_type;
    c.converted_type = e.converted_type;
    if (e.logical_type && e.logical_type->kind == LogicalType::Kind::kDecimal) {
      c.precision = e.logical_type->precision;
      c.scale = e.logical_type->scale;
    } else {
      c.precision = e.precision.value_or(0);
      c.scale = e.scale.value_or(0);
    }
    c.schema_index = static_cast<int>(index);
    leaves->push_back(std::move(c));
    return Status::OK();
  }
};

}  // namespace

std::string ColumnDescriptor::PathString() const {
  std::string s;
  for (const std::string& p : path) {
    if (!s.empty()) {
      s.push_back('.');
    }
    s += p;
  }
  return s;
}

SortOrder ColumnSortOrder(const ColumnDescriptor& c) {
  using LogicalKind = LogicalType::Kind;
  if (c.logical_type) {
    switch (c.logical_type->kind) {
      case LogicalKind::kString:
      case LogicalKind::kEnum:
      case LogicalKind::kJson:
      case LogicalKind::kBson:
      case LogicalKind::kUuid:
        return SortOrder::kUnsigned;
      case LogicalKind::kInteger:
        return c.logical_type->is_signed ? SortOrder::kSigned : SortOrder::kUnsigned;
      case LogicalKind::kDecimal:
      case LogicalKind::kDate:
      case LogicalKind::kTime:
      case LogicalKind::kTimestamp:
      case LogicalKind::kFloat16:
        return SortOrder::kSigned;
      case LogicalKind::kMap:
      case LogicalKind::kList:
        return SortOrder::kUnknown;
      default:
        break;  // UNKNOWN (null) and newer members: fall back to the physical type
    }
  } else if (c.converted_type) {
    switch (*c.converted_type) {
      case ConvertedType::kUtf8:
      case ConvertedType::kEnum:
      case ConvertedType::kJson:
      case ConvertedType::kBson:
      case ConvertedType::kUint8:
      case ConvertedType::kUint16:
      case ConvertedType::kUint32:
      case ConvertedType::kUint64:
        return SortOrder::kUnsigned;
      case ConvertedType::kInterval:
      case ConvertedType::kMap:
      case ConvertedType::kMapKeyValue:
      case ConvertedType::kList:
        return SortOrder::kUnknown;
      default:
        return SortOrder::kSigned;
    }
  }
  switch (c.physical_type) {
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray:
      return SortOrder::kUnsigned;
    case PhysicalType::kInt96:
      return SortOrder::kUnknown;
    default:
      return SortOrder::kSigned;
  }
}

Result<std::vector<ColumnDescriptor>> DescribeLeaves(const std::vector<SchemaElement>& schema) {
  if (schema.empty()) {
    return DataLoss("schema has no root element");
  }
  std::vector<ColumnDescriptor> leaves;
  Walker w{schema, &leaves, 1, {}};
  int32_t children = schema[0].num_children.value_or(0);
  if (children < 0 || static_cast<size_t>(children) > schema.size() - 1) {
    return DataLoss("schema root claims {} children, the schema holds {} elements", children,
                    schema.size());
  }
  for (int32_t i = 0; i < children; ++i) {
    FERRY_RETURN_IF_ERROR(w.Node(0, 0, 1));
  }
  if (w.next != schema.size()) {
    return DataLoss("schema has {} elements outside the root's subtree", schema.size() - w.next);
  }
  return leaves;
}

}  // namespace ferry::parquet
