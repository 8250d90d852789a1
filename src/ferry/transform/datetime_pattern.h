// Spark datetime patterns (the java.time DateTimeFormatter letters Spark 3 accepts) compiled once
// and used to parse strings into timestamps or to format timestamps, for the JSON decoder's
// timestamp formats and the expression functions (to_timestamp, unix_timestamp, from_unixtime,
// date_format, ...). The full letter table is in docs/transform.md. In short:
//   y year (yy = 2000..2099 when parsing), M/L month (M, MM, MMM = Jan, MMMM = January), d day,
//   D day of year, H 0-23, k 1-24, h 1-12 and K 0-11 with a = AM/PM (AM assumed without `a`),
//   m, s, S..S fraction (1..n digits when parsing, micros kept, beyond truncated), E day name,
//   G era, Q/q quarter (formatting only), VV zone ID, z zone abbreviation, O/X/x/Z offsets,
//   'text' literals, '' a quote, [ ] optional sections (nestable).
// Week-based letters (Y w W u e c) and F, A, n, N, p are refused, as Spark 3 refuses them.
//
// Parsing follows Spark's rules: case-insensitive, the whole text must be consumed, fields are
// validated strictly (Feb 30 fails), missing fields default to 1970-01-01 00:00:00, and numeric
// fields next to each other without separators share the digits (yyyyMMdd) as java.time's
// adjacent value parsing does. A failed parse is nullopt (Spark's non-ANSI mode gives NULL).
//
// Compile() lives in datetime_pattern.cc, parsing in datetime_parse.cc, formatting in
// datetime_format.cc.
//
// Thread-safety: a compiled pattern is immutable and may be shared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/transform/time_zone.h"

namespace ferry::transform {

class DateTimePattern {
 public:
  enum class Purpose : uint8_t { kParse, kFormat };

  // InvalidArgument naming the offending letter and its 1-based position in the pattern.
  static Result<DateTimePattern> Compile(std::string_view pattern, Purpose purpose);

  // The instant, in microseconds since the epoch, that `text` denotes; nullopt when the text
  // does not match. A time without an offset or zone in the text is local to `zone`.
  std::optional<int64_t> Parse(std::string_view text, const TimeZone& zone) const;
  // The local date-time (microseconds since 1970-01-01T00:00 wall clock) that `text` names,
  // ignoring any offset or zone in it: for TIMESTAMP_NTZ and DATE results.
  std::optional<int64_t> ParseLocal(std::string_view text) const;
  // Appends `micros` (an instant) as seen in `zone`.
  void Format(int64_t micros, const TimeZone& zone, std::string* out) const;
  std::string Format(int64_t micros, const TimeZone& zone) const {
    std::string s;
    Format(micros, zone, &s);
    return s;
  }

  const std::string& pattern() const { return pattern_; }

  // One element of a compiled pattern (public for the implementation's helpers).
  struct Item {
    char letter = 0;    // pattern letter; 0 for a literal, '[' for an optional section
    int count = 0;      // letters in a row
    int min_width = 0;  // digits accepted when parsing numbers
    int max_width = 0;
    int reserved = 0;  // digits that adjacent fixed-width numbers after this one need
    std::string literal;
    std::vector<Item> section;  // the items of an optional section
  };

 private:
  std::string pattern_;
  std::vector<Item> items_;
};

}  // namespace ferry::transform
