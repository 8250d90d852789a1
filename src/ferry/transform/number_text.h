// Exact conversion of decimal number text (a JSON number token, or a numeric string being
// coerced) to integers and scaled decimals, without passing through a double: "0.1" into
// DECIMAL(3,2) is exactly 10, "12345678901234567890.5" into DECIMAL(38,1) is exact, and
// 9223372036854775808 into BIGINT is an overflow rather than a rounded value.
//
// Grammar: JSON's number grammar; with `lenient` (strings) also a leading '+', leading zeros,
// ".5" and "5.", and surrounding ASCII whitespace.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "ferry/columnar/types.h"

namespace ferry::transform {

enum class NumberTextError : uint8_t {
  kOk,
  kSyntax,    // not a number
  kOverflow,  // out of range for the target
  kFraction,  // an integer target got a non-zero fraction
};

// An integer in [min, max]; fractions that are exactly zero ("3.0", "3e2") are accepted.
NumberTextError ParseIntegerText(std::string_view text, bool lenient, columnar::Int128 min,
                                 columnar::Int128 max, columnar::Int128* out);

// The unscaled value of `text` at `scale`, rounded half up (as Spark rounds decimals) when the
// text has more fraction digits; kOverflow when it needs more than `precision` digits.
NumberTextError ParseDecimalText(std::string_view text, bool lenient, int32_t precision,
                                 int32_t scale, columnar::Int128* out);

// A double from text (lenient grammar plus NaN, Infinity, +Infinity, -Infinity).
NumberTextError ParseDoubleText(std::string_view text, double* out);

}  // namespace ferry::transform
