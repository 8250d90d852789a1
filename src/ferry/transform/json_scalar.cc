#include "ferry/transform/json_scalar.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "ferry/transform/base64.h"
#include "ferry/transform/civil_time.h"
#include "ferry/transform/datetime_cast.h"
#include "ferry/transform/number_text.h"

namespace ferry::transform {

namespace {

using columnar::Int128;

std::string_view Shorten(std::string_view s) {
  return s.size() > 64 ? s.substr(0, 64) : s;
}

// "string \"abc\"" or "number 1.5": how the offending value is named in messages.
std::string Found(std::string_view text, bool is_string) {
  return is_string ? fmt::format("string \"{}\"{}", Shorten(text), text.size() > 64 ? "..." : "")
                   : fmt::format("number {}{}", Shorten(text), text.size() > 64 ? "..." : "");
}

template <typename T>
void AppendValue(columnar::Column* column, T v) {
  column->As<columnar::PrimitiveColumn<T>>()->Append(v);
}

template <typename T>
Status AppendRanged(const JsonPlanNode& node, std::string_view text, bool is_string,
                    columnar::Column* column) {
  Int128 v = 0;
  NumberTextError err = ParseIntegerText(text, is_string, std::numeric_limits<T>::min(),
                                         std::numeric_limits<T>::max(), &v);
  switch (err) {
    case NumberTextError::kOk:
      AppendValue<T>(column, static_cast<T>(v));
      return Status::OK();
    case NumberTextError::kSyntax:
      return InvalidArgument("expected an integer, found {}", Found(text, is_string));
    case NumberTextError::kOverflow:
      return InvalidArgument("{} is out of range for {}", Found(text, is_string),
                             KindName(node.kind));
    case NumberTextError::kFraction:
      break;
  }
  return InvalidArgument("{} is not an integer", Found(text, is_string));
}

}  // namespace

std::string_view KindName(JsonNodeKind kind) {
  static constexpr std::string_view kNames[] = {
      "BOOLEAN", "TINYINT", "SMALLINT",  "INT",     "BIGINT", "UINT8", "UINT16",
      "UINT32",  "UINT64",  "FLOAT",     "DOUBLE",  "STRING", "JSON",  "BINARY",
      "FIXED",   "DATE",    "TIMESTAMP", "DECIMAL", "STRUCT", "ARRAY", "MAP"};
  return kNames[static_cast<size_t>(kind)];
}

Status AppendIntegerText(const JsonPlanNode& node, std::string_view text, bool is_string,
                         columnar::Column* column) {
  switch (node.kind) {
    case JsonNodeKind::kInt8:
      return AppendRanged<int8_t>(node, text, is_string, column);
    case JsonNodeKind::kInt16:
      return AppendRanged<int16_t>(node, text, is_string, column);
    case JsonNodeKind::kInt32:
      return AppendRanged<int32_t>(node, text, is_string, column);
    case JsonNodeKind::kInt64:
      return AppendRanged<int64_t>(node, text, is_string, column);
    case JsonNodeKind::kUInt8:
      return AppendRanged<uint8_t>(node, text, is_string, column);
    case JsonNodeKind::kUInt16:
      return AppendRanged<uint16_t>(node, text, is_string, column);
    case JsonNodeKind::kUInt32:
      return AppendRanged<uint32_t>(node, text, is_string, column);
    default:
      return AppendRanged<uint64_t>(node, text, is_string, column);
  }
}

Status AppendFloatText(const JsonPlanNode& node, std::string_view text, columnar::Column* column) {
  double d = 0;
  NumberTextError err = ParseDoubleText(text, &d);
  if (err == NumberTextError::kSyntax) {
    return InvalidArgument("expected a number, found {}", Found(text, true));
  }
  if (err == NumberTextError::kOverflow ||
      (node.kind == JsonNodeKind::kFloat32 && std::isfinite(d) &&
       std::fabs(d) > std::numeric_limits<float>::max())) {
    return InvalidArgument("{} is out of range for {}", Found(text, true), KindName(node.kind));
  }
  if (node.kind == JsonNodeKind::kFloat32) {
    AppendValue<float>(column, static_cast<float>(d));
  } else {
    AppendValue<double>(column, d);
  }
  return Status::OK();
}

Status AppendDecimalText(const JsonPlanNode& node, std::string_view text, bool is_string,
                         columnar::Column* column) {
  Int128 v = 0;
  NumberTextError err = ParseDecimalText(text, is_string, node.precision, node.scale, &v);
  if (err == NumberTextError::kSyntax) {
    return InvalidArgument("expected a decimal number, found {}", Found(text, is_string));
  }
  if (err != NumberTextError::kOk) {
    return InvalidArgument("{} does not fit DECIMAL({},{})", Found(text, is_string), node.precision,
                           node.scale);
  }
  AppendValue<Int128>(column, v);
  return Status::OK();
}

Status AppendBooleanText(std::string_view text, columnar::Column* column) {
  auto equals = [&](std::string_view word) {
    if (text.size() != word.size()) {
      return false;
    }
    for (size_t i = 0; i < word.size(); i++) {
      if ((text[i] | 0x20) != word[i]) {
        return false;
      }
    }
    return true;
  };
  if (equals("true") || equals("false")) {
    AppendValue<uint8_t>(column, equals("true") ? 1 : 0);
    return Status::OK();
  }
  return InvalidArgument("expected a boolean, found {}", Found(text, true));
}

Status AppendBase64Text(const JsonPlanNode& node, std::string_view text, columnar::Column* column) {
  auto* b = column->As<columnar::BinaryColumn>();
  std::string* data = b->mutable_data();
  size_t before = data->size();
  if (!DecodeBase64(text, data)) {
    data->resize(before);
    return InvalidArgument("expected base64, found {}", Found(text, true));
  }
  if (node.kind == JsonNodeKind::kFixedBinary &&
      data->size() - before != static_cast<size_t>(node.width)) {
    size_t got = data->size() - before;
    data->resize(before);
    return InvalidArgument("expected {} bytes, found {} in base64 {}", node.width, got,
                           Found(text, true));
  }
  b->CommitValue();
  return Status::OK();
}

Status AppendDateText(const JsonPlan& plan, std::string_view text, columnar::Column* column) {
  std::optional<int64_t> days;
  if (plan.date_formats.empty()) {
    if (std::optional<int32_t> d = ParseDateText(text)) {
      days = *d;
    }
  }
  for (const DateTimePattern& p : plan.date_formats) {
    if (std::optional<int64_t> local = p.ParseLocal(text)) {
      days = FloorDiv(*local, kMicrosPerDay);
      break;
    }
  }
  if (!days || *days < std::numeric_limits<int32_t>::min() ||
      *days > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("expected a date, found {}", Found(text, true));
  }
  AppendValue<int32_t>(column, static_cast<int32_t>(*days));
  return Status::OK();
}

namespace {

// Micros to the column's unit; false on overflow.
bool AppendMicros(const JsonPlanNode& node, int64_t micros, columnar::Column* column) {
  int64_t v = micros;
  if (node.unit == columnar::TimeUnit::kMillis) {
    v = FloorDiv(micros, kMicrosPerMilli);
  } else if (node.unit == columnar::TimeUnit::kNanos && __builtin_mul_overflow(micros, 1000, &v)) {
    return false;
  }
  AppendValue<int64_t>(column, v);
  return true;
}

}  // namespace

Status AppendTimestampText(const JsonPlan& plan, const JsonPlanNode& node, std::string_view text,
                           columnar::Column* column) {
  std::optional<int64_t> micros;
  for (const DateTimePattern& p : plan.timestamp_formats) {
    micros = node.utc_adjusted ? p.Parse(text, *plan.zone) : p.ParseLocal(text);
    if (micros) {
      break;
    }
  }
  if (plan.timestamp_formats.empty()) {
    micros =
        node.utc_adjusted ? ParseTimestampText(text, *plan.zone) : ParseLocalTimestampText(text);
    if (!micros && plan.options.strings_as_numbers) {
      Int128 probe = 0;
      if (ParseIntegerText(text, true, std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::max(), &probe) == NumberTextError::kOk) {
        return AppendEpochNumber(plan, node, text, true, column);
      }
    }
  }
  if (!micros) {
    return InvalidArgument("expected a timestamp, found {}", Found(text, true));
  }
  if (!AppendMicros(node, *micros, column)) {
    return InvalidArgument("{} is out of range for a timestamp", Found(text, true));
  }
  return Status::OK();
}

Status AppendEpochNumber(const JsonPlan& plan, const JsonPlanNode& node, std::string_view token,
                         bool is_string, columnar::Column* column) {
  static constexpr int64_t kFactor[] = {kMicrosPerSecond, kMicrosPerMilli, 1};
  int64_t whole = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), whole);
  int64_t scaled = 0;
  size_t digits_at = !token.empty() && token[0] == '-' ? 1 : 0;
  bool leading_zero = token.size() > digits_at + 1 && token[digits_at] == '0';  // not JSON
  if (!is_string && !leading_zero && ec == std::errc() && end == token.data() + token.size() &&
      !__builtin_mul_overflow(whole, kFactor[static_cast<int>(plan.options.epoch_unit)], &scaled) &&
      AppendMicros(node, scaled, column)) {
    return Status::OK();  // the common case: an integer count
  }
  int32_t scale = plan.options.epoch_unit == EpochUnit::kSeconds  ? 6
                  : plan.options.epoch_unit == EpochUnit::kMillis ? 3
                                                                  : 0;
  Int128 micros = 0;
  NumberTextError err = ParseDecimalText(token, is_string, 38, scale, &micros);
  if (err == NumberTextError::kSyntax) {
    return InvalidArgument("expected a timestamp, found {}", Found(token, is_string));
  }
  if (err != NumberTextError::kOk || micros < std::numeric_limits<int64_t>::min() ||
      micros > std::numeric_limits<int64_t>::max() ||
      !AppendMicros(node, static_cast<int64_t>(micros), column)) {
    return InvalidArgument("{} is out of range for a timestamp", Found(token, is_string));
  }
  return Status::OK();
}

}  // namespace ferry::transform
