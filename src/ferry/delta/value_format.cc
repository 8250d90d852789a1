#include "ferry/delta/value_format.h"

#include <charconv>
#include <cmath>

namespace ferry::delta {
namespace {

// Howard Hinnant's civil-from-days / days-from-civil (public domain algorithms).
void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2 ? 1 : 0);
}

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool IsLeap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned DaysInMonth(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

std::string FormatYmd(int64_t days) {
  int64_t y;
  unsigned m;
  unsigned d;
  CivilFromDays(days, &y, &m, &d);
  return y >= 0 ? fmt::format("{:04}-{:02}-{:02}", y, m, d)
                : fmt::format("-{:04}-{:02}-{:02}", -y, m, d);
}

// Reads exactly `n` digits at *pos.
bool ReadDigits(std::string_view s, size_t* pos, size_t n, int64_t* out) {
  if (*pos + n > s.size()) {
    return false;
  }
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[*pos + i];
    if (c < '0' || c > '9') {
      return false;
    }
    v = v * 10 + (c - '0');
  }
  *pos += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* pos, char c) {
  if (*pos < s.size() && s[*pos] == c) {
    ++*pos;
    return true;
  }
  return false;
}

// Parses "YYYY-MM-DD" at *pos (4-digit years) into days.
bool ReadDate(std::string_view s, size_t* pos, int64_t* days) {
  int64_t y;
  int64_t m;
  int64_t d;
  if (!ReadDigits(s, pos, 4, &y) || !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, &m) ||
      !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, &d)) {
    return false;
  }
  if (m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, static_cast<unsigned>(m))) {
    return false;
  }
  *days = DaysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

// Java's Double.toString layout from shortest round-trip digits and a decimal exponent.
std::string JavaLayout(bool negative, const std::string& digits, int exponent) {
  // value = 0.d1d2d3... * 10^(exponent + 1), i.e. d1.d2d3 * 10^exponent
  std::string out = negative ? "-" : "";
  if (exponent >= -3 && exponent < 7) {
    if (exponent >= 0) {
      size_t int_len = static_cast<size_t>(exponent) + 1;
      std::string padded = digits;
      if (padded.size() < int_len) {
        padded.append(int_len - padded.size(), '0');
      }
      out += padded.substr(0, int_len);
      out += '.';
      out += padded.size() > int_len ? padded.substr(int_len) : "0";
    } else {
      out += "0.";
      out.append(static_cast<size_t>(-exponent - 1), '0');
      out += digits;
    }
    return out;
  }
  out += digits[0];
  out += '.';
  out += digits.size() > 1 ? digits.substr(1) : "0";
  out += 'E';
  out += std::to_string(exponent);
  return out;
}

template <typename T>
std::string FormatJava(T value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "Infinity" : "-Infinity";
  }
  if (value == 0) {
    return std::signbit(value) ? "-0.0" : "0.0";
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string_view text(buf, static_cast<size_t>(end - buf));  // "-1.2345e+06"
  bool negative = text.front() == '-';
  if (negative) {
    text.remove_prefix(1);
  }
  size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e)) {
    if (c != '.') {
      digits += c;
    }
  }
  while (digits.size() > 1 && digits.back() == '0') {
    digits.pop_back();
  }
  int exponent = 0;
  std::string_view exp_text = text.substr(e + 1);
  if (!exp_text.empty() && exp_text.front() == '+') {
    exp_text.remove_prefix(1);
  }
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  return JavaLayout(negative, digits, exponent);
}

}  // namespace

std::string FormatDate(int32_t days) {
  return FormatYmd(days);
}

Result<int32_t> ParseDate(std::string_view text) {
  size_t pos = 0;
  int64_t days;
  if (!ReadDate(text, &pos, &days) || pos != text.size()) {
    return InvalidArgument("'{}' is not a date (YYYY-MM-DD)", text);
  }
  return static_cast<int32_t>(days);
}

std::string FormatTimestampMicros(int64_t micros, TimestampStyle style) {
  constexpr int64_t kMicrosPerDay = 86400LL * 1000000;
  int64_t days = micros / kMicrosPerDay;
  int64_t rest = micros % kMicrosPerDay;
  if (rest < 0) {
    rest += kMicrosPerDay;
    days -= 1;
  }
  int64_t seconds = rest / 1000000;
  int64_t fraction = rest % 1000000;
  std::string out = fmt::format("{}{}{:02}:{:02}:{:02}", FormatYmd(days),
                                style == TimestampStyle::kSparkCast ? ' ' : 'T', seconds / 3600,
                                seconds / 60 % 60, seconds % 60);
  switch (style) {
    case TimestampStyle::kSparkCast:
      if (fraction != 0) {
        std::string digits = fmt::format("{:06}", fraction);
        while (digits.back() == '0') {
          digits.pop_back();
        }
        out += "." + digits;
      }
      break;
    case TimestampStyle::kIsoMicrosZ:
      out += fmt::format(".{:06}Z", fraction);
      break;
    case TimestampStyle::kStatsMillis:
      out += fmt::format(".{:03}Z", fraction / 1000);
      break;
    case TimestampStyle::kStatsMillisNtz:
      out += fmt::format(".{:03}", fraction / 1000);
      break;
  }
  return out;
}

Result<int64_t> ParseTimestampMicros(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("'{}' is not a timestamp (YYYY-MM-DD HH:MM:SS[.ffffff][Z])", text);
  };
  size_t pos = 0;
  int64_t days;
  int64_t h = 0;
  int64_t mi = 0;
  int64_t s = 0;
  if (!ReadDate(text, &pos, &days)) {
    return bad();
  }
  if (pos < text.size()) {
    if (text[pos] != ' ' && text[pos] != 'T') {
      return bad();
    }
    ++pos;
    if (!ReadDigits(text, &pos, 2, &h) || !Expect(text, &pos, ':') ||
        !ReadDigits(text, &pos, 2, &mi) || !Expect(text, &pos, ':') ||
        !ReadDigits(text, &pos, 2, &s) || h > 23 || mi > 59 || s > 59) {
      return bad();
    }
  }
  int64_t micros = 0;
  if (Expect(text, &pos, '.')) {
    int64_t scale = 100000;
    size_t digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (digits < 6) {
        micros += (text[pos] - '0') * scale;
        scale /= 10;
      }
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) {
      return bad();
    }
  }
  int64_t offset_seconds = 0;
  if (Expect(text, &pos, 'Z')) {
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int64_t sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int64_t oh;
    int64_t om;
    if (!ReadDigits(text, &pos, 2, &oh) || !Expect(text, &pos, ':') ||
        !ReadDigits(text, &pos, 2, &om)) {
      return bad();
    }
    offset_seconds = sign * (oh * 3600 + om * 60);
  }
  if (pos != text.size()) {
    return bad();
  }
  int64_t seconds = days * 86400 + h * 3600 + mi * 60 + s - offset_seconds;
  return seconds * 1000000 + micros;
}

std::string FormatJavaDouble(double value) {
  return FormatJava(value);
}
std::string FormatJavaFloat(float value) {
  return FormatJava(value);
}

std::string FormatDecimal(columnar::Int128 unscaled, int32_t scale) {
  bool negative = unscaled < 0;
  columnar::UInt128 magnitude = negative ? static_cast<columnar::UInt128>(-(unscaled + 1)) + 1
                                         : static_cast<columnar::UInt128>(unscaled);
  // Digits least significant first, then reversed: avoids std::string::insert, which trips a
  // GCC 12 -Wrestrict false positive.
  std::string reversed;
  do {
    reversed.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  auto s = static_cast<size_t>(scale);
  while (reversed.size() <= s && s > 0) {
    reversed.push_back('0');
  }
  std::string digits;
  digits.reserve(reversed.size() + 1);
  for (size_t i = reversed.size(); i-- > 0;) {
    digits.push_back(reversed[i]);
    if (s > 0 && i == s) {
      digits.push_back('.');
    }
  }
  return negative ? "-" + digits : digits;
}

Result<columnar::Int128> ParseDecimal(std::string_view text, int32_t scale) {
  auto bad = [&] { return InvalidArgument("'{}' is not a decimal of scale {}", text, scale); };
  size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) {
    negative = text[pos] == '-';
    ++pos;
  }
  std::string digits;
  int64_t frac_digits = 0;
  bool seen_point = false;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c >= '0' && c <= '9') {
      digits += c;
      frac_digits += seen_point ? 1 : 0;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  int64_t exponent = 0;
  if (pos < text.size() && (text[pos] == 'E' || text[pos] == 'e')) {
    ++pos;
    std::string_view exp = text.substr(pos);
    if (!exp.empty() && exp.front() == '+') {
      exp.remove_prefix(1);
    }
    auto [ptr, ec] = std::from_chars(exp.data(), exp.data() + exp.size(), exponent);
    if (ec != std::errc() || ptr != exp.data() + exp.size() || exponent < -100 || exponent > 100) {
      return bad();
    }
    pos = text.size();
  }
  if (digits.empty() || pos != text.size()) {
    return bad();
  }
  // value = digits * 10^(exponent - frac_digits); we want digits * 10^(exponent - frac + scale).
  int64_t shift = exponent - frac_digits + scale;
  while (shift < 0) {
    if (digits.empty() || digits.back() != '0') {
      return bad();
    }
    digits.pop_back();
    ++shift;
  }
  digits.append(static_cast<size_t>(shift), '0');
  size_t first = digits.find_first_not_of('0');
  digits = first == std::string::npos ? "0" : digits.substr(first);
  if (digits.size() > 38) {
    return bad();
  }
  columnar::Int128 v = 0;
  for (char c : digits) {
    v = v * 10 + (c - '0');
  }
  return negative ? -v : v;
}

}  // namespace ferry::delta
