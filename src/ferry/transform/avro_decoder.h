// AvroDecoder: Avro messages into a row of the batch (decoder.h), either framed by the Schema
// Registry wire format (confluent_wire.h: each message names its writer schema's id) or
// unframed with one fixed writer schema (an .avsc file). Each writer schema gets an
// AvroRowReader (avro_reader.h) built once and kept, as does the reason one cannot be built.
//
//   AvroDecoderOptions options{.schemas = registry_schemas};  // a shared_ptr
//   FERRY_ASSIGN_OR_RETURN(auto decoder, AvroDecoder::Create(batch_schema, options));
//   Status st = decoder->Append(kafka_value, &batch);
//
// Append's errors:
// - InvalidArgument: a bad record (decoder.h), the message saying why: a frame without the magic
//   byte or too short, a schema id the registry does not know (it answered 404), a writer schema
//   that is not Avro or cannot be read into the table's columns (then every message of that
//   schema is a bad record, with the same reason), or bad data (avro_reader.h).
// - Unavailable: the writer schema could not be fetched now (the registry unreachable). Not a
//   bad record: nothing was appended, and the caller tries the message again later.
//
// Thread-safety: one decoder per thread (decoder.h); the WriterSchemas source must be
// thread-safe if shared.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/avro_reader.h"
#include "ferry/transform/avro_schema.h"
#include "ferry/transform/decoder.h"

namespace ferry::transform {

// Writer schemas by registry id: the registry client behind a cache, or a map in tests.
class WriterSchemas {
 public:
  virtual ~WriterSchemas() = default;
  // NotFound: the registry has no such id. Unavailable: ask again later. InvalidArgument: the
  // schema is not an Avro schema, or does not parse.
  virtual Result<std::shared_ptr<const avro::Schema>> Get(int32_t id) = 0;
};

struct AvroDecoderOptions {
  // Unframed messages: every message is a datum of this schema. Set this or `schemas`.
  std::shared_ptr<const avro::Schema> writer_schema;
  // Framed messages: the writer schema of each by its id.
  std::shared_ptr<WriterSchemas> schemas;
  // The batch columns the decoder fills (the others are the pipeline's); empty: all of them.
  std::vector<std::string> columns;
  // Schema evolution (decoder.h): each message whose writer schema has fields the batch has no
  // place for reports them, with the column type avro_schema.h maps them to: top-level fields,
  // and fields new inside a nested record (in a record field, an array's elements, a map's
  // values or a union's members). Without it they are dropped (decoder.h, last_dropped()).
  bool observe = false;
  // Each datum whole into this one column (AvroRowReader::CreateForColumn): a Kafka key into a
  // STRUCT or STRING column. `columns` and `observe` are then not used.
  std::string whole_datum_column;
};

class AvroDecoder final : public Decoder {
 public:
  // InvalidArgument for options that do not work: neither or both of writer_schema and schemas,
  // a column the batch lacks, or a writer_schema that cannot be read into the columns.
  static Result<std::unique_ptr<AvroDecoder>> Create(columnar::SchemaPtr batch_schema,
                                                     AvroDecoderOptions options);

  const std::vector<int>& output_columns() const override { return columns_; }
  Status Append(std::string_view payload, columnar::RecordBatch* batch) override;

  // Writer schemas seen so far (readers built or refused).
  size_t writer_schemas_seen() const { return readers_.size(); }

 private:
  AvroDecoder(columnar::SchemaPtr batch_schema, AvroDecoderOptions options,
              std::vector<int> columns)
      : batch_schema_(std::move(batch_schema)),
        options_(std::move(options)),
        columns_(std::move(columns)) {}

  // The reader of schema `id`, or why there is none (InvalidArgument, kept) or none yet
  // (Unavailable, not kept).
  Result<const avro::AvroRowReader*> ReaderFor(int32_t id);
  Result<std::unique_ptr<avro::AvroRowReader>> MakeReader(
      std::shared_ptr<const avro::Schema> writer) const;
  // What a reader skips: its unmatched fields as observations (those with a column type) and as
  // the dropped fields of `writer` ("schema id 12").
  struct Skipped {
    std::vector<FieldObservation> new_fields;  // when observing
    DroppedFields dropped;
  };
  Skipped SkippedBy(const avro::AvroRowReader& reader, std::string writer) const;
  // Appends the datum with `reader`, reporting what `skipped` says.
  Status Read(const avro::AvroRowReader& reader, const Skipped& skipped, std::string_view datum,
              columnar::RecordBatch* batch);

  columnar::SchemaPtr batch_schema_;
  AvroDecoderOptions options_;
  std::vector<int> columns_;
  std::unique_ptr<avro::AvroRowReader> fixed_;
  Skipped fixed_skipped_;
  std::map<int32_t, Result<std::unique_ptr<avro::AvroRowReader>>> readers_;
  std::map<int32_t, Skipped> skipped_;  // by schema id (node-stable: last_dropped_ points in)
};

}  // namespace ferry::transform
