// RawDecoder: the whole payload, unparsed, into one STRING or BINARY column (`decoder = "raw"`,
// `column = "payload"` in the pipeline config). A STRING column holds text, so a payload that is
// not valid UTF-8 is a bad record (InvalidArgument naming the byte offset), never stored.
//
// Thread-safety: one decoder per thread (decoder.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/decoder.h"

namespace ferry::transform {

struct RawDecoderOptions {
  std::string column = "payload";
};

class RawDecoder final : public Decoder {
 public:
  // InvalidArgument when the column is missing or neither STRING nor BINARY.
  static Result<std::unique_ptr<RawDecoder>> Create(columnar::SchemaPtr schema,
                                                    RawDecoderOptions options);

  const std::vector<int>& output_columns() const override { return columns_; }
  Status Append(std::string_view payload, columnar::RecordBatch* batch) override;

 private:
  RawDecoder(int column, bool validate_utf8) : columns_{column}, validate_utf8_(validate_utf8) {}

  std::vector<int> columns_;
  bool validate_utf8_;
};

}  // namespace ferry::transform
