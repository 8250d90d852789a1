#include <fmt/format.h>

#include "ferry/transform/civil_time.h"
#include "ferry/transform/datetime_pattern.h"
#include "ferry/transform/datetime_pattern_internal.h"

namespace ferry::transform {

using datetime_internal::IsDigit;
using datetime_internal::IsLetter;
using datetime_internal::kDaysLong;
using datetime_internal::kDaysShort;
using datetime_internal::kMonthsLong;
using datetime_internal::kMonthsShort;
using datetime_internal::Lower;
using Item = DateTimePattern::Item;

namespace {

struct Moment {
  CivilDate date;
  int64_t days = 0;
  int hour = 0, minute = 0, second = 0;
  int64_t micros = 0;  // within the second
  int32_t offset = 0;
  const TimeZone* zone = nullptr;
  int64_t utc_seconds = 0;
};

// `v` in decimal, zero-padded to `width` digits (by hand: this is the formatting hot path).
void Pad(std::string* out, int64_t v, int width) {
  char digits[24];
  int n = 0;
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (v < 0) {
    out->push_back('-');
  }
  for (int i = n; i < width; i++) {
    out->push_back('0');
  }
  while (n > 0) {
    out->push_back(digits[--n]);
  }
}

// "+HH[:]MM[[:]SS]" with the zero text when the offset is 0 and `zero` is given.
void FormatOffset(std::string* out, int32_t off, bool colon, bool minutes_always,
                  bool seconds_if_nonzero, std::string_view zero) {
  if (off == 0 && !zero.empty()) {
    out->append(zero);
    return;
  }
  int32_t a = off < 0 ? -off : off;
  out->push_back(off < 0 ? '-' : '+');
  Pad(out, a / 3600, 2);
  int m = a / 60 % 60, s = a % 60;
  if (minutes_always || m != 0 || (seconds_if_nonzero && s != 0)) {
    if (colon) {
      out->push_back(':');
    }
    Pad(out, m, 2);
  }
  if (seconds_if_nonzero && s != 0) {
    if (colon) {
      out->push_back(':');
    }
    Pad(out, s, 2);
  }
}

void FormatGmt(std::string* out, int32_t off, bool full) {
  out->append("GMT");
  if (off == 0) {
    return;
  }
  int32_t a = off < 0 ? -off : off;
  out->push_back(off < 0 ? '-' : '+');
  int m = a / 60 % 60, s = a % 60;
  if (full) {
    Pad(out, a / 3600, 2);
    out->push_back(':');
    Pad(out, m, 2);
  } else {
    Pad(out, a / 3600, 1);
    if (m != 0 || s != 0) {
      out->push_back(':');
      Pad(out, m, 2);
    }
  }
  if (s != 0) {
    out->push_back(':');
    Pad(out, s, 2);
  }
}

void FormatText(std::string* out, std::string_view full_or_short, int count) {
  out->append(count == 5 ? full_or_short.substr(0, 1) : full_or_short);
}

void FormatItem(const Item& it, const Moment& t, std::string* out) {
  int n = it.count;
  switch (it.letter) {
    case 0:
      out->append(it.literal);
      return;
    case '[':
      for (const Item& sub : it.section) {
        FormatItem(sub, t, out);
      }
      return;
    case 'y': {
      int64_t y = t.date.year;
      if (n == 2) {
        Pad(out, FloorMod(y, 100), 2);
      } else if (y < 0) {
        out->push_back('-');
        Pad(out, -y, n);
      } else {
        if (n >= 4 && y >= 10000 && fmt::formatted_size("{}", y) > static_cast<size_t>(n)) {
          out->push_back('+');
        }
        Pad(out, y, n);
      }
      return;
    }
    case 'M':
    case 'L':
      if (n <= 2) {
        Pad(out, t.date.month, n);
      } else {
        FormatText(out, n == 3 ? kMonthsShort[t.date.month - 1] : kMonthsLong[t.date.month - 1], n);
      }
      return;
    case 'd':
      return Pad(out, t.date.day, n);
    case 'D':
      return Pad(out, DayOfYear(t.date), n);
    case 'H':
      return Pad(out, t.hour, n);
    case 'k':
      return Pad(out, t.hour == 0 ? 24 : t.hour, n);
    case 'h':
      return Pad(out, t.hour % 12 == 0 ? 12 : t.hour % 12, n);
    case 'K':
      return Pad(out, t.hour % 12, n);
    case 'm':
      return Pad(out, t.minute, n);
    case 's':
      return Pad(out, t.second, n);
    case 'S': {
      std::string nine = fmt::format("{:09}", t.micros * 1000);
      out->append(nine.substr(0, static_cast<size_t>(n)));
      return;
    }
    case 'a':
      out->append(t.hour < 12 ? "AM" : "PM");
      return;
    case 'E': {
      int dow = DayOfWeek(t.days);
      return FormatText(out, n == 4 ? kDaysLong[dow] : kDaysShort[dow], n);
    }
    case 'G': {
      bool ad = t.date.year > 0;
      if (n == 4) {
        out->append(ad ? "Anno Domini" : "Before Christ");
      } else {
        FormatText(out, ad ? "AD" : "BC", n == 5 ? 5 : 3);
      }
      return;
    }
    case 'Q':
    case 'q': {
      int q = (t.date.month - 1) / 3 + 1;
      if (n <= 2) {
        Pad(out, q, n);
      } else if (n == 3) {
        fmt::format_to(std::back_inserter(*out), "Q{}", q);
      } else if (n == 4) {
        static constexpr std::string_view kNames[] = {"1st", "2nd", "3rd", "4th"};
        fmt::format_to(std::back_inserter(*out), "{} quarter", kNames[q - 1]);
      } else {
        fmt::format_to(std::back_inserter(*out), "{}", q);
      }
      return;
    }
    case 'V':
      out->append(t.zone->name());
      return;
    case 'z':
      out->append(t.zone->AbbreviationAt(t.utc_seconds));
      return;
    case 'O':
      return FormatGmt(out, t.offset, n == 4);
    case 'Z':
      if (n <= 3) {
        return FormatOffset(out, t.offset, false, true, false, "");
      }
      if (n == 4) {
        return FormatGmt(out, t.offset, true);
      }
      return FormatOffset(out, t.offset, true, true, true, "Z");
    default: {  // X, x
      std::string_view zero = it.letter == 'X'   ? "Z"
                              : n == 1           ? "+00"
                              : n == 2 || n == 4 ? "+0000"
                                                 : "+00:00";
      return FormatOffset(out, t.offset, n == 3 || n == 5, n != 1, n >= 4, zero);
    }
  }
}

}  // namespace

void DateTimePattern::Format(int64_t micros, const TimeZone& zone, std::string* out) const {
  Moment t;
  t.utc_seconds = FloorDiv(micros, kMicrosPerSecond);
  t.micros = FloorMod(micros, kMicrosPerSecond);
  t.offset = zone.OffsetAt(t.utc_seconds);
  t.zone = &zone;
  int64_t local = t.utc_seconds + t.offset;
  t.days = FloorDiv(local, kSecondsPerDay);
  int64_t sod = FloorMod(local, kSecondsPerDay);
  t.date = CivilFromDays(t.days);
  t.hour = static_cast<int>(sod / 3600);
  t.minute = static_cast<int>(sod / 60 % 60);
  t.second = static_cast<int>(sod % 60);
  for (const Item& it : items_) {
    FormatItem(it, t, out);
  }
}

}  // namespace ferry::transform
