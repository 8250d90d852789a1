// Decoder: turns one message payload (a Kafka record value, a JetStream message body) into one
// row of a columnar::RecordBatch. Implementations: JsonDecoder (json_decoder.h), RawDecoder
// (raw_decoder.h) and AvroDecoder (avro_decoder.h); the pipeline holds them through this
// interface.
//
// A decoder fills only its own columns of the batch (output_columns()); the pipeline fills the
// others (metadata such as _offset or _key) before or after calling Append. Each Append leaves
// every owned column exactly one row longer, or, on error, exactly as it was: a bad message
// never leaves a half-written row behind.
//
// Errors a caller branches on: InvalidArgument = a bad record (the message names the field and
// the reason, e.g. "field 'loc.lat': expected a number, found string \"abc\""; the pipeline
// prefixes topic/partition/offset and routes the record to the dead-letter table). Unavailable
// (AvroDecoder: its schema registry unreachable) = not a bad record: nothing was appended, try
// the message again later.
//
// Schema evolution: a decoder asked to observe (JsonDecoderOptions::observe,
// AvroDecoderOptions::observe) also reports what the schema it decodes into cannot hold: a field
// the schema lacks, with the type its value needs, and a value that does not fit its field's
// type, with the type it needs. Reporting costs
// nothing while messages fit the schema: observations are made only where a field is unknown or
// a value fails. The pipeline turns them into a schema change (pipeline/schema_evolver.h).
//
// Dropped fields: a decoder with writer schemas (Avro, Protobuf) knows, per writer schema, which
// writer fields (at any depth) the schema it decodes into has no place for; it skips them. After
// each successful Append, last_dropped() names them (null when there are none), so that the
// pipeline can count and log what a message lost. Costs one pointer store per message.
//
// Thread-safety: a decoder keeps scratch buffers; use one per thread.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/change_op.h"

namespace ferry::transform {

struct FieldObservation {
  // Struct field names from the top level down; "element", "key" and "value" enter arrays and
  // maps (as delta::SchemaChange::field).
  std::vector<std::string> path;
  // The type the value needs. Null: nothing to go by yet (the value was null, or an object or
  // array holding only nulls).
  columnar::DataTypePtr type;
  // True: the schema has no field at `path`. False: the field's type cannot hold the value.
  bool missing = true;
};

// The writer fields a decoder skips for one writer schema (see "Dropped fields" above).
struct DroppedFields {
  std::string writer;               // "schema id 12", "schema id 12 message shop.Order", ...
  std::vector<std::string> fields;  // paths as delta::SchemaChange::Path: "loc.alt",
                                    // "items.element.qty", "attrs.value.note"
};

class Decoder {
 public:
  virtual ~Decoder() = default;

  // Indices into the batch schema of the columns this decoder appends to, ascending.
  virtual const std::vector<int>& output_columns() const = 0;

  // Appends one row decoded from `payload` to the owned columns of `batch`.
  // REQUIRES: batch's schema equals the schema the decoder was created with, and the owned
  // columns have equal lengths.
  virtual Status Append(std::string_view payload, columnar::RecordBatch* batch) = 0;

  // Observations made since they were last taken (only when the decoder observes).
  bool has_observations() const { return !observations_.empty(); }
  std::vector<FieldObservation> TakeObservations() { return std::exchange(observations_, {}); }

  // The writer fields the last Append skipped, when it succeeded and skipped some; else null.
  // Valid until the next Append or the decoder's end.
  const DroppedFields* last_dropped() const { return last_dropped_; }

  // What the last successful Append's message does to its key's row (change_op.h): kUpsert
  // unless the decoder reads a change envelope.
  ChangeOp last_op() const { return last_op_; }

  // Tombstones (a message without a value, which a compacted topic reads as "delete this key").
  // A decoder that reads change envelopes (DebeziumJsonDecoder) decodes a row from the message
  // key alone: the key's fields into their columns, every other owned column null, and
  // last_op() = kDelete. Others return false and NotSupported; a pipeline hands them empty
  // payloads as usual.
  virtual bool reads_tombstones() const { return false; }
  virtual Status AppendTombstone(std::string_view /*key*/, columnar::RecordBatch* /*batch*/) {
    return NotSupported("this decoder does not read tombstones");
  }

 protected:
  std::vector<FieldObservation> observations_;
  const DroppedFields* last_dropped_ = nullptr;
  ChangeOp last_op_ = ChangeOp::kUpsert;
};

// The indices into `schema` of the columns a decoder named `decoder` ("Avro decoder") fills:
// `names`, ascending, or every column when `names` is empty. InvalidArgument naming a column
// the schema lacks, or when there is none to fill.
inline Result<std::vector<int>> OutputColumns(const columnar::Schema& schema,
                                              const std::vector<std::string>& names,
                                              std::string_view decoder) {
  std::vector<int> columns;
  if (names.empty()) {
    for (int i = 0; i < schema.num_fields(); ++i) {
      columns.push_back(i);
    }
  } else {
    for (const std::string& name : names) {
      std::optional<int> index = schema.FieldIndex(name);
      if (!index.has_value()) {
        return InvalidArgument("{}: the table has no column \"{}\"", decoder, name);
      }
      columns.push_back(*index);
    }
    std::sort(columns.begin(), columns.end());
  }
  if (columns.empty()) {
    return InvalidArgument("{}: no columns to fill", decoder);
  }
  return columns;
}

}  // namespace ferry::transform
