#include "ferry/parquet/value_conversion.h"

#include <bit>
#include <cmath>
#include <limits>

#include "ferry/base/endian.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::Int128;
using columnar::PrimitiveColumn;
using columnar::UInt128;

constexpr int64_t kUnixEpochJulianDay = 2440588;
constexpr int64_t kMicrosPerDay = 86400LL * 1000 * 1000;

template <typename From, typename To>
void CastAll(const Column& raw, Column* out) {
  const auto& in = static_cast<const PrimitiveColumn<From>&>(raw).values();
  auto* col = static_cast<PrimitiveColumn<To>*>(out);
  col->Reserve(col->length() + static_cast<int64_t>(in.size()));
  for (From v : in) {
    col->Append(static_cast<To>(v));
  }
}

template <typename Fn>
Status ConvertBinary(const Column& raw, Column* out, Fn&& fn) {
  const auto& in = static_cast<const BinaryColumn&>(raw);
  for (int64_t i = 0; i < in.length(); i++) {
    FERRY_RETURN_IF_ERROR(fn(in.Value(i), out).WithContext("value {}", i));
  }
  return Status::OK();
}

}  // namespace

Result<int64_t> Int96ToMicros(std::string_view bytes) {
  if (bytes.size() != 12) {
    return DataLoss("INT96 value of {} bytes", bytes.size());
  }
  auto nanos = LoadLE<int64_t>(bytes.data());
  auto julian_day = static_cast<int64_t>(LoadLE<int32_t>(bytes.data() + 8));
  // Spark computes both ways in wrapping 64-bit arithmetic (its writer overflows for years
  // past ~292000), so wrapping here gives back exactly the microseconds Spark wrote.
  uint64_t micros = static_cast<uint64_t>(julian_day - kUnixEpochJulianDay) *
                        static_cast<uint64_t>(kMicrosPerDay) +
                    static_cast<uint64_t>(nanos / 1000);
  return static_cast<int64_t>(micros);
}

float HalfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half >> 15) << 31;
  uint32_t exponent = (half >> 10) & 0x1F;
  uint32_t mantissa = half & 0x3FF;
  uint32_t bits = 0;
  if (exponent == 0x1F) {  // infinity or NaN
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // zero
    bits = sign;
  } else {  // subnormal: mantissa * 2^-24
    float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -v : v;
  }
  return std::bit_cast<float>(bits);
}

Result<Int128> DecimalFromBigEndian(std::string_view bytes) {
  if (bytes.empty()) {
    return Int128{0};
  }
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t n = bytes.size();
  bool negative = (p[0] & 0x80) != 0;
  // Leading bytes beyond 16 must be pure sign extension.
  while (n > 16) {
    if (p[0] != (negative ? 0xFF : 0x00)) {
      return DataLoss("decimal value of {} bytes does not fit in 128 bits", bytes.size());
    }
    p++;
    n--;
  }
  if (((p[0] & 0x80) != 0) != negative) {
    return DataLoss("decimal value of {} bytes does not fit in 128 bits", bytes.size());
  }
  UInt128 v = negative ? ~UInt128{0} : UInt128{0};
  for (size_t i = 0; i < n; i++) {
    v = (v << 8) | p[i];
  }
  return static_cast<Int128>(v);
}

Status ConvertValues(ValueConversion conversion, const Column& raw, Column* out) {
  switch (conversion) {
    case ValueConversion::kNone:
      for (int64_t i = 0; i < raw.length(); i++) {
        out->AppendFrom(raw, i);
      }
      return Status::OK();
    case ValueConversion::kInt32ToInt8:
      CastAll<int32_t, int8_t>(raw, out);
      return Status::OK();
    case ValueConversion::kInt32ToInt16:
      CastAll<int32_t, int16_t>(raw, out);
      return Status::OK();
    case ValueConversion::kInt32ToUInt8:
      CastAll<int32_t, uint8_t>(raw, out);
      return Status::OK();
    case ValueConversion::kInt32ToUInt16:
      CastAll<int32_t, uint16_t>(raw, out);
      return Status::OK();
    case ValueConversion::kInt32ToUInt32:
      CastAll<int32_t, uint32_t>(raw, out);
      return Status::OK();
    case ValueConversion::kInt64ToUInt64:
      CastAll<int64_t, uint64_t>(raw, out);
      return Status::OK();
    case ValueConversion::kInt32ToDecimal:
      CastAll<int32_t, Int128>(raw, out);
      return Status::OK();
    case ValueConversion::kInt64ToDecimal:
      CastAll<int64_t, Int128>(raw, out);
      return Status::OK();
    case ValueConversion::kBytesToDecimal:
      return ConvertBinary(raw, out, [](std::string_view v, Column* o) -> Status {
        FERRY_ASSIGN_OR_RETURN(Int128 d, DecimalFromBigEndian(v));
        o->As<PrimitiveColumn<Int128>>()->Append(d);
        return Status::OK();
      });
    case ValueConversion::kInt96ToTimestamp:
      return ConvertBinary(raw, out, [](std::string_view v, Column* o) -> Status {
        FERRY_ASSIGN_OR_RETURN(int64_t micros, Int96ToMicros(v));
        o->As<PrimitiveColumn<int64_t>>()->Append(micros);
        return Status::OK();
      });
    case ValueConversion::kFloat16ToFloat32:
      return ConvertBinary(raw, out, [](std::string_view v, Column* o) -> Status {
        if (v.size() != 2) {
          return DataLoss("FLOAT16 value of {} bytes", v.size());
        }
        o->As<PrimitiveColumn<float>>()->Append(HalfToFloat(LoadLE<uint16_t>(v.data())));
        return Status::OK();
      });
  }
  return Internal("unknown value conversion {}", static_cast<int>(conversion));
}

}  // namespace ferry::parquet
