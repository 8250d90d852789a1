#include "ferry/transform/datetime_cast.h"

#include <fmt/format.h>

#include <cstdint>

#include "ferry/base/endian.h"
#include "ferry/transform/civil_time.h"

namespace ferry::transform {

namespace {

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && IsSpace(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

struct Scanned {
  int64_t year = 0;
  int month = 1, day = 1, hour = 0, minute = 0, second = 0;
  int64_t micros = 0;
  std::string_view zone;  // empty: none
};

// Reads 1..max digits at *pos.
bool Digits(std::string_view s, size_t* pos, size_t min, size_t max, int64_t* out) {
  size_t n = 0;
  int64_t v = 0;
  while (*pos + n < s.size() && IsDigit(s[*pos + n]) && n < max) {
    v = v * 10 + (s[*pos + n] - '0');
    n++;
  }
  if (n < min || (*pos + n < s.size() && IsDigit(s[*pos + n]))) {
    return false;
  }
  *pos += n;
  *out = v;
  return true;
}

int TwoDigits(const char* p) {
  return (p[0] - '0') * 10 + (p[1] - '0');
}

// Eight characters at a time, for the fixed-width ISO forms: w holds s[i..i+8) little-endian,
// byte k of w being s[i+k]; a mask selects bytes with 0xFF.
// True when every selected byte of w is an ASCII digit ('0' is 0x30, '9' 0x39: the high nibble
// is 3, and adding 6 leaves it 3; no byte carries into the next when the first test holds).
bool DigitBytes(uint64_t w, uint64_t mask) {
  const uint64_t high = 0xF0F0F0F0F0F0F0F0ULL & mask;
  const uint64_t three = 0x3030303030303030ULL & mask;
  return (w & high) == three && ((w + (0x0606060606060606ULL & mask)) & high) == three;
}
// The digit in byte k of w. REQUIRES: DigitBytes for that byte.
int DigitAt(uint64_t w, int k) {
  return static_cast<int>((w >> (8 * k)) & 0xF);
}
// The two-digit number in bytes k and k+1 of w. REQUIRES: DigitBytes for both.
int TwoDigitsAt(uint64_t w, int k) {
  return DigitAt(w, k) * 10 + DigitAt(w, k + 1);
}
// "yyyy-MM-": digits at bytes 0-3, 5, 6; '-' at 4 and 7.
constexpr uint64_t kDateDigits = 0x00FFFF00FFFFFFFFULL;
constexpr uint64_t kDateDashMask = 0xFF0000FF00000000ULL;
constexpr uint64_t kDateDashes = 0x2D00002D00000000ULL;
// "HH:mm:ss": digits at bytes 0, 1, 3, 4, 6, 7; ':' at 2 and 5.
constexpr uint64_t kTimeDigits = 0xFFFF00FFFF00FFFFULL;
constexpr uint64_t kTimeColonMask = 0x0000FF0000FF0000ULL;
constexpr uint64_t kTimeColons = 0x00003A00003A0000ULL;

// The date part; `*pos` ends after it (at the end, ' ' or 'T').
bool ScanDate(std::string_view s, size_t* pos, Scanned* out) {
  // The usual "yyyy-MM-dd", by position: what the general reading below gives for it.
  if (*pos == 0 && s.size() >= 10 && (s.size() == 10 || s[10] == ' ' || s[10] == 'T')) {
    uint64_t w = LoadLE<uint64_t>(s.data());
    if ((w & kDateDashMask) == kDateDashes && DigitBytes(w, kDateDigits) && IsDigit(s[8]) &&
        IsDigit(s[9])) {
      out->year = TwoDigitsAt(w, 0) * 100 + TwoDigitsAt(w, 2);
      out->month = TwoDigitsAt(w, 5);
      out->day = TwoDigits(s.data() + 8);
      *pos = 10;
      return true;
    }
  }
  int sign = 1;
  if (*pos < s.size() && (s[*pos] == '-' || s[*pos] == '+')) {
    sign = s[*pos] == '-' ? -1 : 1;
    (*pos)++;
  }
  int64_t v = 0;
  if (!Digits(s, pos, 4, 6, &v)) {
    return false;
  }
  out->year = sign * v;
  for (int* field : {&out->month, &out->day}) {
    if (*pos == s.size() || s[*pos] == ' ' || s[*pos] == 'T') {
      break;
    }
    if (s[*pos] != '-') {
      return false;
    }
    (*pos)++;
    if (!Digits(s, pos, 1, 2, &v)) {
      return false;
    }
    *field = static_cast<int>(v);
  }
  return *pos == s.size() || s[*pos] == ' ' || s[*pos] == 'T';
}

// What follows the time of day: the zone, after optional spaces.
bool ScanZone(std::string_view s, size_t pos, Scanned* out) {
  while (pos < s.size() && s[pos] == ' ') {
    pos++;
  }
  out->zone = s.substr(pos);
  return true;
}

// What follows the seconds: an optional fraction of 1 to 9 digits, then the zone.
bool ScanFractionAndZone(std::string_view s, size_t pos, Scanned* out) {
  if (pos < s.size() && s[pos] == '.') {
    pos++;
    size_t n = 0;
    int64_t frac = 0;
    while (pos < s.size() && IsDigit(s[pos])) {
      if (n < 6) {
        frac = frac * 10 + (s[pos] - '0');
      }
      n++;
      pos++;
    }
    if (n == 0 || n > 9) {
      return false;
    }
    for (size_t i = n; i < 6; i++) {
      frac *= 10;
    }
    out->micros = frac;
  }
  return ScanZone(s, pos, out);
}

bool ScanTimestamp(std::string_view s, Scanned* out) {
  size_t pos = 0;
  if (!ScanDate(s, &pos, out)) {
    return false;
  }
  if (pos == s.size()) {
    return true;
  }
  pos++;  // ' ' or 'T'
  if (pos == s.size()) {
    return true;
  }
  // The usual "HH:mm:ss" after a 10-character date, by position, as the general reading below
  // takes it (which also refuses a third digit of seconds).
  if (pos == 11 && s.size() >= 19 && (s.size() == 19 || !IsDigit(s[19]))) {
    uint64_t w = LoadLE<uint64_t>(s.data() + 11);
    if ((w & kTimeColonMask) == kTimeColons && DigitBytes(w, kTimeDigits)) {
      out->hour = TwoDigitsAt(w, 0);
      out->minute = TwoDigitsAt(w, 3);
      out->second = TwoDigitsAt(w, 6);
      pos = 19;
      return ScanFractionAndZone(s, pos, out);
    }
  }
  int64_t v = 0;
  if (!Digits(s, &pos, 1, 2, &v)) {
    return false;
  }
  out->hour = static_cast<int>(v);
  if (pos >= s.size() || s[pos] != ':') {
    return false;
  }
  pos++;
  if (!Digits(s, &pos, 1, 2, &v)) {
    return false;
  }
  out->minute = static_cast<int>(v);
  if (pos < s.size() && s[pos] == ':') {
    pos++;
    if (!Digits(s, &pos, 1, 2, &v)) {
      return false;
    }
    out->second = static_cast<int>(v);
    return ScanFractionAndZone(s, pos, out);
  }
  return ScanZone(s, pos, out);
}

// Inlined into its two callers: returned through memory, the optional's flag byte stalled the
// caller's load of it on store forwarding, once per timestamp.
[[gnu::always_inline]] inline std::optional<int64_t> LocalMicros(const Scanned& t) {
  if (t.month < 1 || t.month > 12 || t.day < 1 || t.day > DaysInMonth(t.year, t.month) ||
      t.hour > 23 || t.minute > 59 || t.second > 59) {
    return std::nullopt;
  }
  int64_t seconds = DaysFromCivil(t.year, t.month, t.day) * kSecondsPerDay + t.hour * 3600 +
                    t.minute * 60 + t.second;
  return MicrosFromSeconds(seconds, t.micros);
}

void AppendFraction(int64_t micros, std::string* out) {
  if (micros == 0) {
    return;
  }
  std::string f = fmt::format(".{:06}", micros);
  while (f.back() == '0') {
    f.pop_back();
  }
  out->append(f);
}

void AppendYear(int64_t year, std::string* out) {
  if (year > 9999) {
    fmt::format_to(std::back_inserter(*out), "+{}", year);
  } else if (year < 0) {
    fmt::format_to(std::back_inserter(*out), "-{:04}", -year);
  } else {
    fmt::format_to(std::back_inserter(*out), "{:04}", year);
  }
}

}  // namespace

std::optional<int64_t> ParseTimestampText(std::string_view text, const TimeZone& zone) {
  Scanned t;
  if (!ScanTimestamp(Trim(text), &t)) {
    return std::nullopt;
  }
  std::optional<int64_t> local = LocalMicros(t);
  if (!local) {
    return std::nullopt;
  }
  int64_t seconds = FloorDiv(*local, kMicrosPerSecond);
  int64_t sub = FloorMod(*local, kMicrosPerSecond);
  // The usual zones, "Z" and "+hh:mm", without a TimeZone lookup (it takes a lock).
  if (t.zone == "Z") {
    return MicrosFromSeconds(seconds, sub);
  }
  if (t.zone.size() == 6 && (t.zone[0] == '+' || t.zone[0] == '-') && t.zone[3] == ':' &&
      IsDigit(t.zone[1]) && IsDigit(t.zone[2]) && IsDigit(t.zone[4]) && IsDigit(t.zone[5])) {
    int64_t off = ((t.zone[1] - '0') * 10 + (t.zone[2] - '0')) * 3600 +
                  ((t.zone[4] - '0') * 10 + (t.zone[5] - '0')) * 60;
    if (off <= 18 * 3600 && (t.zone[4] - '0') < 6) {
      return MicrosFromSeconds(seconds - (t.zone[0] == '-' ? -off : off), sub);
    }
  }
  const TimeZone* tz = &zone;
  TimeZonePtr parsed;
  if (!t.zone.empty()) {
    Result<TimeZonePtr> z = TimeZone::Load(t.zone);
    if (!z.ok()) {
      return std::nullopt;
    }
    parsed = *z;
    tz = parsed.get();
  }
  return MicrosFromSeconds(tz->LocalToUtc(seconds), sub);
}

std::optional<int64_t> ParseLocalTimestampText(std::string_view text) {
  Scanned t;
  if (!ScanTimestamp(Trim(text), &t)) {
    return std::nullopt;
  }
  if (!t.zone.empty() && !TimeZone::Load(t.zone).ok()) {
    return std::nullopt;
  }
  return LocalMicros(t);
}

std::optional<int32_t> ParseDateText(std::string_view text) {
  std::string_view s = Trim(text);
  Scanned t;
  size_t pos = 0;
  if (!ScanDate(s, &pos, &t) || t.month < 1 || t.month > 12 || t.day < 1 ||
      t.day > DaysInMonth(t.year, t.month)) {
    return std::nullopt;
  }
  return static_cast<int32_t>(DaysFromCivil(t.year, t.month, t.day));
}

void FormatLocalTimestampText(int64_t local_micros, std::string* out) {
  int64_t seconds = FloorDiv(local_micros, kMicrosPerSecond);
  int64_t days = FloorDiv(seconds, kSecondsPerDay);
  int64_t sod = FloorMod(seconds, kSecondsPerDay);
  CivilDate d = CivilFromDays(days);
  AppendYear(d.year, out);
  fmt::format_to(std::back_inserter(*out), "-{:02}-{:02} {:02}:{:02}:{:02}", d.month, d.day,
                 sod / 3600, sod / 60 % 60, sod % 60);
  AppendFraction(FloorMod(local_micros, kMicrosPerSecond), out);
}

void FormatTimestampText(int64_t micros, const TimeZone& zone, std::string* out) {
  int64_t seconds = FloorDiv(micros, kMicrosPerSecond);
  FormatLocalTimestampText(micros + int64_t{zone.OffsetAt(seconds)} * kMicrosPerSecond, out);
}

void FormatDateText(int32_t days, std::string* out) {
  CivilDate d = CivilFromDays(days);
  AppendYear(d.year, out);
  fmt::format_to(std::back_inserter(*out), "-{:02}-{:02}", d.month, d.day);
}

}  // namespace ferry::transform
