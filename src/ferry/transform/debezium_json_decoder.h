// DebeziumJsonDecoder: one Debezium change event, as Kafka Connect's JsonConverter writes it
// (`format = "debezium-json"`, docs/cdc.md "Debezium envelopes"), into one row.
//
// Accepted shapes (told apart per message):
//   {"schema": {...}, "payload": {"before": ..., "after": ..., "source": {...}, "op": "u", ...}}
//   {"before": ..., "after": ..., "source": {...}, "op": "u", "ts_ms": 1700000000000, ...}
// The first is `value.converter.schemas.enable=true`, the second `false`.
//
// The row: op c (insert), r (snapshot read) and u (update) take it from `after`, d (delete)
// from `before`; last_op() is kUpsert for c/r/u and kDelete for d (change_op.h). The row
// object is decoded by a JsonDecoder over the row columns (json_decoder.h: same mapping,
// coercions, schema evolution), after Debezium's encodings of top-level values are turned into
// what the column's declared type reads ("special types", where the type asks for it):
//   DATE column, number               days since the epoch (io.debezium.time.Date)
//   TIMESTAMP(_NTZ) column, number    epoch count: ms (Timestamp), us (MicroTimestamp), ns
//                                     (NanoTimestamp) by the field's Connect schema name; without
//                                     a schema, options.epoch_unit
//   DECIMAL column, string            Connect Decimal: base64 of the big-endian two's
//                                     complement unscaled value, at the schema's `scale` (or
//                                     the column's); with decimal_handling kString, decimal text
//   DECIMAL column, {scale, value}    io.debezium.data.VariableScaleDecimal
// Strings in TIMESTAMP columns (ZonedTimestamp) and all other values go to the JsonDecoder as
// written. A wrapper's schema is parsed once and reused while the next message carries the
// same schema text.
//
// Envelope columns: `envelope_columns` maps envelope fields to columns: "op", "ts_ms", "ts_us",
// "ts_ns", "source.<field>", "transaction.<field>". Column types: STRING (any value, numbers
// as written, objects as JSON text), BIGINT / INT (integers), BOOLEAN, TIMESTAMP(_NTZ) (an
// epoch count in the unit the field's name ends with: _us, _ns, else ms). An absent field is
// null.
//
// Tombstones: AppendTombstone decodes the Kafka message key ({"id": 1}, or wrapped as
// {"schema": ..., "payload": {"id": 1}}) into the row columns it names, the rest null; the op
// column (if any) says "d" and last_op() is kDelete.
//
// The envelope logic (op, envelope columns, tombstones' op, bad-envelope messages) is shared with
// format = "debezium-avro" (debezium_envelope.h).
//
// Bad envelopes are InvalidArgument naming the field: "field 'op': missing ...", "field 'op':
// unknown operation \"x\"", "field 'after': null in a 'c' change ...", "field 'after.price':
// ..." (the JsonDecoder's error inside the row).
//
// Thread-safety: one decoder per thread (Decoder).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/debezium_envelope.h"
#include "ferry/transform/debezium_types.h"
#include "ferry/transform/decoder.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::transform {

struct DebeziumJsonOptions {
  // The row columns: the JsonDecoder's options (columns, time zone, formats, observe, ...).
  // Its `columns` must not name envelope columns; empty means every column that is not one.
  // `epoch_unit` is the unit of numbers in TIMESTAMP columns when no schema names it.
  JsonDecoderOptions row;
  // Envelope field ("op", "source.lsn", ...) -> column.
  std::map<std::string, std::string> envelope_columns;
  DecimalHandling decimal_handling = DecimalHandling::kPrecise;
};

class DebeziumJsonDecoder final : public Decoder {
 public:
  // InvalidArgument for an envelope field ferry does not know, a column the schema lacks, an
  // envelope column whose type cannot take the field, or bad row options (JsonDecoder::Create).
  static Result<std::unique_ptr<DebeziumJsonDecoder>> Create(columnar::SchemaPtr schema,
                                                             DebeziumJsonOptions options);
  ~DebeziumJsonDecoder() override;

  const std::vector<int>& output_columns() const override;
  Status Append(std::string_view payload, columnar::RecordBatch* batch) override;
  bool reads_tombstones() const override { return true; }
  Status AppendTombstone(std::string_view key, columnar::RecordBatch* batch) override;

  class Impl;

 private:
  explicit DebeziumJsonDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::transform
