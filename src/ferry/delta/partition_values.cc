#include "ferry/delta/partition_values.h"

#include <charconv>

#include "ferry/base/hex.h"
#include "ferry/delta/value_format.h"

namespace ferry::delta {
namespace {

using columnar::TypeId;

constexpr char kHex[] = "0123456789ABCDEF";

bool NeedsHiveEscape(unsigned char c) {
  if ((c >= 0x01 && c <= 0x1F) || c == 0x7F) {
    return true;
  }
  switch (c) {
    case '"':
    case '#':
    case '%':
    case '\'':
    case '*':
    case '/':
    case ':':
    case '=':
    case '?':
    case '\\':
    case '{':
    case '[':
    case ']':
    case '^':
      return true;
    default:
      return false;
  }
}

bool UriPathLegal(unsigned char c) {
  if (c >= 0x80) {
    return true;  // java.net.URI leaves "other" (non-ASCII) characters unquoted
  }
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
    return true;
  }
  return std::string_view("_-!.~'()*,;:$&+=/@").find(static_cast<char>(c)) !=
         std::string_view::npos;
}

void AppendEscaped(std::string* out, unsigned char c) {
  out->push_back('%');
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 0xF]);
}

std::string IntegerText(const columnar::Column& column, int64_t row) {
  return columnar::VisitPrimitive(column.type_id(), [&]<typename C>(C*) -> std::string {
    using T = typename C::ValueType;
    if constexpr (std::is_integral_v<T>) {
      return std::to_string(column.As<C>()->Value(row));
    } else {
      return std::string();
    }
  });
}

template <typename T>
Status AppendParsedInteger(std::string_view text, columnar::Column* column) {
  T v{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) {
    return InvalidArgument("partition value '{}' is not a {}", text, column->type()->ToString());
  }
  column->As<columnar::PrimitiveColumn<T>>()->Append(v);
  return Status::OK();
}

template <typename T>
Status AppendParsedFloat(std::string_view text, columnar::Column* column) {
  T v{};
  if (text == "NaN") {
    v = std::numeric_limits<T>::quiet_NaN();
  } else if (text == "Infinity") {
    v = std::numeric_limits<T>::infinity();
  } else if (text == "-Infinity") {
    v = -std::numeric_limits<T>::infinity();
  } else {
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      return InvalidArgument("partition value '{}' is not a {}", text, column->type()->ToString());
    }
  }
  column->As<columnar::PrimitiveColumn<T>>()->Append(v);
  return Status::OK();
}

}  // namespace

std::string EscapePartitionPathName(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (NeedsHiveEscape(c)) {
      AppendEscaped(&out, c);
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

std::string UnescapePartitionPathName(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexDigitValue(text[i + 1]) >= 0 &&
        HexDigitValue(text[i + 2]) >= 0) {
      out.push_back(
          static_cast<char>(HexDigitValue(text[i + 1]) * 16 + HexDigitValue(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::string EncodeUriPath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char ch : path) {
    auto c = static_cast<unsigned char>(ch);
    if (UriPathLegal(c)) {
      out.push_back(ch);
    } else {
      AppendEscaped(&out, c);
    }
  }
  return out;
}

Result<std::string> DecodeUriPath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out.push_back(path[i]);
      continue;
    }
    if (i + 2 >= path.size() || HexDigitValue(path[i + 1]) < 0 || HexDigitValue(path[i + 2]) < 0) {
      return InvalidArgument("path '{}': '%' at {} is not followed by two hex digits", path, i);
    }
    out.push_back(static_cast<char>(HexDigitValue(path[i + 1]) * 16 + HexDigitValue(path[i + 2])));
    i += 2;
  }
  return out;
}

Status CheckPartitionColumnType(const columnar::Field& field) {
  const columnar::DataType& type = *field.type;
  switch (type.id()) {
    case TypeId::kBoolean:
    case TypeId::kInt8:
    case TypeId::kInt16:
    case TypeId::kInt32:
    case TypeId::kInt64:
    case TypeId::kFloat32:
    case TypeId::kFloat64:
    case TypeId::kString:
    case TypeId::kDate:
    case TypeId::kDecimal:
      return Status::OK();
    case TypeId::kTimestamp:
      if (type.unit() == columnar::TimeUnit::kMicros) {
        return Status::OK();
      }
      break;
    default:
      break;
  }
  return InvalidArgument("column '{}' of type {} cannot be a partition column", field.name,
                         type.ToString());
}

SerializedPartitionValue SerializePartitionValue(const columnar::Column& column, int64_t row) {
  SerializedPartitionValue out;
  if (column.IsNull(row)) {
    out.directory_value = std::string(kHiveDefaultPartition);
    return out;
  }
  const columnar::DataType& type = *column.type();
  std::string text;
  switch (type.id()) {
    case TypeId::kBoolean:
      text = column.As<columnar::BooleanColumn>()->Value(row) != 0 ? "true" : "false";
      break;
    case TypeId::kFloat32:
      text = FormatJavaFloat(column.As<columnar::FloatColumn>()->Value(row));
      break;
    case TypeId::kFloat64:
      text = FormatJavaDouble(column.As<columnar::DoubleColumn>()->Value(row));
      break;
    case TypeId::kString:
      text = std::string(column.As<columnar::BinaryColumn>()->Value(row));
      break;
    case TypeId::kDate:
      text = FormatDate(column.As<columnar::DateColumn>()->Value(row));
      break;
    case TypeId::kDecimal:
      text = FormatDecimal(column.As<columnar::DecimalColumn>()->Value(row), type.scale());
      break;
    case TypeId::kTimestamp: {
      int64_t micros = column.As<columnar::TimestampColumn>()->Value(row);
      out.directory_value = FormatTimestampMicros(micros, TimestampStyle::kSparkCast);
      out.log_value = type.utc_adjusted()
                          ? FormatTimestampMicros(micros, TimestampStyle::kIsoMicrosZ)
                          : out.directory_value;
      return out;
    }
    default:
      text = IntegerText(column, row);
      break;
  }
  if (text.empty()) {
    // Spark writes an empty string partition value as null.
    out.directory_value = std::string(kHiveDefaultPartition);
    return out;
  }
  out.directory_value = text;
  out.log_value = std::move(text);
  return out;
}

std::string PartitionDirectory(const std::vector<std::string>& names,
                               const std::vector<std::string>& directory_values) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) {
      out.push_back('/');
    }
    out += EscapePartitionPathName(names[i]);
    out.push_back('=');
    out += directory_values[i] == kHiveDefaultPartition
               ? directory_values[i]
               : EscapePartitionPathName(directory_values[i]);
  }
  return out;
}

Status AppendPartitionValue(const std::optional<std::string>& value, columnar::Column* column) {
  if (!value.has_value() || value->empty()) {
    column->AppendNull();
    return Status::OK();
  }
  const std::string& text = *value;
  const columnar::DataType& type = *column->type();
  switch (type.id()) {
    case TypeId::kBoolean:
      if (text != "true" && text != "false") {
        return InvalidArgument("partition value '{}' is not a boolean", text);
      }
      column->As<columnar::BooleanColumn>()->Append(text == "true" ? 1 : 0);
      return Status::OK();
    case TypeId::kInt8:
      return AppendParsedInteger<int8_t>(text, column);
    case TypeId::kInt16:
      return AppendParsedInteger<int16_t>(text, column);
    case TypeId::kInt32:
      return AppendParsedInteger<int32_t>(text, column);
    case TypeId::kInt64:
      return AppendParsedInteger<int64_t>(text, column);
    case TypeId::kFloat32:
      return AppendParsedFloat<float>(text, column);
    case TypeId::kFloat64:
      return AppendParsedFloat<double>(text, column);
    case TypeId::kString:
    case TypeId::kBinary:
      column->As<columnar::BinaryColumn>()->Append(text);
      return Status::OK();
    case TypeId::kDate: {
      FERRY_ASSIGN_OR_RETURN(int32_t days, ParseDate(text));
      column->As<columnar::DateColumn>()->Append(days);
      return Status::OK();
    }
    case TypeId::kTimestamp: {
      FERRY_ASSIGN_OR_RETURN(int64_t micros, ParseTimestampMicros(text));
      column->As<columnar::TimestampColumn>()->Append(micros);
      return Status::OK();
    }
    case TypeId::kDecimal: {
      FERRY_ASSIGN_OR_RETURN(columnar::Int128 v, ParseDecimal(text, type.scale()));
      column->As<columnar::DecimalColumn>()->Append(v);
      return Status::OK();
    }
    default:
      return InvalidArgument("partition column of type {} is not supported", type.ToString());
  }
}

}  // namespace ferry::delta
