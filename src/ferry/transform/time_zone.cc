#include "ferry/transform/time_zone.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

#include "ferry/base/file.h"
#include "ferry/transform/civil_time.h"

namespace ferry::transform {

namespace {

constexpr int32_t kMaxOffset = 18 * 3600;

std::string OffsetName(int32_t offset) {
  if (offset == 0) {
    return "Z";
  }
  int32_t a = offset < 0 ? -offset : offset;
  std::string s = fmt::format("{}{:02}:{:02}", offset < 0 ? '-' : '+', a / 3600, a / 60 % 60);
  if (a % 60 != 0) {
    s += fmt::format(":{:02}", a % 60);
  }
  return s;
}

// java.time ZoneOffset.of: +h, +hh, +hh:mm, +hhmm, +hh:mm:ss, +hhmmss.
std::optional<int32_t> ParseOffset(std::string_view s) {
  if (s.size() < 2 || (s[0] != '+' && s[0] != '-')) {
    return std::nullopt;
  }
  int sign = s[0] == '-' ? -1 : 1;
  s.remove_prefix(1);
  auto two = [](std::string_view t, size_t at) -> int {
    if (at + 2 > t.size() || t[at] < '0' || t[at] > '9' || t[at + 1] < '0' || t[at + 1] > '9') {
      return -1;
    }
    return (t[at] - '0') * 10 + (t[at + 1] - '0');
  };
  int h = -1, m = 0, sec = 0;
  if (s.size() == 1 && s[0] >= '0' && s[0] <= '9') {
    h = s[0] - '0';
  } else if (s.size() == 2) {
    h = two(s, 0);
  } else if (s.size() == 4) {
    h = two(s, 0), m = two(s, 2);
  } else if (s.size() == 5 && s[2] == ':') {
    h = two(s, 0), m = two(s, 3);
  } else if (s.size() == 6) {
    h = two(s, 0), m = two(s, 2), sec = two(s, 4);
  } else if (s.size() == 8 && s[2] == ':' && s[5] == ':') {
    h = two(s, 0), m = two(s, 3), sec = two(s, 6);
  }
  if (h < 0 || m < 0 || sec < 0 || m > 59 || sec > 59) {
    return std::nullopt;
  }
  int32_t total = h * 3600 + m * 60 + sec;
  if (total > kMaxOffset) {
    return std::nullopt;
  }
  return sign * total;
}

// java.time's ZoneId.SHORT_IDS.
std::string_view ShortIdTarget(std::string_view id) {
  static const std::pair<std::string_view, std::string_view> kIds[] = {
      {"ACT", "Australia/Darwin"},
      {"AET", "Australia/Sydney"},
      {"AGT", "America/Argentina/Buenos_Aires"},
      {"ART", "Africa/Cairo"},
      {"AST", "America/Anchorage"},
      {"BET", "America/Sao_Paulo"},
      {"BST", "Asia/Dhaka"},
      {"CAT", "Africa/Harare"},
      {"CNT", "America/St_Johns"},
      {"CST", "America/Chicago"},
      {"CTT", "Asia/Shanghai"},
      {"EAT", "Africa/Addis_Ababa"},
      {"ECT", "Europe/Paris"},
      {"IET", "America/Indiana/Indianapolis"},
      {"IST", "Asia/Kolkata"},
      {"JST", "Asia/Tokyo"},
      {"MIT", "Pacific/Apia"},
      {"NET", "Asia/Yerevan"},
      {"NST", "Pacific/Auckland"},
      {"PLT", "Asia/Karachi"},
      {"PNT", "America/Phoenix"},
      {"PRT", "America/Puerto_Rico"},
      {"PST", "America/Los_Angeles"},
      {"SST", "Pacific/Guadalcanal"},
      {"VST", "Asia/Ho_Chi_Minh"},
      {"EST", "-05:00"},
      {"MST", "-07:00"},
      {"HST", "-10:00"},
  };
  for (const auto& [from, to] : kIds) {
    if (from == id) {
      return to;
    }
  }
  return {};
}

bool IsValidRegionName(std::string_view name) {
  if (name.empty() || name.size() > 128 || name[0] == '/' || name.find("..") != name.npos) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
           c == '_' || c == '-' || c == '+';
  });
}

uint32_t LoadBE32(const char* p) {
  auto b = reinterpret_cast<const uint8_t*>(p);
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

int64_t LoadBE64(const char* p) {
  return static_cast<int64_t>((uint64_t{LoadBE32(p)} << 32) | LoadBE32(p + 4));
}

}  // namespace

// Reads the TZif layout of RFC 8536: a v1 header and block with 32-bit times, then (version 2+)
// a second header and block with 64-bit times, then the footer "\n<POSIX TZ>\n".
class TzifReader {
 public:
  static Status Read(std::string_view data, TimeZone* tz) {
    auto corrupt = [&](std::string_view what) {
      return DataLoss("time zone file {}: {}", tz->name_, what);
    };
    if (data.size() < 44 || data.substr(0, 4) != "TZif") {
      return corrupt("not a TZif file");
    }
    char version = data[4];
    size_t pos = 0;
    bool wide = false;
    if (version != '\0') {
      // Skip the v1 block; the v2+ block repeats it with 64-bit times.
      FERRY_ASSIGN_OR_RETURN(size_t v1_size, BlockSize(data, 0, false));
      pos = 44 + v1_size;
      if (data.size() < pos + 44 || data.substr(pos, 4) != "TZif") {
        return corrupt("truncated second header");
      }
      wide = true;
    }
    FERRY_ASSIGN_OR_RETURN(size_t block_size, BlockSize(data.substr(pos), 0, wide));
    const char* h = data.data() + pos;
    uint32_t timecnt = LoadBE32(h + 32), typecnt = LoadBE32(h + 36), charcnt = LoadBE32(h + 40);
    const char* p = h + 44;
    size_t tsize = wide ? 8 : 4;
    tz->transitions_.resize(timecnt);
    tz->transition_types_.resize(timecnt);
    for (uint32_t i = 0; i < timecnt; i++) {
      tz->transitions_[i] =
          wide ? LoadBE64(p + i * tsize) : static_cast<int32_t>(LoadBE32(p + i * tsize));
      if (i > 0 && tz->transitions_[i] <= tz->transitions_[i - 1]) {
        return corrupt("transitions out of order");
      }
    }
    p += timecnt * tsize;
    for (uint32_t i = 0; i < timecnt; i++) {
      tz->transition_types_[i] = static_cast<uint8_t>(p[i]);
      if (tz->transition_types_[i] >= typecnt) {
        return corrupt("bad local time type index");
      }
    }
    p += timecnt;
    const char* chars = p + typecnt * 6;
    for (uint32_t i = 0; i < typecnt; i++) {
      const char* t = p + i * 6;
      auto desig = static_cast<uint8_t>(t[5]);
      if (desig >= charcnt) {
        return corrupt("bad abbreviation index");
      }
      std::string_view abbr(chars + desig, charcnt - desig);
      abbr = abbr.substr(0, abbr.find('\0'));
      auto offset = static_cast<int32_t>(LoadBE32(t));
      if (offset > 26 * 3600 || offset < -26 * 3600) {
        return corrupt("offset out of range");
      }
      tz->types_.push_back(TimeZone::LocalType{offset, t[4] != 0, std::string(abbr)});
    }
    if (wide) {
      std::string_view footer = data.substr(pos + 44 + block_size);
      if (footer.size() >= 2 && footer[0] == '\n') {
        footer = footer.substr(1, footer.find('\n', 1) - 1);
        if (!footer.empty()) {
          Result<TimeZone::Rule> rule = ParsePosixTzRule(footer);
          if (!rule.ok()) {
            return corrupt(rule.status().message());
          }
          tz->rule_ = *rule;
          tz->has_rule_ = true;
        }
      }
    }
    return Status::OK();
  }

 private:
  // Size of the data block after the header at `data`, checked against what is there.
  static Result<size_t> BlockSize(std::string_view data, size_t at, bool wide) {
    const char* h = data.data() + at;
    uint64_t isutcnt = LoadBE32(h + 20), isstdcnt = LoadBE32(h + 24), leapcnt = LoadBE32(h + 28);
    uint64_t timecnt = LoadBE32(h + 32), typecnt = LoadBE32(h + 36), charcnt = LoadBE32(h + 40);
    uint64_t t = wide ? 8 : 4;
    uint64_t size =
        timecnt * t + timecnt + typecnt * 6 + charcnt + leapcnt * (t + 4) + isstdcnt + isutcnt;
    if (typecnt == 0 || typecnt > 256 || at + 44 + size > data.size()) {
      return DataLoss("time zone file: bad or truncated data block");
    }
    return static_cast<size_t>(size);
  }
};

class PosixRuleParser {
 public:
  explicit PosixRuleParser(std::string_view s) : s_(s) {}

  Result<TimeZone::Rule> Parse() {
    TimeZone::Rule r;
    if (!Name(&r.standard.abbreviation) || !Offset(&r.standard.offset)) {
      return Bad();
    }
    r.standard.offset = -r.standard.offset;  // POSIX counts west of Greenwich as positive
    if (pos_ == s_.size()) {
      return r;
    }
    r.has_dst = true;
    r.daylight.is_dst = true;
    if (!Name(&r.daylight.abbreviation)) {
      return Bad();
    }
    r.daylight.offset = r.standard.offset + 3600;
    if (pos_ < s_.size() && s_[pos_] != ',') {
      int32_t off = 0;
      if (!Offset(&off)) {
        return Bad();
      }
      r.daylight.offset = -off;
    }
    if (pos_ == s_.size()) {
      // No rule given: POSIX's default is the US rule.
      r.start = TimeZone::Rule::Date{'M', 3, 2, 0, 0, 7200};
      r.end = TimeZone::Rule::Date{'M', 11, 1, 0, 0, 7200};
      return r;
    }
    if (!Eat(',') || !DateRule(&r.start) || !Eat(',') || !DateRule(&r.end) || pos_ != s_.size()) {
      return Bad();
    }
    return r;
  }

 private:
  Status Bad() const { return InvalidArgument("bad POSIX TZ rule '{}'", s_); }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      pos_++;
      return true;
    }
    return false;
  }
  bool Number(int* out, int max) {
    size_t start = pos_;
    int v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9' && v <= max) {
      v = v * 10 + (s_[pos_++] - '0');
    }
    *out = v;
    return pos_ > start && v <= max;
  }
  bool Name(std::string* out) {
    if (Eat('<')) {
      size_t end = s_.find('>', pos_);
      if (end == std::string_view::npos) {
        return false;
      }
      *out = std::string(s_.substr(pos_, end - pos_));
      pos_ = end + 1;
      return true;
    }
    size_t start = pos_;
    while (pos_ < s_.size() &&
           ((s_[pos_] >= 'a' && s_[pos_] <= 'z') || (s_[pos_] >= 'A' && s_[pos_] <= 'Z'))) {
      pos_++;
    }
    *out = std::string(s_.substr(start, pos_ - start));
    return pos_ - start >= 3;
  }
  // [+-]hh[:mm[:ss]], hours up to 167 (RFC 8536 allows that for transition times).
  bool Offset(int32_t* out) {
    int sign = 1;
    if (Eat('-')) {
      sign = -1;
    } else {
      Eat('+');
    }
    int h = 0, m = 0, sec = 0;
    if (!Number(&h, 167)) {
      return false;
    }
    if (Eat(':') && (!Number(&m, 59) || (Eat(':') && !Number(&sec, 59)))) {
      return false;
    }
    *out = sign * (h * 3600 + m * 60 + sec);
    return true;
  }
  bool DateRule(TimeZone::Rule::Date* d) {
    if (Eat('M')) {
      d->kind = 'M';
      if (!Number(&d->month, 12) || d->month < 1 || !Eat('.') || !Number(&d->week, 5) ||
          d->week < 1 || !Eat('.') || !Number(&d->weekday, 6)) {
        return false;
      }
    } else if (Eat('J')) {
      d->kind = 'J';
      if (!Number(&d->day, 365) || d->day < 1) {
        return false;
      }
    } else {
      d->kind = 'D';
      if (!Number(&d->day, 365)) {
        return false;
      }
    }
    d->time = 7200;
    return !Eat('/') || Offset(&d->time);
  }

  std::string_view s_;
  size_t pos_ = 0;
};

Result<TimeZone::Rule> ParsePosixTzRule(std::string_view text) {
  return PosixRuleParser(text).Parse();
}

namespace {

// Local seconds (since the epoch, in the offset in force before the change) of a rule date.
int64_t RuleLocalSeconds(const TimeZone::Rule::Date& d, int64_t year) {
  int64_t jan1 = DaysFromCivil(year, 1, 1);
  int64_t days = 0;
  if (d.kind == 'J') {
    days = jan1 + d.day - 1 + (IsLeapYear(year) && d.day >= 60 ? 1 : 0);
  } else if (d.kind == 'D') {
    days = jan1 + d.day;
  } else {
    int64_t first = DaysFromCivil(year, d.month, 1);
    int first_weekday = (DayOfWeek(first) + 1) % 7;  // POSIX: 0 = Sunday
    int day = 1 + (d.weekday - first_weekday + 7) % 7 + 7 * (d.week - 1);
    while (day > DaysInMonth(year, d.month)) {
      day -= 7;
    }
    days = first + day - 1;
  }
  return days * kSecondsPerDay + d.time;
}

}  // namespace

const TimeZone::LocalType& TimeZone::RuleTypeAt(int64_t t) const {
  if (!rule_.has_dst) {
    return rule_.standard;
  }
  int64_t year = CivilFromDays(FloorDiv(t + rule_.standard.offset, kSecondsPerDay)).year;
  int64_t start = RuleLocalSeconds(rule_.start, year) - rule_.standard.offset;
  int64_t end = RuleLocalSeconds(rule_.end, year) - rule_.daylight.offset;
  bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
  return dst ? rule_.daylight : rule_.standard;
}

const TimeZone::LocalType& TimeZone::TypeAt(int64_t t) const {
  if (transitions_.empty() || t >= transitions_.back()) {
    if (has_rule_) {
      return RuleTypeAt(t);
    }
    return transitions_.empty() ? types_[0] : types_[transition_types_.back()];
  }
  if (t < transitions_.front()) {
    return types_[0];
  }
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), t);
  return types_[transition_types_[static_cast<size_t>(it - transitions_.begin() - 1)]];
}

int32_t TimeZone::OffsetAt(int64_t utc_seconds) const {
  return TypeAt(utc_seconds).offset;
}

std::string_view TimeZone::AbbreviationAt(int64_t utc_seconds) const {
  return TypeAt(utc_seconds).abbreviation;
}

int64_t TimeZone::LocalToUtc(int64_t local) const {
  // Offsets in force a day before and after; zones do not change twice within two days.
  int32_t before = OffsetAt(local - kSecondsPerDay);
  int32_t after = OffsetAt(local + kSecondsPerDay);
  if (before == after) {
    return local - before;
  }
  bool before_valid = OffsetAt(local - before) == before;
  bool after_valid = OffsetAt(local - after) == after;
  if (before_valid) {
    return local - before;  // also the overlap case: the earlier offset
  }
  if (after_valid) {
    return local - after;
  }
  return local - before;  // a gap: later by the gap's length
}

TimeZonePtr TimeZone::Fixed(int32_t offset_seconds) {
  auto tz = std::make_shared<TimeZone>();
  tz->name_ = OffsetName(offset_seconds);
  tz->types_.push_back(LocalType{offset_seconds, false, tz->name_});
  return tz;
}

TimeZonePtr TimeZone::Utc() {
  static const TimeZonePtr kUtc = [] {
    auto tz = std::make_shared<TimeZone>();
    tz->name_ = "UTC";
    tz->types_.push_back(LocalType{0, false, "UTC"});
    return tz;
  }();
  return kUtc;
}

Result<TimeZonePtr> TimeZone::FromTzif(std::string name, std::string_view data) {
  auto tz = std::make_shared<TimeZone>();
  tz->name_ = std::move(name);
  FERRY_RETURN_IF_ERROR(TzifReader::Read(data, tz.get()));
  return TimeZonePtr(tz);
}

namespace {

Result<TimeZonePtr> LoadUncached(std::string_view name) {
  if (name == "UTC" || name == "Z" || name == "GMT" || name == "UT") {
    if (name == "UTC") {
      return TimeZone::Utc();
    }
    auto tz = TimeZone::Fixed(0);
    return tz;
  }
  if (name[0] == '+' || name[0] == '-') {
    if (auto off = ParseOffset(name)) {
      return TimeZone::Fixed(*off);
    }
    return InvalidArgument("invalid time zone offset '{}'", name);
  }
  for (std::string_view prefix : {"UTC", "GMT", "UT"}) {
    if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix &&
        (name[prefix.size()] == '+' || name[prefix.size()] == '-')) {
      if (auto off = ParseOffset(name.substr(prefix.size()))) {
        return TimeZone::Fixed(*off);
      }
      return InvalidArgument("invalid time zone offset '{}'", name);
    }
  }
  if (std::string_view target = ShortIdTarget(name); !target.empty()) {
    return TimeZone::Load(target);
  }
  if (!IsValidRegionName(name)) {
    return InvalidArgument("invalid time zone '{}'", name);
  }
  const char* dir = std::getenv("TZDIR");
  std::string path =
      fmt::format("{}/{}", dir != nullptr && *dir ? dir : "/usr/share/zoneinfo", name);
  Result<std::string> data = ReadFileToString(path);
  if (!data.ok()) {
    return NotFound("unknown time zone '{}' ({})", name, data.status().message());
  }
  return TimeZone::FromTzif(std::string(name), *data);
}

}  // namespace

Result<TimeZonePtr> TimeZone::Load(std::string_view name) {
  static std::mutex mu;
  static std::map<std::string, TimeZonePtr, std::less<>> cache;
  if (name.empty()) {
    return InvalidArgument("empty time zone name");
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(name); it != cache.end()) {
      return it->second;
    }
  }
  FERRY_ASSIGN_OR_RETURN(TimeZonePtr tz, LoadUncached(name));
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() < 1024) {
    cache.emplace(std::string(name), tz);
  }
  return tz;
}

}  // namespace ferry::transform
