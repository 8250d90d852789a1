#include "ferry/columnar/types.h"

#include <fmt/format.h>

#include "ferry/base/check.h"
#include "ferry/columnar/ddl.h"

namespace ferry::columnar {

namespace {

DataTypePtr MakeSingleton(TypeId id) {
  return std::make_shared<const DataType>(id);
}

bool MetadataEquals(const FieldMetadata& a, const FieldMetadata& b) {
  return a == b;
}

// "name<separator>TYPE [NOT NULL] [COMMENT '...']": a column of a schema (separator " ") or a
// field of a struct (": "). Names are quoted and comments re-escaped so the text parses back.
std::string FieldToDdl(const Field& f, std::string_view separator) {
  std::string out = QuoteDdlName(f.name);
  out += separator;
  out += f.type->ToString();
  if (!f.nullable) {
    out += " NOT NULL";
  }
  for (const auto& [key, value] : f.metadata) {
    if (key == "comment") {
      if (Result<std::string> text = DecodeJsonString(value); text.ok()) {
        out += " COMMENT " + QuoteDdlString(*text);
      }
    }
  }
  return out;
}

}  // namespace

#define FERRY_SINGLETON_TYPE(Name)                                   \
  DataTypePtr DataType::Name() {                                     \
    static const DataTypePtr kType = MakeSingleton(TypeId::k##Name); \
    return kType;                                                    \
  }
FERRY_SINGLETON_TYPE(Boolean)
FERRY_SINGLETON_TYPE(Int8)
FERRY_SINGLETON_TYPE(Int16)
FERRY_SINGLETON_TYPE(Int32)
FERRY_SINGLETON_TYPE(Int64)
FERRY_SINGLETON_TYPE(UInt8)
FERRY_SINGLETON_TYPE(UInt16)
FERRY_SINGLETON_TYPE(UInt32)
FERRY_SINGLETON_TYPE(UInt64)
FERRY_SINGLETON_TYPE(Float32)
FERRY_SINGLETON_TYPE(Float64)
FERRY_SINGLETON_TYPE(String)
FERRY_SINGLETON_TYPE(Json)
FERRY_SINGLETON_TYPE(Binary)
FERRY_SINGLETON_TYPE(Date)
#undef FERRY_SINGLETON_TYPE

DataTypePtr DataType::FixedBinary(int32_t width) {
  FERRY_CHECK(width > 0);
  auto t = std::make_shared<DataType>(TypeId::kFixedBinary);
  t->width_ = width;
  return t;
}

DataTypePtr DataType::Timestamp(TimeUnit unit, bool utc_adjusted) {
  auto t = std::make_shared<DataType>(TypeId::kTimestamp);
  t->unit_ = unit;
  t->utc_adjusted_ = utc_adjusted;
  return t;
}

DataTypePtr DataType::Decimal(int32_t precision, int32_t scale) {
  FERRY_CHECK(precision >= 1 && precision <= 38 && scale >= 0 && scale <= precision);
  auto t = std::make_shared<DataType>(TypeId::kDecimal);
  t->precision_ = precision;
  t->scale_ = scale;
  return t;
}

DataTypePtr DataType::Struct(std::vector<Field> fields) {
  auto t = std::make_shared<DataType>(TypeId::kStruct);
  t->fields_ = std::move(fields);
  return t;
}

DataTypePtr DataType::List(DataTypePtr element, bool element_nullable) {
  auto t = std::make_shared<DataType>(TypeId::kList);
  t->fields_.push_back(Field{"element", std::move(element), element_nullable, {}});
  return t;
}

DataTypePtr DataType::Map(DataTypePtr key, DataTypePtr value, bool value_nullable) {
  auto t = std::make_shared<DataType>(TypeId::kMap);
  t->fields_.push_back(Field{"key", std::move(key), false, {}});
  t->fields_.push_back(Field{"value", std::move(value), value_nullable, {}});
  return t;
}

std::optional<size_t> DataType::FieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields_.size(); i++) {
    if (fields_[i].name == name) {
      return i;
    }
  }
  return std::nullopt;
}

bool DataType::Equals(const DataType& other, bool check_metadata) const {
  if (this == &other) {
    return true;
  }
  if (id_ != other.id_ || width_ != other.width_ || precision_ != other.precision_ ||
      scale_ != other.scale_ || fields_.size() != other.fields_.size()) {
    return false;
  }
  if (id_ == TypeId::kTimestamp && (unit_ != other.unit_ || utc_adjusted_ != other.utc_adjusted_)) {
    return false;
  }
  for (size_t i = 0; i < fields_.size(); i++) {
    if (!fields_[i].Equals(other.fields_[i], check_metadata)) {
      return false;
    }
  }
  return true;
}

std::string DataType::ToString() const {
  switch (id_) {
    case TypeId::kBoolean:
      return "BOOLEAN";
    case TypeId::kInt8:
      return "TINYINT";
    case TypeId::kInt16:
      return "SMALLINT";
    case TypeId::kInt32:
      return "INT";
    case TypeId::kInt64:
      return "BIGINT";
    case TypeId::kUInt8:
      return "UINT8";
    case TypeId::kUInt16:
      return "UINT16";
    case TypeId::kUInt32:
      return "UINT32";
    case TypeId::kUInt64:
      return "UINT64";
    case TypeId::kFloat32:
      return "FLOAT";
    case TypeId::kFloat64:
      return "DOUBLE";
    case TypeId::kString:
      return "STRING";
    case TypeId::kJson:
      return "JSON";
    case TypeId::kBinary:
      return "BINARY";
    case TypeId::kFixedBinary:
      return fmt::format("FIXED({})", width_);
    case TypeId::kDate:
      return "DATE";
    case TypeId::kTimestamp: {
      std::string name = utc_adjusted_ ? "TIMESTAMP" : "TIMESTAMP_NTZ";
      if (unit_ == TimeUnit::kMillis) {
        name += "_MILLIS";
      } else if (unit_ == TimeUnit::kNanos) {
        name += "_NANOS";
      }
      return name;
    }
    case TypeId::kDecimal:
      return fmt::format("DECIMAL({},{})", precision_, scale_);
    case TypeId::kStruct: {
      std::string out = "STRUCT<";
      for (size_t i = 0; i < fields_.size(); i++) {
        if (i > 0) {
          out += ", ";
        }
        out += FieldToDdl(fields_[i], ": ");
      }
      return out + ">";
    }
    case TypeId::kList:
      return "ARRAY<" + element().type->ToString() + (element().nullable ? "" : " NOT NULL") + ">";
    case TypeId::kMap:
      return "MAP<" + key().type->ToString() + ", " + value().type->ToString() +
             (value().nullable ? "" : " NOT NULL") + ">";
  }
  return "?";
}

bool Field::Equals(const Field& other, bool check_metadata) const {
  return name == other.name && nullable == other.nullable &&
         type->Equals(*other.type, check_metadata) &&
         (!check_metadata || MetadataEquals(metadata, other.metadata));
}

std::string Field::ToString() const {
  return FieldToDdl(*this, " ");
}

std::optional<int> Schema::FieldIndex(std::string_view name) const {
  for (size_t i = 0; i < fields_.size(); i++) {
    if (fields_[i].name == name) {
      return static_cast<int>(i);
    }
  }
  return std::nullopt;
}

bool Schema::Equals(const Schema& other, bool check_metadata) const {
  if (fields_.size() != other.fields_.size()) {
    return false;
  }
  for (size_t i = 0; i < fields_.size(); i++) {
    if (!fields_[i].Equals(other.fields_[i], check_metadata)) {
      return false;
    }
  }
  return true;
}

std::string Schema::ToString() const {
  std::string out;
  for (size_t i = 0; i < fields_.size(); i++) {
    if (i > 0) {
      out += ", ";
    }
    out += fields_[i].ToString();
  }
  return out;
}

}  // namespace ferry::columnar
