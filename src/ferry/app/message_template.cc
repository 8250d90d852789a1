#include "ferry/app/message_template.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <charconv>

namespace ferry::app {
namespace {

constexpr std::string_view kDefaultTimePattern = "yyyy-MM-dd'T'HH:mm:ss.SSSX";
constexpr int64_t kMaxRandomLetters = 1 << 20;

constexpr std::array<std::string_view, 12> kMonths = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};
constexpr std::array<std::string_view, 7> kDays = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                   "Thursday", "Friday", "Saturday"};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

bool IsLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The largest repeat count each supported letter accepts (Java's limits).
int MaxCount(char letter) {
  switch (letter) {
    case 'y':
      return 9;
    case 'M':
    case 'E':
    case 'Z':
    case 'X':
      return 5;
    case 'd':
    case 'H':
    case 'h':
    case 'm':
    case 's':
      return 2;
    case 'S':
      return 9;
    case 'a':
      return 1;
    case 'z':
      return 4;
    default:
      return 0;
  }
}

void AppendPadded(int64_t value, int width, std::string* out) {
  fmt::format_to(std::back_inserter(*out), "{:0{}}", value, width);
}

void AppendText(std::string_view full, int count, std::string* out) {
  if (count <= 3) {
    out->append(full.substr(0, 3));
  } else if (count == 4) {
    out->append(full);
  } else {
    out->append(full.substr(0, 1));
  }
}

}  // namespace

Result<MessageTemplate> MessageTemplate::Parse(std::string_view text) {
  MessageTemplate t;
  size_t pos = 0;
  std::string literal;
  while (pos < text.size()) {
    size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) {
      literal.append(text.substr(pos));
      break;
    }
    literal.append(text.substr(pos, open - pos));
    size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return InvalidArgument("template: '{{{{' at offset {} has no closing '}}}}'", open);
    }
    FERRY_ASSIGN_OR_RETURN(Piece piece,
                           ParsePlaceholder(text.substr(open + 2, close - open - 2), open));
    if (!literal.empty()) {
      t.AddLiteral(std::move(literal));
      literal.clear();
    }
    t.pieces_.push_back(std::move(piece));
    pos = close + 2;
  }
  if (!literal.empty()) {
    t.AddLiteral(std::move(literal));
  }
  return t;
}

Result<MessageTemplate::Piece> MessageTemplate::ParsePlaceholder(std::string_view body,
                                                                 size_t offset) {
  std::string_view trimmed = Trim(body);
  std::string_view name = trimmed;
  std::string_view arg;
  bool has_arg = false;
  if (size_t colon = trimmed.find(':'); colon != std::string_view::npos) {
    name = Trim(trimmed.substr(0, colon));
    arg = trimmed.substr(colon + 1);
    has_arg = true;
  }
  Piece piece;
  if ((name == "seq" || name == "Count") && !has_arg) {
    piece.kind = Kind::kSeq;
  } else if (name == "uuid" && !has_arg) {
    piece.kind = Kind::kUuid;
  } else if (name == "now") {
    piece.kind = Kind::kNow;
    std::string_view pattern = has_arg ? arg : kDefaultTimePattern;
    FERRY_ASSIGN_OR_RETURN(piece.fields, ParseTimePattern(pattern, offset));
  } else if (name == "rand" && has_arg) {
    std::string_view n = Trim(arg);
    auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), piece.count);
    if (ec != std::errc() || end != n.data() + n.size() || piece.count < 1 ||
        piece.count > kMaxRandomLetters) {
      return InvalidArgument("template: {{{{rand:N}}}} at offset {} needs N in 1..{}, not '{}'",
                             offset, kMaxRandomLetters, n);
    }
    piece.kind = Kind::kRand;
  } else if (name == "cycle" && has_arg) {
    size_t start = 0;
    while (true) {
      const size_t comma = arg.find(',', start);
      piece.values.emplace_back(Trim(arg.substr(start, comma - start)));
      if (comma == std::string_view::npos) {
        break;
      }
      start = comma + 1;
    }
    if (std::any_of(piece.values.begin(), piece.values.end(),
                    [](const std::string& v) { return v.empty(); })) {
      return InvalidArgument(
          "template: {{{{cycle:A,B,...}}}} at offset {} has an empty value in '{}'", offset, arg);
    }
    piece.kind = Kind::kCycle;
  } else {
    return InvalidArgument(
        "template: unknown placeholder '{{{{{}}}}}' at offset {} (known: seq, Count, now, "
        "now:PATTERN, rand:N, uuid, cycle:A,B,...)",
        body, offset);
  }
  return piece;
}

Result<std::vector<MessageTemplate::TimeField>> MessageTemplate::ParseTimePattern(
    std::string_view pattern, size_t offset) {
  std::vector<TimeField> fields;
  auto literal = [&fields]() -> std::string& {
    if (fields.empty() || fields.back().letter != 0) {
      fields.push_back(TimeField{});
    }
    return fields.back().literal;
  };
  size_t i = 0;
  while (i < pattern.size()) {
    char c = pattern[i];
    if (c == '\'') {
      if (i + 1 < pattern.size() && pattern[i + 1] == '\'') {  // '' is one quote
        literal().push_back('\'');
        i += 2;
        continue;
      }
      size_t j = i + 1;
      std::string text;
      while (true) {
        if (j >= pattern.size()) {
          return InvalidArgument(
              "template: time pattern '{}' (placeholder at offset {}) has an unclosed quote",
              pattern, offset);
        }
        if (pattern[j] == '\'') {
          if (j + 1 < pattern.size() && pattern[j + 1] == '\'') {
            text.push_back('\'');
            j += 2;
            continue;
          }
          break;
        }
        text.push_back(pattern[j++]);
      }
      literal().append(text);
      i = j + 1;
      continue;
    }
    if (IsLetter(c)) {
      size_t run = i;
      while (run < pattern.size() && pattern[run] == c) {
        ++run;
      }
      const int count = static_cast<int>(run - i);
      const int max = MaxCount(c);
      if (max == 0) {
        return InvalidArgument(
            "template: time pattern '{}' (placeholder at offset {}): letter "
            "'{}' is not supported (supported: y M d H h m s S a E Z X z)",
            pattern, offset, c);
      }
      if (count > max) {
        return InvalidArgument(
            "template: time pattern '{}' (placeholder at offset {}): too many "
            "'{}' ({} > {})",
            pattern, offset, c, count, max);
      }
      TimeField field;
      field.letter = c;
      field.count = count;
      fields.push_back(std::move(field));
      i = run;
      continue;
    }
    if (c == '[' || c == ']' || c == '{' || c == '}' || c == '#') {
      return InvalidArgument(
          "template: time pattern '{}' (placeholder at offset {}): '{}' is "
          "reserved; quote it",
          pattern, offset, c);
    }
    literal().push_back(c);
    ++i;
  }
  return fields;
}

void MessageTemplate::FormatTime(const std::vector<TimeField>& fields, int64_t micros,
                                 std::string* out) {
  int64_t seconds = micros >= 0 ? micros / 1'000'000 : (micros - 999'999) / 1'000'000;
  const int64_t fraction_us = micros - seconds * 1'000'000;
  time_t t = static_cast<time_t>(seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  for (const TimeField& f : fields) {
    switch (f.letter) {
      case 0:
        out->append(f.literal);
        break;
      case 'y': {
        const int64_t year = tm.tm_year + 1900;
        if (f.count == 2) {
          AppendPadded(year % 100, 2, out);
        } else {
          AppendPadded(year, f.count, out);
        }
        break;
      }
      case 'M':
        if (f.count <= 2) {
          AppendPadded(tm.tm_mon + 1, f.count, out);
        } else {
          AppendText(kMonths[static_cast<size_t>(tm.tm_mon)], f.count, out);
        }
        break;
      case 'd':
        AppendPadded(tm.tm_mday, f.count, out);
        break;
      case 'H':
        AppendPadded(tm.tm_hour, f.count, out);
        break;
      case 'h':
        AppendPadded(tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12, f.count, out);
        break;
      case 'm':
        AppendPadded(tm.tm_min, f.count, out);
        break;
      case 's':
        AppendPadded(tm.tm_sec, f.count, out);
        break;
      case 'S': {
        // Microseconds shown with `count` digits: truncate, or pad with zeros beyond 6.
        std::string digits = fmt::format("{:06}000", fraction_us);
        out->append(digits.substr(0, static_cast<size_t>(f.count)));
        break;
      }
      case 'a':
        out->append(tm.tm_hour < 12 ? "AM" : "PM");
        break;
      case 'E':
        AppendText(kDays[static_cast<size_t>(tm.tm_wday)], f.count, out);
        break;
      case 'Z':
        out->append(f.count <= 3 ? "+0000" : (f.count == 4 ? "GMT" : "Z"));
        break;
      case 'X':
        out->push_back('Z');
        break;
      case 'z':
        out->append(f.count <= 3 ? "UTC" : "Coordinated Universal Time");
        break;
      default:
        break;  // refused by ParseTimePattern
    }
  }
}

void MessageTemplate::Render(int64_t seq, std::chrono::system_clock::time_point now,
                             std::string* out) {
  out->clear();
  const int64_t micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
  for (Piece& p : pieces_) {
    switch (p.kind) {
      case Kind::kLiteral:
        out->append(p.literal);
        break;
      case Kind::kSeq: {
        std::array<char, 24> buf{};
        auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), seq);
        out->append(buf.data(), end);
        break;
      }
      case Kind::kCycle: {
        const int64_t n = static_cast<int64_t>(p.values.size());
        out->append(p.values[static_cast<size_t>((((seq - 1) % n) + n) % n)]);
        break;
      }
      case Kind::kNow: {
        const bool sub_second = std::any_of(p.fields.begin(), p.fields.end(),
                                            [](const TimeField& f) { return f.letter == 'S'; });
        const int64_t key = sub_second ? micros : micros / 1'000'000;
        if (key != p.cached_at) {
          p.cached.clear();
          FormatTime(p.fields, micros, &p.cached);
          p.cached_at = key;
        }
        out->append(p.cached);
        break;
      }
      case Kind::kRand:
        AppendRandomLetters(p.count, out);
        break;
      case Kind::kUuid:
        AppendUuid(out);
        break;
    }
  }
}

void MessageTemplate::AddLiteral(std::string text) {
  Piece piece;
  piece.literal = std::move(text);
  pieces_.push_back(std::move(piece));
}

bool MessageTemplate::uses_time() const {
  return std::any_of(pieces_.begin(), pieces_.end(),
                     [](const Piece& p) { return p.kind == Kind::kNow; });
}

void MessageTemplate::AppendRandomLetters(int64_t count, std::string* out) {
  static constexpr std::string_view kLetters =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  uint64_t bits = 0;
  int left = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (left == 0) {
      bits = rng_();
      left = 10;  // 10 letters of 6 bits each per draw
    }
    // 6 bits give 0..63; fold into 52 letters with a slight bias, fine for generated text.
    out->push_back(kLetters[(bits & 63) % kLetters.size()]);
    bits >>= 6;
    --left;
  }
}

void MessageTemplate::AppendUuid(std::string* out) {
  uint64_t hi = rng_();
  uint64_t lo = rng_();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;              // version 4
  lo = (lo & ~(0xC0ULL << 56)) | (0x80ULL << 56);  // variant 10xx
  fmt::format_to(std::back_inserter(*out), "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32,
                 (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48, lo & 0xFFFFFFFFFFFFULL);
}

}  // namespace ferry::app
