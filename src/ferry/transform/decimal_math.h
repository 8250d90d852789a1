// Decimal arithmetic on 128-bit unscaled values for the expression engine: powers of ten,
// rescaling with HALF_UP rounding (Spark's rounding mode), and a*b/c with a 256-bit
// intermediate so that decimal multiplication and division stay exact before rounding.
// Overflow is reported, never wrapped. Also the text forms of decimals and of doubles the way
// Java prints them (Spark's CAST to STRING).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ferry/columnar/types.h"

namespace ferry::transform {

using columnar::Int128;
using columnar::UInt128;

// 10^n for 0 <= n <= 38.
UInt128 Pow10(int n);
// True when |v| < 10^precision.
bool FitsPrecision(Int128 v, int precision);
// v * 10^(to_scale - from_scale), rounded half up when scale shrinks; nullopt on overflow of
// `precision` digits.
std::optional<Int128> Rescale(Int128 v, int from_scale, int to_scale, int precision);
// A two's-complement big-endian integer (Avro's decimal bytes, Connect's Decimal `value`): 0 for
// no bytes; leading bytes beyond 16 may only extend the sign; nullopt when it is wider.
std::optional<Int128> FromBigEndianBytes(std::string_view bytes);
// round_half_up(a * b / c); nullopt when c is 0 or the result needs more than 38 digits.
std::optional<Int128> MulDivRound(Int128 a, Int128 b, Int128 c);

// "-12.50" for unscaled -1250 at scale 2.
std::string DecimalToText(Int128 v, int scale);
// Java's Double.toString / Float.toString: "1.0", "1.5E10", "1.0E-4", "NaN", "Infinity".
std::string JavaDoubleText(double d);
std::string JavaFloatText(float f);

}  // namespace ferry::transform
