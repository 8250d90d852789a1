#include "ferry/source/jetstream/ack_subject.h"

#include <array>
#include <charconv>
#include <cstddef>

namespace ferry::source::jetstream {
namespace {

constexpr std::string_view kPrefix = "$JS.ACK.";
constexpr size_t kMaxTokens = 10;  // after the prefix: v2 has 9 or 10

template <typename T>
bool ParseNumber(std::string_view token, T* out) {
  if (token.empty()) {
    return false;
  }
  const char* end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

bool ParseAckSubject(std::string_view reply, AckMetadata* out) {
  if (!reply.starts_with(kPrefix)) {
    return false;
  }
  std::string_view rest = reply.substr(kPrefix.size());
  std::array<std::string_view, kMaxTokens> tokens;
  size_t count = 0;
  while (true) {
    if (count == kMaxTokens) {
      return false;
    }
    size_t dot = rest.find('.');
    tokens[count++] = rest.substr(0, dot);
    if (dot == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(dot + 1);
  }
  // v1 has 7 tokens after the prefix; v2 adds domain and account in front (9) and may append a
  // random token (10).
  size_t first;
  if (count == 7) {
    first = 0;
  } else if (count == 9 || count == 10) {
    first = 2;
  } else {
    return false;
  }
  out->stream = tokens[first];
  out->consumer = tokens[first + 1];
  if (out->stream.empty() || out->consumer.empty()) {
    return false;
  }
  return ParseNumber(tokens[first + 2], &out->num_delivered) &&
         ParseNumber(tokens[first + 3], &out->stream_sequence) &&
         ParseNumber(tokens[first + 4], &out->consumer_sequence) &&
         ParseNumber(tokens[first + 5], &out->timestamp_ns) &&
         ParseNumber(tokens[first + 6], &out->pending);
}

}  // namespace ferry::source::jetstream
