// Decoder: turns one message payload (a Kafka record value, a JetStream message body) into one
// row of a columnar::RecordBatch. Implementations: JsonDecoder (json_decoder.h) and RawDecoder
// (raw_decoder.h); the pipeline holds them through this interface.
//
// A decoder fills only its own columns of the batch (output_columns()); the pipeline fills the
// others (metadata such as _offset or _key) before or after calling Append. Each Append leaves
// every owned column exactly one row longer, or, on error, exactly as it was: a bad message
// never leaves a half-written row behind.
//
// Errors a caller branches on: InvalidArgument = a bad record (the message names the field and
// the reason, e.g. "field 'loc.lat': expected a number, found string \"abc\""; the pipeline
// prefixes topic/partition/offset and routes the record to the dead-letter table).
//
// Thread-safety: a decoder keeps scratch buffers; use one per thread.
#pragma once

#include <string_view>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/columnar/record_batch.h"

namespace ferry::transform {

class Decoder {
 public:
  virtual ~Decoder() = default;

  // Indices into the batch schema of the columns this decoder appends to, ascending.
  virtual const std::vector<int>& output_columns() const = 0;

  // Appends one row decoded from `payload` to the owned columns of `batch`.
  // REQUIRES: batch's schema equals the schema the decoder was created with, and the owned
  // columns have equal lengths.
  virtual Status Append(std::string_view payload, columnar::RecordBatch* batch) = 0;
};

}  // namespace ferry::transform
