// AvroRowReader: one Avro binary datum (Avro 1.11 specification, "Binary Encoding") written with
// a writer schema, appended as one row of a record batch whose columns are the reader's schema,
// resolved by the specification's "Schema Resolution" rules. Built once per writer schema (a
// registry schema id, or the fixed schema of unframed messages); decoding then walks a plan made
// at build time, straight into the columns, with no value tree per message.
//
//   FERRY_ASSIGN_OR_RETURN(auto reader, AvroRowReader::Create(writer, batch_schema, columns));
//   Status st = reader->Append(datum, &batch);   // one row more, or the batch as it was
//
// Resolution (writer -> column):
// - The writer's top level is a record; its fields go to the batch columns named like them (an
//   exact match first, then one differing only in case). Writer fields no column takes are
//   skipped; columns no writer field fills get null (a NOT NULL one makes Create fail).
// - Nested records match by field name the same way; arrays, maps and their elements
//   recursively; a union in the writer reads the branch the datum names; the writer's null goes
//   to a nullable column as null.
// - Promotions: int to long, float, double; long to float, double; float to double; string and
//   bytes to each other (a string column takes only valid UTF-8); enum to its symbol as STRING;
//   fixed and bytes to BINARY; decimal (bytes or fixed) to a DECIMAL of the same scale and no
//   smaller precision; date to DATE; timestamp-millis/-micros to TIMESTAMP and
//   local-timestamp-millis/-micros to TIMESTAMP_NTZ (millis times 1,000); a union of several
//   non-null branches to the STRUCT of `member<i>` fields that avro_schema.h maps it to.
// - Kafka Connect's types by their connect.name (Debezium through Confluent's AvroConverter):
//   io.debezium.time.Date (int) to DATE; io.debezium.time.Timestamp / MicroTimestamp /
//   NanoTimestamp (long: ms, us, ns; ns floored to us) to TIMESTAMP or TIMESTAMP_NTZ; a Connect
//   Decimal of any declared precision to a DECIMAL of its scale (each value checked against the
//   column's precision); the record io.debezium.data.VariableScaleDecimal {scale, value} to any
//   DECIMAL (rescaled, half up; a value that does not fit is bad data).
// - Anything else: Create fails with InvalidArgument naming the field and both types.
//
// Bad data (InvalidArgument naming the field and the byte offset, the batch left as it was): a
// datum that ends early or has bytes left over, a negative or oversized length, a union branch
// or enum index out of range, a string that is not UTF-8, a null for a NOT NULL column, a
// decimal that does not fit its column. Array and map blocks are bounded by the bytes left, so a
// small datum cannot make the reader allocate without bound.
//
// Thread-safety: immutable after Create; Append may be called from several threads on
// different batches.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/transform/avro_schema.h"

namespace ferry::transform::avro {

struct ReadOp;

// Skips one value of writer type `type` at the front of `*datum` (advancing it); InvalidArgument
// naming `path` when the datum ends early or is malformed.
Status SkipDatum(const Node& type, std::string_view* datum, const std::string& path);

// A writer field no column takes (the reader skips its values), at any depth.
struct UnmatchedField {
  // As transform::FieldObservation::path: record field names from the top level down, with
  // "element" and "value" entering arrays and maps, and "member<i>" a union's STRUCT of members.
  std::vector<std::string> path;
  const Node* type = nullptr;  // the writer's type of the field
};

class AvroRowReader {
 public:
  // `columns`: indices into `batch_schema` of the columns the reader fills (the others are the
  // pipeline's: metadata columns).
  static Result<std::unique_ptr<AvroRowReader>> Create(std::shared_ptr<const Schema> writer,
                                                       const columnar::Schema& batch_schema,
                                                       std::vector<int> columns);
  // The fields of `record` (a record node of `writer`, e.g. Debezium's row record inside its
  // change envelope) into `columns`, as Create reads the top level.
  static Result<std::unique_ptr<AvroRowReader>> CreateForRecord(
      std::shared_ptr<const Schema> writer, const Node& record,
      const columnar::Schema& batch_schema, std::vector<int> columns);
  // The whole datum, of any type, as one value of column `column` (a Kafka key read into a
  // STRUCT or STRING column): the writer's type is resolved to the column's as a field's is.
  static Result<std::unique_ptr<AvroRowReader>> CreateForColumn(
      std::shared_ptr<const Schema> writer, const columnar::Schema& batch_schema, int column);
  ~AvroRowReader();

  Status Append(std::string_view datum, columnar::RecordBatch* batch) const;
  // As Append, for a record at the front of `*datum` followed by other values: `*datum` is
  // advanced past it. Errors name byte offsets from the record's start.
  Status AppendPrefix(std::string_view* datum, columnar::RecordBatch* batch) const;

  const std::vector<int>& columns() const { return columns_; }
  // Writer fields no column takes, at every depth, in writer order (for the evolution and the
  // dropped-fields count). A field inside a skipped field is not listed on its own.
  const std::vector<UnmatchedField>& unmatched_fields() const { return unmatched_; }

 private:
  AvroRowReader() = default;

  std::shared_ptr<const Schema> writer_;
  const Node* root_ = nullptr;  // the record read (writer_'s root, or a record inside it)
  std::vector<int> columns_;
  // One op per writer field of the top-level record, in writer order; column_of_field_[i] is the
  // batch column it fills, or -1 (skipped).
  std::vector<std::unique_ptr<ReadOp>> field_ops_;
  std::vector<int> column_of_field_;
  std::vector<int> unfilled_columns_;  // batch columns no writer field fills: null
  std::vector<UnmatchedField> unmatched_;
};

}  // namespace ferry::transform::avro
