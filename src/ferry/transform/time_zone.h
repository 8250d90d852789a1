// Time zones for timestamp parsing and formatting: fixed offsets and IANA regions read from the
// system tzdata (TZif files, RFC 8536, under $TZDIR or /usr/share/zoneinfo), because libstdc++ 12
// has no std::chrono::locate_zone. Times after a file's last transition follow its POSIX TZ
// footer rule (Debian's "slim" files rely on it).
//
// Accepted names, as java.time's ZoneId.of(name, SHORT_IDS) (what Spark's session time zone uses):
//   "UTC", "GMT", "UT", "Z"; offsets "+8", "+08", "+0830", "+08:30", "-08:30:15"; the same after a
//   "UTC"/"GMT"/"UT" prefix ("GMT+8", "UTC-03:00"); region IDs ("Europe/Paris"); and the old
//   three-letter IDs of SHORT_IDS ("PST" = America/Los_Angeles, "EST" = -05:00, ...).
//
// A local wall-clock time is resolved as java.time's ZonedDateTime.ofLocal does: in an overlap
// (clocks set back) the earlier offset wins; in a gap (clocks set forward) the time moves later
// by the length of the gap.
//
// Thread-safety: a TimeZone is immutable; Load() caches zones process-wide under a mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::transform {

class TimeZone;
using TimeZonePtr = std::shared_ptr<const TimeZone>;

class TimeZone {
 public:
  // InvalidArgument for a malformed name, NotFound for an unknown region, DataLoss for a
  // corrupt TZif file.
  static Result<TimeZonePtr> Load(std::string_view name);
  static TimeZonePtr Utc();
  // A zone with a fixed offset in seconds (|offset| <= 18 h), named like "+05:30" ("Z" for 0).
  static TimeZonePtr Fixed(int32_t offset_seconds);
  // Parses a TZif image (exposed for tests and fuzzing).
  static Result<TimeZonePtr> FromTzif(std::string name, std::string_view data);

  const std::string& name() const { return name_; }
  bool is_fixed() const { return transitions_.empty() && !has_rule_; }

  // Offset from UTC, in seconds, at the instant `utc_seconds`.
  int32_t OffsetAt(int64_t utc_seconds) const;
  // The zone's abbreviation at that instant ("CET", "PDT"; "+05:30" style for fixed zones).
  std::string_view AbbreviationAt(int64_t utc_seconds) const;
  // The instant (seconds since the epoch) of the local wall-clock time `local_seconds`.
  int64_t LocalToUtc(int64_t local_seconds) const;

  struct LocalType {
    int32_t offset = 0;
    bool is_dst = false;
    std::string abbreviation;
  };
  // A POSIX TZ rule: "CET-1CEST,M3.5.0,M10.5.0/3".
  struct Rule {
    LocalType standard;
    LocalType daylight;
    bool has_dst = false;
    // Transition dates: kind 'J' (Julian 1..365, no Feb 29), 'D' (0..365), 'M' (month, week,
    // weekday); time in seconds of local time (may be negative or beyond 24 h).
    struct Date {
      char kind = 'M';
      int month = 0, week = 0, weekday = 0, day = 0;
      int32_t time = 7200;
    };
    Date start, end;
  };

  TimeZone() = default;  // public for make_shared; use the factories

 private:
  friend class TzifReader;
  friend class PosixRuleParser;

  const LocalType& TypeAt(int64_t utc_seconds) const;
  const LocalType& RuleTypeAt(int64_t utc_seconds) const;

  std::string name_;
  // Transition instants (ascending) and the local type index each one starts.
  std::vector<int64_t> transitions_;
  std::vector<uint8_t> transition_types_;
  std::vector<LocalType> types_;  // types_[0] applies before the first transition
  bool has_rule_ = false;
  Rule rule_;
};

// Parses a POSIX TZ string (the TZif footer). Exposed for tests.
Result<TimeZone::Rule> ParsePosixTzRule(std::string_view text);

}  // namespace ferry::transform
