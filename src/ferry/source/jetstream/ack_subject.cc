#include "ferry/source/jetstream/ack_subject.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ferry::source::jetstream {
namespace {

constexpr std::string_view kPrefix = "$JS.ACK.";
constexpr int kMaxTokens = 10;

// A token of decimal digits (at least one) that fits in uint64_t.
bool Number(const char* p, const char* end, uint64_t* out) {
  if (p == end) {
    return false;
  }
  uint64_t v = 0;
  for (; p != end; ++p) {
    auto digit = static_cast<uint64_t>(static_cast<unsigned char>(*p)) - '0';
    if (digit > 9 || __builtin_mul_overflow(v, uint64_t{10}, &v) ||
        __builtin_add_overflow(v, digit, &v)) {
      return false;
    }
  }
  *out = v;
  return true;
}

// A token of decimal digits after an optional '-' that fits in int64_t (the timestamp: the
// server writes it signed).
bool Signed(const char* p, const char* end, int64_t* out) {
  bool negative = p != end && *p == '-';
  uint64_t magnitude = 0;
  if (!Number(p + (negative ? 1 : 0), end, &magnitude)) {
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

// `p` is just after the prefix; `at_end(q)` says whether q is the end of the subject (its size
// or its NUL). One pass finds the tokens, which must number 7, 9 or 10 (a subject is read for
// every message: no strlen, no count, no second scan of the names).
template <typename AtEnd>
bool ParseTokens(const char* p, AtEnd at_end, AckMetadata* out) {
  const char* begin[kMaxTokens];
  const char* end[kMaxTokens];
  int n = 0;
  for (const char* token = p;; ++p) {
    const bool last = at_end(p);
    if (last || *p == '.') {
      if (n == kMaxTokens) {
        return false;
      }
      begin[n] = token;
      end[n] = p;
      ++n;
      if (last) {
        break;
      }
      token = p + 1;
    }
  }
  // v1 has 7 tokens after the prefix; v2 adds domain and account in front (9) and may append a
  // random token (10).
  if (n != 7 && n != 9 && n != 10) {
    return false;
  }
  const int t = n == 7 ? 0 : 2;
  out->stream = std::string_view(begin[t], static_cast<size_t>(end[t] - begin[t]));
  out->consumer = std::string_view(begin[t + 1], static_cast<size_t>(end[t + 1] - begin[t + 1]));
  if (out->stream.empty() || out->consumer.empty()) {
    return false;
  }
  return Number(begin[t + 2], end[t + 2], &out->num_delivered) &&
         Number(begin[t + 3], end[t + 3], &out->stream_sequence) &&
         Number(begin[t + 4], end[t + 4], &out->consumer_sequence) &&
         Signed(begin[t + 5], end[t + 5], &out->timestamp_ns) &&
         Number(begin[t + 6], end[t + 6], &out->pending);
}

}  // namespace

bool ParseAckSubject(std::string_view reply, AckMetadata* out) {
  if (!reply.starts_with(kPrefix)) {
    return false;
  }
  const char* stop = reply.data() + reply.size();
  return ParseTokens(
      reply.data() + kPrefix.size(), [stop](const char* q) { return q == stop; }, out);
}

bool ParseAckSubject(const char* reply, AckMetadata* out) {
  if (std::strncmp(reply, kPrefix.data(), kPrefix.size()) != 0) {
    return false;
  }
  return ParseTokens(
      reply + kPrefix.size(), [](const char* q) { return *q == '\0'; }, out);
}

}  // namespace ferry::source::jetstream
