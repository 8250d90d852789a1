// RoutingFields: the fields a routed pipeline's selector reads (route_selector.h), decoded from
// each message into a narrow routing schema by a Decoder of the pipeline's format (JSON, Avro,
// Protobuf; app/routed_pipeline.cc makes it). Only the routing schema's columns are built: a
// writer field the schema lacks is skipped, not copied (Avro and Protobuf still walk the datum
// to find the fields; docs/decisions/routing.md, "Formats", has the measured cost).
//
//   RoutingFields fields(schema, std::move(decoder));
//   FERRY_RETURN_IF_ERROR(fields.Decode(messages));   // Unavailable: ask again later
//   if (fields.row(i) >= 0) { std::optional<std::string> v = fields.Text(i, "a.b"); }
//
// A message that does not decode (a bad frame, an unknown schema id, a field whose writer type
// cannot be read into the routing schema's) has row -1 and error(i) says why; the selector
// decides what that means (a bad record, carried by a table it names).
//
// Thread-safety: one thread (the router's).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/columnar/types.h"
#include "ferry/source/source.h"
#include "ferry/transform/decoder.h"

namespace ferry::pipeline {

class RoutingFields {
 public:
  RoutingFields(columnar::SchemaPtr schema, std::unique_ptr<transform::Decoder> decoder)
      : schema_(std::move(schema)), decoder_(std::move(decoder)) {}

  // A schema holding `paths` ("a.b" -> a STRUCT<b: STRING>), every leaf a nullable STRING.
  static columnar::SchemaPtr StringSchema(const std::vector<std::string>& paths);

  const columnar::SchemaPtr& schema() const { return schema_; }

  // Decodes every message, replacing what the last call decoded. Unavailable (the decoder's
  // writer schemas could not be fetched now): nothing is kept; call again later.
  Status Decode(std::span<const source::Message> messages);

  // After Decode: the batch of the decoded messages, message i's row in it (-1: it did not
  // decode) and why it did not.
  const columnar::RecordBatch& batch() const { return batch_; }
  int64_t row(size_t message) const { return rows_[message]; }
  const std::string& error(size_t message) const { return errors_[message]; }

  // The value at `path` of message `message` as text: a string's contents, an integer's or a
  // boolean's ("true"/"false") spelling. nullopt when the message did not decode, the value is
  // null or absent, or of another type (floats, nested values: not table names).
  std::optional<std::string> Text(size_t message, std::string_view path) const;

 private:
  columnar::SchemaPtr schema_;
  std::unique_ptr<transform::Decoder> decoder_;
  columnar::RecordBatch batch_;
  std::vector<int64_t> rows_;
  std::vector<std::string> errors_;
};

}  // namespace ferry::pipeline
