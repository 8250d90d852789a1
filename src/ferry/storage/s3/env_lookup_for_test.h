// Tests only: an EnvLookup that answers from a map instead of the process environment.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ferry/storage/s3/credentials.h"

namespace ferry::storage::s3 {

inline EnvLookup MapEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

}  // namespace ferry::storage::s3
