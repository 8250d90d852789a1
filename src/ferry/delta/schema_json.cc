#include "ferry/delta/schema_json.h"

#include <charconv>

#include <nlohmann/json.hpp>

namespace ferry::delta {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;
using columnar::DataType;
using columnar::DataTypePtr;
using columnar::Field;
using columnar::TypeId;

// Deeper nesting than this is refused rather than recursed into (bad input must not overflow
// the stack).
constexpr int kMaxDepth = 64;

Result<DataTypePtr> ParseType(const Json& type, const std::string& path, int depth);

bool ParseInt32(std::string_view s, int32_t* out) {
  while (!s.empty() && s.front() == ' ') {
    s.remove_prefix(1);
  }
  while (!s.empty() && s.back() == ' ') {
    s.remove_suffix(1);
  }
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

Result<DataTypePtr> ParseDecimal(std::string_view name, const std::string& path) {
  int32_t precision = 10;
  int32_t scale = 0;
  if (name != "decimal") {
    if (name.size() < 10 || name.substr(0, 8) != "decimal(" || name.back() != ')') {
      return DataLoss("column '{}': bad decimal type '{}'", path, name);
    }
    std::string_view args = name.substr(8, name.size() - 9);
    size_t comma = args.find(',');
    if (comma == std::string_view::npos || !ParseInt32(args.substr(0, comma), &precision) ||
        !ParseInt32(args.substr(comma + 1), &scale)) {
      return DataLoss("column '{}': bad decimal type '{}'", path, name);
    }
  }
  if (precision < 1 || precision > 38 || scale < 0 || scale > precision) {
    return NotSupported("column '{}': decimal({},{}) is outside precision 1..38, scale 0..p", path,
                        precision, scale);
  }
  return DataType::Decimal(precision, scale);
}

Result<DataTypePtr> ParsePrimitive(const std::string& name, const std::string& path) {
  static const std::pair<const char*, DataTypePtr (*)()> kSimple[] = {
      {"string", &DataType::String},  {"long", &DataType::Int64},
      {"integer", &DataType::Int32},  {"short", &DataType::Int16},
      {"byte", &DataType::Int8},      {"float", &DataType::Float32},
      {"double", &DataType::Float64}, {"boolean", &DataType::Boolean},
      {"binary", &DataType::Binary},  {"date", &DataType::Date},
  };
  for (const auto& [delta_name, make] : kSimple) {
    if (name == delta_name) {
      return make();
    }
  }
  if (name == "timestamp") {
    return DataType::Timestamp(columnar::TimeUnit::kMicros, true);
  }
  if (name == "timestamp_ntz") {
    return DataType::Timestamp(columnar::TimeUnit::kMicros, false);
  }
  if (name.rfind("decimal", 0) == 0) {
    return ParseDecimal(name, path);
  }
  if (name == "variant" || name == "void") {
    return NotSupported("column '{}': Delta type '{}' is not supported by ferry", path, name);
  }
  return DataLoss("column '{}': unknown Delta type '{}'", path, name);
}

Result<Field> ParseField(const Json& field, const std::string& parent, int depth) {
  if (!field.is_object()) {
    return DataLoss("schema of '{}': a field is not an object", parent);
  }
  auto name = field.find("name");
  auto type = field.find("type");
  if (name == field.end() || !name->is_string() || type == field.end()) {
    return DataLoss("schema of '{}': a field lacks a name or type", parent);
  }
  Field out;
  out.name = name->get<std::string>();
  std::string path = parent.empty() ? out.name : parent + "." + out.name;
  FERRY_ASSIGN_OR_RETURN(out.type, ParseType(*type, path, depth + 1));
  auto nullable = field.find("nullable");
  out.nullable = nullable == field.end() || !nullable->is_boolean() || nullable->get<bool>();
  auto metadata = field.find("metadata");
  if (metadata != field.end() && metadata->is_object()) {
    for (const auto& [key, value] : metadata->items()) {
      out.metadata.emplace_back(key, value.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
  }
  return out;
}

Result<std::vector<Field>> ParseFields(const Json& type, const std::string& path, int depth) {
  auto fields = type.find("fields");
  if (fields == type.end() || !fields->is_array()) {
    return DataLoss("schema of '{}': struct without a fields array",
                    path.empty() ? "<root>" : path);
  }
  std::vector<Field> out;
  out.reserve(fields->size());
  for (const Json& field : *fields) {
    FERRY_ASSIGN_OR_RETURN(Field f, ParseField(field, path, depth));
    out.push_back(std::move(f));
  }
  return out;
}

bool BoolOr(const Json& object, const char* key, bool fallback) {
  auto it = object.find(key);
  return it == object.end() || !it->is_boolean() ? fallback : it->get<bool>();
}

Result<DataTypePtr> ParseType(const Json& type, const std::string& path, int depth) {
  if (depth > kMaxDepth) {
    return DataLoss("column '{}': schema nested deeper than {} levels", path, kMaxDepth);
  }
  if (type.is_string()) {
    return ParsePrimitive(type.get<std::string>(), path);
  }
  if (!type.is_object()) {
    return DataLoss("column '{}': type is neither a name nor an object", path);
  }
  auto kind = type.find("type");
  if (kind == type.end() || !kind->is_string()) {
    return DataLoss("column '{}': complex type without a \"type\" name", path);
  }
  const std::string& name = kind->get_ref<const std::string&>();
  if (name == "struct") {
    FERRY_ASSIGN_OR_RETURN(auto fields, ParseFields(type, path, depth));
    return DataType::Struct(std::move(fields));
  }
  if (name == "array") {
    auto element = type.find("elementType");
    if (element == type.end()) {
      return DataLoss("column '{}': array without elementType", path);
    }
    FERRY_ASSIGN_OR_RETURN(auto element_type, ParseType(*element, path + ".element", depth + 1));
    return DataType::List(element_type, BoolOr(type, "containsNull", true));
  }
  if (name == "map") {
    auto key = type.find("keyType");
    auto value = type.find("valueType");
    if (key == type.end() || value == type.end()) {
      return DataLoss("column '{}': map without keyType or valueType", path);
    }
    FERRY_ASSIGN_OR_RETURN(auto key_type, ParseType(*key, path + ".key", depth + 1));
    FERRY_ASSIGN_OR_RETURN(auto value_type, ParseType(*value, path + ".value", depth + 1));
    return DataType::Map(key_type, value_type, BoolOr(type, "valueContainsNull", true));
  }
  return ParsePrimitive(name, path);
}

Result<OrderedJson> TypeToJson(const DataType& type);

Result<OrderedJson> FieldToJson(const Field& field) {
  OrderedJson out;
  out["name"] = field.name;
  FERRY_ASSIGN_OR_RETURN(out["type"], TypeToJson(*field.type));
  out["nullable"] = field.nullable;
  OrderedJson metadata = OrderedJson::object();
  for (const auto& [key, raw] : field.metadata) {
    OrderedJson value = OrderedJson::parse(raw, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) {
      return InvalidArgument("column '{}': metadata '{}' is not JSON: {}", field.name, key, raw);
    }
    metadata[key] = std::move(value);
  }
  out["metadata"] = std::move(metadata);
  return out;
}

Result<OrderedJson> TypeToJson(const DataType& type) {
  switch (type.id()) {
    case TypeId::kStruct: {
      OrderedJson out;
      out["type"] = "struct";
      OrderedJson fields = OrderedJson::array();
      for (const Field& field : type.fields()) {
        FERRY_ASSIGN_OR_RETURN(auto f, FieldToJson(field));
        fields.push_back(std::move(f));
      }
      out["fields"] = std::move(fields);
      return out;
    }
    case TypeId::kList: {
      OrderedJson out;
      out["type"] = "array";
      FERRY_ASSIGN_OR_RETURN(out["elementType"], TypeToJson(*type.element().type));
      out["containsNull"] = type.element().nullable;
      return out;
    }
    case TypeId::kMap: {
      OrderedJson out;
      out["type"] = "map";
      FERRY_ASSIGN_OR_RETURN(out["keyType"], TypeToJson(*type.key().type));
      FERRY_ASSIGN_OR_RETURN(out["valueType"], TypeToJson(*type.value().type));
      out["valueContainsNull"] = type.value().nullable;
      return out;
    }
    default: {
      FERRY_ASSIGN_OR_RETURN(std::string name, DeltaTypeName(type));
      return OrderedJson(name);
    }
  }
}

}  // namespace

Result<columnar::SchemaPtr> ParseSchemaJson(std::string_view json) {
  Json doc = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return DataLoss("schemaString is not a JSON object");
  }
  auto kind = doc.find("type");
  if (kind == doc.end() || !kind->is_string() || kind->get<std::string>() != "struct") {
    return DataLoss("schemaString is not a struct type");
  }
  FERRY_ASSIGN_OR_RETURN(auto fields, ParseFields(doc, "", 0));
  return std::make_shared<const columnar::Schema>(std::move(fields));
}

Result<std::string> SchemaToJson(const columnar::Schema& schema) {
  OrderedJson out;
  out["type"] = "struct";
  OrderedJson fields = OrderedJson::array();
  for (const Field& field : schema.fields()) {
    FERRY_ASSIGN_OR_RETURN(auto f, FieldToJson(field));
    fields.push_back(std::move(f));
  }
  out["fields"] = std::move(fields);
  return out.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

Result<columnar::DataTypePtr> ParseDeltaTypeName(std::string_view name) {
  return ParsePrimitive(std::string(name), std::string(name));
}

Result<std::string> DeltaTypeName(const columnar::DataType& type) {
  switch (type.id()) {
    case TypeId::kBoolean:
      return std::string("boolean");
    case TypeId::kInt8:
      return std::string("byte");
    case TypeId::kInt16:
      return std::string("short");
    case TypeId::kInt32:
      return std::string("integer");
    case TypeId::kInt64:
      return std::string("long");
    case TypeId::kFloat32:
      return std::string("float");
    case TypeId::kFloat64:
      return std::string("double");
    case TypeId::kString:
      return std::string("string");
    case TypeId::kBinary:
      return std::string("binary");
    case TypeId::kDate:
      return std::string("date");
    case TypeId::kDecimal:
      return fmt::format("decimal({},{})", type.precision(), type.scale());
    case TypeId::kTimestamp:
      if (type.unit() == columnar::TimeUnit::kMicros) {
        return std::string(type.utc_adjusted() ? "timestamp" : "timestamp_ntz");
      }
      break;
    default:
      break;
  }
  return InvalidArgument("type {} has no Delta equivalent", type.ToString());
}

}  // namespace ferry::delta
