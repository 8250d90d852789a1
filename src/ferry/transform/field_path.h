// Fields inside records / messages: the dotted path errors name them by ("loc.lat"), and the
// lookup of a writer's field among a table's columns.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/ascii.h"
#include "ferry/columnar/types.h"

namespace ferry::transform {

// `part` below `path` ("" for the top level).
inline std::string JoinPath(std::string_view path, std::string_view part) {
  return path.empty() ? std::string(part) : fmt::format("{}.{}", path, part);
}

// "loc.alt" from {"loc", "alt"} (a FieldObservation's path as delta::SchemaChange::Path says it).
inline std::string JoinPath(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& part : parts) {
    out = JoinPath(out, part);
  }
  return out;
}

// The index of the field called `name`: the exact name first, then ignoring ASCII case (a
// writer's "Id" fills a column "id"); -1 when there is none.
inline int FindField(const std::vector<columnar::Field>& fields, std::string_view name) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == name) {
      return static_cast<int>(i);
    }
  }
  const std::string lower = AsciiLower(name);
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name.size() == name.size() && AsciiLower(fields[i].name) == lower) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace ferry::transform
