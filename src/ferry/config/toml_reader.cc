#include "ferry/config/toml_reader.h"

#include <fmt/format.h>

#include <algorithm>

namespace ferry::config::internal {

namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++) {
    prev[j] = j;
  }
  for (size_t i = 1; i <= a.size(); i++) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string_view TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time:
      return "a date/time";
    default:
      return "nothing";
  }
}

}  // namespace

TomlTable::TomlTable(const toml::table& table, std::string path, ParseContext* ctx)
    : table_(&table), path_(std::move(path)), ctx_(ctx) {}

std::string TomlTable::KeyPath(std::string_view key) const {
  if (path_.empty()) {
    return std::string(key);
  }
  return key.empty() ? path_ : fmt::format("{}.{}", path_, key);
}

SourceLocation TomlTable::Location(std::string_view key) const {
  const toml::node* node = key.empty() ? table_ : table_->get(key);
  SourceLocation loc;
  loc.file = ctx_->file;
  loc.key = KeyPath(key);
  if (node == nullptr) {
    node = table_;
  }
  loc.line = static_cast<int>(node->source().begin.line);
  loc.column = static_cast<int>(node->source().begin.column);
  return loc;
}

Status TomlTable::Error(std::string_view key, std::string_view message) const {
  SourceLocation loc = Location(key);
  return InvalidArgument("{}: {}", loc.ToString(), message);
}

const toml::node* TomlTable::Get(std::string_view key) {
  known_.emplace(key);
  return table_->get(key);
}

Result<std::string> TomlTable::InterpolateAt(std::string_view key, std::string_view value,
                                             bool secret) {
  Result<std::string> r = Interpolate(value, *ctx_->env);
  if (!r.ok()) {
    return Error(key, r.status().message());
  }
  if (secret && !r->empty() && ctx_->secrets != nullptr) {
    ctx_->secrets->push_back(*r);
  }
  return r;
}

void TomlTable::AddSecret(std::string value) {
  if (!value.empty() && ctx_->secrets != nullptr) {
    ctx_->secrets->push_back(std::move(value));
  }
}

Result<std::optional<std::string>> TomlTable::String(std::string_view key, bool secret) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::optional<std::string>();
  }
  if (!node->is_string()) {
    return Error(key, fmt::format("expected a string, found {}", TypeName(*node)));
  }
  FERRY_ASSIGN_OR_RETURN(std::string v, InterpolateAt(key, node->as_string()->get(), secret));
  return std::optional<std::string>(std::move(v));
}

Result<std::string> TomlTable::RequiredString(std::string_view key, std::string_view missing) {
  FERRY_ASSIGN_OR_RETURN(std::optional<std::string> v, String(key));
  if (!v || v->empty()) {
    return Error("", missing);
  }
  return std::move(*v);
}

Result<std::optional<std::string>> TomlTable::OneOf(std::string_view key,
                                                    std::initializer_list<std::string_view> choices,
                                                    std::string_view expected) {
  FERRY_ASSIGN_OR_RETURN(std::optional<std::string> v, String(key));
  if (v && std::find(choices.begin(), choices.end(), *v) == choices.end()) {
    return Error(key, expected);
  }
  return v;
}

Result<std::optional<int64_t>> TomlTable::Int(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::optional<int64_t>();
  }
  if (!node->is_integer()) {
    return Error(key, fmt::format("expected an integer, found {}", TypeName(*node)));
  }
  return std::optional<int64_t>(node->as_integer()->get());
}

Result<std::optional<double>> TomlTable::Number(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::optional<double>();
  }
  if (node->is_integer()) {
    return std::optional<double>(static_cast<double>(node->as_integer()->get()));
  }
  if (!node->is_floating_point()) {
    return Error(key, fmt::format("expected a number, found {}", TypeName(*node)));
  }
  return std::optional<double>(node->as_floating_point()->get());
}

Result<std::optional<bool>> TomlTable::Bool(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::optional<bool>();
  }
  if (!node->is_boolean()) {
    return Error(key, fmt::format("expected true or false, found {}", TypeName(*node)));
  }
  return std::optional<bool>(node->as_boolean()->get());
}

Result<std::optional<std::vector<std::string>>> TomlTable::StringList(std::string_view key) {
  const toml::node* node = Get(key);
  using Out = std::optional<std::vector<std::string>>;
  if (node == nullptr) {
    return Out();
  }
  std::vector<std::string> out;
  if (node->is_string()) {
    FERRY_ASSIGN_OR_RETURN(std::string v, InterpolateAt(key, node->as_string()->get(), false));
    out.push_back(std::move(v));
    return Out(std::move(out));
  }
  if (!node->is_array()) {
    return Error(
        key, fmt::format("expected a string or an array of strings, found {}", TypeName(*node)));
  }
  for (const toml::node& item : *node->as_array()) {
    if (!item.is_string()) {
      return Error(key,
                   fmt::format("expected an array of strings, found {} in it", TypeName(item)));
    }
    FERRY_ASSIGN_OR_RETURN(std::string v, InterpolateAt(key, item.as_string()->get(), false));
    out.push_back(std::move(v));
  }
  return Out(std::move(out));
}

Result<std::optional<int64_t>> TomlTable::Size(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::optional<int64_t>();
  }
  if (node->is_integer()) {
    int64_t v = node->as_integer()->get();
    if (v < 0) {
      return Error(key, "a size cannot be negative");
    }
    return std::optional<int64_t>(v);
  }
  if (!node->is_string()) {
    return Error(key, fmt::format("expected a size like \"64MB\", found {}", TypeName(*node)));
  }
  Result<int64_t> r = ParseSize(node->as_string()->get());
  if (!r.ok()) {
    return Error(key, r.status().message());
  }
  return std::optional<int64_t>(*r);
}

Result<std::optional<Duration>> TomlTable::DurationValue(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::optional<Duration>();
  }
  if (node->is_integer()) {
    return std::optional<Duration>(Duration(node->as_integer()->get()));
  }
  if (!node->is_string()) {
    return Error(key, fmt::format("expected a duration like \"1s\", found {}", TypeName(*node)));
  }
  Result<Duration> r = ParseDuration(node->as_string()->get());
  if (!r.ok()) {
    return Error(key, r.status().message());
  }
  return std::optional<Duration>(*r);
}

Result<std::optional<TomlTable>> TomlTable::Table(std::string_view key) {
  const toml::node* node = Get(key);
  if (node == nullptr) {
    return std::optional<TomlTable>();
  }
  if (!node->is_table()) {
    return Error(key, fmt::format("expected a table, found {}", TypeName(*node)));
  }
  return std::optional<TomlTable>(TomlTable(*node->as_table(), KeyPath(key), ctx_));
}

Result<std::vector<TomlTable>> TomlTable::TableArray(std::string_view key) {
  const toml::node* node = Get(key);
  std::vector<TomlTable> out;
  if (node == nullptr) {
    return out;
  }
  if (!node->is_array_of_tables()) {
    return Error(key, fmt::format("expected [[{}]] tables, found {}", key, TypeName(*node)));
  }
  size_t i = 0;
  for (const toml::node& item : *node->as_array()) {
    out.emplace_back(*item.as_table(), fmt::format("{}[{}]", KeyPath(key), i++), ctx_);
  }
  return out;
}

Result<std::optional<std::vector<std::pair<std::string, std::string>>>> TomlTable::StringMap(
    std::string_view key, bool (*is_secret)(std::string_view)) {
  using Out = std::optional<std::vector<std::pair<std::string, std::string>>>;
  FERRY_ASSIGN_OR_RETURN(std::optional<TomlTable> sub, Table(key));
  if (!sub) {
    return Out();
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : *sub->table_) {
    std::string name(k.str());
    std::string value;
    if (v.is_string()) {
      bool secret = is_secret != nullptr && is_secret(name);
      FERRY_ASSIGN_OR_RETURN(value, sub->InterpolateAt(name, v.as_string()->get(), secret));
    } else if (v.is_integer()) {
      value = std::to_string(v.as_integer()->get());
    } else if (v.is_floating_point()) {
      value = fmt::format("{}", v.as_floating_point()->get());
    } else if (v.is_boolean()) {
      value = v.as_boolean()->get() ? "true" : "false";
    } else {
      return sub->Error(name,
                        fmt::format("expected a string, number or boolean, found {}", TypeName(v)));
    }
    out.emplace_back(std::move(name), std::move(value));
  }
  return Out(std::move(out));
}

Status TomlTable::Finish() const {
  for (const auto& [k, v] : *table_) {
    std::string_view name = k.str();
    if (known_.count(name) != 0) {
      continue;
    }
    std::string hint;
    size_t best = 3;
    for (const std::string& candidate : known_) {
      size_t d = EditDistance(name, candidate);
      if (d < best) {
        best = d;
        hint = fmt::format(" (did you mean '{}'?)", candidate);
      }
    }
    SourceLocation loc;
    loc.file = ctx_->file;
    loc.key = KeyPath(name);
    loc.line = static_cast<int>(k.source().begin.line);
    loc.column = static_cast<int>(k.source().begin.column);
    return InvalidArgument("{}: unknown key{}", loc.ToString(), hint);
  }
  return Status::OK();
}

}  // namespace ferry::config::internal
