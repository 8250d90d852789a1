// Internal to the Avro schema parser and its columnar type mapping (avro_schema.cc,
// avro_column_type.cc): how a place in a schema is named in errors ("order.items.[]").
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace ferry::transform::avro::schema_internal {

// `path` extended by one step (a field name, "[]", "{}", "<i>").
inline std::string Join(std::string_view path, std::string_view part) {
  return path.empty() ? std::string(part) : fmt::format("{}.{}", path, part);
}

inline std::string Where(std::string_view path) {
  return path.empty() ? "the top level" : std::string(path);
}

}  // namespace ferry::transform::avro::schema_internal
