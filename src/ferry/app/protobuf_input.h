// ProtobufInput: what `[pipeline.decode] format = "protobuf"` (and "debezium-protobuf") needs
// besides the table: the writer
// schemas (framed messages: a Schema Registry client behind RegistryProtoSchemas; unframed ones:
// the message protobuf_message names in protobuf_descriptor_file, a FileDescriptorSet), the
// decoder over them, and the schema of a table that is not there yet when the configuration
// declares none.
//
//   FERRY_ASSIGN_OR_RETURN(ProtobufInput proto, OpenProtobufInput(config));  // nothing fetched
//   FERRY_ASSIGN_OR_RETURN(ProtobufTableSchema s, ProtobufSchemaForNewTable(config, proto));
//   FERRY_ASSIGN_OR_RETURN(auto decoder, MakeProtobufDecoder(config, schema, columns, proto));
//
// Subjects as for Avro (avro_input.h); the message of a new table is record_name when set (the
// record strategies name it), else the first message of the subject's latest schema, which is
// what Confluent's serializers write by default.
//
// Thread-safety: the decoders are one per thread (decoder.h); the writer schemas they share are
// thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/config/config.h"
#include "ferry/registry/schema_registry.h"
#include "ferry/transform/decoder.h"
#include "ferry/transform/protobuf_decoder.h"
#include "ferry/transform/protobuf_schema.h"

namespace ferry::app {

struct ProtobufInput {
  std::shared_ptr<registry::SchemaRegistryClient> registry;  // framed messages
  std::shared_ptr<transform::ProtoSchemas> schemas;          // ... their writer schemas by id
  std::shared_ptr<const transform::protobuf::MessageSchema> fixed;  // unframed
};

// InvalidArgument naming the configuration key: an unreadable or invalid
// protobuf_descriptor_file, a protobuf_message it lacks, or registry settings the client
// refuses. The registry is not asked anything yet.
Result<ProtobufInput> OpenProtobufInput(const config::PipelineConfig& c);

struct ProtobufTableSchema {
  std::string ddl;     // Spark DDL of the columns (protobuf_schema.h maps the types)
  std::string origin;  // "schema registry subject orders-value version 3 (id 12)" or the file
};
// The columns of a new table: the fixed message's, or those of the message of the registry's
// latest version of the subject; with key_format = "protobuf", then the key's column, a STRUCT
// of the key subject's first message. Unavailable when the registry does not answer; NotFound
// when it has no such subject.
Result<ProtobufTableSchema> ProtobufSchemaForNewTable(const config::PipelineConfig& c,
                                                      const ProtobufInput& input);

// `key_format = "protobuf"`: the decoder of the Kafka key into its column of `schema`.
Result<std::unique_ptr<transform::Decoder>> MakeProtobufKeyDecoder(
    const config::PipelineConfig& c, const columnar::SchemaPtr& schema, const ProtobufInput& input);

// A decoder filling `columns` of `schema` (the pipeline's input schema).
Result<std::unique_ptr<transform::Decoder>> MakeProtobufDecoder(const config::PipelineConfig& c,
                                                                const columnar::SchemaPtr& schema,
                                                                std::vector<std::string> columns,
                                                                const ProtobufInput& input);

// format = "debezium-protobuf": the Debezium envelope decoder filling `columns` (the row columns
// and the envelope columns) of `schema`, with the registry's writer schemas.
Result<std::unique_ptr<transform::Decoder>> MakeDebeziumProtobufDecoder(
    const config::PipelineConfig& c, const columnar::SchemaPtr& schema,
    std::vector<std::string> columns, const ProtobufInput& input);

}  // namespace ferry::app
