// DebeziumProtobufDecoder: one Debezium change event as Confluent's ProtobufConverter writes it
// (`format = "debezium-protobuf"`, docs/cdc.md "Debezium envelopes"): a Schema Registry frame
// (confluent_wire.h: schema id, then the message indexes) around the Protobuf bytes of the
// connector's `Envelope` message. ProtobufConverter turns the Connect schema into proto3: each
// struct a message (nested in the first that uses it), fields numbered in Connect order:
//
//   syntax = "proto3";
//   package shop.public.customers;
//   message Envelope {
//     Value before = 1;                 // one message type for before and after
//     Value after = 2;
//     Source source = 3;                // io.debezium.connector.postgresql.Source
//     string op = 4;
//     int64 ts_ms = 5;                  // google.protobuf.Int64Value with wrapper.for.nullables
//     block transaction = 6;
//     message Value { int32 id = 1; string name = 2; int32 birth = 3; int64 seen = 4;
//                     confluent.type.Decimal price = 5; }
//     ...
//   }
//
// The fields are found by name, whatever their numbers. Per (writer schema id, message indexes)
// the decoder plans once: the envelope's field numbers, and a ProtobufRowReader
// (protobuf_reader.h) of the `Value` message into the row columns, with Connect's types
// (protobuf_reader.h "Connect's types": Debezium's Date, Timestamp/MicroTimestamp,
// Decimal and VariableScaleDecimal arrive without their Connect names, so the column's type
// says how to read them; epoch numbers in `epoch_micros_per_unit`). Per message:
// 1. Scan the envelope's top-level fields in wire order: `op` and the envelope columns' values
//    (the last occurrence wins; a wrapper message reads as its value; `source` and
//    `transaction` are scanned for the fields envelope columns name); `before` and `after` are
//    noted, not decoded (all their occurrences, which merge). A field of another wire type
//    than its type's is skipped, as libprotobuf keeps it as unknown.
// 2. Decode the row the change needs: `after` for c/r/u, `before` for d. proto3 writes a null
//    message as nothing, so an absent `before`/`after` reads as null.
// 3. Append the envelope columns.
//
// Shared with debezium-json and debezium-avro (debezium_envelope.h): the change kind
// (last_op()), the envelope columns ("op", "ts_ms", "source.<field>", "transaction.<field>"; a
// message value other than a wrapper reads as null), the messages of bad envelopes ("field
// 'op': unknown operation ...", "field 'after': null in a 'c' change ..."). Row data errors are
// "field 'after.price': ...".
//
// Tombstones: AppendTombstone decodes the Kafka key, a framed Protobuf `Key` message, into the
// row columns named like its fields (the other row columns null, the op column "d").
//
// Schema evolution: with `observe`, a Value message with fields no column takes (a column
// added in the source table: a new writer schema version) reports them as new top-level
// columns, typed as protobuf_schema.h maps them (a Debezium Date arrives as INT: its Connect
// name is not in the .proto); without it they are dropped (last_dropped()).
//
// Errors as ProtobufDecoder's (protobuf_decoder.h): InvalidArgument "schema id 12: ..." for a
// bad record (a writer schema that is not an envelope is refused for every message of it:
// "schema id 12: field 'op': missing ..."); Unavailable when the registry cannot be asked now
// (nothing appended; retry).
//
// Thread-safety: one decoder per thread (decoder.h); the ProtoSchemas must be thread-safe if
// shared.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/decoder.h"
#include "ferry/transform/protobuf_decoder.h"

namespace ferry::transform {

struct DebeziumProtobufOptions {
  // The writer schemas of values and keys by registry id.
  std::shared_ptr<ProtoSchemas> schemas;
  // The row columns; empty: every column that is not an envelope column.
  std::vector<std::string> columns;
  // Envelope field ("op", "source.lsn", ...) -> column.
  std::map<std::string, std::string> envelope_columns;
  bool observe = false;
  // The unit of integer fields read into TIMESTAMP columns: 1000 (millis, Debezium's
  // io.debezium.time.Timestamp), 1 (micros, MicroTimestamp), 1000000 (seconds).
  int64_t epoch_micros_per_unit = 1000;
};

class DebeziumProtobufDecoder final : public Decoder {
 public:
  // InvalidArgument for no `schemas`, an unknown envelope field, a column the schema lacks, or
  // an envelope column whose type cannot take the field.
  static Result<std::unique_ptr<DebeziumProtobufDecoder>> Create(columnar::SchemaPtr schema,
                                                                 DebeziumProtobufOptions options);
  ~DebeziumProtobufDecoder() override;

  const std::vector<int>& output_columns() const override;
  Status Append(std::string_view payload, columnar::RecordBatch* batch) override;
  bool reads_tombstones() const override { return true; }
  Status AppendTombstone(std::string_view key, columnar::RecordBatch* batch) override;

  class Impl;

 private:
  explicit DebeziumProtobufDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::transform
