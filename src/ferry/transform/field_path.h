// The dotted path of a field inside records / messages, as errors name it: "loc.lat".
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace ferry::transform {

// `part` below `path` ("" for the top level).
inline std::string JoinPath(std::string_view path, std::string_view part) {
  return path.empty() ? std::string(part) : fmt::format("{}.{}", path, part);
}

}  // namespace ferry::transform
