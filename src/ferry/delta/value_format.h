// Text forms of column values as the Delta log spells them: partition values, stats bounds,
// directory names. Dates and timestamps follow the proleptic Gregorian calendar in UTC (civil
// date arithmetic, no time zone database); doubles are printed like Java's Double.toString,
// which is what Spark writes into partition values; decimals as plain numbers.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"

namespace ferry::delta {

// "2021-09-08" for days since 1970-01-01.
std::string FormatDate(int32_t days);
// Days since 1970-01-01 from "YYYY-MM-DD". InvalidArgument otherwise.
Result<int32_t> ParseDate(std::string_view text);

enum class TimestampStyle {
  kSparkCast,       // "2021-09-08 11:11:11" or "2021-09-08 11:11:11.123" (fraction trimmed)
  kIsoMicrosZ,      // "2021-09-08T11:11:11.000000Z" (partition values of new tables)
  kStatsMillis,     // "2021-09-08T11:11:11.123Z" (stats of timestamp; truncated to millis)
  kStatsMillisNtz,  // "2021-09-08T11:11:11.123" (stats of timestamp_ntz)
};
// Formats microseconds since the epoch (UTC).
std::string FormatTimestampMicros(int64_t micros, TimestampStyle style);
// Parses "YYYY-MM-DD[ |T]HH:MM:SS[.f{1,9}][Z|+HH:MM|-HH:MM]" into microseconds since the epoch.
// Without an offset the text is read as UTC. InvalidArgument otherwise.
Result<int64_t> ParseTimestampMicros(std::string_view text);

// Java's Double.toString / Float.toString: "0.0", "1.5", "1.0E10", "1.0E-5", "NaN",
// "Infinity", "-Infinity".
std::string FormatJavaDouble(double value);
std::string FormatJavaFloat(float value);

// "-123.45" for unscaled -12345 at scale 2.
std::string FormatDecimal(columnar::Int128 unscaled, int32_t scale);
// Parses a decimal ("12.5", "-3", "1E+2") into an unscaled value at `scale`; InvalidArgument if
// it has more fractional digits than `scale` or exceeds 38 digits.
Result<columnar::Int128> ParseDecimal(std::string_view text, int32_t scale);

}  // namespace ferry::delta
