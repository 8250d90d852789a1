// ProtobufRowReader: one Protobuf message in the binary wire format (protobuf.dev, "Encoding")
// written with a writer message type (MessageSchema, protobuf_schema.h), appended as one row of a
// record batch whose columns are the reader's schema. Built once per writer type (a registry
// schema id and message index, or the fixed message of unframed input); decoding then walks a
// plan made at build time, straight into the columns: no value tree and no libprotobuf message.
//
//   FERRY_ASSIGN_OR_RETURN(auto reader, ProtobufRowReader::Create(writer, batch_schema, columns));
//   Status st = reader->Append(message, &batch);   // one row more, or the batch as it was
//
// Decoding a message, per the encoding's rules:
// 1. Scan its fields in wire order: each tag's field number and wire type; a field the writer
//    type lacks, or one whose wire type is not its type's, is skipped (groups included), as
//    libprotobuf keeps such fields as unknown. Every occurrence of a known field is noted.
// 2. Fill the columns from the notes: a scalar takes its last occurrence; a repeated field all of
//    them in order, packed or not, mixed; an embedded message merges all its occurrences (they
//    are decoded as one message made of their bytes, in order); a oneof keeps only the member
//    that came last. An absent field is null (proto3 gives no way to tell it from its default;
//    Spark's from_protobuf does the same), an absent repeated field or map an empty array or
//    map; a map entry without a key has the key type's default, one without a value a null.
// 3. Columns no writer field fills get null.
//
// Resolution (writer -> column), by field name (exact first, then ignoring case) at every level;
// writer fields no column takes are skipped; a column of a type the field cannot be read into
// makes Create fail (InvalidArgument naming the field and both types). Beyond the mapping of
// protobuf_schema.h, reads widen: INT-typed fields into BIGINT, any integer into DECIMAL(p, 0)
// with p >= 20, FLOAT into DOUBLE, string and bytes into each other (a STRING column checks
// UTF-8), Timestamp into TIMESTAMP_NTZ as well.
//
// Bad data (InvalidArgument "Protobuf message: field '...': ... at byte N", the batch left as it
// was): a truncated message, a varint longer than 10 bytes, a length beyond the bytes left,
// field number 0, wire types 6 and 7 or an unmatched group end, a string that is not UTF-8, a
// Timestamp out of TIMESTAMP's range, an absent field for a NOT NULL column. An enum number the
// enum does not name is stored as its decimal text (as protobuf's JSON mapping prints it).
//
// Connect's types (ConnectTypes, asked for by format = "debezium-protobuf"): Confluent's
// ProtobufConverter keeps no Connect name in the .proto, so Debezium's semantic types arrive as
// plain numbers and messages. When enabled, reads also take: an integer field into DATE as days
// since 1970-01-01 (io.debezium.time.Date); an integer field into TIMESTAMP or TIMESTAMP_NTZ as
// an epoch number in `epoch_micros_per_unit` (io.debezium.time.Timestamp: millis,
// MicroTimestamp: micros; out of years 1-9999 is bad data); a message with a bytes field `value`
// and an integer field `scale` (confluent.type.Decimal, io.debezium.data.VariableScaleDecimal)
// into DECIMAL: `value` the big-endian two's complement unscaled number at `scale`, rescaled to
// the column's (half up; bad data when it does not fit). And an absent scalar field that is not
// a oneof member (proto3 without presence) read into a NOT NULL column is its type's default
// (a required Connect field whose value was a zero), not an error.
//
// Thread-safety: Append uses scratch space in the reader: one reader per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/transform/protobuf_schema.h"

namespace ferry::transform::protobuf {

struct MsgOp;
struct Scratch;

// See "Connect's types" above.
struct ConnectTypes {
  bool enabled = false;
  int64_t epoch_micros_per_unit = 1000;  // 1 micros, 1000 millis, 1000000 seconds
};

// A writer field no column takes (the reader skips its values), at any depth.
struct UnmatchedField {
  // As transform::FieldObservation::path: field names from the top level down, with "element"
  // entering a repeated message and "value" a map's values.
  std::vector<std::string> path;
  const FieldDef* field = nullptr;  // the writer's
};

class ProtobufRowReader {
 public:
  // `columns`: indices into `batch_schema` of the columns the reader fills (the others are the
  // pipeline's: metadata columns).
  static Result<std::unique_ptr<ProtobufRowReader>> Create(
      std::shared_ptr<const MessageSchema> writer, const columnar::Schema& batch_schema,
      std::vector<int> columns, ConnectTypes connect = {});
  // The whole message as one value of STRUCT column `column` (a Kafka key).
  static Result<std::unique_ptr<ProtobufRowReader>> CreateForColumn(
      std::shared_ptr<const MessageSchema> writer, const columnar::Schema& batch_schema,
      int column);
  ~ProtobufRowReader();

  Status Append(std::string_view message, columnar::RecordBatch* batch);

  const std::vector<int>& columns() const { return columns_; }
  // Writer fields no column takes, at every depth, in writer order (groups left out; for the
  // evolution and the dropped-fields count). Empty for CreateForColumn.
  const std::vector<UnmatchedField>& unmatched_fields() const { return unmatched_; }

 private:
  ProtobufRowReader();

  std::shared_ptr<const MessageSchema> writer_;
  std::vector<int> columns_;
  bool whole_ = false;  // CreateForColumn
  std::unique_ptr<MsgOp> root_;
  std::unique_ptr<Scratch> scratch_;
  std::vector<UnmatchedField> unmatched_;
};

}  // namespace ferry::transform::protobuf
