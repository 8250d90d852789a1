// DebeziumAvroDecoder: one Debezium change event as Confluent's AvroConverter writes it
// (`format = "debezium-avro"`, docs/cdc.md "Debezium envelopes"): a Schema Registry frame
// (confluent_wire.h) around an Avro datum of the connector's `Envelope` record:
//
//   {"type": "record", "name": "Envelope", "namespace": "shop.public.customers", "fields": [
//     {"name": "before", "type": ["null", {"type": "record", "name": "Value", "fields": [...]}]},
//     {"name": "after", "type": ["null", "Value"]},
//     {"name": "source", "type": {"type": "record", "name": "Source", ...}},
//     {"name": "op", "type": "string"}, {"name": "ts_ms", "type": ["null", "long"]},
//     {"name": "transaction", "type": ["null", {"type": "record", ...}]}]}
//
// The fields are found by name, in whatever order the writer schema has them. Per writer schema
// id the decoder plans once: the envelope's fields and an AvroRowReader (avro_reader.h) of the
// `Value` record into the row columns (the Avro resolution rules, Debezium's time and decimal
// types by their connect.name). Per message it walks the envelope (skipping what no column
// wants), then decodes the row the change needs: `after` for c/r/u, `before` for d.
//
// Shared with debezium-json (debezium_envelope.h): the change kind (last_op()), the envelope
// columns ("op", "ts_ms", "source.<field>", "transaction.<field>"; a record, array or map value
// reads as null), the messages of bad envelopes ("field 'op': unknown operation ...", "field
// 'after': null in a 'c' change ..."). Row data errors are "field 'after.price': ...".
//
// Tombstones: AppendTombstone decodes the Kafka key, a framed Avro `Key` record, into the row
// columns named like its fields (the other row columns null, the op column "d").
//
// Schema evolution: with `observe`, a Value record with fields no column takes (a column added
// in the source table: a new writer schema version) reports them as new top-level columns, as
// AvroDecoder does; without it they are dropped (last_dropped()).
//
// Errors as AvroDecoder's (avro_decoder.h): InvalidArgument "schema id 12: ..." for a bad record
// (the writer schema refused for every message of it: "schema id 12: field 'op': missing ...");
// Unavailable when the registry cannot be asked now (nothing appended; retry).
//
// Thread-safety: one decoder per thread (decoder.h); the WriterSchemas must be thread-safe if
// shared.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/avro_decoder.h"
#include "ferry/transform/decoder.h"

namespace ferry::transform {

struct DebeziumAvroOptions {
  // The writer schemas of values and keys by registry id.
  std::shared_ptr<WriterSchemas> schemas;
  // The row columns; empty: every column that is not an envelope column.
  std::vector<std::string> columns;
  // Envelope field ("op", "source.lsn", ...) -> column.
  std::map<std::string, std::string> envelope_columns;
  bool observe = false;
};

class DebeziumAvroDecoder final : public Decoder {
 public:
  // InvalidArgument for no `schemas`, an unknown envelope field, a column the schema lacks, or an
  // envelope column whose type cannot take the field.
  static Result<std::unique_ptr<DebeziumAvroDecoder>> Create(columnar::SchemaPtr schema,
                                                             DebeziumAvroOptions options);
  ~DebeziumAvroDecoder() override;

  const std::vector<int>& output_columns() const override;
  Status Append(std::string_view payload, columnar::RecordBatch* batch) override;
  bool reads_tombstones() const override { return true; }
  Status AppendTombstone(std::string_view key, columnar::RecordBatch* batch) override;

  class Impl;

 private:
  explicit DebeziumAvroDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::transform
