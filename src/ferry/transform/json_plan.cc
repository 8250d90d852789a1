#include "ferry/transform/json_plan.h"

#include <algorithm>

namespace ferry::transform {

namespace {

using columnar::DataType;
using columnar::Field;
using columnar::TypeId;

JsonNodeKind KindOf(TypeId id) {
  switch (id) {
    case TypeId::kBoolean:
      return JsonNodeKind::kBoolean;
    case TypeId::kInt8:
      return JsonNodeKind::kInt8;
    case TypeId::kInt16:
      return JsonNodeKind::kInt16;
    case TypeId::kInt32:
      return JsonNodeKind::kInt32;
    case TypeId::kInt64:
      return JsonNodeKind::kInt64;
    case TypeId::kUInt8:
      return JsonNodeKind::kUInt8;
    case TypeId::kUInt16:
      return JsonNodeKind::kUInt16;
    case TypeId::kUInt32:
      return JsonNodeKind::kUInt32;
    case TypeId::kUInt64:
      return JsonNodeKind::kUInt64;
    case TypeId::kFloat32:
      return JsonNodeKind::kFloat32;
    case TypeId::kFloat64:
      return JsonNodeKind::kFloat64;
    case TypeId::kString:
      return JsonNodeKind::kString;
    case TypeId::kJson:
      return JsonNodeKind::kJsonText;
    case TypeId::kBinary:
      return JsonNodeKind::kBinary;
    case TypeId::kFixedBinary:
      return JsonNodeKind::kFixedBinary;
    case TypeId::kDate:
      return JsonNodeKind::kDate;
    case TypeId::kTimestamp:
      return JsonNodeKind::kTimestamp;
    case TypeId::kDecimal:
      return JsonNodeKind::kDecimal;
    case TypeId::kStruct:
      return JsonNodeKind::kStruct;
    case TypeId::kList:
      return JsonNodeKind::kList;
    case TypeId::kMap:
      return JsonNodeKind::kMap;
  }
  return JsonNodeKind::kString;
}

// Appends the node of `field` (and its subtree) and returns its index.
Result<uint32_t> AddNode(const Field& field, const std::string& path, uint32_t parent,
                         JsonPlan* plan) {
  const DataType& t = *field.type;
  JsonPlanNode node;
  node.kind = KindOf(t.id());
  node.nullable = field.nullable;
  node.name = field.name;
  node.parent = parent;
  if (t.id() == TypeId::kDecimal) {
    node.precision = t.precision();
    node.scale = t.scale();
  } else if (t.id() == TypeId::kFixedBinary) {
    node.width = t.byte_width();
  } else if (t.id() == TypeId::kTimestamp) {
    node.unit = t.unit();
    node.utc_adjusted = t.utc_adjusted();
  } else if (t.id() == TypeId::kMap && t.key().type->id() != TypeId::kString) {
    return InvalidArgument("column '{}': JSON objects decode only into MAP<STRING, ...>, not {}",
                           path, t.ToString());
  }
  auto index = static_cast<uint32_t>(plan->nodes.size());
  plan->nodes.push_back(std::move(node));
  std::vector<uint32_t> children;
  std::vector<std::string> names;
  for (const Field& child : t.fields()) {
    FERRY_ASSIGN_OR_RETURN(uint32_t c, AddNode(child, path + "." + child.name, index, plan));
    children.push_back(c);
    names.push_back(child.name);
  }
  // `plan->nodes` may have moved while children were added: index again.
  plan->nodes[index].children = std::move(children);
  if (t.id() == TypeId::kStruct) {
    plan->nodes[index].names.Build(std::move(names));
  }
  return index;
}

}  // namespace

uint64_t FieldNameIndex::Hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : s) {
    h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  }
  return h;
}

void FieldNameIndex::Build(std::vector<std::string> names) {
  names_ = std::move(names);
  plain_.clear();
  for (const std::string& n : names_) {
    plain_.push_back(n.find_first_of("\"\\") == std::string::npos ? 1 : 0);
  }
  size_t size = 4;
  while (size < names_.size() * 2) {
    size *= 2;
  }
  slots_.assign(size, -1);
  mask_ = size - 1;
  for (size_t i = 0; i < names_.size(); i++) {
    uint64_t h = Hash(names_[i]) & mask_;
    while (slots_[h] >= 0) {
      h = (h + 1) & mask_;
    }
    slots_[h] = static_cast<int32_t>(i);
  }
}

int FieldNameIndex::Find(std::string_view name) const {
  if (names_.empty()) {
    return -1;
  }
  uint64_t h = Hash(name) & mask_;
  while (slots_[h] >= 0) {
    if (names_[static_cast<size_t>(slots_[h])] == name) {
      return slots_[h];
    }
    h = (h + 1) & mask_;
  }
  return -1;
}

std::vector<std::string> JsonPlan::Path(uint32_t index) const {
  std::vector<std::string> path;
  while (index != 0) {
    path.push_back(nodes[index].name);  // field names, or "element" / "key" / "value"
    index = nodes[index].parent;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

Result<JsonPlan> JsonPlan::Build(const columnar::Schema& schema, JsonDecoderOptions options) {
  JsonPlan plan;
  std::vector<int> columns;
  if (options.columns.empty()) {
    for (int i = 0; i < schema.num_fields(); i++) {
      columns.push_back(i);
    }
  } else {
    for (const std::string& name : options.columns) {
      std::optional<int> i = schema.FieldIndex(name);
      if (!i) {
        return InvalidArgument("json decoder: no column '{}' in the schema", name);
      }
      if (std::find(columns.begin(), columns.end(), *i) != columns.end()) {
        return InvalidArgument("json decoder: column '{}' listed twice", name);
      }
      columns.push_back(*i);
    }
    std::sort(columns.begin(), columns.end());
  }
  if (!options.unknown_fields_column.empty()) {
    std::optional<int> u = schema.FieldIndex(options.unknown_fields_column);
    if (!u || std::find(columns.begin(), columns.end(), *u) == columns.end()) {
      return InvalidArgument("json decoder: unknown_fields_column '{}' is not a decoded column",
                             options.unknown_fields_column);
    }
    if (schema.field(*u).type->id() != TypeId::kString) {
      return InvalidArgument("json decoder: unknown_fields_column '{}' must be STRING",
                             options.unknown_fields_column);
    }
    plan.unknown_column = *u;
  }
  plan.output_columns = columns;
  plan.nodes.emplace_back();  // the root
  plan.nodes[0].kind = JsonNodeKind::kStruct;
  plan.nodes[0].nullable = false;
  std::vector<uint32_t> children;
  std::vector<std::string> names;
  for (int c : columns) {
    if (c == plan.unknown_column) {
      continue;
    }
    const Field& f = schema.field(c);
    FERRY_ASSIGN_OR_RETURN(uint32_t node, AddNode(f, f.name, 0, &plan));
    children.push_back(node);
    names.push_back(f.name);
    plan.root_columns.push_back(c);
  }
  plan.nodes[0].children = std::move(children);
  plan.nodes[0].names.Build(std::move(names));
  for (const std::string& p : options.timestamp_formats) {
    FERRY_ASSIGN_OR_RETURN(DateTimePattern pattern,
                           DateTimePattern::Compile(p, DateTimePattern::Purpose::kParse));
    plan.timestamp_formats.push_back(std::move(pattern));
  }
  for (const std::string& p : options.date_formats) {
    FERRY_ASSIGN_OR_RETURN(DateTimePattern pattern,
                           DateTimePattern::Compile(p, DateTimePattern::Purpose::kParse));
    plan.date_formats.push_back(std::move(pattern));
  }
  FERRY_ASSIGN_OR_RETURN(plan.zone, TimeZone::Load(options.time_zone));
  if (options.max_depth < 1) {
    return InvalidArgument("json decoder: max_depth must be positive");
  }
  plan.options = std::move(options);
  return plan;
}

}  // namespace ferry::transform
