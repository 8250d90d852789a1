#include "ferry/delta/last_checkpoint.h"

#include <nlohmann/json.hpp>

namespace ferry::delta {
namespace {

using Json = nlohmann::json;

// The value under the camelCase key, or else under its snake_case spelling.
std::optional<int64_t> LenientInt(const Json& doc, const char* camel, const char* snake) {
  for (const char* key : {camel, snake}) {
    if (key == nullptr) {
      continue;
    }
    auto it = doc.find(key);
    if (it != doc.end() && it->is_number_integer()) {
      return it->get<int64_t>();
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<LastCheckpoint> ParseLastCheckpoint(std::string_view text) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return std::nullopt;
  }
  std::optional<int64_t> version = LenientInt(doc, "version", nullptr);
  if (!version.has_value() || *version < 0) {
    return std::nullopt;
  }
  LastCheckpoint hint;
  hint.version = *version;
  hint.size = LenientInt(doc, "size", nullptr);
  hint.parts = LenientInt(doc, "parts", nullptr);
  hint.size_in_bytes = LenientInt(doc, "sizeInBytes", "size_in_bytes");
  hint.num_of_add_files = LenientInt(doc, "numOfAddFiles", "num_of_add_files");
  auto v2 = doc.find("v2Checkpoint");
  if (v2 != doc.end() && v2->is_object()) {
    auto path = v2->find("path");
    if (path != v2->end() && path->is_string()) {
      hint.v2_checkpoint_path = path->get<std::string>();
    }
  }
  return hint;
}

std::string LastCheckpointToJson(const LastCheckpoint& hint) {
  nlohmann::ordered_json doc;
  doc["version"] = hint.version;
  if (hint.size) {
    doc["size"] = *hint.size;
  }
  if (hint.parts) {
    doc["parts"] = *hint.parts;
  }
  if (hint.size_in_bytes) {
    doc["sizeInBytes"] = *hint.size_in_bytes;
  }
  if (hint.num_of_add_files) {
    doc["numOfAddFiles"] = *hint.num_of_add_files;
  }
  return doc.dump();
}

}  // namespace ferry::delta
