// Debezium's special types as Kafka Connect's JsonConverter writes them, turned into what the
// JSON decoder reads for the column a table declares (DebeziumJsonDecoder,
// debezium_json_decoder.h, lists the conversions). Two parts:
//   - ParseConnectEnvelopeSchema: the semantic type of each row field, from the `schema` of a
//     `schemas.enable=true` message (Connect names such as io.debezium.time.MicroTimestamp and
//     org.apache.kafka.connect.data.Decimal with its `scale` parameter).
//   - RowRewriter: a row object's top-level values re-encoded where the column's type asks for
//     it (epoch numbers into microseconds, day counts into dates, base64 decimals into decimal
//     text); the object is returned untouched, without a parse, when the row columns include
//     no DATE, TIMESTAMP or DECIMAL column.
//
// Thread-safety: RowRewriter keeps scratch buffers; one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/json_decoder.h"

namespace ferry::transform {

// Debezium's decimal.handling.mode: how a DECIMAL column's string values are written when no
// Connect schema says (precise: base64 Connect Decimal bytes; string: decimal text; double:
// JSON numbers, which need no setting).
enum class DecimalHandling : uint8_t { kPrecise, kString };

enum class ConnectSemantic : uint8_t {
  kNone,             // no Connect name ferry converts
  kDays,             // io.debezium.time.Date, org.apache.kafka.connect.data.Date
  kMillis,           // io.debezium.time.Timestamp, org.apache.kafka.connect.data.Timestamp
  kMicros,           // io.debezium.time.MicroTimestamp
  kNanos,            // io.debezium.time.NanoTimestamp
  kDecimalBytes,     // org.apache.kafka.connect.data.Decimal (base64, `scale` parameter)
  kVariableDecimal,  // io.debezium.data.VariableScaleDecimal ({"scale": s, "value": base64})
  kText,             // a Connect string (decimal.handling.mode=string)
};

struct ConnectFieldSemantic {
  ConnectSemantic kind = ConnectSemantic::kNone;
  int32_t scale = -1;  // kDecimalBytes: the schema's scale; -1: the column's
};

using RowSemantics = std::unordered_map<std::string, ConnectFieldSemantic>;

struct ConnectRowSemantics {
  RowSemantics before;
  RowSemantics after;
};

// The semantics of the `before` and `after` fields of a Connect envelope schema (the JSON of
// the wrapper's "schema"). InvalidArgument when it is not a Connect struct schema.
Result<ConnectRowSemantics> ParseConnectEnvelopeSchema(std::string_view schema_json);

// The unscaled value of a Connect Decimal: base64 of its big-endian two's complement bytes.
// InvalidArgument for bad base64 or more than 16 bytes.
Result<columnar::Int128> DecimalFromConnectBytes(std::string_view base64);

class RowRewriter {
 public:
  using Semantics = RowSemantics;

  // `columns`: the row columns of `schema`; `unit`: of epoch numbers without a semantic.
  static Result<RowRewriter> Create(const columnar::Schema& schema,
                                    const std::vector<std::string>& columns, EpochUnit unit,
                                    DecimalHandling decimals);
  RowRewriter(RowRewriter&&) noexcept;
  RowRewriter& operator=(RowRewriter&&) noexcept;
  ~RowRewriter();

  // `object` (JSON object text readable up to `capacity` bytes from its start, as simdjson
  // needs) with its convertible values re-encoded; a view of `object` or of a scratch buffer
  // valid until the next call. InvalidArgument "field 'name': ..." for a value that does not
  // convert (bad base64, a number out of range).
  Result<std::string_view> Rewrite(std::string_view object, size_t capacity,
                                   const Semantics* semantics);

 private:
  struct Target {
    columnar::TypeId type;
    int32_t scale;
  };
  struct Parser;

  RowRewriter() = default;
  // The new JSON text for `value_text` (a number's token, a string's content, or an object's
  // JSON) of a `target` column, into value_; false when the value stays as written.
  Result<bool> Convert(const Target& target, ConnectFieldSemantic semantic, int json_kind,
                       std::string_view value_text);

  std::unordered_map<std::string, Target> targets_;
  EpochUnit unit_ = EpochUnit::kMillis;
  DecimalHandling decimals_ = DecimalHandling::kPrecise;
  std::unique_ptr<Parser> parser_;
  std::string out_;
  std::string value_;
};

}  // namespace ferry::transform
