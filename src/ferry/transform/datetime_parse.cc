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

struct Fields {
  int64_t year = 1970;
  int month = -1, day = -1, day_of_year = -1, day_of_week = -1;
  int hour24 = -1, hour12 = -1, pm = -1;  // hour12: 0..11 (h=12 and K=0 give 0)
  int minute = 0, second = 0;
  int64_t nanos = 0;
  bool has_offset = false;
  int32_t offset = 0;
  TimeZonePtr zone;
  bool bc = false;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  bool ParseItems(const std::vector<Item>& items, Fields* f) {
    for (const Item& it : items) {
      if (it.letter == '[') {
        size_t saved_pos = pos_;
        Fields saved = *f;
        if (!ParseItems(it.section, f)) {
          pos_ = saved_pos;
          *f = std::move(saved);
        }
      } else if (!ParseItem(it, f)) {
        return false;
      }
    }
    return true;
  }
  bool AtEnd() const { return pos_ == s_.size(); }

 private:
  bool ParseItem(const Item& it, Fields* f) {
    int64_t v = 0;
    switch (it.letter) {
      case 0:
        return MatchText(it.literal);
      case 'y':
        if (!Number(it, &v)) {
          return false;
        }
        f->year = it.count == 2 ? 2000 + v : v;
        return true;
      case 'M':
      case 'L':
        if (it.count >= 3) {
          int m = MatchName(it.count == 4 ? kMonthsLong : kMonthsShort);
          f->month = m + 1;
          return m >= 0;
        }
        return Number(it, &v) && Set(&f->month, v);
      case 'd':
        return Number(it, &v) && Set(&f->day, v);
      case 'D':
        return Number(it, &v) && Set(&f->day_of_year, v);
      case 'H':
        return Number(it, &v) && Set(&f->hour24, v);
      case 'k':
        return Number(it, &v) && v >= 1 && v <= 24 && Set(&f->hour24, v == 24 ? 0 : v);
      case 'h':
        return Number(it, &v) && v >= 1 && v <= 12 && Set(&f->hour12, v == 12 ? 0 : v);
      case 'K':
        return Number(it, &v) && v <= 11 && Set(&f->hour12, v);
      case 'm':
        return Number(it, &v) && Set(&f->minute, v);
      case 's':
        return Number(it, &v) && Set(&f->second, v);
      case 'S':
        return Fraction(it.count, &f->nanos);
      case 'a': {
        int ampm = MatchName(std::initializer_list<std::string_view>{"AM", "PM"});
        f->pm = ampm;
        return ampm >= 0;
      }
      case 'E':
        f->day_of_week = MatchName(it.count == 4 ? kDaysLong : kDaysShort);
        return f->day_of_week >= 0;
      case 'G': {
        int era =
            it.count == 4 ? MatchName({"Before Christ", "Anno Domini"}) : MatchName({"BC", "AD"});
        f->bc = era == 0;
        return era >= 0;
      }
      case 'V':
      case 'z':
        return ZoneId(f);
      default:
        return Offset(it, f);
    }
  }

  template <typename T>
  static bool Set(T* field, int64_t v) {
    if (v > 1'000'000'000) {
      return false;
    }
    *field = static_cast<T>(v);
    return true;
  }

  bool MatchText(std::string_view lit) {
    if (s_.size() - pos_ < lit.size()) {
      return false;
    }
    for (size_t i = 0; i < lit.size(); i++) {
      if (Lower(s_[pos_ + i]) != Lower(lit[i])) {
        return false;
      }
    }
    pos_ += lit.size();
    return true;
  }

  // Index of the longest name matching at the position (case-insensitive), or -1.
  template <typename Names>
  int MatchName(const Names& names) {
    int best = -1;
    size_t best_len = 0;
    int i = 0;
    for (std::string_view n : names) {
      size_t saved = pos_;
      if (n.size() > best_len && MatchText(n)) {
        best = i;
        best_len = n.size();
      }
      pos_ = saved;
      i++;
    }
    pos_ += best_len;
    return best;
  }
  int MatchName(std::initializer_list<std::string_view> names) {
    return MatchName<std::initializer_list<std::string_view>>(names);
  }

  bool Number(const Item& it, int64_t* out) {
    size_t avail = 0;
    while (pos_ + avail < s_.size() && IsDigit(s_[pos_ + avail]) &&
           avail < static_cast<size_t>(it.max_width + it.reserved)) {
      avail++;
    }
    if (avail < static_cast<size_t>(it.reserved + it.min_width)) {
      return false;
    }
    size_t take =
        std::min(avail - static_cast<size_t>(it.reserved), static_cast<size_t>(it.max_width));
    int64_t v = 0;
    for (size_t i = 0; i < take; i++) {
      v = v * 10 + (s_[pos_ + i] - '0');
    }
    pos_ += take;
    *out = v;
    return true;
  }

  bool Fraction(int max_digits, int64_t* nanos) {
    int64_t v = 0;
    int n = 0;
    while (pos_ < s_.size() && IsDigit(s_[pos_]) && n < max_digits) {
      v = v * 10 + (s_[pos_++] - '0');
      n++;
    }
    for (int i = n; i < 9; i++) {
      v *= 10;
    }
    *nanos = v;
    return n > 0;
  }

  bool TwoDigits(int* out) {
    if (pos_ + 2 > s_.size() || !IsDigit(s_[pos_]) || !IsDigit(s_[pos_ + 1])) {
      return false;
    }
    *out = (s_[pos_] - '0') * 10 + (s_[pos_ + 1] - '0');
    pos_ += 2;
    return true;
  }

  // "+HH[[:]MM[[:]SS]]" per java.time's offset patterns: `colon` separators, minutes required
  // or optional, seconds optional or not allowed.
  bool OffsetDigits(bool colon, bool minutes_required, bool seconds_allowed, int32_t* out) {
    if (pos_ >= s_.size() || (s_[pos_] != '+' && s_[pos_] != '-')) {
      return false;
    }
    int sign = s_[pos_++] == '-' ? -1 : 1;
    int h = 0, m = 0, sec = 0;
    if (!TwoDigits(&h)) {
      return false;
    }
    size_t before_minutes = pos_;
    bool have_minutes = (!colon || MatchText(":")) && TwoDigits(&m);
    if (!have_minutes) {
      pos_ = before_minutes;
      if (minutes_required) {
        return false;
      }
    } else if (seconds_allowed) {
      size_t before_seconds = pos_;
      if (!((!colon || MatchText(":")) && TwoDigits(&sec))) {
        pos_ = before_seconds;
      }
    }
    if (h > 18 || m > 59 || sec > 59) {
      return false;
    }
    *out = sign * (h * 3600 + m * 60 + sec);
    return true;
  }

  bool Offset(const Item& it, Fields* f) {
    int32_t off = 0;
    bool ok = false;
    int n = it.count;
    if (it.letter == 'O' || (it.letter == 'Z' && n == 4)) {
      if (!MatchText("GMT")) {
        return false;
      }
      ok = true;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) {
        ok = n == 1 ? ShortGmtOffset(&off) : OffsetDigits(true, true, true, &off);
      }
    } else if ((it.letter == 'X' || (it.letter == 'Z' && n == 5)) && MatchText("Z")) {
      ok = true;
    } else if (it.letter == 'Z') {
      ok = n <= 3 ? OffsetDigits(false, true, false, &off) : OffsetDigits(true, true, true, &off);
    } else {  // X and x
      bool colon = n == 3 || n == 5;
      ok = OffsetDigits(colon, n != 1, n >= 4, &off);
    }
    if (ok) {
      f->has_offset = true;
      f->offset = off;
    }
    return ok;
  }

  // "GMT+8", "GMT+08", "GMT+8:30", "GMT-08:30:15".
  bool ShortGmtOffset(int32_t* out) {
    int sign = s_[pos_++] == '-' ? -1 : 1;
    int h = 0;
    int digits = 0;
    while (pos_ < s_.size() && IsDigit(s_[pos_]) && digits < 2) {
      h = h * 10 + (s_[pos_++] - '0');
      digits++;
    }
    int m = 0, sec = 0;
    if (digits == 0 || h > 18) {
      return false;
    }
    if (MatchText(":")) {
      if (!TwoDigits(&m) || (MatchText(":") && !TwoDigits(&sec))) {
        return false;
      }
    }
    *out = sign * (h * 3600 + m * 60 + sec);
    return true;
  }

  bool ZoneId(Fields* f) {
    size_t end = pos_;
    while (end < s_.size() &&
           (IsLetter(s_[end]) || IsDigit(s_[end]) || s_[end] == '/' || s_[end] == '_' ||
            s_[end] == '+' || s_[end] == '-' || s_[end] == ':')) {
      end++;
    }
    if (end == pos_) {
      return false;
    }
    Result<TimeZonePtr> tz = TimeZone::Load(s_.substr(pos_, end - pos_));
    if (!tz.ok()) {
      return false;
    }
    f->zone = *tz;
    pos_ = end;
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

// Local wall-clock microseconds of validated fields, or nullopt.
std::optional<int64_t> ResolveLocal(const Fields& f) {
  int64_t year = f.bc ? 1 - f.year : f.year;
  if (year < -290000 || year > 290000) {
    return std::nullopt;
  }
  int month = f.month, day = f.day;
  if (f.day_of_year >= 0) {
    int len = IsLeapYear(year) ? 366 : 365;
    if (f.day_of_year < 1 || f.day_of_year > len) {
      return std::nullopt;
    }
    CivilDate d = CivilFromDays(DaysFromCivil(year, 1, 1) + f.day_of_year - 1);
    if ((month >= 0 && month != d.month) || (day >= 0 && day != d.day)) {
      return std::nullopt;
    }
    month = d.month;
    day = d.day;
  }
  month = month < 0 ? 1 : month;
  day = day < 0 ? 1 : day;
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month)) {
    return std::nullopt;
  }
  int hour = 0;
  if (f.hour24 >= 0) {
    hour = f.hour24;
    if (f.hour12 >= 0 && f.hour12 != hour % 12) {
      return std::nullopt;
    }
  } else if (f.hour12 >= 0) {
    hour = f.hour12 + (f.pm == 1 ? 12 : 0);  // no AM/PM: AM, as Spark assumes
  }
  if (hour > 23 || f.minute > 59 || f.second > 59) {
    return std::nullopt;
  }
  int64_t days = DaysFromCivil(year, month, day);
  if (f.day_of_week >= 0 && DayOfWeek(days) != f.day_of_week) {
    return std::nullopt;
  }
  int64_t seconds = days * kSecondsPerDay + hour * 3600 + f.minute * 60 + f.second;
  return MicrosFromSeconds(seconds, f.nanos / 1000);
}

}  // namespace

std::optional<int64_t> DateTimePattern::ParseLocal(std::string_view text) const {
  Fields f;
  Parser p(text);
  if (!p.ParseItems(items_, &f) || !p.AtEnd()) {
    return std::nullopt;
  }
  return ResolveLocal(f);
}

std::optional<int64_t> DateTimePattern::Parse(std::string_view text, const TimeZone& zone) const {
  Fields f;
  Parser p(text);
  if (!p.ParseItems(items_, &f) || !p.AtEnd()) {
    return std::nullopt;
  }
  std::optional<int64_t> local = ResolveLocal(f);
  if (!local) {
    return std::nullopt;
  }
  int64_t local_seconds = FloorDiv(*local, kMicrosPerSecond);
  int64_t sub = FloorMod(*local, kMicrosPerSecond);
  int64_t utc_seconds = f.has_offset ? local_seconds - f.offset
                        : f.zone     ? f.zone->LocalToUtc(local_seconds)
                                     : zone.LocalToUtc(local_seconds);
  return MicrosFromSeconds(utc_seconds, sub);
}

}  // namespace ferry::transform
