// The JetStream delivery metadata carried in a message's reply subject. The server encodes a
// pushed message's stream sequence, consumer sequence, delivery count, timestamp and pending
// count in the subject a client would ack to; reading them from there costs no allocation,
// unlike natsMsg_GetMetaData (which copies the stream and consumer names per message).
//
// Two layouts exist (the server writes v2 when it runs with a JetStream domain or newer
// account features; clients must read both):
//   v1: $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<ns>.<pending>
//   v2: $JS.ACK.<domain>.<account>.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>
//       .<ns>.<pending>[.<random>]
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace ferry::source::jetstream {

struct AckMetadata {
  std::string_view stream;    // a view into the parsed subject
  std::string_view consumer;  // a view into the parsed subject
  uint64_t num_delivered = 0;
  uint64_t stream_sequence = 0;
  uint64_t consumer_sequence = 0;
  int64_t timestamp_ns = 0;  // nanoseconds since the Unix epoch, when the stream stored it
  // Messages matching the consumer's filter after this one, as the server counted them when it
  // sent this one.
  uint64_t pending = 0;
};

// Returns false when `reply` is not a JetStream ack subject in either layout or a number in it
// is malformed (overflow, empty, non-digit); *out is then unspecified.
bool ParseAckSubject(std::string_view reply, AckMetadata* out);
// The same for a NUL-terminated subject (natsMsg_GetReply), read in the same single pass that
// finds its end.
bool ParseAckSubject(const char* reply, AckMetadata* out);

}  // namespace ferry::source::jetstream
