#include "ferry/delta/schema_evolution.h"

#include <algorithm>

#include "ferry/columnar/column_conform.h"
#include "ferry/delta/column_mapping.h"
#include "ferry/delta/schema_json.h"
#include "ferry/delta/table_features.h"
#include "ferry/delta/type_widening.h"

namespace ferry::delta {
namespace {

using columnar::DataType;
using columnar::DataTypePtr;
using columnar::Field;
using columnar::TypeId;

std::string Join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) {
    out += (out.empty() ? "" : ".") + p;
  }
  return out;
}

int64_t CountTypeFields(const DataType& type) {
  int64_t n = 0;
  for (const Field& f : type.fields()) {
    n += (type.id() == TypeId::kStruct ? 1 : 0) + CountTypeFields(*f.type);
  }
  return n;
}

// A name inside a new field's type that Delta cannot hold, if any.
std::optional<std::string> BadNameIn(const DataType& type, const std::string& path) {
  for (const Field& f : type.fields()) {
    std::string inner = path + "." + (type.id() == TypeId::kStruct ? f.name : "element");
    if (type.id() == TypeId::kStruct && !IsValidColumnName(f.name)) {
      return inner;
    }
    if (auto bad = BadNameIn(*f.type, inner)) {
      return bad;
    }
  }
  return std::nullopt;
}

class Merger {
 public:
  explicit Merger(const SchemaMergeOptions& options) : options_(options) {}

  Result<std::vector<Field>> Fields(const std::vector<Field>& table,
                                    const std::vector<Field>& wanted,
                                    std::vector<std::string> parent) {
    std::vector<Field> out = table;
    for (const Field& w : wanted) {
      std::vector<std::string> path = parent;
      std::optional<size_t> i = columnar::FindFieldIgnoringCase(out, w.name);
      if (!i.has_value()) {
        path.push_back(w.name);
        FERRY_RETURN_IF_ERROR(Add(w, path));
        Field field = w;
        field.nullable = true;
        out.push_back(std::move(field));
        continue;
      }
      Field& t = out[*i];
      path.push_back(t.name);
      std::string inner;
      FERRY_ASSIGN_OR_RETURN(t.type, Type(t.type, w.type, path, &inner, parent.empty()));
    }
    return out;
  }

  std::vector<SchemaChange> changes;
  int64_t added = 0;  // fields added, nested ones included

 private:
  Status Add(const Field& w, const std::vector<std::string>& path) {
    std::string where = Join(path);
    if (options_.mode == SchemaEvolution::kNone) {
      return InvalidArgument("field '{}' is not in the table (schema_evolution = \"none\")", where);
    }
    if (!IsValidColumnName(w.name)) {
      return InvalidArgument(
          "field '{}': Delta cannot hold this name without column mapping (empty, or one of "
          "' ,;{{}}()\\n\\t=' in it)",
          where);
    }
    if (auto bad = BadNameIn(*w.type, where)) {
      return InvalidArgument(
          "field '{}': Delta cannot hold this name without column mapping (empty, or one of "
          "' ,;{{}}()\\n\\t=' in it)",
          *bad);
    }
    added += 1 + CountTypeFields(*w.type);
    changes.push_back(
        {.kind = SchemaChange::Kind::kAddField, .field = path, .from = nullptr, .to = w.type});
    return Status::OK();
  }

  // The merged type of a table field (or of an element, key or value inside it: `inner`).
  Result<DataTypePtr> Type(const DataTypePtr& t, const DataTypePtr& w,
                           const std::vector<std::string>& field, std::string* inner,
                           bool top_level) {
    if (t->Equals(*w)) {
      return t;
    }
    std::string where = Join(field) + (inner->empty() ? "" : "." + *inner);
    if (t->id() != w->id() && (t->is_nested() || w->is_nested())) {
      return InvalidArgument("field '{}' is {} in the table, which cannot hold a value of type {}",
                             where, t->ToString(), w->ToString());
    }
    switch (t->id()) {
      case TypeId::kStruct: {
        std::vector<std::string> path = field;
        if (!inner->empty()) {
          for (size_t b = 0, e; b <= inner->size(); b = e + 1) {
            e = std::min(inner->find('.', b), inner->size());
            path.push_back(inner->substr(b, e - b));
          }
        }
        FERRY_ASSIGN_OR_RETURN(auto fields, Fields(t->fields(), w->fields(), path));
        return DataType::Struct(std::move(fields));
      }
      case TypeId::kList: {
        std::string saved = *inner;
        *inner += inner->empty() ? "element" : ".element";
        FERRY_ASSIGN_OR_RETURN(auto element,
                               Type(t->element().type, w->element().type, field, inner, false));
        *inner = saved;
        return DataType::List(element, t->element().nullable);
      }
      case TypeId::kMap: {
        std::string saved = *inner;
        *inner = saved + (saved.empty() ? "key" : ".key");
        FERRY_ASSIGN_OR_RETURN(auto key, Type(t->key().type, w->key().type, field, inner, false));
        *inner = saved + (saved.empty() ? "value" : ".value");
        FERRY_ASSIGN_OR_RETURN(auto value,
                               Type(t->value().type, w->value().type, field, inner, false));
        *inner = saved;
        return DataType::Map(key, value, t->value().nullable);
      }
      default:
        break;
    }
    if (columnar::CanConform(*w, *t)) {
      return t;  // the table's type holds every value
    }
    if (!IsEvolutionTypeChange(*t, *w)) {
      return InvalidArgument("field '{}' is {} in the table, which cannot hold a value of type {}",
                             where, t->ToString(), w->ToString());
    }
    if (options_.mode != SchemaEvolution::kAddColumnsAndWiden) {
      return InvalidArgument(
          "field '{}' is {} in the table, which cannot hold a value of type {} (widening it needs "
          "schema_evolution = \"add_columns_and_widen\")",
          where, t->ToString(), w->ToString());
    }
    if (top_level && inner->empty() &&
        std::find(options_.partition_columns.begin(), options_.partition_columns.end(),
                  field.back()) != options_.partition_columns.end()) {
      return InvalidArgument(
          "field '{}' is {}, a partition column, which cannot hold a value of type {}; partition "
          "columns are not widened",
          where, t->ToString(), w->ToString());
    }
    changes.push_back({.kind = SchemaChange::Kind::kWidenType,
                       .field = field,
                       .inner = *inner,
                       .from = t,
                       .to = w});
    return w;
  }

  const SchemaMergeOptions& options_;
};

}  // namespace

std::string_view SchemaEvolutionName(SchemaEvolution mode) {
  switch (mode) {
    case SchemaEvolution::kNone:
      return "none";
    case SchemaEvolution::kAddColumns:
      return "add_columns";
    case SchemaEvolution::kAddColumnsAndWiden:
      return "add_columns_and_widen";
  }
  return "none";
}

Result<SchemaEvolution> ParseSchemaEvolution(std::string_view text) {
  for (SchemaEvolution mode : {SchemaEvolution::kNone, SchemaEvolution::kAddColumns,
                               SchemaEvolution::kAddColumnsAndWiden}) {
    if (text == SchemaEvolutionName(mode)) {
      return mode;
    }
  }
  return InvalidArgument(
      "unknown schema_evolution \"{}\" (none, add_columns, add_columns_and_widen)", text);
}

std::string SchemaChange::Path() const {
  return Join(field) + (inner.empty() ? "" : "." + inner);
}

std::string SchemaChange::Describe() const {
  if (kind == Kind::kAddField) {
    return fmt::format("add column {} {}", Path(), to->ToString());
  }
  return fmt::format("widen column {} from {} to {}", Path(), from->ToString(), to->ToString());
}

bool IsValidColumnName(std::string_view name) {
  return !name.empty() && name.find_first_of(" ,;{}()\n\t=") == std::string_view::npos;
}

int64_t CountFields(const columnar::Schema& schema) {
  int64_t n = 0;
  for (const Field& f : schema.fields()) {
    n += 1 + CountTypeFields(*f.type);
  }
  return n;
}

Result<SchemaMerge> MergeSchema(const columnar::Schema& table, const columnar::Schema& wanted,
                                const SchemaMergeOptions& options) {
  Merger merger(options);
  FERRY_ASSIGN_OR_RETURN(std::vector<Field> fields,
                         merger.Fields(table.fields(), wanted.fields(), {}));
  SchemaMerge out;
  out.changes = std::move(merger.changes);
  if (out.changes.empty()) {
    out.schema = std::make_shared<const columnar::Schema>(table.fields());
    return out;
  }
  out.schema = std::make_shared<const columnar::Schema>(std::move(fields));
  int64_t total = CountFields(*out.schema);
  if (total > options.limits.max_fields) {
    return InvalidArgument(
        "the change ({}) would leave the table with {} fields, more than the limit of {} "
        "(max_columns)",
        out.changes.front().Describe(), total, options.limits.max_fields);
  }
  if (merger.added > options.limits.max_new_fields) {
    return ResourceExhausted(
        "the batch would add {} fields (first: {}), more than the limit of {} per batch "
        "(max_new_columns_per_batch)",
        merger.added, out.changes.front().Path(), options.limits.max_new_fields);
  }
  return out;
}

namespace {

// Rebuilds `type` with the field at path[at..] given the type change. Returns the new type.
Result<DataTypePtr> RecordChange(const DataTypePtr& type, const std::vector<std::string>& path,
                                 size_t at, const TypeChange& change);

Result<std::vector<Field>> RecordInFields(std::vector<Field> fields,
                                          const std::vector<std::string>& path, size_t at,
                                          const TypeChange& change) {
  auto it = std::find_if(fields.begin(), fields.end(),
                         [&](const Field& f) { return f.name == path[at]; });
  if (it == fields.end()) {
    return Internal("type change of '{}': no field '{}'", Join(path), path[at]);
  }
  if (at + 1 == path.size()) {
    FERRY_RETURN_IF_ERROR(AppendTypeChange(&*it, change));
    return fields;
  }
  FERRY_ASSIGN_OR_RETURN(it->type, RecordChange(it->type, path, at + 1, change));
  return fields;
}

Result<DataTypePtr> RecordChange(const DataTypePtr& type, const std::vector<std::string>& path,
                                 size_t at, const TypeChange& change) {
  switch (type->id()) {
    case TypeId::kStruct: {
      FERRY_ASSIGN_OR_RETURN(auto fields, RecordInFields(type->fields(), path, at, change));
      return DataType::Struct(std::move(fields));
    }
    case TypeId::kList: {
      FERRY_ASSIGN_OR_RETURN(auto element,
                             RecordChange(type->element().type, path, at + 1, change));
      return DataType::List(element, type->element().nullable);
    }
    case TypeId::kMap: {
      if (path[at] == "key") {
        FERRY_ASSIGN_OR_RETURN(auto key, RecordChange(type->key().type, path, at + 1, change));
        return DataType::Map(key, type->value().type, type->value().nullable);
      }
      FERRY_ASSIGN_OR_RETURN(auto value, RecordChange(type->value().type, path, at + 1, change));
      return DataType::Map(type->key().type, value, type->value().nullable);
    }
    default:
      return Internal("type change of '{}': {} has no fields", Join(path), type->ToString());
  }
}

bool UsesTimestampNtz(const DataType& type) {
  if (type.id() == TypeId::kTimestamp && !type.utc_adjusted()) {
    return true;
  }
  return std::any_of(type.fields().begin(), type.fields().end(),
                     [](const Field& f) { return UsesTimestampNtz(*f.type); });
}

}  // namespace

Result<SchemaChangeCommit> PlanSchemaChange(const Snapshot& snapshot, const SchemaMerge& merge) {
  SchemaChangeCommit out;
  out.metadata = snapshot.metadata();
  Protocol protocol = snapshot.protocol();
  std::vector<Field> fields = merge.schema->fields();
  bool widens = false;
  bool ntz = false;
  for (const SchemaChange& change : merge.changes) {
    if (change.kind == SchemaChange::Kind::kAddField) {
      ntz = ntz || UsesTimestampNtz(*change.to);
      continue;
    }
    widens = true;
    ntz = ntz || UsesTimestampNtz(*change.to);
    FERRY_ASSIGN_OR_RETURN(std::string from, DeltaTypeName(*change.from));
    FERRY_ASSIGN_OR_RETURN(std::string to, DeltaTypeName(*change.to));
    TypeChange record{.from_type = from, .to_type = to};
    if (!change.inner.empty()) {
      record.field_path = change.inner;
    }
    if (SupportsTypeWideningPreview(protocol)) {
      record.table_version = snapshot.version() + 1;  // the first attempt's, as Delta writes it
    }
    FERRY_ASSIGN_OR_RETURN(fields, RecordInFields(std::move(fields), change.field, 0, record));
  }
  if (widens) {
    auto enabled = out.metadata.configuration.find(kEnableTypeWideningProperty);
    if (enabled != out.metadata.configuration.end() && enabled->second != "true") {
      return InvalidArgument("widening {} needs type widening, which the table turns off ({} = {})",
                             merge.changes.front().Path(), kEnableTypeWideningProperty,
                             enabled->second);
    }
    out.metadata.configuration[kEnableTypeWideningProperty] = "true";
    if (!SupportsTypeWidening(protocol)) {
      protocol = WithFeatures(protocol, {kTypeWideningFeature}, {kTypeWideningFeature});
    }
  }
  if (ntz && !(protocol.ReaderLists("timestampNtz") && protocol.WriterLists("timestampNtz"))) {
    protocol = WithFeatures(protocol, {"timestampNtz"}, {"timestampNtz"});
  }
  // Column mapping: new fields get the next ids and fresh physical names, and maxColumnId rises
  // in this same metaData.
  FERRY_ASSIGN_OR_RETURN(ColumnMappingMode mapping, GetColumnMappingMode(protocol, out.metadata));
  if (mapping != ColumnMappingMode::kNone) {
    int64_t max_id = MaxColumnId(*snapshot.schema(), out.metadata);
    if (AssignColumnMapping(&fields, &max_id) > 0) {
      out.metadata.configuration[kColumnMappingMaxIdProperty] = std::to_string(max_id);
    }
  }
  out.schema = std::make_shared<const columnar::Schema>(std::move(fields));
  FERRY_ASSIGN_OR_RETURN(out.metadata.schema_string, SchemaToJson(*out.schema));
  if (!(protocol == snapshot.protocol())) {
    out.protocol = protocol;
  }
  FERRY_RETURN_IF_ERROR(CheckWriteSupported(protocol, out.metadata, *out.schema));
  return out;
}

}  // namespace ferry::delta
