#include "ferry/delta/column_rules.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <nlohmann/json.hpp>

#include "ferry/columnar/ddl.h"
#include "ferry/delta/table_features.h"

namespace ferry::delta {
namespace {

const std::string* FindKey(const columnar::Field& field, std::string_view key) {
  for (const auto& [k, v] : field.metadata) {
    if (k == key) {
      return &v;
    }
  }
  return nullptr;
}

// A metadata value holding a SQL string (JSON text of a string).
Result<std::string> SqlText(const columnar::Field& field, std::string_view key,
                            const std::string& raw) {
  Result<std::string> text = columnar::DecodeJsonString(raw);
  if (!text.ok()) {
    return DataLoss("column '{}': metadata {} is not a JSON string: {}", field.name, key, raw);
  }
  return text;
}

// A metadata value holding a long (a JSON number, or a string of one as some writers store it).
Result<int64_t> LongValue(const columnar::Field& field, std::string_view key,
                          const std::string& raw) {
  nlohmann::json v = nlohmann::json::parse(raw, nullptr, false);
  if (v.is_number_integer()) {
    return v.get<int64_t>();
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    int64_t parsed = 0;
    auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), parsed);
    if (error == std::errc() && end == s.data() + s.size()) {
      return parsed;
    }
  }
  return DataLoss("column '{}': metadata {} is not a long: {}", field.name, key, raw);
}

bool Has(const std::vector<std::string>& features, std::string_view name) {
  return std::find(features.begin(), features.end(), name) != features.end();
}

// The invariant of `field` (named by `path`, dotted), if it has one.
Status AddInvariant(const columnar::Field& field, const std::string& path, ColumnRules* rules) {
  const std::string* raw = FindKey(field, kInvariantsKey);
  if (raw == nullptr) {
    return Status::OK();
  }
  FERRY_ASSIGN_OR_RETURN(std::string text, SqlText(field, kInvariantsKey, *raw));
  nlohmann::json v = nlohmann::json::parse(text, nullptr, false);
  if (!v.is_object() || !v.contains("expression") || !v["expression"].is_object() ||
      !v["expression"].contains("expression") || !v["expression"]["expression"].is_string()) {
    return DataLoss(
        "column '{}': delta.invariants is not {{\"expression\": {{\"expression\": ...}}}}: {}",
        path, text);
  }
  rules->checks.push_back(
      {"invariant on " + path, v["expression"]["expression"].get<std::string>()});
  return Status::OK();
}

// The NOT NULL fields and invariants inside struct `parent` (at `path`), through structs only
// (Spark's SchemaUtils.filterRecursively with checkComplexTypes = false).
Status AddNestedRules(const columnar::Field& parent, std::vector<std::string>* path,
                      bool invariants, ColumnRules* rules) {
  if (parent.type->id() != columnar::TypeId::kStruct) {
    return Status::OK();
  }
  for (const columnar::Field& field : parent.type->fields()) {
    path->push_back(field.name);
    if (!field.nullable) {
      rules->not_null.push_back(*path);
    }
    if (invariants) {
      std::string dotted;
      for (const std::string& part : *path) {
        dotted += (dotted.empty() ? "" : ".") + part;
      }
      FERRY_RETURN_IF_ERROR(AddInvariant(field, dotted, rules));
    }
    FERRY_RETURN_IF_ERROR(AddNestedRules(field, path, invariants, rules));
    path->pop_back();
  }
  return Status::OK();
}

}  // namespace

std::string ColumnRules::Key() const {
  nlohmann::json key = nlohmann::json::object();
  for (const ColumnExpression& g : generated) {
    key["generated"].push_back({g.column, g.expression});
  }
  for (const ColumnExpression& d : defaults) {
    key["defaults"].push_back({d.column, d.expression});
  }
  for (const IdentityColumn& i : identity) {
    key["identity"].push_back({i.column, i.start, i.step, i.allow_explicit_insert});
  }
  for (const RowCheck& c : checks) {
    key["checks"].push_back({c.name, c.expression});
  }
  return key.dump();
}

Result<ColumnRules> ReadColumnRules(const Protocol& protocol, const Metadata& metadata,
                                    const columnar::Schema& schema) {
  std::vector<std::string> features = EffectiveWriterFeatures(protocol);
  const bool generated = Has(features, "generatedColumns");
  const bool defaults = Has(features, "allowColumnDefaults");
  const bool identity = Has(features, "identityColumns");
  const bool invariants = Has(features, "invariants");
  const bool checks = Has(features, "checkConstraints");
  ColumnRules rules;
  for (const columnar::Field& field : schema.fields()) {
    if (const std::string* raw = FindKey(field, kGenerationExpressionKey); generated && raw) {
      FERRY_ASSIGN_OR_RETURN(std::string text, SqlText(field, kGenerationExpressionKey, *raw));
      rules.generated.push_back({field.name, std::move(text)});
    }
    if (const std::string* raw = FindKey(field, kCurrentDefaultKey); defaults && raw) {
      FERRY_ASSIGN_OR_RETURN(std::string text, SqlText(field, kCurrentDefaultKey, *raw));
      rules.defaults.push_back({field.name, std::move(text)});
    }
    if (const std::string* raw = FindKey(field, kIdentityStartKey); identity && raw) {
      IdentityColumn id{.column = field.name};
      FERRY_ASSIGN_OR_RETURN(id.start, LongValue(field, kIdentityStartKey, *raw));
      if (const std::string* step = FindKey(field, kIdentityStepKey)) {
        FERRY_ASSIGN_OR_RETURN(id.step, LongValue(field, kIdentityStepKey, *step));
      }
      if (id.step == 0) {
        return DataLoss("column '{}': {} is 0", field.name, kIdentityStepKey);
      }
      if (const std::string* mark = FindKey(field, kIdentityHighWaterMarkKey)) {
        FERRY_ASSIGN_OR_RETURN(id.high_water_mark,
                               LongValue(field, kIdentityHighWaterMarkKey, *mark));
      }
      if (const std::string* allow = FindKey(field, kIdentityAllowExplicitInsertKey)) {
        nlohmann::json v = nlohmann::json::parse(*allow, nullptr, false);
        id.allow_explicit_insert = v.is_boolean() ? v.get<bool>() : (v == "true");
      }
      if (field.type->id() != columnar::TypeId::kInt64) {
        return DataLoss("identity column '{}' is {}, not BIGINT", field.name,
                        field.type->ToString());
      }
      rules.identity.push_back(id);
    }
    if (invariants) {
      FERRY_RETURN_IF_ERROR(AddInvariant(field, field.name, &rules));
    }
    std::vector<std::string> path = {field.name};
    FERRY_RETURN_IF_ERROR(AddNestedRules(field, &path, invariants, &rules));
  }
  if (checks) {
    for (const auto& [key, value] : metadata.configuration) {
      if (key.rfind(kConstraintPrefix, 0) == 0) {
        rules.checks.push_back({key.substr(std::string_view(kConstraintPrefix).size()), value});
      }
    }
  }
  return rules;
}

Result<int64_t> FirstIdentityValue(const IdentityColumn& id) {
  if (!id.high_water_mark) {
    return id.start;
  }
  // The smallest k >= 0 with start + k * step beyond the mark (in the step's direction).
  const int64_t mark = *id.high_water_mark;
  int64_t distance = 0;  // how far the mark is past start, in the step's direction
  bool overflow = id.step > 0 ? __builtin_sub_overflow(mark, id.start, &distance)
                              : __builtin_sub_overflow(id.start, mark, &distance);
  int64_t k = 0;
  if (!overflow && distance >= 0) {
    const int64_t stride = id.step > 0 ? id.step
                           : id.step == std::numeric_limits<int64_t>::min()
                               ? std::numeric_limits<int64_t>::max()
                               : -id.step;
    k = distance / stride + 1;
  }
  int64_t offset = 0;
  int64_t value = 0;
  overflow = overflow || __builtin_mul_overflow(k, id.step, &offset) ||
             __builtin_add_overflow(id.start, offset, &value);
  if (overflow) {
    return InvalidArgument("identity column '{}': the next value overflows BIGINT", id.column);
  }
  return value;
}

columnar::SchemaPtr WithIdentityHighWaterMark(const columnar::Schema& schema,
                                              const std::string& column, int64_t mark) {
  std::vector<columnar::Field> fields = schema.fields();
  for (columnar::Field& field : fields) {
    if (field.name != column) {
      continue;
    }
    bool set = false;
    for (auto& [k, v] : field.metadata) {
      if (k == kIdentityHighWaterMarkKey) {
        v = std::to_string(mark);
        set = true;
      }
    }
    if (!set) {
      field.metadata.emplace_back(kIdentityHighWaterMarkKey, std::to_string(mark));
    }
  }
  return std::make_shared<const columnar::Schema>(std::move(fields));
}

}  // namespace ferry::delta
