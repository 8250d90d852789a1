#include "ferry/delta/column_mapping.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include <nlohmann/json.hpp>

#include "ferry/columnar/column_conform.h"
#include "ferry/delta/type_widening.h"
#include "ferry/delta/uuid.h"
#include "ferry/parquet/metadata.h"

namespace ferry::delta {
namespace {

using columnar::Column;
using columnar::DataType;
using columnar::DataTypePtr;
using columnar::Field;
using columnar::TypeId;
using Json = nlohmann::json;

std::optional<std::string> MetadataValue(const Field& field, std::string_view key) {
  for (const auto& [k, v] : field.metadata) {
    if (k == key) {
      return v;
    }
  }
  return std::nullopt;
}

void SetMetadata(Field* field, std::string_view key, std::string value) {
  for (auto& [k, v] : field->metadata) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  field->metadata.emplace_back(std::string(key), std::move(value));
}

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return v;
}

// The Parquet field_id a data file's field carries (schema_from_parquet.h).
std::optional<int64_t> FileFieldId(const Field& field) {
  std::optional<std::string> raw = MetadataValue(field, parquet::kFieldIdMetadataKey);
  return raw ? ParseInt(*raw) : std::nullopt;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string NameInFiles(const Field& field) {
  return PhysicalName(field).value_or(field.name);
}

// The nested type with the fields of every struct inside renamed and stripped (PhysicalSchema).
DataTypePtr PhysicalType(const DataTypePtr& type);

Field PhysicalField(const Field& field) {
  Field out;
  out.name = NameInFiles(field);
  out.type = PhysicalType(field.type);
  out.nullable = field.nullable;
  if (std::optional<int64_t> id = ColumnMappingId(field)) {
    out.metadata.emplace_back(parquet::kFieldIdMetadataKey, std::to_string(*id));
  }
  return out;
}

DataTypePtr PhysicalType(const DataTypePtr& type) {
  switch (type->id()) {
    case TypeId::kStruct: {
      std::vector<Field> fields;
      for (const Field& f : type->fields()) {
        fields.push_back(PhysicalField(f));
      }
      return DataType::Struct(std::move(fields));
    }
    case TypeId::kList:
      return DataType::List(PhysicalType(type->element().type), type->element().nullable);
    case TypeId::kMap:
      return DataType::Map(PhysicalType(type->key().type), PhysicalType(type->value().type),
                           type->value().nullable);
    default:
      return type;
  }
}

// The struct fields directly inside `type`, through arrays and maps (they have no names of their
// own to map).
void StructsInside(const DataType& type, std::vector<const std::vector<Field>*>* out) {
  switch (type.id()) {
    case TypeId::kStruct:
      out->push_back(&type.fields());
      return;
    case TypeId::kList:
      StructsInside(*type.element().type, out);
      return;
    case TypeId::kMap:
      StructsInside(*type.key().type, out);
      StructsInside(*type.value().type, out);
      return;
    default:
      return;
  }
}

struct SchemaChecker {
  ColumnMappingMode mode;
  std::set<int64_t> ids;

  Status Fields(const std::vector<Field>& fields, const std::string& parent) {
    std::set<std::string> names;
    for (const Field& f : fields) {
      std::string path = parent.empty() ? f.name : parent + "." + f.name;
      std::optional<int64_t> id = ColumnMappingId(f);
      std::optional<std::string> physical = PhysicalName(f);
      if (!id || !physical || physical->empty()) {
        return NotSupported(
            "writer feature 'columnMapping' (mode {}): column '{}' has no {}; ferry does not "
            "write a column-mapped table whose schema lacks them",
            ColumnMappingModeName(mode), path,
            !id ? kColumnMappingIdKey : kColumnMappingPhysicalNameKey);
      }
      if (!ids.insert(*id).second) {
        return NotSupported("writer feature 'columnMapping': column '{}' reuses column id {}", path,
                            *id);
      }
      if (!names.insert(*physical).second) {
        return NotSupported(
            "writer feature 'columnMapping': column '{}' shares its physical name '{}' with "
            "another field of its struct",
            path, *physical);
      }
      std::vector<const std::vector<Field>*> inner;
      StructsInside(*f.type, &inner);
      for (const std::vector<Field>* children : inner) {
        FERRY_RETURN_IF_ERROR(Fields(*children, path));
      }
    }
    return Status::OK();
  }
};

void MaxIdIn(const std::vector<Field>& fields, int64_t* max_id) {
  for (const Field& f : fields) {
    if (std::optional<int64_t> id = ColumnMappingId(f)) {
      *max_id = std::max(*max_id, *id);
    }
    std::vector<const std::vector<Field>*> inner;
    StructsInside(*f.type, &inner);
    for (const std::vector<Field>* children : inner) {
      MaxIdIn(*children, max_id);
    }
  }
}

DataTypePtr AssignInType(const DataTypePtr& type, int64_t* max_id, int64_t* assigned);

void AssignInFields(std::vector<Field>* fields, int64_t* max_id, int64_t* assigned) {
  for (Field& f : *fields) {
    if (!ColumnMappingId(f) || !PhysicalName(f)) {
      SetMetadata(&f, kColumnMappingIdKey, std::to_string(++*max_id));
      SetMetadata(&f, kColumnMappingPhysicalNameKey, Json("col-" + RandomUuid()).dump());
      ++*assigned;
    }
    f.type = AssignInType(f.type, max_id, assigned);
  }
}

DataTypePtr AssignInType(const DataTypePtr& type, int64_t* max_id, int64_t* assigned) {
  switch (type->id()) {
    case TypeId::kStruct: {
      std::vector<Field> fields = type->fields();
      AssignInFields(&fields, max_id, assigned);
      return DataType::Struct(std::move(fields));
    }
    case TypeId::kList:
      return DataType::List(AssignInType(type->element().type, max_id, assigned),
                            type->element().nullable);
    case TypeId::kMap: {
      // Keys first: ids follow the schema's depth-first order, as Spark assigns them.
      DataTypePtr key = AssignInType(type->key().type, max_id, assigned);
      DataTypePtr value = AssignInType(type->value().type, max_id, assigned);
      return DataType::Map(std::move(key), std::move(value), type->value().nullable);
    }
    default:
      return type;
  }
}

// Whether table field `t` is held by file field `f`; `ignore_case` for the second pass of
// name matching.
bool Holds(const Field& f, const Field& t, ColumnMappingMode mode, bool ignore_case) {
  if (mode == ColumnMappingMode::kId) {
    std::optional<int64_t> file_id = FileFieldId(f);
    std::optional<int64_t> table_id = ColumnMappingId(t);
    return !ignore_case && file_id && table_id && *file_id == *table_id;
  }
  const std::string name = mode == ColumnMappingMode::kName ? NameInFiles(t) : t.name;
  return ignore_case ? EqualsIgnoringCase(f.name, name) : f.name == name;
}

// The table field of `table_fields` held by file field `f`.
std::optional<size_t> FindTableField(const std::vector<Field>& table_fields, const Field& f,
                                     ColumnMappingMode mode) {
  for (bool ignore_case : {false, true}) {
    for (size_t i = 0; i < table_fields.size(); ++i) {
      if (Holds(f, table_fields[i], mode, ignore_case)) {
        return i;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view ColumnMappingModeName(ColumnMappingMode mode) {
  switch (mode) {
    case ColumnMappingMode::kName:
      return "name";
    case ColumnMappingMode::kId:
      return "id";
    case ColumnMappingMode::kNone:
      break;
  }
  return "none";
}

Result<ColumnMappingMode> ParseColumnMappingMode(std::string_view text) {
  if (EqualsIgnoringCase(text, "none")) {
    return ColumnMappingMode::kNone;
  }
  if (EqualsIgnoringCase(text, "name")) {
    return ColumnMappingMode::kName;
  }
  if (EqualsIgnoringCase(text, "id")) {
    return ColumnMappingMode::kId;
  }
  return InvalidArgument("{} = '{}': expected none, name or id", kColumnMappingModeProperty, text);
}

bool SupportsColumnMapping(const Protocol& protocol) {
  const bool reader = protocol.min_reader_version == 2 ||
                      (protocol.min_reader_version >= 3 && protocol.ReaderLists("columnMapping"));
  const bool writer = protocol.min_writer_version == 5 || protocol.min_writer_version == 6 ||
                      (protocol.min_writer_version >= 7 && protocol.WriterLists("columnMapping"));
  return reader || writer;
}

Result<ColumnMappingMode> GetColumnMappingMode(const Protocol& protocol, const Metadata& metadata) {
  auto it = metadata.configuration.find(kColumnMappingModeProperty);
  if (it == metadata.configuration.end() || !SupportsColumnMapping(protocol)) {
    return ColumnMappingMode::kNone;
  }
  Result<ColumnMappingMode> mode = ParseColumnMappingMode(it->second);
  if (!mode.ok()) {
    return NotSupported("the table uses column mapping mode '{}', which ferry does not know",
                        it->second);
  }
  return mode;
}

std::optional<int64_t> ColumnMappingId(const Field& field) {
  std::optional<std::string> raw = MetadataValue(field, kColumnMappingIdKey);
  return raw ? ParseInt(*raw) : std::nullopt;
}

std::optional<std::string> PhysicalName(const Field& field) {
  std::optional<std::string> raw = MetadataValue(field, kColumnMappingPhysicalNameKey);
  if (!raw) {
    return std::nullopt;
  }
  Json value = Json::parse(*raw, nullptr, false);
  if (!value.is_string()) {
    return std::nullopt;
  }
  return value.get<std::string>();
}

Status CheckColumnMappingSchema(const columnar::Schema& schema, const Metadata& metadata,
                                ColumnMappingMode mode) {
  if (mode == ColumnMappingMode::kNone) {
    return Status::OK();
  }
  SchemaChecker checker{.mode = mode, .ids = {}};
  auto max = metadata.configuration.find(kColumnMappingMaxIdProperty);
  if (max != metadata.configuration.end()) {
    if (!ParseInt(max->second)) {
      return NotSupported("writer feature 'columnMapping': {} = '{}' is not an integer",
                          kColumnMappingMaxIdProperty, max->second);
    }
  }
  return checker.Fields(schema.fields(), "");
}

int64_t MaxColumnId(const columnar::Schema& schema, const Metadata& metadata) {
  int64_t max_id = 0;
  auto max = metadata.configuration.find(kColumnMappingMaxIdProperty);
  if (max != metadata.configuration.end()) {
    max_id = ParseInt(max->second).value_or(0);
  }
  MaxIdIn(schema.fields(), &max_id);
  return max_id;
}

int64_t AssignColumnMapping(std::vector<Field>* fields, int64_t* max_column_id) {
  int64_t assigned = 0;
  AssignInFields(fields, max_column_id, &assigned);
  return assigned;
}

Status ApplyColumnMappingToNewTable(columnar::SchemaPtr* schema, StringMap* configuration,
                                    Protocol* protocol) {
  auto it = configuration->find(kColumnMappingModeProperty);
  if (it == configuration->end()) {
    return Status::OK();
  }
  FERRY_ASSIGN_OR_RETURN(ColumnMappingMode mode, ParseColumnMappingMode(it->second));
  it->second = std::string(ColumnMappingModeName(mode));
  if (mode == ColumnMappingMode::kNone) {
    return Status::OK();
  }
  std::vector<Field> fields = (*schema)->fields();
  int64_t max_id = MaxColumnId(**schema, Metadata{});
  AssignColumnMapping(&fields, &max_id);
  *schema = std::make_shared<const columnar::Schema>(std::move(fields));
  (*configuration)[kColumnMappingMaxIdProperty] = std::to_string(max_id);
  if (protocol->min_reader_version < 3 && protocol->min_writer_version < 7) {
    protocol->min_reader_version = std::max(protocol->min_reader_version, 2);
    protocol->min_writer_version = std::max(protocol->min_writer_version, 5);
  } else {
    *protocol = WithFeatures(*protocol, {"columnMapping"}, {"columnMapping"});
  }
  return Status::OK();
}

columnar::SchemaPtr PhysicalSchema(const columnar::Schema& schema) {
  std::vector<Field> fields;
  for (const Field& f : schema.fields()) {
    fields.push_back(PhysicalField(f));
  }
  return std::make_shared<const columnar::Schema>(std::move(fields));
}

std::string PhysicalColumnName(const columnar::Schema& schema, std::string_view name) {
  std::optional<int> index = schema.FieldIndex(name);
  return index ? NameInFiles(schema.field(*index)) : std::string(name);
}

std::string PhysicalColumnPath(const columnar::Schema& schema, std::string_view path) {
  std::string out;
  const std::vector<Field>* fields = &schema.fields();
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string_view segment =
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    std::string name(segment);
    std::optional<size_t> i =
        fields != nullptr ? columnar::FindFieldIgnoringCase(*fields, segment) : std::nullopt;
    if (i) {
      name = NameInFiles((*fields)[*i]);
      const DataType& type = *(*fields)[*i].type;
      fields = type.id() == TypeId::kStruct ? &type.fields() : nullptr;
    } else {
      fields = nullptr;
    }
    out += (start == 0 ? "" : ".") + name;
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  return out;
}

PartitionValues LogicalPartitionValues(const PartitionValues& values,
                                       const columnar::Schema& schema,
                                       const std::vector<std::string>& partition_columns) {
  PartitionValues out;
  for (const std::string& column : partition_columns) {
    auto it = values.find(PhysicalColumnName(schema, column));
    if (it != values.end()) {
      out[column] = it->second;
    }
  }
  return out;
}

std::optional<size_t> FindFileField(const std::vector<Field>& file_fields, const Field& table_field,
                                    ColumnMappingMode mode) {
  if (mode == ColumnMappingMode::kNone) {
    return columnar::FindFieldIgnoringCase(file_fields, table_field.name);
  }
  for (bool ignore_case : {false, true}) {
    for (size_t i = 0; i < file_fields.size(); ++i) {
      if (Holds(file_fields[i], table_field, mode, ignore_case)) {
        return i;
      }
    }
  }
  return std::nullopt;
}

bool HasFieldIds(const columnar::Schema& file_schema) {
  return std::any_of(file_schema.fields().begin(), file_schema.fields().end(),
                     [](const Field& f) { return FileFieldId(f).has_value(); });
}

std::unique_ptr<Column> RenameFileColumn(std::unique_ptr<Column> column, const DataType& table_type,
                                         ColumnMappingMode mode) {
  const DataTypePtr file_type = column->type();
  if (file_type->id() != table_type.id()) {
    return column;  // not the same kind: conforming reports it
  }
  switch (file_type->id()) {
    case TypeId::kStruct: {
      auto* s = column->As<columnar::StructColumn>();
      std::vector<std::unique_ptr<Column>> children = s->TakeChildren();
      std::vector<Field> fields;
      std::vector<std::unique_ptr<Column>> kept;
      for (size_t i = 0; i < children.size(); ++i) {
        const Field& f = file_type->fields()[i];
        std::optional<size_t> t = FindTableField(table_type.fields(), f, mode);
        if (!t) {
          continue;  // a field the table dropped
        }
        const Field& table_field = table_type.fields()[*t];
        kept.push_back(RenameFileColumn(std::move(children[i]), *table_field.type, mode));
        fields.push_back(Field{.name = table_field.name,
                               .type = kept.back()->type(),
                               .nullable = f.nullable,
                               .metadata = {}});
      }
      s->Reshape(DataType::Struct(std::move(fields)), std::move(kept));
      return column;
    }
    case TypeId::kList: {
      auto* l = column->As<columnar::ListColumn>();
      std::unique_ptr<Column> child =
          RenameFileColumn(l->TakeChild(), *table_type.element().type, mode);
      DataTypePtr type = DataType::List(child->type(), file_type->element().nullable);
      l->Reshape(std::move(type), std::move(child));
      return column;
    }
    case TypeId::kMap: {
      auto* m = column->As<columnar::MapColumn>();
      std::unique_ptr<Column> keys = RenameFileColumn(m->TakeKeys(), *table_type.key().type, mode);
      std::unique_ptr<Column> values =
          RenameFileColumn(m->TakeValues(), *table_type.value().type, mode);
      DataTypePtr type = DataType::Map(keys->type(), values->type(), file_type->value().nullable);
      m->Reshape(std::move(type), std::move(keys), std::move(values));
      return column;
    }
    default:
      return column;
  }
}

}  // namespace ferry::delta
