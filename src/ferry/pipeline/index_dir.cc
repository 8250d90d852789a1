#include "ferry/pipeline/index_dir.h"

#include <fmt/format.h>

#include <cctype>

namespace ferry::pipeline {
namespace {

// A pipeline id as one key segment: [A-Za-z0-9_-] kept, every other byte %XX.
std::string EscapeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '_' || c == '-') {
      out.push_back(c);
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

}  // namespace

std::string IndexDir(const delta::Table& table, std::string_view kind, std::string_view name) {
  return table.Key(fmt::format("_ferry/{}/{}/", kind, EscapeName(name)));
}

}  // namespace ferry::pipeline
