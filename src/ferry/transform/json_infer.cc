#include "ferry/transform/json_infer.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ferry/columnar/ddl.h"
#include "ferry/transform/civil_time.h"
#include "ferry/transform/datetime_cast.h"
#include "ferry/transform/number_text.h"

namespace ferry::transform {
namespace {

using columnar::DataType;
using columnar::DataTypePtr;
using columnar::Field;
using columnar::Int128;
using columnar::TypeId;

// A reader over text that CheckJsonSyntax accepted: no error handling beyond depth.
class Inferrer {
 public:
  explicit Inferrer(std::string_view text) : s_(text) {}

  Result<DataTypePtr> Value(int depth) {
    if (depth > kMaxInferDepth) {
      return InvalidArgument("nested deeper than {} levels; not inferred", kMaxInferDepth);
    }
    Space();
    char c = pos_ < s_.size() ? s_[pos_] : '\0';
    switch (c) {
      case '{':
        return Object(depth);
      case '[':
        return Array(depth);
      case '"':
        String();
        return DataType::String();
      case 't':
        pos_ += 4;
        return DataType::Boolean();
      case 'f':
        pos_ += 5;
        return DataType::Boolean();
      case 'n':
        pos_ += 4;
        return DataTypePtr();
      default:
        return Number();
    }
  }

 private:
  void Space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      pos_++;
    }
  }

  // A string token; returns its raw content (escapes not undone) and whether it had any.
  std::string_view String(bool* escaped = nullptr) {
    size_t begin = ++pos_;
    bool any = false;
    while (s_[pos_] != '"') {
      if (s_[pos_] == '\\') {
        any = true;
        pos_++;
      }
      pos_++;
    }
    std::string_view raw = s_.substr(begin, pos_ - begin);
    pos_++;
    if (escaped != nullptr) {
      *escaped = any;
    }
    return raw;
  }

  DataTypePtr Number() {
    size_t begin = pos_;
    bool integer = true;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '.' || c == 'e' || c == 'E') {
        integer = false;
      } else if (!(c == '-' || c == '+' || (c >= '0' && c <= '9'))) {
        break;
      }
      pos_++;
    }
    if (integer) {
      Int128 v = 0;
      if (ParseIntegerText(s_.substr(begin, pos_ - begin), false,
                           std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                           &v) == NumberTextError::kOk) {
        return DataType::Int64();
      }
    }
    return DataType::Float64();
  }

  Result<DataTypePtr> Object(int depth) {
    pos_++;  // '{'
    std::vector<Field> fields;
    Space();
    if (s_[pos_] == '}') {
      pos_++;
      return DataTypePtr();
    }
    while (true) {
      Space();
      bool escaped = false;
      std::string_view raw = String(&escaped);
      std::string name(raw);
      if (escaped) {
        Result<std::string> decoded = columnar::DecodeJsonString("\"" + name + "\"");
        if (decoded.ok()) {
          name = std::move(*decoded);
        }
      }
      Space();
      pos_++;  // ':'
      FERRY_ASSIGN_OR_RETURN(DataTypePtr type, Value(depth + 1));
      auto same = std::find_if(fields.begin(), fields.end(),
                               [&](const Field& f) { return f.name == name; });
      if (same != fields.end()) {
        same->type = UnifyInferredTypes(same->type, type);
      } else {
        fields.push_back({.name = std::move(name), .type = type, .nullable = true});
      }
      Space();
      if (s_[pos_++] == '}') {
        break;
      }
    }
    std::erase_if(fields, [](const Field& f) { return f.type == nullptr; });
    if (fields.empty()) {
      return DataTypePtr();
    }
    return DataType::Struct(std::move(fields));
  }

  Result<DataTypePtr> Array(int depth) {
    pos_++;  // '['
    Space();
    DataTypePtr element;
    if (s_[pos_] == ']') {
      pos_++;
      return element;
    }
    while (true) {
      FERRY_ASSIGN_OR_RETURN(DataTypePtr type, Value(depth + 1));
      element = UnifyInferredTypes(element, type);
      Space();
      if (s_[pos_++] == ']') {
        break;
      }
    }
    if (element == nullptr) {
      return element;
    }
    return DataType::List(element);
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Result<DataTypePtr> InferJsonType(std::string_view json) {
  return Inferrer(json).Value(0);
}

DataTypePtr UnifyInferredTypes(const DataTypePtr& a, const DataTypePtr& b) {
  if (a == nullptr) {
    return b;
  }
  if (b == nullptr || a->Equals(*b)) {
    return a;
  }
  if ((a->id() == TypeId::kInt64 && b->id() == TypeId::kFloat64) ||
      (a->id() == TypeId::kFloat64 && b->id() == TypeId::kInt64)) {
    return DataType::Float64();
  }
  if (a->id() == TypeId::kStruct && b->id() == TypeId::kStruct) {
    std::vector<Field> fields = a->fields();
    for (const Field& f : b->fields()) {
      auto same = std::find_if(fields.begin(), fields.end(),
                               [&](const Field& g) { return g.name == f.name; });
      if (same != fields.end()) {
        same->type = UnifyInferredTypes(same->type, f.type);
      } else {
        fields.push_back(f);
      }
    }
    return DataType::Struct(std::move(fields));
  }
  if (a->id() == TypeId::kList && b->id() == TypeId::kList) {
    return DataType::List(UnifyInferredTypes(a->element().type, b->element().type));
  }
  return a;
}

DataTypePtr NeededType(const JsonPlanNode& node, std::string_view text, bool is_string) {
  switch (node.kind) {
    case JsonNodeKind::kInt8:
    case JsonNodeKind::kInt16:
    case JsonNodeKind::kInt32:
    case JsonNodeKind::kInt64: {
      Int128 v = 0;
      NumberTextError e = ParseIntegerText(text, is_string, std::numeric_limits<int64_t>::min(),
                                           std::numeric_limits<int64_t>::max(), &v);
      if (e == NumberTextError::kOk) {
        if (v >= INT16_MIN && v <= INT16_MAX) {
          return DataType::Int16();
        }
        if (v >= INT32_MIN && v <= INT32_MAX) {
          return DataType::Int32();
        }
        return DataType::Int64();
      }
      double d = 0;
      if (e != NumberTextError::kSyntax && ParseDoubleText(text, &d) == NumberTextError::kOk) {
        return DataType::Float64();
      }
      return nullptr;
    }
    case JsonNodeKind::kFloat32: {
      double d = 0;
      return ParseDoubleText(text, &d) == NumberTextError::kOk ? DataType::Float64() : nullptr;
    }
    case JsonNodeKind::kDecimal: {
      Int128 v = 0;
      for (int32_t p = node.precision + 1; p <= 38; ++p) {
        if (node.scale <= p &&
            ParseDecimalText(text, is_string, p, node.scale, &v) == NumberTextError::kOk) {
          return DataType::Decimal(p, node.scale);
        }
      }
      return nullptr;
    }
    case JsonNodeKind::kDate: {
      if (!is_string) {
        return nullptr;
      }
      std::optional<int64_t> micros = ParseLocalTimestampText(text);
      if (micros && ((*micros % kMicrosPerDay) + kMicrosPerDay) % kMicrosPerDay != 0) {
        return DataType::Timestamp(columnar::TimeUnit::kMicros, false);
      }
      return nullptr;
    }
    default:
      return nullptr;
  }
}

int FindChildIgnoringCase(const JsonPlanNode& node, std::string_view key) {
  int found = -1;
  for (size_t i = 0; i < node.children.size(); ++i) {
    std::string_view name = node.names.name(i);
    if (name.size() == key.size() &&
        std::equal(name.begin(), name.end(), key.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      if (found >= 0) {
        return -1;
      }
      found = static_cast<int>(i);
    }
  }
  return found;
}

}  // namespace ferry::transform
