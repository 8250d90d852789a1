// HttpHeaders: the header fields of a request or response, in order, with case-insensitive
// lookup (RFC 9110: field names are case-insensitive). Names keep the spelling they were added
// with, so a request goes out as written.
//
// Thread-safety: a value type.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::http {

// ASCII case-insensitive equality (header names, query keys of some services).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
// ASCII lower case.
std::string ToLowerAscii(std::string_view s);

class HttpHeaders {
 public:
  using Field = std::pair<std::string, std::string>;

  // Replaces every field named `name` with one holding `value`.
  void Set(std::string_view name, std::string_view value);
  // Appends a field, keeping earlier ones of the same name.
  void Add(std::string_view name, std::string_view value);
  void Remove(std::string_view name);
  void Clear() { fields_.clear(); }

  // The first field named `name`.
  std::optional<std::string_view> Get(std::string_view name) const;
  // The first field named `name`, or "" when there is none.
  std::string_view GetOr(std::string_view name, std::string_view fallback = {}) const;
  bool Has(std::string_view name) const { return Get(name).has_value(); }

  const std::vector<Field>& fields() const { return fields_; }
  bool empty() const { return fields_.empty(); }
  size_t size() const { return fields_.size(); }

 private:
  std::vector<Field> fields_;
};

}  // namespace ferry::http
