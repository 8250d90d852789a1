// The parts of a Debezium change envelope that do not depend on its wire format, shared by the
// decoders of `format = "debezium-json"` (debezium_json_decoder.h), `"debezium-avro"`
// (debezium_avro_decoder.h) and `"debezium-protobuf"` (debezium_protobuf_decoder.h), so that
// they read op, tombstones, envelope columns and bad envelopes alike (docs/cdc.md "Debezium
// envelopes"):
//   - EnvelopeValue: one envelope value as read (kind and text), whatever the encoding;
//   - ChangeOpOf / CheckRowPresent: the change kind of `op` and the row it needs, with the
//     error messages a bad envelope is dead-lettered with ("field 'op': unknown operation ...");
//   - EnvelopeColumns: `envelope_columns` (op, ts_ms, source.<field>, ...) -> columns: the slots
//     a decoder fills per message and appends after the row;
//   - DebeziumRowColumns: the row's columns (every column that is not an envelope column);
//   - RowFieldError: a row reader's error named after the row field ("field 'after.price': ...");
//   - SplitKeyColumns: the row columns a tombstone's key fills, and the ones it leaves null.
//
// Thread-safety: EnvelopeColumns holds the values of the message being decoded; one per decoder.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/change_op.h"

namespace ferry::transform {

// Whether `field` names an envelope field ("op", "ts_ms", "source.lsn", ...).
bool IsDebeziumEnvelopeField(std::string_view field);

// One envelope value as read: strings as their text, numbers and booleans as written in JSON
// ("123", "true"), objects and arrays as JSON text (a format that cannot give their text, Avro
// or Protobuf, reads them as null).
struct EnvelopeValue {
  enum Kind : uint8_t { kAbsent, kNull, kString, kNumber, kBool, kObject, kArray };
  Kind kind = kAbsent;
  std::string text;

  void Clear() {
    kind = kAbsent;
    text.clear();
  }
};

// "nothing", "null", "a string", ...
std::string_view EnvelopeKindName(EnvelopeValue::Kind kind);

// The change `op` describes: c, r, u upsert; d delete. InvalidArgument "field 'op': ..." when it
// is missing, not a string, or another operation (t, m).
Result<ChangeOp> ChangeOpOf(const EnvelopeValue& op);

// The row field a change of `op` takes its row from: "before" for a delete, else "after".
inline std::string_view RowFieldOf(ChangeOp op) {
  return op == ChangeOp::kDelete ? "before" : "after";
}

// OK when the row field of change `op` (`op_text` as written) holds a row (`row`: its kind as
// read, kObject for a row); else InvalidArgument "field 'after': null in a 'c' change (...)".
Status CheckRowPresent(EnvelopeValue::Kind row, ChangeOp op, std::string_view op_text);

// Where an envelope column's value comes from.
enum class EnvelopeScope : uint8_t { kTop, kSource, kTransaction };

class EnvelopeColumns {
 public:
  // `fields`: envelope field -> column of `schema`. InvalidArgument for an unknown field, a
  // column the schema lacks, or a column type that cannot take envelope values.
  static Result<EnvelopeColumns> Create(const columnar::Schema& schema,
                                        const std::map<std::string, std::string>& fields);

  // The columns filled, as indices into the schema (in the order of `fields`) and names.
  const std::vector<int>& columns() const { return columns_; }
  const std::vector<std::string>& names() const { return names_; }
  bool wants(EnvelopeScope scope) const;
  bool wants(EnvelopeScope scope, std::string_view name) const;

  // The value slot of `name` within `scope` ("lsn" in kSource), or null when no column wants it.
  EnvelopeValue* Find(EnvelopeScope scope, std::string_view name);
  // Every slot absent (a new message).
  void Clear();
  // A tombstone: every slot absent, the op column (if any) "d".
  void SetTombstone();

  // Appends each slot's value to its column. On error (a value the column's type cannot take:
  // InvalidArgument "field 'source.lsn': expected an integer, ...") some columns may be one row
  // longer: the caller truncates its columns back.
  Status Append(columnar::RecordBatch* batch) const;

 private:
  struct Slot {
    std::string field;  // as configured: "op", "source.lsn"
    EnvelopeScope scope;
    std::string name;  // within the scope: "op", "lsn"
    int column;
    columnar::TypeId type;
    int64_t micros_per_unit;  // TIMESTAMP columns: 1000 for *_ms, 1 for *_us; 0 for *_ns
    EnvelopeValue value;
  };
  static Status AppendValue(const Slot& s, columnar::Column* col);

  std::vector<Slot> slots_;
  std::vector<int> columns_;
  std::vector<std::string> names_;
};

// The row columns of a Debezium decoder: `requested` (checked not to be envelope columns), or,
// when empty, every column of `schema` that is not in `envelope`.
Result<std::vector<std::string>> DebeziumRowColumns(const columnar::Schema& schema,
                                                    const std::vector<std::string>& requested,
                                                    const EnvelopeColumns& envelope);

// A row reader's error, whose message is "<prefix>field 'price': ..." (or "<prefix>...", or
// "<prefix>field '<top>': ..."), as "field 'after.price': ..." (or "field 'after': ...") for
// `row_field` "after"; the code kept.
Status RowFieldError(std::string_view row_field, std::string_view prefix, const Status& st);

// The row columns (indices into `schema`) a key with fields `key_fields` fills, matched by name
// ignoring case, into `filled`; the others into `nulls`.
void SplitKeyColumns(const columnar::Schema& schema, const std::vector<int>& row_columns,
                     const std::vector<std::string_view>& key_fields, std::vector<int>* filled,
                     std::vector<int>* nulls);

}  // namespace ferry::transform
