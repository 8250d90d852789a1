// MessageTemplate: the text generator behind `ferry produce kafka` (and `ferry produce nats`).
// A template is parsed once; Render(seq) then writes one message into a reusable string.
//
// Placeholders (whitespace inside the braces is ignored, so the NATS CLI's `{{ Count }}` works):
//   {{seq}}, {{Count}}     the message's sequence number (1, 2, ... from --start)
//   {{now:PATTERN}}        the current time in UTC, formatted with a Spark / Java
//                          DateTimeFormatter pattern; {{now}} alone is
//                          yyyy-MM-dd'T'HH:mm:ss.SSSX (ISO-8601)
//   {{rand:N}}             N random ASCII letters (1 <= N <= 1048576)
//   {{uuid}}               a random (version 4) UUID, lowercase
//   {{cycle:A,B,C}}        the values in turn by sequence number: seq 1 gives A, 2 gives B,
//                          4 gives A again (event types for routing tests and benchmarks)
// Everything else is copied as is; a "{{" without its "}}" is an error.
//
// Pattern letters (Java DateTimeFormatter; the count of repeated letters picks the form):
//   y   year: yy = 2 digits, y/yyy/yyyy... = at least that many digits
//   M   month: M, MM = number; MMM = Nov; MMMM = November; MMMMM = N
//   d   day of month (d, dd)         H   hour 0-23 (H, HH)       h   hour 1-12 (h, hh)
//   m   minute (m, mm)               s   second (s, ss)          a   AM/PM (a)
//   S   fraction of second, 1-9 digits (SSS = milliseconds)
//   E   day of week: E, EE, EEE = Mon; EEEE = Monday; EEEEE = M
//   Z   offset: Z..ZZZ = +0000; ZZZZ = GMT; ZZZZZ = Z
//   X   offset: X..XXXXX = Z (times are UTC)
//   z   zone name: z..zzz = UTC; zzzz = Coordinated Universal Time
// 'text' is literal text, '' a single quote. Other letters, and [ ] { } #, are refused by
// Parse() (InvalidArgument naming the letter and its place) rather than misprinted.
//
// Thread-safety: Render() mutates the random generator and a time cache; one thread per object
// (copy the template for another thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::app {

class MessageTemplate {
 public:
  // InvalidArgument naming the bad placeholder or pattern letter and its offset.
  static Result<MessageTemplate> Parse(std::string_view text);

  // Replaces *out with the message for `seq` at `now`.
  void Render(int64_t seq, std::chrono::system_clock::time_point now, std::string* out);
  void Render(int64_t seq, std::string* out) { Render(seq, std::chrono::system_clock::now(), out); }

  // True if the template has a {{now}} placeholder.
  bool uses_time() const;
  // Makes {{rand}} and {{uuid}} reproducible (tests).
  void Seed(uint64_t seed) { rng_.seed(seed); }

 private:
  // One field of a time pattern: a literal run or a letter repeated `count` times.
  struct TimeField {
    char letter = 0;  // 0 for literal text
    int count = 0;
    std::string literal;
  };
  enum class Kind { kLiteral, kSeq, kNow, kRand, kUuid, kCycle };
  struct Piece {
    Kind kind = Kind::kLiteral;
    std::string literal;              // kLiteral
    std::vector<TimeField> fields;    // kNow
    int64_t count = 0;                // kRand
    std::vector<std::string> values;  // kCycle
    // kNow: the last rendering and the time it was for (a second, or a microsecond when the
    // pattern shows fractions).
    int64_t cached_at = INT64_MIN;
    std::string cached;
  };

  MessageTemplate() = default;
  void AddLiteral(std::string text);
  static Result<Piece> ParsePlaceholder(std::string_view body, size_t offset);
  static Result<std::vector<TimeField>> ParseTimePattern(std::string_view pattern, size_t offset);
  static void FormatTime(const std::vector<TimeField>& fields, int64_t micros, std::string* out);
  void AppendRandomLetters(int64_t count, std::string* out);
  void AppendUuid(std::string* out);

  std::vector<Piece> pieces_;
  std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace ferry::app
