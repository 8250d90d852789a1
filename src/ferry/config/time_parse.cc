#include "ferry/config/time_parse.h"

#include <cctype>

namespace ferry::config {

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

namespace {

// Reads exactly `n` digits at *pos.
bool Digits(std::string_view s, size_t* pos, size_t n, int* out) {
  if (*pos + n > s.size()) {
    return false;
  }
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[*pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) {
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
    (*pos)++;
    return true;
  }
  return false;
}

}  // namespace

Result<int64_t> ParseTimestampMillis(std::string_view text) {
  auto bad = [&]() {
    return InvalidArgument("\"{}\" is not an ISO-8601 timestamp (e.g. 2026-11-30T07:10:00Z)", text);
  };
  size_t pos = 0;
  int year, month, day, hour = 0, minute = 0, second = 0, millis = 0;
  if (!Digits(text, &pos, 4, &year) || !Expect(text, &pos, '-') || !Digits(text, &pos, 2, &month) ||
      !Expect(text, &pos, '-') || !Digits(text, &pos, 2, &day)) {
    return bad();
  }
  static const int kDaysInMonth[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > kDaysInMonth[month - 1]) {
    return bad();
  }
  int64_t offset_minutes = 0;
  if (pos < text.size()) {
    if (text[pos] != 'T' && text[pos] != ' ') {
      return bad();
    }
    pos++;
    if (!Digits(text, &pos, 2, &hour) || !Expect(text, &pos, ':') ||
        !Digits(text, &pos, 2, &minute)) {
      return bad();
    }
    if (Expect(text, &pos, ':') && !Digits(text, &pos, 2, &second)) {
      return bad();
    }
    if (Expect(text, &pos, '.')) {
      int scale = 100;
      size_t start = pos;
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
        millis += (text[pos] - '0') * scale;
        scale /= 10;
        pos++;
      }
      if (pos == start) {
        return bad();
      }
    }
    if (hour > 23 || minute > 59 || second > 60) {
      return bad();
    }
    if (Expect(text, &pos, 'Z')) {
      // UTC
    } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      int sign = text[pos] == '-' ? -1 : 1;
      pos++;
      int oh, om = 0;
      if (!Digits(text, &pos, 2, &oh)) {
        return bad();
      }
      Expect(text, &pos, ':');
      if (pos < text.size() && !Digits(text, &pos, 2, &om)) {
        return bad();
      }
      offset_minutes = sign * (oh * 60 + om);
    }
  }
  if (pos != text.size()) {
    return bad();
  }
  int64_t days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
  return seconds * 1000 + millis;
}

}  // namespace ferry::config
