// ISO-8601 timestamps in configuration values (start_timestamp, start_time).
#pragma once

#include <cstdint>
#include <string_view>

#include "ferry/base/result.h"

namespace ferry::config {

// "2026-11-30", "2026-11-30T07:10:00Z", "2026-11-30 07:10:00.250+01:00". No zone means UTC.
// Returns milliseconds since the Unix epoch.
Result<int64_t> ParseTimestampMillis(std::string_view text);

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);

}  // namespace ferry::config
