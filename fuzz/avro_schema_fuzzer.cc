// libFuzzer target: the Avro schema parser and its columnar mapping (transform/avro_schema.h).
// Any text either fails to parse or yields a graph whose every edge is set; the mapping either
// fails or gives a type. Neither may crash, hang or exhaust memory.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>
#include <vector>

#include "ferry/transform/avro_schema.h"

namespace {

using ferry::transform::avro::AvroType;
using ferry::transform::avro::Node;

void CheckEdges(const Node& root) {
  std::set<const Node*> seen;
  std::vector<const Node*> todo = {&root};
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (n == nullptr) {
      std::abort();
    }
    if (!seen.insert(n).second) {
      continue;
    }
    for (const auto& f : n->fields) {
      todo.push_back(f.type);
    }
    for (const Node* b : n->branches) {
      todo.push_back(b);
    }
    if (n->type == AvroType::kArray) {
      todo.push_back(n->items);
    }
    if (n->type == AvroType::kMap) {
      todo.push_back(n->values);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto schema = ferry::transform::avro::Schema::Parse(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!schema.ok()) {
    return 0;
  }
  CheckEdges(schema->root());
  (void)ferry::transform::avro::ToColumnType(schema->root());
  (void)ferry::transform::avro::ToTableSchema(*schema);
  return 0;
}
