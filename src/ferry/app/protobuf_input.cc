#include "ferry/app/protobuf_input.h"

#include <fmt/format.h>

#include <utility>

#include "ferry/app/registry_schemas.h"
#include "ferry/app/writer_schema_input.h"
#include "ferry/base/file.h"
#include "ferry/transform/debezium_protobuf_decoder.h"

namespace ferry::app {
namespace {

namespace pb = transform::protobuf;

// The message of the registry's latest schema of `subject`: `message` when set, else the first;
// `origin` says which.
Result<std::shared_ptr<const pb::MessageSchema>> Latest(const config::PipelineConfig& c,
                                                        const ProtobufInput& input,
                                                        const std::string& subject,
                                                        const std::string& message,
                                                        std::string* origin) {
  registry::RegisteredSchema latest;
  FERRY_ASSIGN_OR_RETURN(auto parsed,
                         LatestSchema(c, *input.registry, *input.schemas, subject, &latest));
  auto found = message.empty() ? parsed->MessageAt({0}) : parsed->Message(message);
  if (!found.ok()) {
    return found.status().WithContext("pipeline {}: subject {} version {}", c.id, subject,
                                      latest.version);
  }
  *origin = fmt::format("schema registry subject {} version {} (id {}) message {}", subject,
                        latest.version, latest.id, (*found)->root().full_name);
  return found;
}

}  // namespace

Result<ProtobufInput> OpenProtobufInput(const config::PipelineConfig& c) {
  const config::DecodeConfig& d = c.decode;
  ProtobufInput input;
  if (!d.protobuf_descriptor_file.empty()) {
    Result<std::string> bytes = ReadFileToString(d.protobuf_descriptor_file);
    if (!bytes.ok()) {
      return AtDecode(c, "protobuf_descriptor_file", bytes.status());
    }
    auto file = pb::ProtoSchema::FromDescriptorSet(*bytes, d.protobuf_descriptor_file);
    if (!file.ok()) {
      return AtDecode(c, "protobuf_descriptor_file", file.status());
    }
    auto message = (*file)->Message(d.protobuf_message);
    if (!message.ok()) {
      return AtDecode(c, "protobuf_message",
                      message.status().WithContext("{}", d.protobuf_descriptor_file));
    }
    input.fixed = std::move(*message);
    return input;
  }
  FERRY_ASSIGN_OR_RETURN(input.registry, OpenRegistryClient(c));
  input.schemas = std::make_shared<RegistryProtoSchemas>(input.registry);
  return input;
}

Result<ProtobufTableSchema> ProtobufSchemaForNewTable(const config::PipelineConfig& c,
                                                      const ProtobufInput& input) {
  std::shared_ptr<const pb::MessageSchema> message = input.fixed;
  std::string origin =
      fmt::format("{} message {}", c.decode.protobuf_descriptor_file, c.decode.protobuf_message);
  if (message == nullptr) {
    Result<std::string> subject = ValueSubject(c);
    if (!subject.ok()) {
      return AtDecode(c, "subject", subject.status());
    }
    FERRY_ASSIGN_OR_RETURN(message, Latest(c, input, *subject, c.decode.record_name, &origin));
  }
  Result<columnar::SchemaPtr> table = pb::ToTableSchema(*message);
  if (!table.ok()) {
    return table.status().WithContext("pipeline {}: {}", c.id, origin);
  }
  if (c.decode.key_format != "protobuf") {
    return ProtobufTableSchema{.ddl = (*table)->ToString(), .origin = std::move(origin)};
  }
  Result<std::string> key_subject = KeySubject(c);
  if (!key_subject.ok()) {
    return AtDecode(c, "key_subject", key_subject.status());
  }
  std::string key_origin;
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<const pb::MessageSchema> key,
                         Latest(c, input, *key_subject, "", &key_origin));
  Result<columnar::DataTypePtr> key_type = pb::ToStructType(*key);
  if (!key_type.ok()) {
    return key_type.status().WithContext("pipeline {}: {}", c.id, key_origin);
  }
  std::vector<columnar::Field> fields = (*table)->fields();
  fields.push_back({.name = c.metadata_columns.at("key"), .type = *key_type});
  return ProtobufTableSchema{.ddl = columnar::Schema(std::move(fields)).ToString(),
                             .origin = fmt::format("{}; key: {}", origin, key_origin)};
}

Result<std::unique_ptr<transform::Decoder>> MakeProtobufKeyDecoder(
    const config::PipelineConfig& c, const columnar::SchemaPtr& schema,
    const ProtobufInput& input) {
  auto decoder = transform::ProtobufDecoder::Create(
      schema, {.schemas = input.schemas, .whole_message_column = c.metadata_columns.at("key")});
  if (!decoder.ok()) {
    return AtDecode(c, "key_format", decoder.status());
  }
  return std::unique_ptr<transform::Decoder>(std::move(*decoder));
}

Result<std::unique_ptr<transform::Decoder>> MakeProtobufDecoder(const config::PipelineConfig& c,
                                                                const columnar::SchemaPtr& schema,
                                                                std::vector<std::string> columns,
                                                                const ProtobufInput& input) {
  auto decoder =
      transform::ProtobufDecoder::Create(schema, {.message = input.fixed,
                                                  .schemas = input.schemas,
                                                  .columns = std::move(columns),
                                                  .observe = c.schema_evolution != "none"});
  if (!decoder.ok()) {
    return AtDecode(c, input.fixed ? "protobuf_message" : "", decoder.status());
  }
  return std::unique_ptr<transform::Decoder>(std::move(*decoder));
}

Result<std::unique_ptr<transform::Decoder>> MakeDebeziumProtobufDecoder(
    const config::PipelineConfig& c, const columnar::SchemaPtr& schema,
    std::vector<std::string> columns, const ProtobufInput& input) {
  for (const auto& [field, column] : c.decode.envelope_columns) {
    std::erase(columns, column);
  }
  const std::string& unit = c.decode.timestamp_epoch_unit;
  Result<std::unique_ptr<transform::DebeziumProtobufDecoder>> decoder =
      transform::DebeziumProtobufDecoder::Create(
          schema, {.schemas = input.schemas,
                   .columns = std::move(columns),
                   .envelope_columns = c.decode.envelope_columns,
                   .observe = c.schema_evolution != "none",
                   .epoch_micros_per_unit = unit == "micros"    ? 1
                                            : unit == "seconds" ? 1000000
                                                                : 1000});
  if (!decoder.ok()) {
    return AtDecode(c, "", decoder.status());
  }
  return std::unique_ptr<transform::Decoder>(std::move(*decoder));
}

}  // namespace ferry::app
