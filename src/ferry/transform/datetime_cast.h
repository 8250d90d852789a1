// Spark's CAST between strings and DATE/TIMESTAMP: the lenient ISO-8601 reading that the JSON
// decoder applies to date and timestamp strings when no custom format is configured, and that
// CAST(... AS TIMESTAMP), to_timestamp(s) and to_date(s) use in expressions; and the canonical
// text of CAST(ts AS STRING).
//
// Accepted (after trimming whitespace), as Spark's stringToTimestamp / stringToDate:
//   yyyy | yyyy-[m]m | yyyy-[m]m-[d]d, then optionally ' ' or 'T' and
//   [h]h:[m]m[:[s]s[.fraction]] (fraction up to 9 digits; beyond microseconds truncated),
//   then optionally a zone: Z, +h, +hh:mm, +hhmm, UTC/GMT/UT prefixed offsets, or a region ID,
//   with or without a space before it. Dates ignore anything after the ' ' or 'T'.
// Years have 4 to 6 digits (an optional leading '-' or '+').
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/transform/time_zone.h"

namespace ferry::transform {

// Microseconds since the epoch; a time without a zone is local to `zone`.
std::optional<int64_t> ParseTimestampText(std::string_view text, const TimeZone& zone);
// Wall-clock microseconds since 1970-01-01T00:00 (TIMESTAMP_NTZ); a zone in the text is ignored.
std::optional<int64_t> ParseLocalTimestampText(std::string_view text);
// Days since 1970-01-01.
std::optional<int32_t> ParseDateText(std::string_view text);

// "2026-11-30 07:10:00" with a fraction when non-zero, trailing zeros dropped (".5", ".123456"),
// as Spark's CAST(timestamp AS STRING) in `zone`.
void FormatTimestampText(int64_t micros, const TimeZone& zone, std::string* out);
// The same for a wall-clock (NTZ) value.
void FormatLocalTimestampText(int64_t local_micros, std::string* out);
// "2026-11-30".
void FormatDateText(int32_t days, std::string* out);

}  // namespace ferry::transform
