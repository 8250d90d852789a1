#include "ferry/transform/expr_literal.h"

#include <fmt/format.h>

#include <algorithm>

#include "ferry/transform/number_text.h"

namespace ferry::transform {

using columnar::DataType;
using columnar::DataTypePtr;

Result<TypedLiteral> ParseNumberLiteral(std::string_view text, size_t* error_offset) {
  *error_offset = 0;
  size_t body_end = text.size();
  while (body_end > 0 && ((text[body_end - 1] >= 'a' && text[body_end - 1] <= 'z') ||
                          (text[body_end - 1] >= 'A' && text[body_end - 1] <= 'Z'))) {
    body_end--;
  }
  std::string_view body = text.substr(0, body_end);
  std::string suffix;
  for (char c : text.substr(body_end)) {
    suffix.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c));
  }
  bool has_point = body.find('.') != std::string_view::npos;
  bool has_exp = body.find_first_of("eE") != std::string_view::npos;
  TypedLiteral lit;
  lit.value.is_null = false;
  auto integer = [&](DataTypePtr type, columnar::Int128 lo, columnar::Int128 hi) {
    columnar::Int128 v = 0;
    if (has_point || has_exp || ParseIntegerText(body, true, lo, hi, &v) != NumberTextError::kOk) {
      return false;
    }
    lit.value.i = static_cast<int64_t>(v);
    lit.type = std::move(type);
    return true;
  };
  if (suffix == "L" || suffix == "S" || suffix == "Y") {
    DataTypePtr t = suffix == "L"   ? DataType::Int64()
                    : suffix == "S" ? DataType::Int16()
                                    : DataType::Int8();
    bool ok = suffix == "L"   ? integer(t, INT64_MIN, INT64_MAX)
              : suffix == "S" ? integer(t, INT16_MIN, INT16_MAX)
                              : integer(t, INT8_MIN, INT8_MAX);
    if (!ok) {
      return InvalidArgument("number {} does not fit {}", text, t->ToString());
    }
    return lit;
  }
  if (suffix == "D" || suffix == "F" || (suffix.empty() && has_exp)) {
    if (ParseDoubleText(body, &lit.value.d) != NumberTextError::kOk) {
      return InvalidArgument("bad number {}", text);
    }
    lit.type = suffix == "F" ? DataType::Float32() : DataType::Float64();
    return lit;
  }
  if (suffix.empty() && !has_point &&
      (integer(DataType::Int32(), INT32_MIN, INT32_MAX) ||
       integer(DataType::Int64(), INT64_MIN, INT64_MAX))) {
    return lit;
  }
  if (!suffix.empty() && suffix != "BD") {
    *error_offset = body_end;
    return InvalidArgument("unknown number suffix '{}'", text.substr(body_end));
  }
  if (has_exp) {
    return InvalidArgument("bad decimal {}", text);
  }
  size_t point = body.find('.');
  auto scale = static_cast<int32_t>(point == std::string_view::npos ? 0 : body.size() - point - 1);
  std::string digits;
  for (char c : body) {
    if (c != '.' && !(digits.empty() && c == '0')) {
      digits.push_back(c);
    }
  }
  int32_t precision = std::max<int32_t>({static_cast<int32_t>(digits.size()), scale, 1});
  if (precision > 38 ||
      ParseDecimalText(body, true, precision, scale, &lit.value.dec) != NumberTextError::kOk) {
    return InvalidArgument("number {} does not fit DECIMAL(38)", text);
  }
  lit.type = DataType::Decimal(precision, scale);
  return lit;
}

Result<std::string> ParseHexLiteral(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    return InvalidArgument("binary literal needs an even number of hex digits");
  }
  auto nibble = [](char c) {
    int lower = c | 0x20;
    return c >= '0' && c <= '9' ? c - '0' : lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : -1;
  };
  std::string bytes;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      return InvalidArgument("bad hex digit in binary literal");
    }
    bytes.push_back(static_cast<char>(hi * 16 + lo));
  }
  return bytes;
}

}  // namespace ferry::transform
