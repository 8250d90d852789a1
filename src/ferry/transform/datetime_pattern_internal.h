// Internal to datetime_pattern*.cc: the names java.time prints in Locale.US, and character
// classes shared by the compiler, the parser and the formatter of Spark datetime patterns.
#pragma once

#include <string_view>

namespace ferry::transform::datetime_internal {

inline constexpr std::string_view kMonthsShort[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
inline constexpr std::string_view kMonthsLong[] = {"January",   "February", "March",    "April",
                                                   "May",       "June",     "July",     "August",
                                                   "September", "October",  "November", "December"};
inline constexpr std::string_view kDaysShort[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
inline constexpr std::string_view kDaysLong[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                 "Friday", "Saturday", "Sunday"};

inline bool IsLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

inline bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

inline char Lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

}  // namespace ferry::transform::datetime_internal
