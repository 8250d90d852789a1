// ProtobufDecoder: Protobuf messages into a row of the batch (decoder.h), either framed by the
// Schema Registry wire format (confluent_wire.h: each message names its writer schema's id and
// the message of that schema's file) or unframed, all of one fixed message type (a
// FileDescriptorSet and a message name). Each (schema id, message indexes) gets a
// ProtobufRowReader (protobuf_reader.h) built once and kept, as does the reason one cannot be
// built.
//
//   ProtobufDecoderOptions options{.schemas = registry_schemas};  // a shared_ptr
//   FERRY_ASSIGN_OR_RETURN(auto decoder, ProtobufDecoder::Create(batch_schema, options));
//   Status st = decoder->Append(kafka_value, &batch);
//
// Append's errors:
// - InvalidArgument: a bad record (decoder.h), the message saying why: a frame without the magic
//   byte or too short or with a bad message-index list ("schema registry framing"), a schema id
//   the registry does not know (it answered 404: "unknown to the schema registry"), a schema
//   that is not Protobuf, does not parse, has no message at the indexes, or cannot be read into
//   the table's columns (then every message of that schema is a bad record, with the same
//   reason), or bad data (protobuf_reader.h).
// - Unavailable: the writer schema could not be fetched now (the registry unreachable). Not a
//   bad record: nothing was appended, and the caller tries the message again later.
//
// Thread-safety: one decoder per thread (decoder.h); the ProtoSchemas source must be thread-safe
// if shared.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/transform/decoder.h"
#include "ferry/transform/protobuf_reader.h"
#include "ferry/transform/protobuf_schema.h"

namespace ferry::transform {

// Protobuf writer schemas by registry id: the registry client behind a cache, or a map in tests.
class ProtoSchemas {
 public:
  virtual ~ProtoSchemas() = default;
  // NotFound: the registry has no such id. Unavailable: ask again later. InvalidArgument: the
  // schema is not a Protobuf schema, or does not parse.
  virtual Result<std::shared_ptr<const protobuf::ProtoSchema>> Get(int32_t id) = 0;
};

struct ProtobufDecoderOptions {
  // Unframed messages: every message is of this type. Set this or `schemas`.
  std::shared_ptr<const protobuf::MessageSchema> message;
  // Framed messages: the writer schema of each by its id.
  std::shared_ptr<ProtoSchemas> schemas;
  // The batch columns the decoder fills (the others are the pipeline's); empty: all of them.
  std::vector<std::string> columns;
  // Schema evolution (decoder.h): each message whose writer type has fields the batch has no
  // place for reports them, with the column type protobuf_schema.h maps them to: top-level
  // fields, and fields new inside a nested message (a message field, a repeated message's
  // elements, a map's message values). Without it they are dropped (decoder.h, last_dropped()).
  bool observe = false;
  // Each message whole into this one STRUCT column (a Kafka key). `columns` and `observe` are
  // then not used.
  std::string whole_message_column;
};

class ProtobufDecoder final : public Decoder {
 public:
  // InvalidArgument for options that do not work: neither or both of message and schemas, a
  // column the batch lacks, or a fixed message that cannot be read into the columns.
  static Result<std::unique_ptr<ProtobufDecoder>> Create(columnar::SchemaPtr batch_schema,
                                                         ProtobufDecoderOptions options);

  const std::vector<int>& output_columns() const override { return columns_; }
  Status Append(std::string_view payload, columnar::RecordBatch* batch) override;

  // Writer types seen so far (readers built or refused).
  size_t writer_types_seen() const { return readers_.size(); }

 private:
  struct Reader {
    std::unique_ptr<protobuf::ProtobufRowReader> reader;
    std::vector<FieldObservation> new_fields;  // when observing
    DroppedFields dropped;
  };
  using Key = std::pair<int32_t, std::vector<int32_t>>;

  ProtobufDecoder(columnar::SchemaPtr batch_schema, ProtobufDecoderOptions options,
                  std::vector<int> columns)
      : batch_schema_(std::move(batch_schema)),
        options_(std::move(options)),
        columns_(std::move(columns)) {}

  // `writer_name` says which writer type in DroppedFields ("schema id 12 message shop.Order").
  Result<Reader> MakeReader(const std::shared_ptr<const protobuf::MessageSchema>& writer,
                            std::string writer_name) const;
  // The reader of `key`, or why there is none (InvalidArgument, kept) or none yet
  // (Unavailable, not kept).
  Result<Reader*> ReaderFor(const Key& key);
  Status Read(Reader* reader, std::string_view message, columnar::RecordBatch* batch);

  columnar::SchemaPtr batch_schema_;
  ProtobufDecoderOptions options_;
  std::vector<int> columns_;
  std::unique_ptr<Reader> fixed_;
  std::map<Key, Result<Reader>> readers_;  // node-stable: last_dropped_ points in
};

}  // namespace ferry::transform
