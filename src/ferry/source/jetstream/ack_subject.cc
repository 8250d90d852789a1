#include "ferry/source/jetstream/ack_subject.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ferry::source::jetstream {
namespace {

constexpr std::string_view kPrefix = "$JS.ACK.";

// One pass over the tokens, which are known to number 7, 9 or 10 (a subject is read for every
// message, so no token array and no from_chars per number).
class Tokens {
 public:
  explicit Tokens(std::string_view s) : p_(s.data()), end_(s.data() + s.size()) {}

  std::string_view Next() {
    const char* start = p_;
    while (p_ != end_ && *p_ != '.') {
      ++p_;
    }
    std::string_view token(start, static_cast<size_t>(p_ - start));
    if (p_ != end_) {
      ++p_;
    }
    return token;
  }

  // A token of decimal digits (at least one) that fits in uint64_t.
  bool NextNumber(uint64_t* out) {
    uint64_t v = 0;
    const char* start = p_;
    for (; p_ != end_ && *p_ != '.'; ++p_) {
      auto digit = static_cast<unsigned>(*p_ - '0');
      if (digit > 9 || v > (UINT64_MAX - digit) / 10) {
        return false;
      }
      v = v * 10 + digit;
    }
    if (p_ == start) {
      return false;
    }
    if (p_ != end_) {
      ++p_;
    }
    *out = v;
    return true;
  }

  // A token of decimal digits after an optional '-' that fits in int64_t (the timestamp: the
  // server writes it signed).
  bool NextSigned(int64_t* out) {
    bool negative = p_ != end_ && *p_ == '-';
    if (negative) {
      ++p_;
    }
    uint64_t magnitude = 0;
    if (!NextNumber(&magnitude)) {
      return false;
    }
    auto limit = static_cast<uint64_t>(INT64_MAX);
    if (magnitude > limit + (negative ? 1 : 0)) {
      return false;
    }
    // 0 - magnitude in uint64_t, then as int64_t: two's complement, also for INT64_MIN.
    *out = static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
    return true;
  }

 private:
  const char* p_;
  const char* end_;
};

}  // namespace

bool ParseAckSubject(std::string_view reply, AckMetadata* out) {
  if (!reply.starts_with(kPrefix)) {
    return false;
  }
  std::string_view rest = reply.substr(kPrefix.size());
  // v1 has 7 tokens after the prefix; v2 adds domain and account in front (9) and may append a
  // random token (10).
  const auto count = static_cast<size_t>(std::count(rest.begin(), rest.end(), '.')) + 1;
  if (count != 7 && count != 9 && count != 10) {
    return false;
  }
  Tokens tokens(rest);
  if (count != 7) {
    tokens.Next();  // domain
    tokens.Next();  // account hash
  }
  out->stream = tokens.Next();
  out->consumer = tokens.Next();
  if (out->stream.empty() || out->consumer.empty()) {
    return false;
  }
  return tokens.NextNumber(&out->num_delivered) && tokens.NextNumber(&out->stream_sequence) &&
         tokens.NextNumber(&out->consumer_sequence) && tokens.NextSigned(&out->timestamp_ns) &&
         tokens.NextNumber(&out->pending);
}

}  // namespace ferry::source::jetstream
