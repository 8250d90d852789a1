// The Confluent Schema Registry wire format of a Kafka record's key or value (Confluent's
// "Wire format" documentation; Redpanda, Apicurio in compatibility mode and Karapace write the
// same):
//
//   byte 0      magic byte, 0
//   bytes 1-4   schema id, a big-endian signed 32-bit integer (the registry's id of the writer
//               schema)
//   Protobuf only: the message indexes, which message of the schema's file the payload is: a
//               zigzag varint count, then that many zigzag varint indexes (the first is the
//               top-level message, the next ones nested messages); the single byte 0 stands
//               for [0], the first message.
//   then        the payload in the schema's own binary encoding.
//
//   FERRY_ASSIGN_OR_RETURN(ConfluentFrame frame, ParseConfluentFrame(value, /*protobuf=*/false));
//
// Errors are InvalidArgument (a bad record: the pipeline routes it by `on_bad_record`) naming
// what is wrong: no magic byte, a truncated header, a message-index list that is truncated,
// negative, or longer than kMaxMessageIndexes.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::transform {

struct ConfluentFrame {
  int32_t schema_id = 0;
  std::vector<int32_t> message_indexes;  // Protobuf only; [0] when the frame says so
  std::string_view payload;              // points into the parsed bytes
};

constexpr size_t kConfluentHeaderBytes = 5;
constexpr int64_t kMaxMessageIndexes = 64;

Result<ConfluentFrame> ParseConfluentFrame(std::string_view bytes, bool protobuf);

// The frame's header followed by `payload` (tests and `ferry produce`).
std::string MakeConfluentFrame(int32_t schema_id, const std::vector<int32_t>& message_indexes,
                               std::string_view payload, bool protobuf);

}  // namespace ferry::transform
