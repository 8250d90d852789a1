#include "ferry/transform/avro_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "ferry/transform/avro_schema_internal.h"

namespace ferry::transform::avro {

namespace {

using nlohmann::json;
using schema_internal::Join;
using schema_internal::Where;

const std::map<std::string_view, AvroType>& Primitives() {
  static const std::map<std::string_view, AvroType> kPrimitives = {
      {"null", AvroType::kNull},   {"boolean", AvroType::kBoolean}, {"int", AvroType::kInt},
      {"long", AvroType::kLong},   {"float", AvroType::kFloat},     {"double", AvroType::kDouble},
      {"bytes", AvroType::kBytes}, {"string", AvroType::kString},
  };
  return kPrimitives;
}

// [A-Za-z_][A-Za-z0-9_]*
bool ValidNamePart(std::string_view part) {
  if (part.empty()) {
    return false;
  }
  for (size_t i = 0; i < part.size(); ++i) {
    char c = part[i];
    bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!letter && (i == 0 || c < '0' || c > '9')) {
      return false;
    }
  }
  return true;
}

bool ValidFullName(std::string_view name) {
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    if (!ValidNamePart(name.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) {
      return true;
    }
    start = dot + 1;
  }
}

// The largest precision a two's-complement decimal of `size` bytes holds, counted up to 1 KiB
// (2,465 digits, past any precision a schema may give). A fixed may have 2^30 bytes: unclamped,
// 8 * size overflowed an int32 from 2^28 bytes on, and the digits would not fit one.
int32_t MaxFixedPrecision(int32_t size) {
  if (size <= 0) {
    return 0;
  }
  const int64_t bits = 8 * std::min<int64_t>(size, 1024) - 1;
  return static_cast<int32_t>(std::floor(static_cast<double>(bits) * std::log10(2.0)));
}

std::optional<int64_t> IntMember(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) {
    return std::nullopt;
  }
  return it->get<int64_t>();
}

}  // namespace

std::string_view AvroTypeName(AvroType type) {
  switch (type) {
    case AvroType::kNull:
      return "null";
    case AvroType::kBoolean:
      return "boolean";
    case AvroType::kInt:
      return "int";
    case AvroType::kLong:
      return "long";
    case AvroType::kFloat:
      return "float";
    case AvroType::kDouble:
      return "double";
    case AvroType::kBytes:
      return "bytes";
    case AvroType::kString:
      return "string";
    case AvroType::kRecord:
      return "record";
    case AvroType::kEnum:
      return "enum";
    case AvroType::kArray:
      return "array";
    case AvroType::kMap:
      return "map";
    case AvroType::kUnion:
      return "union";
    case AvroType::kFixed:
      return "fixed";
  }
  return "?";
}

class SchemaParser {
 public:
  explicit SchemaParser(Schema* schema) : schema_(schema) {}

  // Which text the types parsed next come from ("reference 2"; empty: the schema itself), for
  // the error on a name defined twice.
  void set_source(std::string source) { source_ = std::move(source); }

  Result<const Node*> Parse(const json& j, const std::string& ns, const std::string& path,
                            int depth) {
    if (depth > Schema::kMaxDepth) {
      return InvalidArgument("Avro schema: {}: nested deeper than {} levels", Where(path),
                             Schema::kMaxDepth);
    }
    if (j.is_string()) {
      return Reference(j.get<std::string>(), ns, path);
    }
    if (j.is_array()) {
      return ParseUnion(j, ns, path, depth);
    }
    if (!j.is_object()) {
      return InvalidArgument(
          "Avro schema: {}: {} is not a schema (a type name, an object or a union)", Where(path),
          j.dump());
    }
    auto type_it = j.find("type");
    if (type_it == j.end()) {
      return InvalidArgument("Avro schema: {}: an object without \"type\"", Where(path));
    }
    if (!type_it->is_string()) {
      // {"type": {...}} and {"type": [...]} are accepted by some parsers as the inner schema.
      return Parse(*type_it, ns, path, depth + 1);
    }
    const std::string type = type_it->get<std::string>();
    if (type == "record" || type == "error") {
      return ParseRecord(j, ns, path, depth);
    }
    if (type == "enum") {
      return ParseEnum(j, ns, path);
    }
    if (type == "fixed") {
      return ParseFixed(j, ns, path);
    }
    if (type == "array" || type == "map") {
      const char* key = type == "array" ? "items" : "values";
      auto child = j.find(key);
      if (child == j.end()) {
        return InvalidArgument("Avro schema: {}: an {} without \"{}\"", Where(path), type, key);
      }
      FERRY_ASSIGN_OR_RETURN(Node * node, NewNode(path));
      node->type = type == "array" ? AvroType::kArray : AvroType::kMap;
      FERRY_ASSIGN_OR_RETURN(
          const Node* inner,
          Parse(*child, ns, Join(path, type == "array" ? "[]" : "{}"), depth + 1));
      (type == "array" ? node->items : node->values) = inner;
      return node;
    }
    auto primitive = Primitives().find(type);
    if (primitive == Primitives().end()) {
      // {"type": "Name"}: a reference to a named type.
      return Reference(type, ns, path);
    }
    FERRY_ASSIGN_OR_RETURN(Node * node, NewNode(path));
    node->type = primitive->second;
    ApplyLogicalType(j, node);
    return node;
  }

 private:
  Result<Node*> NewNode(const std::string& path) {
    if (schema_->nodes_.size() >= Schema::kMaxNodes) {
      return InvalidArgument("Avro schema: {}: more than {} types", Where(path), Schema::kMaxNodes);
    }
    schema_->nodes_.push_back(std::make_unique<Node>());
    return schema_->nodes_.back().get();
  }

  Result<const Node*> Reference(const std::string& name, const std::string& ns,
                                const std::string& path) {
    auto primitive = Primitives().find(name);
    if (primitive != Primitives().end()) {
      FERRY_ASSIGN_OR_RETURN(Node * node, NewNode(path));
      node->type = primitive->second;
      return node;
    }
    if (name.find('.') == std::string::npos && !ns.empty()) {
      if (const Node* found = schema_->Find(ns + "." + name)) {
        return found;
      }
    }
    if (const Node* found = schema_->Find(name)) {
      return found;
    }
    return InvalidArgument("Avro schema: {}: unknown type \"{}\"{}", Where(path), name,
                           ns.empty() ? "" : fmt::format(" (namespace \"{}\")", ns));
  }

  // The full name of a named type and its namespace (for the names inside it).
  Result<std::pair<std::string, std::string>> FullName(const json& j, const std::string& ns,
                                                       const std::string& path) {
    auto name_it = j.find("name");
    if (name_it == j.end() || !name_it->is_string()) {
      return InvalidArgument("Avro schema: {}: a named type without a string \"name\"",
                             Where(path));
    }
    std::string name = name_it->get<std::string>();
    std::string space = ns;
    auto ns_it = j.find("namespace");
    if (ns_it != j.end()) {
      if (ns_it->is_null()) {
        space.clear();
      } else if (!ns_it->is_string()) {
        return InvalidArgument("Avro schema: {}: \"namespace\" of \"{}\" is not a string",
                               Where(path), name);
      } else {
        space = ns_it->get<std::string>();
      }
    }
    std::string full = name.find('.') != std::string::npos || space.empty()
                           ? name
                           : fmt::format("{}.{}", space, name);
    if (!ValidFullName(full)) {
      return InvalidArgument(
          "Avro schema: {}: \"{}\" is not a valid name (letters, digits and _, not starting with "
          "a digit, dot-separated)",
          Where(path), full);
    }
    if (Primitives().count(full) > 0) {
      return InvalidArgument("Avro schema: {}: \"{}\" is a primitive type's name", Where(path),
                             full);
    }
    size_t dot = full.rfind('.');
    std::string inner_ns = dot == std::string::npos ? "" : full.substr(0, dot);
    return std::make_pair(std::move(full), std::move(inner_ns));
  }

  Status Define(Node* node, const json& j, const std::string& inner_ns, const std::string& path) {
    if (auto first = defined_by_.find(node->name); first != defined_by_.end()) {
      return InvalidArgument("Avro schema: {}: \"{}\" is defined twice{}", Where(path), node->name,
                             first->second.empty() ? "" : " (first by " + first->second + ")");
    }
    schema_->named_.emplace(node->name, node);
    defined_by_.emplace(node->name, source_);
    auto aliases = j.find("aliases");
    if (aliases != j.end() && aliases->is_array()) {
      for (const json& alias : *aliases) {
        if (alias.is_string()) {
          std::string a = alias.get<std::string>();
          node->aliases.push_back(a.find('.') != std::string::npos || inner_ns.empty()
                                      ? a
                                      : fmt::format("{}.{}", inner_ns, a));
        }
      }
    }
    return Status::OK();
  }

  Result<const Node*> ParseRecord(const json& j, const std::string& ns, const std::string& path,
                                  int depth) {
    FERRY_ASSIGN_OR_RETURN(auto names, FullName(j, ns, path));
    FERRY_ASSIGN_OR_RETURN(Node * node, NewNode(path));
    node->type = AvroType::kRecord;
    node->name = names.first;
    // Defined before its fields: a field may refer to the record itself.
    FERRY_RETURN_IF_ERROR(Define(node, j, names.second, path));
    auto fields = j.find("fields");
    if (fields == j.end() || !fields->is_array()) {
      return InvalidArgument("Avro schema: {}: record \"{}\" has no \"fields\" array", Where(path),
                             node->name);
    }
    std::set<std::string> seen;
    for (const json& f : *fields) {
      if (!f.is_object()) {
        return InvalidArgument("Avro schema: {}: a field of record \"{}\" is not an object",
                               Where(path), node->name);
      }
      auto fname = f.find("name");
      if (fname == f.end() || !fname->is_string() || !ValidNamePart(fname->get<std::string>())) {
        return InvalidArgument("Avro schema: {}: record \"{}\" has a field without a valid name",
                               Where(path), node->name);
      }
      FieldDef field;
      field.name = fname->get<std::string>();
      if (!seen.insert(field.name).second) {
        return InvalidArgument("Avro schema: {}: record \"{}\" has two fields named \"{}\"",
                               Where(path), node->name, field.name);
      }
      std::string field_path = Join(path.empty() ? std::string() : path, field.name);
      auto ftype = f.find("type");
      if (ftype == f.end()) {
        return InvalidArgument("Avro schema: {}: field without \"type\"", field_path);
      }
      FERRY_ASSIGN_OR_RETURN(field.type, Parse(*ftype, names.second, field_path, depth + 1));
      if (auto d = f.find("default"); d != f.end()) {
        field.default_value = *d;
      }
      if (auto aliases = f.find("aliases"); aliases != f.end() && aliases->is_array()) {
        for (const json& alias : *aliases) {
          if (alias.is_string()) {
            field.aliases.push_back(alias.get<std::string>());
          }
        }
      }
      node->fields.push_back(std::move(field));
    }
    return node;
  }

  Result<const Node*> ParseEnum(const json& j, const std::string& ns, const std::string& path) {
    FERRY_ASSIGN_OR_RETURN(auto names, FullName(j, ns, path));
    FERRY_ASSIGN_OR_RETURN(Node * node, NewNode(path));
    node->type = AvroType::kEnum;
    node->name = names.first;
    auto symbols = j.find("symbols");
    if (symbols == j.end() || !symbols->is_array()) {
      return InvalidArgument("Avro schema: {}: enum \"{}\" has no \"symbols\" array", Where(path),
                             node->name);
    }
    std::set<std::string> seen;
    for (const json& s : *symbols) {
      if (!s.is_string() || !ValidNamePart(s.get<std::string>())) {
        return InvalidArgument("Avro schema: {}: enum \"{}\" has a symbol that is not a name: {}",
                               Where(path), node->name, s.dump());
      }
      if (!seen.insert(s.get<std::string>()).second) {
        return InvalidArgument("Avro schema: {}: enum \"{}\" has the symbol \"{}\" twice",
                               Where(path), node->name, s.get<std::string>());
      }
      node->symbols.push_back(s.get<std::string>());
    }
    if (auto d = j.find("default"); d != j.end()) {
      if (!d->is_string() || seen.count(d->get<std::string>()) == 0) {
        return InvalidArgument(
            "Avro schema: {}: enum \"{}\" has a default that is not one of its "
            "symbols: {}",
            Where(path), node->name, d->dump());
      }
      node->enum_default = d->get<std::string>();
    }
    FERRY_RETURN_IF_ERROR(Define(node, j, names.second, path));
    return node;
  }

  Result<const Node*> ParseFixed(const json& j, const std::string& ns, const std::string& path) {
    FERRY_ASSIGN_OR_RETURN(auto names, FullName(j, ns, path));
    FERRY_ASSIGN_OR_RETURN(Node * node, NewNode(path));
    node->type = AvroType::kFixed;
    node->name = names.first;
    std::optional<int64_t> size = IntMember(j, "size");
    if (!size || *size < 0 || *size > (int64_t{1} << 30)) {
      return InvalidArgument("Avro schema: {}: fixed \"{}\" needs a \"size\" of 0 to 2^30 bytes",
                             Where(path), node->name);
    }
    node->size = static_cast<int32_t>(*size);
    ApplyLogicalType(j, node);
    FERRY_RETURN_IF_ERROR(Define(node, j, names.second, path));
    return node;
  }

  Result<const Node*> ParseUnion(const json& j, const std::string& ns, const std::string& path,
                                 int depth) {
    if (j.empty()) {
      return InvalidArgument("Avro schema: {}: a union without branches holds no value",
                             Where(path));
    }
    FERRY_ASSIGN_OR_RETURN(Node * node, NewNode(path));
    node->type = AvroType::kUnion;
    std::set<std::string> seen;  // unnamed types by type name, named ones by full name
    for (size_t i = 0; i < j.size(); ++i) {
      FERRY_ASSIGN_OR_RETURN(const Node* branch,
                             Parse(j[i], ns, Join(path, fmt::format("<{}>", i)), depth + 1));
      if (branch->type == AvroType::kUnion) {
        return InvalidArgument("Avro schema: {}: a union directly inside a union", Where(path));
      }
      std::string key = branch->named() ? branch->name : std::string(AvroTypeName(branch->type));
      if (!seen.insert(key).second) {
        return InvalidArgument("Avro schema: {}: a union with two branches of type \"{}\"",
                               Where(path), key);
      }
      node->branches.push_back(branch);
    }
    return node;
  }

  // Keeps a logical type only where the specification allows it.
  static void ApplyLogicalType(const json& j, Node* node) {
    if (auto connect = j.find("connect.name"); connect != j.end() && connect->is_string()) {
      node->connect_name = connect->get<std::string>();
    }
    auto it = j.find("logicalType");
    if (it == j.end() || !it->is_string()) {
      return;
    }
    const std::string logical = it->get<std::string>();
    const AvroType t = node->type;
    if (logical == "decimal" && (t == AvroType::kBytes || t == AvroType::kFixed)) {
      std::optional<int64_t> precision = IntMember(j, "precision");
      std::optional<int64_t> scale = j.contains("scale") ? IntMember(j, "scale") : 0;
      if (!precision || !scale || *precision <= 0 || *scale < 0 || *scale > *precision ||
          *precision > 1000 ||
          (t == AvroType::kFixed && *precision > MaxFixedPrecision(node->size))) {
        return;  // invalid: the underlying type
      }
      node->logical = LogicalType::kDecimal;
      node->precision = static_cast<int32_t>(*precision);
      node->scale = static_cast<int32_t>(*scale);
      return;
    }
    static const std::map<std::string_view, std::pair<AvroType, LogicalType>> kSimple = {
        {"uuid", {AvroType::kString, LogicalType::kUuid}},
        {"date", {AvroType::kInt, LogicalType::kDate}},
        {"time-millis", {AvroType::kInt, LogicalType::kTimeMillis}},
        {"time-micros", {AvroType::kLong, LogicalType::kTimeMicros}},
        {"timestamp-millis", {AvroType::kLong, LogicalType::kTimestampMillis}},
        {"timestamp-micros", {AvroType::kLong, LogicalType::kTimestampMicros}},
        {"local-timestamp-millis", {AvroType::kLong, LogicalType::kLocalTimestampMillis}},
        {"local-timestamp-micros", {AvroType::kLong, LogicalType::kLocalTimestampMicros}},
    };
    auto simple = kSimple.find(logical);
    if (simple != kSimple.end() && simple->second.first == t) {
      node->logical = simple->second.second;
    } else if (logical == "duration" && t == AvroType::kFixed && node->size == 12) {
      node->logical = LogicalType::kDuration;
    }
  }

  Schema* schema_;
  std::string source_;
  std::map<std::string, std::string> defined_by_;  // full name -> source_ when it was defined
};

namespace {

Result<json> ParseJson(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return InvalidArgument(
        "Avro schema: not JSON: {}",
        text.size() > 80 ? std::string(text.substr(0, 80)) + "..." : std::string(text));
  }
  return j;
}

// "Avro schema: x: why" as "Avro schema: reference 2: x: why".
Status InReference(const Status& st, size_t index) {
  constexpr std::string_view kPrefix = "Avro schema: ";
  std::string_view message = st.message();
  if (message.substr(0, kPrefix.size()) == kPrefix) {
    message.remove_prefix(kPrefix.size());
  }
  return Status(st.code(), fmt::format("{}reference {}: {}", kPrefix, index + 1, message));
}

}  // namespace

Result<Schema> Schema::Parse(std::string_view text, std::span<const std::string> references) {
  Schema schema;
  SchemaParser parser(&schema);
  for (size_t i = 0; i < references.size(); ++i) {
    parser.set_source(fmt::format("reference {}", i + 1));
    Result<json> j = ParseJson(references[i]);
    Status st = j.ok() ? parser.Parse(*j, "", "", 0).status() : j.status();
    if (!st.ok()) {
      return InReference(st, i);
    }
  }
  parser.set_source("");
  FERRY_ASSIGN_OR_RETURN(json j, ParseJson(text));
  FERRY_ASSIGN_OR_RETURN(schema.root_, parser.Parse(j, "", "", 0));
  return schema;
}

const Node* Schema::Find(std::string_view full_name) const {
  auto it = named_.find(full_name);
  return it == named_.end() ? nullptr : it->second;
}

}  // namespace ferry::transform::avro
