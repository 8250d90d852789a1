// AvroInput: what `[pipeline.decode] format = "avro"` (and "debezium-avro") needs besides the
// table: the writer schemas (framed messages: a Schema Registry client behind
// RegistryWriterSchemas; unframed ones: the one schema of avro_schema_file), the decoder over them,
// and the schema of a table that is not there yet when the configuration declares none (the
// subject's latest version, or the file's).
//
//   FERRY_ASSIGN_OR_RETURN(AvroInput avro, OpenAvroInput(config));     // nothing fetched yet
//   FERRY_ASSIGN_OR_RETURN(AvroTableSchema s, AvroSchemaForNewTable(config, avro));
//   FERRY_ASSIGN_OR_RETURN(auto decoder, MakeAvroDecoder(input_schema, columns, avro));
//
// Subjects (Confluent's subject name strategies): `subject` when set; else "topic"
// (TopicNameStrategy, the default): "<topic>-value"; "record": "<record_name>"; "topic_record":
// "<topic>-<record_name>". The topic is the Kafka source's only topic; with several topics, a
// pattern or a JetStream stream, `subject` must be set for a table to be created.
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
#include "ferry/transform/avro_decoder.h"

namespace ferry::app {

struct AvroInput {
  std::shared_ptr<registry::SchemaRegistryClient> registry;  // framed messages
  std::shared_ptr<transform::WriterSchemas> schemas;         // ... their writer schemas by id
  std::shared_ptr<const transform::avro::Schema> fixed;      // unframed: avro_schema_file's
};

// InvalidArgument naming the configuration key: an unreadable or invalid avro_schema_file, or
// registry settings the client refuses. The registry is not asked anything yet.
Result<AvroInput> OpenAvroInput(const config::PipelineConfig& c);

struct AvroTableSchema {
  std::string ddl;     // Spark DDL of the columns (avro_schema.h maps the types)
  std::string origin;  // "schema registry subject orders-value version 3 (id 12)" or the file
};
// The columns of a new table: avro_schema_file's, or the registry's latest version of the
// subject (with its references); with key_format = "avro", then the key's column, typed by the
// key subject's latest version. Unavailable when the registry does not answer; NotFound when
// it has no such subject.
Result<AvroTableSchema> AvroSchemaForNewTable(const config::PipelineConfig& c,
                                              const AvroInput& input);

// `key_format = "avro"`: the decoder of the Kafka key into its column of `schema`.
Result<std::unique_ptr<transform::Decoder>> MakeAvroKeyDecoder(const config::PipelineConfig& c,
                                                               const columnar::SchemaPtr& schema,
                                                               const AvroInput& input);

// A decoder filling `columns` of `schema` (the pipeline's input schema).
Result<std::unique_ptr<transform::Decoder>> MakeAvroDecoder(const config::PipelineConfig& c,
                                                            const columnar::SchemaPtr& schema,
                                                            std::vector<std::string> columns,
                                                            const AvroInput& input);

// format = "debezium-avro": the Debezium envelope decoder filling `columns` (the row columns and
// the envelope columns) of `schema`, with the registry's writer schemas.
Result<std::unique_ptr<transform::Decoder>> MakeDebeziumAvroDecoder(
    const config::PipelineConfig& c, const columnar::SchemaPtr& schema,
    std::vector<std::string> columns, const AvroInput& input);

}  // namespace ferry::app
