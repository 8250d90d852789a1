// The decode plan of a JsonDecoder: one node per schema field with everything the hot loop needs
// precomputed (the kind of conversion, nullability, decimal scale, timestamp unit, a name index
// per struct), plus the parsed datetime options. Built once by JsonDecoder::Create; read-only
// afterwards. Internal to the transform module (json_decoder.cc and its tests).
//
// Thread-safety: immutable after Build.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/datetime_pattern.h"
#include "ferry/transform/json_decoder.h"
#include "ferry/transform/time_zone.h"

namespace ferry::transform {

enum class JsonNodeKind : uint8_t {
  kBoolean,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat32,
  kFloat64,
  kString,
  kJsonText,  // the value's JSON text, whatever its type
  kBinary,
  kFixedBinary,
  kDate,
  kTimestamp,
  kDecimal,
  kStruct,
  kList,
  kMap,
};

// Exact-match lookup of field names: open addressing over a power-of-two table.
class FieldNameIndex {
 public:
  void Build(std::vector<std::string> names);
  // Position of `name` among the built names, or -1.
  int Find(std::string_view name) const;
  const std::string& name(size_t i) const { return names_[i]; }
  // True when the name has no '"' or '\\', so the raw bytes of a JSON key can be compared
  // with it without unescaping the key.
  bool plain(size_t i) const { return plain_[i] != 0; }

 private:
  static uint64_t Hash(std::string_view s);
  std::vector<std::string> names_;
  std::vector<uint8_t> plain_;
  std::vector<int32_t> slots_;  // -1 = empty
  uint64_t mask_ = 0;
};

struct JsonPlanNode {
  JsonNodeKind kind = JsonNodeKind::kString;
  bool nullable = true;
  std::string name;  // for error paths: the field name, or "element" / "value"
  int32_t precision = 0;
  int32_t scale = 0;
  int32_t width = 0;  // kFixedBinary
  columnar::TimeUnit unit = columnar::TimeUnit::kMicros;
  bool utc_adjusted = true;
  // kStruct: the fields' nodes; kList: {element}; kMap: {key, value}.
  std::vector<uint32_t> children;
  uint32_t parent = 0;   // the enclosing node (0, the root, for top-level columns)
  FieldNameIndex names;  // kStruct and the root
};

struct JsonPlan {
  // nodes[0] is the root: a struct whose children are the decoded top-level columns.
  std::vector<JsonPlanNode> nodes;
  // Batch column index of each root child, and of the unknown-fields column (-1 if none).
  std::vector<int> root_columns;
  int unknown_column = -1;
  // Every column the decoder appends to, ascending.
  std::vector<int> output_columns;
  std::vector<DateTimePattern> timestamp_formats;
  std::vector<DateTimePattern> date_formats;
  TimeZonePtr zone;
  JsonDecoderOptions options;

  static Result<JsonPlan> Build(const columnar::Schema& schema, JsonDecoderOptions options);

  // The schema path of node `index` (FieldObservation::path): field names from the top level,
  // "element", "key", "value" inside arrays and maps.
  std::vector<std::string> Path(uint32_t index) const;
};

}  // namespace ferry::transform
