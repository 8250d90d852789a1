// Proleptic Gregorian calendar arithmetic (the calendar Spark 3 and java.time use): days since
// 1970-01-01 to and from year/month/day, floor division, and the time unit constants shared by
// the decoders and the expression functions. Pure functions, safe from any thread.
#pragma once

#include <cstdint>
#include <optional>

namespace ferry::transform {

inline constexpr int64_t kMicrosPerSecond = 1'000'000;
inline constexpr int64_t kMicrosPerMilli = 1'000;
inline constexpr int64_t kSecondsPerDay = 86'400;
inline constexpr int64_t kMicrosPerDay = kSecondsPerDay * kMicrosPerSecond;

// seconds * 1e6 + sub, or nullopt when that leaves int64 (a year beyond about +-292,000, which
// text like "400046-01-01" can ask for).
inline std::optional<int64_t> MicrosFromSeconds(int64_t seconds, int64_t sub) {
  int64_t micros = 0;
  if (__builtin_mul_overflow(seconds, kMicrosPerSecond, &micros) ||
      __builtin_add_overflow(micros, sub, &micros)) {
    return std::nullopt;
  }
  return micros;
}

// Floor division and its non-negative remainder (C++ `/` truncates toward zero).
constexpr int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
constexpr int64_t FloorMod(int64_t a, int64_t b) {
  return a - FloorDiv(a, b) * b;
}

constexpr bool IsLeapYear(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

// At namespace scope: a table local to DaysInMonth was rebuilt on the stack at each call.
inline constexpr int kDaysInMonth[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

constexpr int DaysInMonth(int64_t y, int m) {
  return m == 2 && IsLeapYear(y) ? 29 : kDaysInMonth[m - 1];
}

struct CivilDate {
  int64_t year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
};

// Days since 1970-01-01 of a valid date (eras of 400 years, March-based years).
constexpr int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  int64_t era = FloorDiv(y, 400);
  int64_t yoe = y - era * 400;                                   // [0, 399]
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;  // [0, 365]
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           // [0, 146096]
  return era * 146097 + doe - 719468;
}

constexpr CivilDate CivilFromDays(int64_t days) {
  days += 719468;
  int64_t era = FloorDiv(days, 146097);
  int64_t doe = days - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return CivilDate{yoe + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

// 0 = Monday .. 6 = Sunday (ISO order, as java.time's DayOfWeek minus one).
constexpr int DayOfWeek(int64_t days) {
  return static_cast<int>(FloorMod(days + 3, 7));
}

// 1-based day of the year.
constexpr int DayOfYear(const CivilDate& d) {
  return static_cast<int>(DaysFromCivil(d.year, d.month, d.day) - DaysFromCivil(d.year, 1, 1) + 1);
}

static_assert(DaysFromCivil(1970, 1, 1) == 0);
static_assert(DaysFromCivil(2000, 3, 1) == 11017);
static_assert(CivilFromDays(-1).year == 1969 && CivilFromDays(-1).day == 31);
static_assert(DayOfWeek(0) == 3);  // 1970-01-01 was a Thursday

}  // namespace ferry::transform
