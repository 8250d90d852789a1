#include "ferry/parquet/schema_from_parquet.h"

#include <fmt/format.h>

#include <memory>
#include <optional>

namespace ferry::parquet {
namespace {

using columnar::DataType;
using columnar::DataTypePtr;
using columnar::Field;
using NodeKind = AssemblyNode::Kind;

constexpr int kMaxDepth = 100;

// The schema list as a tree.
struct SchemaTree {
  const SchemaElement* element = nullptr;
  std::vector<SchemaTree> children;
  bool is_leaf() const { return element->type.has_value(); }
  const std::string& name() const { return element->name; }
  FieldRepetitionType repetition() const {
    return element->repetition_type.value_or(FieldRepetitionType::kRequired);
  }
};

Status ParseTree(const std::vector<SchemaElement>& elements, size_t* next, int depth,
                 SchemaTree* out) {
  if (depth > kMaxDepth) {
    return DataLoss("schema: nested deeper than {} levels", kMaxDepth);
  }
  if (*next >= elements.size()) {
    return DataLoss("schema: element {} missing (child counts run past the {} elements)", *next,
                    elements.size());
  }
  out->element = &elements[(*next)++];
  if (out->is_leaf()) {
    return Status::OK();
  }
  int32_t n = out->element->num_children.value_or(0);
  if (n < 0 || static_cast<size_t>(n) > elements.size() - *next) {
    return DataLoss("schema: group '{}' claims {} children, {} elements are left", out->name(), n,
                    elements.size() - *next);
  }
  if (n == 0 && depth > 0) {
    return DataLoss("schema: group '{}' has no children", out->name());
  }
  out->children.resize(static_cast<size_t>(n));
  for (auto& child : out->children) {
    FERRY_RETURN_IF_ERROR(ParseTree(elements, next, depth + 1, &child));
  }
  return Status::OK();
}

// The annotation of a leaf, from its LogicalType, else its ConvertedType.
struct Annotation {
  enum class Kind : uint8_t {
    kNone,
    kString,
    kJson,
    kDecimal,
    kDate,
    kTime,
    kTimestamp,
    kInt,
    kFloat16,
  };
  Kind kind = Kind::kNone;
  int32_t precision = 0;
  int32_t scale = 0;
  columnar::TimeUnit unit = columnar::TimeUnit::kMicros;
  bool utc = true;
  int bits = 32;
  bool is_signed = true;
};

Annotation FromLogicalType(const SchemaElement& e) {
  using L = LogicalType::Kind;
  using A = Annotation::Kind;
  const LogicalType& t = *e.logical_type;
  Annotation a;
  switch (t.kind) {
    case L::kString:
    case L::kEnum:
      a.kind = A::kString;
      break;
    case L::kJson:
      a.kind = A::kJson;
      break;
    case L::kDecimal:
      a.kind = A::kDecimal;
      a.precision = t.precision;
      a.scale = t.scale;
      break;
    case L::kDate:
      a.kind = A::kDate;
      break;
    case L::kTime:
      a.kind = A::kTime;
      break;
    case L::kTimestamp:
      a.kind = A::kTimestamp;
      a.unit = t.unit;
      a.utc = t.is_adjusted_to_utc;
      break;
    case L::kInteger:
      a.kind = A::kInt;
      a.bits = t.bit_width;
      a.is_signed = t.is_signed;
      break;
    case L::kFloat16:
      a.kind = A::kFloat16;
      break;
    default:  // BSON, UUID, UNKNOWN, MAP/LIST on a leaf, and kinds newer than ferry
      break;
  }
  return a;
}

Annotation FromConvertedType(const SchemaElement& e) {
  using C = ConvertedType;
  using A = Annotation::Kind;
  Annotation a;
  switch (*e.converted_type) {
    case C::kUtf8:
    case C::kEnum:
      a.kind = A::kString;
      break;
    case C::kJson:
      a.kind = A::kJson;
      break;
    case C::kDecimal:
      a.kind = A::kDecimal;
      a.precision = e.precision.value_or(0);
      a.scale = e.scale.value_or(0);
      break;
    case C::kDate:
      a.kind = A::kDate;
      break;
    case C::kTimeMillis:
    case C::kTimeMicros:
      a.kind = A::kTime;
      break;
    case C::kTimestampMillis:
    case C::kTimestampMicros:
      a.kind = A::kTimestamp;
      a.unit = *e.converted_type == C::kTimestampMillis ? columnar::TimeUnit::kMillis
                                                        : columnar::TimeUnit::kMicros;
      break;
    case C::kInt8:
    case C::kInt16:
    case C::kInt32:
    case C::kInt64:
    case C::kUint8:
    case C::kUint16:
    case C::kUint32:
    case C::kUint64: {
      static constexpr int kBits[] = {8, 16, 32, 64};
      int c = static_cast<int>(*e.converted_type);
      bool is_signed = c >= static_cast<int>(C::kInt8);
      a.kind = A::kInt;
      a.is_signed = is_signed;
      a.bits = kBits[c - static_cast<int>(is_signed ? C::kInt8 : C::kUint8)];
      break;
    }
    default:  // BSON, INTERVAL, MAP, LIST, and values newer than ferry
      break;
  }
  return a;
}

Annotation AnnotationOf(const SchemaElement& e) {
  if (e.logical_type.has_value()) {
    return FromLogicalType(e);
  }
  if (e.converted_type.has_value()) {
    return FromConvertedType(e);
  }
  return {};
}

struct LeafMapping {
  DataTypePtr type;
  ValueConversion conversion = ValueConversion::kNone;
};

bool ValidDecimal(const Annotation& a) {
  return a.kind == Annotation::Kind::kDecimal && a.precision >= 1 && a.precision <= 38 &&
         a.scale >= 0 && a.scale <= a.precision;
}

LeafMapping MapInt32(const Annotation& a) {
  using A = Annotation::Kind;
  using V = ValueConversion;
  if (a.kind == A::kDate) {
    return {DataType::Date()};
  }
  if (ValidDecimal(a)) {
    return {DataType::Decimal(a.precision, a.scale), V::kInt32ToDecimal};
  }
  if (a.kind == A::kInt) {
    switch (a.bits * (a.is_signed ? 1 : -1)) {
      case 8:
        return {DataType::Int8(), V::kInt32ToInt8};
      case 16:
        return {DataType::Int16(), V::kInt32ToInt16};
      case -8:
        return {DataType::UInt8(), V::kInt32ToUInt8};
      case -16:
        return {DataType::UInt16(), V::kInt32ToUInt16};
      case -32:
        return {DataType::UInt32(), V::kInt32ToUInt32};
      default:
        break;
    }
  }
  return {DataType::Int32()};
}

LeafMapping MapInt64(const Annotation& a) {
  using A = Annotation::Kind;
  if (a.kind == A::kTimestamp) {
    return {DataType::Timestamp(a.unit, a.utc)};
  }
  if (ValidDecimal(a)) {
    return {DataType::Decimal(a.precision, a.scale), ValueConversion::kInt64ToDecimal};
  }
  if (a.kind == A::kInt && a.bits == 64 && !a.is_signed) {
    return {DataType::UInt64(), ValueConversion::kInt64ToUInt64};
  }
  return {DataType::Int64()};
}

Result<LeafMapping> MapLeaf(const SchemaElement& e) {
  Annotation a = AnnotationOf(e);
  using A = Annotation::Kind;
  switch (*e.type) {
    case PhysicalType::kBoolean:
      return LeafMapping{DataType::Boolean()};
    case PhysicalType::kInt32:
      return MapInt32(a);
    case PhysicalType::kInt64:
      return MapInt64(a);
    case PhysicalType::kInt96:
      return LeafMapping{DataType::Timestamp(columnar::TimeUnit::kMicros, true),
                         ValueConversion::kInt96ToTimestamp};
    case PhysicalType::kFloat:
      return LeafMapping{DataType::Float32()};
    case PhysicalType::kDouble:
      return LeafMapping{DataType::Float64()};
    case PhysicalType::kByteArray:
      if (a.kind == A::kString) {
        return LeafMapping{DataType::String()};
      }
      if (a.kind == A::kJson) {
        return LeafMapping{DataType::Json()};
      }
      if (ValidDecimal(a)) {
        return LeafMapping{DataType::Decimal(a.precision, a.scale),
                           ValueConversion::kBytesToDecimal};
      }
      return LeafMapping{DataType::Binary()};
    case PhysicalType::kFixedLenByteArray: {
      int32_t n = e.type_length.value_or(0);
      if (n <= 0) {
        return DataLoss("FIXED_LEN_BYTE_ARRAY without a positive type_length ({})", n);
      }
      if (ValidDecimal(a)) {
        return LeafMapping{DataType::Decimal(a.precision, a.scale),
                           ValueConversion::kBytesToDecimal};
      }
      if (a.kind == A::kFloat16 && n == 2) {
        return LeafMapping{DataType::Float32(), ValueConversion::kFloat16ToFloat32};
      }
      return LeafMapping{DataType::FixedBinary(n)};
    }
  }
  return NotSupported("physical type {}", static_cast<int32_t>(*e.type));
}

bool IsList(const SchemaElement& e) {
  return (e.logical_type && e.logical_type->kind == LogicalType::Kind::kList) ||
         (!e.logical_type && e.converted_type == ConvertedType::kList);
}

bool IsMap(const SchemaElement& e) {
  return (e.logical_type && e.logical_type->kind == LogicalType::Kind::kMap) ||
         e.converted_type == ConvertedType::kMap || e.converted_type == ConvertedType::kMapKeyValue;
}

// The definition/repetition context a field is built in.
struct Context {
  int16_t def = 0;       // def level of the parent (a field adds 1 if optional or repeated)
  int16_t rep = 0;       // rep level of the parent
  int16_t slot_def = 0;  // def level of the innermost enclosing repeated node
};

class Builder {
 public:
  explicit Builder(std::vector<LeafColumn>* leaves) : leaves_(leaves) {}

  Status BuildField(const SchemaTree& t, Context ctx, Field* field, AssemblyNode* node);

 private:
  // `t` as a non-repeated value whose own def level is valid_def.
  Status BuildValue(const SchemaTree& t, Context ctx, int16_t valid_def, DataTypePtr* type,
                    AssemblyNode* node);
  Status BuildLeaf(const SchemaTree& t, Context ctx, int16_t valid_def, DataTypePtr* type,
                   AssemblyNode* node);
  Status BuildList(const SchemaTree& t, const SchemaTree& repeated, int16_t valid_def, Context ctx,
                   DataTypePtr* type, AssemblyNode* node);
  Status BuildMap(const SchemaTree& kv, int16_t valid_def, Context ctx, DataTypePtr* type,
                  AssemblyNode* node);

  std::vector<LeafColumn>* leaves_;
  std::vector<std::string> path_;
};

void FinishInterior(AssemblyNode* node) {
  node->first_leaf = node->children.front().first_leaf;
  node->num_leaves = 0;
  for (const auto& c : node->children) {
    node->num_leaves += c.num_leaves;
  }
}

Status Builder::BuildField(const SchemaTree& t, Context ctx, Field* field, AssemblyNode* node) {
  path_.push_back(t.name());
  field->name = t.name();
  if (t.element->field_id.has_value()) {
    field->metadata.emplace_back(kFieldIdMetadataKey, std::to_string(*t.element->field_id));
  }
  if (t.repetition() == FieldRepetitionType::kRepeated) {
    // A repeated field outside LIST/MAP: a required list of required elements.
    auto d = static_cast<int16_t>(ctx.def + 1);
    Context element_ctx{d, static_cast<int16_t>(ctx.rep + 1), d};
    node->kind = NodeKind::kList;
    node->rep_level = ctx.rep;
    node->slot_def = ctx.slot_def;
    node->valid_def = ctx.def;
    node->elements_def = d;
    node->children.resize(1);
    DataTypePtr element;
    FERRY_RETURN_IF_ERROR(BuildValue(t, element_ctx, d, &element, &node->children[0]));
    FinishInterior(node);
    field->type = DataType::List(element, false);
    field->nullable = false;
  } else {
    bool optional = t.repetition() == FieldRepetitionType::kOptional;
    auto valid_def = static_cast<int16_t>(ctx.def + (optional ? 1 : 0));
    FERRY_RETURN_IF_ERROR(BuildValue(t, ctx, valid_def, &field->type, node));
    field->nullable = optional;
  }
  path_.pop_back();
  return Status::OK();
}

Status Builder::BuildLeaf(const SchemaTree& t, Context ctx, int16_t valid_def, DataTypePtr* type,
                          AssemblyNode* node) {
  auto mapping = MapLeaf(*t.element);
  if (!mapping.ok()) {
    return mapping.status().WithContext("schema: column {}", fmt::join(path_, "."));
  }
  LeafColumn leaf;
  leaf.path = path_;
  leaf.dotted_path = fmt::format("{}", fmt::join(path_, "."));
  leaf.physical = {*t.element->type, t.element->type_length.value_or(0)};
  leaf.max_def = valid_def;
  leaf.max_rep = ctx.rep;
  leaf.slot_def = ctx.slot_def;
  leaf.type = mapping->type;
  leaf.conversion = mapping->conversion;
  node->kind = NodeKind::kLeaf;
  node->leaf = static_cast<int>(leaves_->size());
  node->first_leaf = node->leaf;
  node->num_leaves = 1;
  *type = leaf.type;
  leaves_->push_back(std::move(leaf));
  return Status::OK();
}

Status Builder::BuildValue(const SchemaTree& t, Context ctx, int16_t valid_def, DataTypePtr* type,
                           AssemblyNode* node) {
  node->rep_level = ctx.rep;
  node->slot_def = ctx.slot_def;
  node->valid_def = valid_def;
  if (t.is_leaf()) {
    return BuildLeaf(t, ctx, valid_def, type, node);
  }
  const SchemaTree* only = t.children.size() == 1 ? &t.children[0] : nullptr;
  bool repeated_only = only != nullptr && only->repetition() == FieldRepetitionType::kRepeated;
  if (repeated_only && IsList(*t.element)) {
    return BuildList(t, *only, valid_def, ctx, type, node);
  }
  if (repeated_only && IsMap(*t.element) && !only->is_leaf() &&
      (only->children.size() == 1 || only->children.size() == 2)) {
    return BuildMap(*only, valid_def, ctx, type, node);
  }
  if (repeated_only && IsMap(*t.element)) {
    // A key/value group of another shape: read like a (2-level) list of its entries.
    return BuildList(t, *only, valid_def, ctx, type, node);
  }
  // A struct; its fields have a row wherever it does (placeholders under a null struct).
  Context child_ctx{valid_def, ctx.rep, ctx.slot_def};
  std::vector<Field> fields(t.children.size());
  node->kind = NodeKind::kStruct;
  node->children.resize(t.children.size());
  for (size_t i = 0; i < t.children.size(); i++) {
    FERRY_RETURN_IF_ERROR(BuildField(t.children[i], child_ctx, &fields[i], &node->children[i]));
  }
  FinishInterior(node);
  *type = DataType::Struct(std::move(fields));
  return Status::OK();
}

Status Builder::BuildList(const SchemaTree& t, const SchemaTree& repeated, int16_t valid_def,
                          Context ctx, DataTypePtr* type, AssemblyNode* node) {
  auto d = static_cast<int16_t>(valid_def + 1);
  Context element_ctx{d, static_cast<int16_t>(ctx.rep + 1), d};
  node->kind = NodeKind::kList;
  node->elements_def = d;
  node->children.resize(1);
  path_.push_back(repeated.name());
  // LogicalTypes.md backward-compatibility rules 1-3: the repeated field is the element.
  bool two_level = repeated.is_leaf() || repeated.children.size() > 1 ||
                   repeated.name() == "array" || repeated.name() == t.name() + "_tuple";
  DataTypePtr element;
  bool element_nullable = false;
  if (two_level) {
    FERRY_RETURN_IF_ERROR(BuildValue(repeated, element_ctx, d, &element, &node->children[0]));
  } else {  // rule 4: the standard 3-level list
    Field f;
    FERRY_RETURN_IF_ERROR(BuildField(repeated.children[0], element_ctx, &f, &node->children[0]));
    element = f.type;
    element_nullable = f.nullable;
  }
  path_.pop_back();
  FinishInterior(node);
  *type = DataType::List(element, element_nullable);
  return Status::OK();
}

Status Builder::BuildMap(const SchemaTree& kv, int16_t valid_def, Context ctx, DataTypePtr* type,
                         AssemblyNode* node) {
  auto d = static_cast<int16_t>(valid_def + 1);
  Context entry_ctx{d, static_cast<int16_t>(ctx.rep + 1), d};
  node->elements_def = d;
  node->children.resize(kv.children.size());
  path_.push_back(kv.name());
  Field key;
  FERRY_RETURN_IF_ERROR(BuildField(kv.children[0], entry_ctx, &key, &node->children[0]));
  if (kv.children.size() == 2) {
    Field value;
    FERRY_RETURN_IF_ERROR(BuildField(kv.children[1], entry_ctx, &value, &node->children[1]));
    node->kind = NodeKind::kMap;
    *type = DataType::Map(key.type, value.type, value.nullable);
  } else {
    node->kind = NodeKind::kList;  // keys without values
    *type = DataType::List(key.type, key.nullable);
  }
  path_.pop_back();
  FinishInterior(node);
  return Status::OK();
}

}  // namespace

Result<FileSchema> SchemaFromParquet(const std::vector<SchemaElement>& elements) {
  if (elements.empty()) {
    return DataLoss("schema: no elements");
  }
  SchemaTree root;
  size_t next = 0;
  FERRY_RETURN_IF_ERROR(ParseTree(elements, &next, 0, &root));
  if (root.is_leaf()) {
    return DataLoss("schema: the root '{}' is a primitive, not a group", root.name());
  }
  if (next != elements.size()) {
    return DataLoss("schema: {} elements after the root's {} children", elements.size() - next,
                    root.children.size());
  }
  FileSchema out;
  Builder builder(&out.leaves);
  std::vector<Field> fields(root.children.size());
  out.fields.resize(root.children.size());
  for (size_t i = 0; i < root.children.size(); i++) {
    FERRY_RETURN_IF_ERROR(
        builder.BuildField(root.children[i], Context{}, &fields[i], &out.fields[i]));
  }
  out.schema = std::make_shared<columnar::Schema>(std::move(fields));
  return out;
}

}  // namespace ferry::parquet
