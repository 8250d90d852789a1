#include "ferry/app/parquet_cat_json.h"

#include <fmt/format.h>

#include <cmath>

#include "ferry/base/json_escape.h"

namespace ferry::app {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::Int128;
using columnar::ListColumn;
using columnar::MapColumn;
using columnar::PrimitiveColumn;
using columnar::StructColumn;
using columnar::TimeUnit;
using columnar::TypeId;
using columnar::UInt128;

// Length of the UTF-8 sequence starting at s[i], or 0 if it is invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) {
    return 0;
  }
  for (size_t k = 1; k < n; k++) {
    if ((b(i + k) & 0xC0) != 0x80) {
      return 0;
    }
  }
  // Overlong forms, surrogates and code points past U+10FFFF.
  if ((n == 2 && c < 0xC2) || (n == 3 && c == 0xE0 && b(i + 1) < 0xA0) ||
      (n == 3 && c == 0xED && b(i + 1) >= 0xA0) || (n == 4 && c == 0xF0 && b(i + 1) < 0x90) ||
      (n == 4 && (c > 0xF4 || (c == 0xF4 && b(i + 1) >= 0x90)))) {
    return 0;
  }
  return n;
}

void AppendBase64(std::string_view in, std::string* out) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out->push_back('"');
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(in[k])); };
  for (; i + 3 <= in.size(); i += 3) {
    uint32_t v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    for (int s = 18; s >= 0; s -= 6) {
      out->push_back(kAlphabet[(v >> s) & 63]);
    }
  }
  size_t rest = in.size() - i;
  if (rest > 0) {
    uint32_t v = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out->push_back('=');
  }
  out->push_back('"');
}

std::string Int128ToString(Int128 v) {
  bool negative = v < 0;
  UInt128 u = negative ? UInt128{0} - static_cast<UInt128>(v) : static_cast<UInt128>(v);
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  if (negative) {
    digits.push_back('-');
  }
  return std::string(digits.rbegin(), digits.rend());
}

void AppendDecimal(Int128 v, int32_t scale, std::string* out) {
  std::string digits = Int128ToString(v);
  std::string_view magnitude(digits);
  if (v < 0) {
    out->push_back('-');
    magnitude.remove_prefix(1);
  }
  auto s = static_cast<size_t>(scale);
  if (s == 0) {
    out->append(magnitude);
    return;
  }
  if (magnitude.size() <= s) {  // 0.0012
    out->append("0.");
    out->append(s - magnitude.size(), '0');
    out->append(magnitude);
    return;
  }
  out->append(magnitude.substr(0, magnitude.size() - s));
  out->push_back('.');
  out->append(magnitude.substr(magnitude.size() - s));
}

// Year, month, day of a day count since 1970-01-01 (proleptic Gregorian; the civil_from_days
// algorithm of H. Hinnant's "chrono-Compatible Low-Level Date Algorithms").
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  auto doe = static_cast<unsigned>(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2 ? 1 : 0);
}

void AppendDate(int64_t days, std::string* out) {
  int64_t y = 0;
  unsigned m = 0;
  unsigned d = 0;
  CivilFromDays(days, &y, &m, &d);
  if (y >= 0 && y <= 9999) {
    fmt::format_to(std::back_inserter(*out), "{:04}-{:02}-{:02}", y, m, d);
  } else {
    fmt::format_to(std::back_inserter(*out), "{:+05}-{:02}-{:02}", y, m, d);
  }
}

void AppendTimestamp(int64_t v, const columnar::DataType& type, std::string* out) {
  int64_t per_second = type.unit() == TimeUnit::kMillis   ? 1000
                       : type.unit() == TimeUnit::kMicros ? 1000000
                                                          : 1000000000;
  int digits = type.unit() == TimeUnit::kMillis ? 3 : type.unit() == TimeUnit::kMicros ? 6 : 9;
  int64_t seconds = v / per_second;
  int64_t fraction = v % per_second;
  if (fraction < 0) {
    fraction += per_second;
    seconds--;
  }
  int64_t days = seconds / 86400;
  int64_t second_of_day = seconds % 86400;
  if (second_of_day < 0) {
    second_of_day += 86400;
    days--;
  }
  out->push_back('"');
  AppendDate(days, out);
  fmt::format_to(std::back_inserter(*out), "T{:02}:{:02}:{:02}", second_of_day / 3600,
                 second_of_day / 60 % 60, second_of_day % 60);
  if (fraction != 0) {
    fmt::format_to(std::back_inserter(*out), ".{:0{}}", fraction, digits);
  }
  if (type.utc_adjusted()) {
    out->push_back('Z');
  }
  out->push_back('"');
}

template <typename T>
void AppendFloat(T v, std::string* out) {
  if (std::isnan(v)) {
    out->append("\"NaN\"");
  } else if (std::isinf(v)) {
    out->append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else {
    fmt::format_to(std::back_inserter(*out), "{}", v);
  }
}

void AppendPrimitive(const Column& column, int64_t row, std::string* out) {
  const columnar::DataType& type = *column.type();
  switch (type.id()) {
    case TypeId::kBoolean:
      out->append(column.As<columnar::BooleanColumn>()->Value(row) != 0 ? "true" : "false");
      return;
    case TypeId::kFloat32:
      AppendFloat(column.As<columnar::FloatColumn>()->Value(row), out);
      return;
    case TypeId::kFloat64:
      AppendFloat(column.As<columnar::DoubleColumn>()->Value(row), out);
      return;
    case TypeId::kDecimal:
      AppendDecimal(column.As<columnar::DecimalColumn>()->Value(row), type.scale(), out);
      return;
    case TypeId::kDate:
      out->push_back('"');
      AppendDate(column.As<columnar::DateColumn>()->Value(row), out);
      out->push_back('"');
      return;
    case TypeId::kTimestamp:
      AppendTimestamp(column.As<columnar::TimestampColumn>()->Value(row), type, out);
      return;
    default:
      columnar::VisitPrimitive(type.id(), [&]<typename C>(C*) {
        fmt::format_to(std::back_inserter(*out), "{}", static_cast<const C&>(column).Value(row));
      });
      return;
  }
}

void AppendMap(const MapColumn& map, int64_t row, std::string* out) {
  auto begin = map.offsets()[static_cast<size_t>(row)];
  auto end = map.offsets()[static_cast<size_t>(row) + 1];
  bool string_keys = map.keys().type_id() == TypeId::kString;
  out->push_back(string_keys ? '{' : '[');
  for (int64_t i = begin; i < end; i++) {
    if (i > begin) {
      out->push_back(',');
    }
    if (string_keys) {
      AppendJsonString(map.keys().As<BinaryColumn>()->Value(i), out);
      out->push_back(':');
    } else {
      out->append("{\"key\":");
      AppendJsonValue(map.keys(), i, out);
      out->append(",\"value\":");
    }
    AppendJsonValue(map.values(), i, out);
    if (!string_keys) {
      out->push_back('}');
    }
  }
  out->push_back(string_keys ? '}' : ']');
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<uint8_t>(s[i]);
    if (c >= 0x80) {
      size_t n = Utf8SequenceLength(s, i);
      if (n == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD
        i++;
      } else {
        out->append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    AppendJsonEscaped(s.substr(i, 1), out);  // ASCII: escaped as every JSON string ferry writes
    i++;
  }
  out->push_back('"');
}

void AppendJsonValue(const Column& column, int64_t row, std::string* out) {
  if (column.IsNull(row)) {
    out->append("null");
    return;
  }
  switch (column.type_id()) {
    case TypeId::kString:
    case TypeId::kJson:
      AppendJsonString(column.As<BinaryColumn>()->Value(row), out);
      return;
    case TypeId::kBinary:
    case TypeId::kFixedBinary:
      AppendBase64(column.As<BinaryColumn>()->Value(row), out);
      return;
    case TypeId::kStruct: {
      const auto& s = *column.As<StructColumn>();
      out->push_back('{');
      for (int i = 0; i < s.num_children(); i++) {
        if (i > 0) {
          out->push_back(',');
        }
        AppendJsonString(s.type()->fields()[static_cast<size_t>(i)].name, out);
        out->push_back(':');
        AppendJsonValue(s.child(i), row, out);
      }
      out->push_back('}');
      return;
    }
    case TypeId::kList: {
      const auto& l = *column.As<ListColumn>();
      out->push_back('[');
      auto begin = l.offsets()[static_cast<size_t>(row)];
      auto end = l.offsets()[static_cast<size_t>(row) + 1];
      for (int64_t i = begin; i < end; i++) {
        if (i > begin) {
          out->push_back(',');
        }
        AppendJsonValue(l.child(), i, out);
      }
      out->push_back(']');
      return;
    }
    case TypeId::kMap:
      AppendMap(*column.As<MapColumn>(), row, out);
      return;
    default:
      AppendPrimitive(column, row, out);
      return;
  }
}

void AppendJsonRow(const columnar::RecordBatch& batch, int64_t row, std::string* out) {
  out->push_back('{');
  for (int i = 0; i < batch.num_columns(); i++) {
    if (i > 0) {
      out->push_back(',');
    }
    AppendJsonString(batch.schema().field(i).name, out);
    out->push_back(':');
    AppendJsonValue(batch.column(i), row, out);
  }
  out->push_back('}');
}

}  // namespace ferry::app
