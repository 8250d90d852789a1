// CAST between the atomic types, with Spark's non-ANSI rules: a value that does not convert
// (text that is not a number, an overflowing decimal) becomes NULL; integral narrowing wraps and
// floating point to integral saturates, as Java's casts do.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ferry/transform/civil_time.h"
#include "ferry/transform/datetime_cast.h"
#include "ferry/transform/decimal_math.h"
#include "ferry/transform/expr_internal.h"
#include "ferry/transform/number_text.h"

namespace ferry::transform {

namespace {

using columnar::BinaryColumn;
using columnar::Column;

// A numeric, boolean or timestamp value read generically.
struct Num {
  enum Kind { kInt, kDouble, kDecimal } kind = kInt;
  Int128 i = 0;  // kInt; kDecimal: unscaled
  double d = 0;
  int scale = 0;
  bool floor = false;  // a timestamp: to integral by floor division, as Spark
};

Num ReadNum(const Vec& v, const DataTypePtr& t, int64_t row) {
  Num n;
  switch (t->id()) {
    case TypeId::kFloat32:
      n.kind = Num::kDouble;
      n.d = v.Get<float>(row);
      return n;
    case TypeId::kFloat64:
      n.kind = Num::kDouble;
      n.d = v.Get<double>(row);
      return n;
    case TypeId::kDecimal:
      n.kind = Num::kDecimal;
      n.i = v.Get<Int128>(row);
      n.scale = t->scale();
      return n;
    case TypeId::kTimestamp:  // seconds, with the fraction kept as a decimal
      n.kind = Num::kDecimal;
      n.i = v.Get<int64_t>(row);
      n.scale = 6;
      n.floor = true;
      return n;
    default:
      columnar::VisitPrimitive(t->id(), [&]<typename C>(C*) {
        using T = typename C::ValueType;
        if constexpr (std::is_integral_v<T>) {
          n.i = static_cast<Int128>(v.Get<T>(row));
        }
      });
      return n;
  }
}

double AsDouble(const Num& n) {
  if (n.kind == Num::kDouble) {
    return n.d;
  }
  double v = static_cast<double>(n.i);
  return n.kind == Num::kDecimal ? v / std::pow(10.0, n.scale) : v;
}

// Java's (long) cast of a double: NaN is 0, out of range saturates.
int64_t SaturatingLong(double d) {
  if (std::isnan(d)) {
    return 0;
  }
  if (d >= 9223372036854775807.0) {
    return std::numeric_limits<int64_t>::max();
  }
  if (d <= -9223372036854775808.0) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(d);
}

// The integral value of a number for a cast to an integral type of `bits`, or nullopt.
std::optional<Int128> IntegralOf(const Num& n, TypeId to) {
  if (n.kind == Num::kDouble) {
    if (to == TypeId::kInt64 || to == TypeId::kUInt64) {
      return SaturatingLong(n.d);
    }
    int64_t l = SaturatingLong(n.d);  // Java: (int) saturates, then (short)/(byte) wrap
    return std::clamp<int64_t>(l, INT32_MIN, INT32_MAX);
  }
  if (n.kind == Num::kDecimal) {
    Int128 p = static_cast<Int128>(Pow10(n.scale));
    Int128 q = n.i / p;  // truncation toward zero
    if (n.floor && n.i % p != 0 && n.i < 0) {
      q -= 1;
    }
    if (q < std::numeric_limits<int64_t>::min() || q > std::numeric_limits<int64_t>::max()) {
      return std::nullopt;
    }
    return q;
  }
  return n.i;
}

template <typename T>
void AppendWrapped(Column* out, Int128 v) {
  // Narrowing keeps the low bits, as Java's integral casts do.
  out->As<columnar::PrimitiveColumn<T>>()->Append(static_cast<T>(static_cast<uint64_t>(v)));
}

void AppendIntegral(Column* out, TypeId to, Int128 v) {
  columnar::VisitPrimitive(to, [&]<typename C>(C*) {
    using T = typename C::ValueType;
    if constexpr (std::is_integral_v<T>) {
      AppendWrapped<T>(out, v);
    }
  });
}

// Text of an atomic value, as CAST(x AS STRING).
void AppendText(const Vec& in, const DataTypePtr& from, int64_t row, const EvalContext& ctx,
                BinaryColumn* out) {
  std::string* data = out->mutable_data();
  switch (from->id()) {
    case TypeId::kBoolean:
      data->append(in.Get<uint8_t>(row) ? "true" : "false");
      break;
    case TypeId::kFloat32:
      data->append(JavaFloatText(in.Get<float>(row)));
      break;
    case TypeId::kFloat64:
      data->append(JavaDoubleText(in.Get<double>(row)));
      break;
    case TypeId::kDecimal:
      data->append(DecimalToText(in.Get<Int128>(row), from->scale()));
      break;
    case TypeId::kDate:
      FormatDateText(in.Get<int32_t>(row), data);
      break;
    case TypeId::kTimestamp:
      if (from->utc_adjusted()) {
        FormatTimestampText(in.Get<int64_t>(row), *ctx.zone, data);
      } else {
        FormatLocalTimestampText(in.Get<int64_t>(row), data);
      }
      break;
    case TypeId::kString:
    case TypeId::kJson:
    case TypeId::kBinary:
    case TypeId::kFixedBinary:
      data->append(in.Str(row));
      break;
    default:
      columnar::VisitPrimitive(from->id(), [&]<typename C>(C*) {
        using T = typename C::ValueType;
        if constexpr (std::is_integral_v<T>) {
          fmt::format_to(std::back_inserter(*data), "{}", in.Get<T>(row));
        }
      });
  }
  out->CommitValue();
}

bool ParseBool(std::string_view s, bool* out) {
  while (!s.empty() && s.front() == ' ') {
    s.remove_prefix(1);
  }
  while (!s.empty() && s.back() == ' ') {
    s.remove_suffix(1);
  }
  std::string lower;
  for (char c : s) {
    lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  }
  if (lower == "t" || lower == "true" || lower == "y" || lower == "yes" || lower == "1") {
    *out = true;
    return true;
  }
  if (lower == "f" || lower == "false" || lower == "n" || lower == "no" || lower == "0") {
    *out = false;
    return true;
  }
  return false;
}

// Spark's UTF8String.toLong: trimmed, optional sign, digits, and a fraction that is dropped.
std::optional<Int128> ParseIntegralText(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && space(s.back())) {
    s.remove_suffix(1);
  }
  size_t point = s.find('.');
  std::string_view whole = s.substr(0, point);
  if (point != std::string_view::npos) {
    for (char c : s.substr(point + 1)) {
      if (c < '0' || c > '9') {
        return std::nullopt;
      }
    }
    if (whole == "" || whole == "-" || whole == "+") {
      whole = point + 1 < s.size() ? std::string_view("0") : std::string_view();
    }
  }
  Int128 v = 0;
  if (ParseIntegerText(whole, true, std::numeric_limits<int64_t>::min(),
                       std::numeric_limits<uint64_t>::max(), &v) != NumberTextError::kOk) {
    return std::nullopt;
  }
  return v;
}

bool InRange(TypeId to, Int128 v) {
  std::pair<Int128, Int128> r{0, 0};
  columnar::VisitPrimitive(to, [&]<typename C>(C*) {
    using T = typename C::ValueType;
    if constexpr (std::is_integral_v<T>) {
      r = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max()};
    }
  });
  return v >= r.first && v <= r.second;
}

// One value of `to` from a string; false when the text does not convert.
bool CastFromString(std::string_view s, const DataTypePtr& to, const EvalContext& ctx,
                    Column* out) {
  switch (to->id()) {
    case TypeId::kBoolean: {
      bool b = false;
      if (!ParseBool(s, &b)) {
        return false;
      }
      out->As<columnar::BooleanColumn>()->Append(b ? 1 : 0);
      return true;
    }
    case TypeId::kFloat32:
    case TypeId::kFloat64: {
      double d = 0;
      NumberTextError e = ParseDoubleText(s, &d);
      if (e == NumberTextError::kOverflow) {
        d = s.find('-') != std::string_view::npos ? -HUGE_VAL : HUGE_VAL;
      } else if (e != NumberTextError::kOk) {
        return false;
      }
      if (to->id() == TypeId::kFloat32) {
        out->As<columnar::FloatColumn>()->Append(static_cast<float>(d));
      } else {
        out->As<columnar::DoubleColumn>()->Append(d);
      }
      return true;
    }
    case TypeId::kDecimal: {
      Int128 v = 0;
      if (ParseDecimalText(s, true, to->precision(), to->scale(), &v) != NumberTextError::kOk) {
        return false;
      }
      out->As<columnar::DecimalColumn>()->Append(v);
      return true;
    }
    case TypeId::kDate: {
      std::optional<int32_t> d = ParseDateText(s);
      if (d) {
        out->As<columnar::DateColumn>()->Append(*d);
      }
      return d.has_value();
    }
    case TypeId::kTimestamp: {
      std::optional<int64_t> t =
          to->utc_adjusted() ? ParseTimestampText(s, *ctx.zone) : ParseLocalTimestampText(s);
      if (t) {
        out->As<columnar::TimestampColumn>()->Append(*t);
      }
      return t.has_value();
    }
    case TypeId::kString:
    case TypeId::kJson:
    case TypeId::kBinary:
      out->As<BinaryColumn>()->Append(s);
      return true;
    default: {
      std::optional<Int128> v = ParseIntegralText(s);
      if (!v || !InRange(to->id(), *v)) {
        return false;
      }
      AppendIntegral(out, to->id(), *v);
      return true;
    }
  }
}

// One value of numeric/boolean/timestamp `to` from a number; false on overflow.
bool CastFromNumber(const Num& n, const DataTypePtr& to, Column* out) {
  switch (to->id()) {
    case TypeId::kBoolean:
      out->As<columnar::BooleanColumn>()->Append(n.kind == Num::kDouble ? (n.d != 0 ? 1 : 0)
                                                                        : (n.i != 0 ? 1 : 0));
      return true;
    case TypeId::kFloat32:
      out->As<columnar::FloatColumn>()->Append(static_cast<float>(AsDouble(n)));
      return true;
    case TypeId::kFloat64:
      out->As<columnar::DoubleColumn>()->Append(AsDouble(n));
      return true;
    case TypeId::kDecimal: {
      std::optional<Int128> v;
      if (n.kind == Num::kDouble) {
        Int128 parsed = 0;
        if (std::isfinite(n.d) && ParseDecimalText(JavaDoubleText(n.d), true, to->precision(),
                                                   to->scale(), &parsed) == NumberTextError::kOk) {
          v = parsed;
        }
      } else {
        v = Rescale(n.i, n.kind == Num::kDecimal ? n.scale : 0, to->scale(), to->precision());
      }
      if (v) {
        out->As<columnar::DecimalColumn>()->Append(*v);
      }
      return v.has_value();
    }
    case TypeId::kTimestamp: {  // seconds since the epoch
      std::optional<Int128> micros;
      if (n.kind == Num::kDouble) {
        if (std::isfinite(n.d)) {
          micros = SaturatingLong(n.d * 1e6);
        }
      } else {
        micros = MulDivRound(n.i, kMicrosPerSecond,
                             static_cast<Int128>(Pow10(n.kind == Num::kDecimal ? n.scale : 0)));
      }
      if (!micros || *micros < INT64_MIN || *micros > INT64_MAX) {
        return false;
      }
      out->As<columnar::TimestampColumn>()->Append(static_cast<int64_t>(*micros));
      return true;
    }
    default: {
      std::optional<Int128> v = IntegralOf(n, to->id());
      if (!v) {
        return false;
      }
      AppendIntegral(out, to->id(), *v);
      return true;
    }
  }
}

// DATE and TIMESTAMP(_NTZ) among themselves, in the session zone.
int64_t CastDatetime(int64_t v, const DataTypePtr& from, const DataTypePtr& to,
                     const EvalContext& ctx) {
  int64_t micros = v;  // instant (TIMESTAMP) or wall clock (TIMESTAMP_NTZ) microseconds
  bool utc = from->id() == TypeId::kTimestamp && from->utc_adjusted();
  if (from->id() == TypeId::kDate) {
    micros = v * kMicrosPerDay;  // wall clock midnight
  }
  int64_t local = micros;
  if (utc) {
    local =
        micros + int64_t{ctx.zone->OffsetAt(FloorDiv(micros, kMicrosPerSecond))} * kMicrosPerSecond;
  }
  if (to->id() == TypeId::kDate) {
    return FloorDiv(local, kMicrosPerDay);
  }
  if (!to->utc_adjusted()) {
    return local;
  }
  if (utc) {
    return micros;
  }
  return ctx.zone->LocalToUtc(FloorDiv(local, kMicrosPerSecond)) * kMicrosPerSecond +
         FloorMod(local, kMicrosPerSecond);
}

int64_t TimestampMicros(const Vec& in, const DataTypePtr& t, int64_t row) {
  int64_t v = in.Get<int64_t>(row);
  if (t->unit() == columnar::TimeUnit::kMillis) {
    return v * kMicrosPerMilli;
  }
  return t->unit() == columnar::TimeUnit::kNanos ? FloorDiv(v, 1000) : v;
}

}  // namespace

Vec CastVec(const Vec& in, const DataTypePtr& from, const DataTypePtr& to, const EvalContext& ctx) {
  if (!from) {
    return NullVec(to, ctx.rows);
  }
  if (from->Equals(*to)) {
    Vec same;
    same.col = in.col;
    same.constant = in.constant;
    return same;
  }
  int64_t rows = in.constant ? 1 : ctx.rows;
  Vec out = NewVec(to, rows);
  Column* col = out.owned.get();
  bool to_text = IsStringLike(to);
  bool from_text = IsStringLike(from) || from->id() == TypeId::kBinary;
  bool from_datetime = from->id() == TypeId::kDate || from->id() == TypeId::kTimestamp;
  bool to_datetime_only =
      to->id() == TypeId::kDate || (to->id() == TypeId::kTimestamp && from_datetime);
  // The source as a microsecond type, so that TIMESTAMP_MILLIS and the like convert alike.
  DataTypePtr from_micros =
      from->id() == TypeId::kTimestamp && from->unit() != columnar::TimeUnit::kMicros
          ? DataType::Timestamp(columnar::TimeUnit::kMicros, from->utc_adjusted())
          : from;
  for (int64_t i = 0; i < rows; i++) {
    if (in.IsNull(i)) {
      col->AppendNull();
      continue;
    }
    bool ok = true;
    if (to_text || to->id() == TypeId::kBinary) {
      AppendText(in, from, i, ctx, col->As<BinaryColumn>());
    } else if (from_text) {
      ok = CastFromString(in.Str(i), to, ctx, col);
    } else if (from_datetime && to_datetime_only) {
      int64_t v = from->id() == TypeId::kDate ? in.Get<int32_t>(i) : TimestampMicros(in, from, i);
      int64_t r = CastDatetime(v, from_micros, to, ctx);
      if (to->id() == TypeId::kDate) {
        col->As<columnar::DateColumn>()->Append(static_cast<int32_t>(r));
      } else if (to->unit() == columnar::TimeUnit::kMillis) {
        col->As<columnar::TimestampColumn>()->Append(FloorDiv(r, kMicrosPerMilli));
      } else {
        col->As<columnar::TimestampColumn>()->Append(
            to->unit() == columnar::TimeUnit::kNanos ? r * 1000 : r);
      }
    } else {
      ok = CastFromNumber(ReadNum(in, from, i), to, col);
    }
    if (!ok) {
      col->AppendNull();
    }
  }
  out.constant = in.constant;
  return out;
}

}  // namespace ferry::transform
