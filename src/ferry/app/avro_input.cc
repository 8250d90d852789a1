#include "ferry/app/avro_input.h"

#include <fmt/format.h>

#include <utility>

#include "ferry/app/registry_schemas.h"
#include "ferry/app/writer_schema_input.h"
#include "ferry/base/file.h"
#include "ferry/transform/avro_schema.h"
#include "ferry/transform/debezium_avro_decoder.h"

namespace ferry::app {
namespace {

// The registry's latest schema of `subject`, with its references; `origin` says which.
Result<std::shared_ptr<const transform::avro::Schema>> Latest(const config::PipelineConfig& c,
                                                              const AvroInput& input,
                                                              const std::string& subject,
                                                              std::string* origin) {
  registry::RegisteredSchema latest;
  FERRY_ASSIGN_OR_RETURN(auto parsed,
                         LatestSchema(c, *input.registry, *input.schemas, subject, &latest));
  *origin = fmt::format("schema registry subject {} version {} (id {})", subject, latest.version,
                        latest.id);
  return parsed;
}

}  // namespace

Result<AvroInput> OpenAvroInput(const config::PipelineConfig& c) {
  const config::DecodeConfig& d = c.decode;
  AvroInput input;
  if (!d.avro_schema_file.empty()) {
    Result<std::string> text = ReadFileToString(d.avro_schema_file);
    if (!text.ok()) {
      return AtDecode(c, "avro_schema_file", text.status());
    }
    Result<transform::avro::Schema> parsed = transform::avro::Schema::Parse(*text);
    if (!parsed.ok()) {
      return AtDecode(c, "avro_schema_file",
                      Status(parsed.status().code(),
                             fmt::format("{}: {}", d.avro_schema_file, parsed.status().message())));
    }
    input.fixed = std::make_shared<const transform::avro::Schema>(std::move(*parsed));
    return input;
  }
  FERRY_ASSIGN_OR_RETURN(input.registry, OpenRegistryClient(c));
  input.schemas = std::make_shared<RegistryWriterSchemas>(input.registry);
  return input;
}

Result<AvroTableSchema> AvroSchemaForNewTable(const config::PipelineConfig& c,
                                              const AvroInput& input) {
  std::shared_ptr<const transform::avro::Schema> schema = input.fixed;
  std::string origin = c.decode.avro_schema_file;
  if (schema == nullptr) {
    Result<std::string> subject = ValueSubject(c);
    if (!subject.ok()) {
      return AtDecode(c, "subject", subject.status());
    }
    FERRY_ASSIGN_OR_RETURN(schema, Latest(c, input, *subject, &origin));
  }
  Result<columnar::SchemaPtr> table = transform::avro::ToTableSchema(*schema);
  if (!table.ok()) {
    return table.status().WithContext("pipeline {}: {}", c.id, origin);
  }
  if (c.decode.key_format != "avro") {
    return AvroTableSchema{.ddl = (*table)->ToString(), .origin = std::move(origin)};
  }
  // The key's column, typed by the key subject's latest schema.
  Result<std::string> key_subject = KeySubject(c);
  if (!key_subject.ok()) {
    return AtDecode(c, "key_subject", key_subject.status());
  }
  std::string key_origin;
  FERRY_ASSIGN_OR_RETURN(std::shared_ptr<const transform::avro::Schema> key,
                         Latest(c, input, *key_subject, &key_origin));
  Result<transform::avro::ColumnType> key_type = transform::avro::ToColumnType(key->root(), "key");
  if (!key_type.ok()) {
    return key_type.status().WithContext("pipeline {}: {}", c.id, key_origin);
  }
  std::vector<columnar::Field> fields = (*table)->fields();
  fields.push_back({.name = c.metadata_columns.at("key"), .type = key_type->type});
  return AvroTableSchema{.ddl = columnar::Schema(std::move(fields)).ToString(),
                         .origin = fmt::format("{}; key: {}", origin, key_origin)};
}

Result<std::unique_ptr<transform::Decoder>> MakeAvroKeyDecoder(const config::PipelineConfig& c,
                                                               const columnar::SchemaPtr& schema,
                                                               const AvroInput& input) {
  Result<std::unique_ptr<transform::AvroDecoder>> decoder = transform::AvroDecoder::Create(
      schema, {.schemas = input.schemas, .whole_datum_column = c.metadata_columns.at("key")});
  if (!decoder.ok()) {
    return AtDecode(c, "key_format", decoder.status());
  }
  return std::unique_ptr<transform::Decoder>(std::move(*decoder));
}

Result<std::unique_ptr<transform::Decoder>> MakeAvroDecoder(const config::PipelineConfig& c,
                                                            const columnar::SchemaPtr& schema,
                                                            std::vector<std::string> columns,
                                                            const AvroInput& input) {
  Result<std::unique_ptr<transform::AvroDecoder>> decoder =
      transform::AvroDecoder::Create(schema, {.writer_schema = input.fixed,
                                              .schemas = input.schemas,
                                              .columns = std::move(columns),
                                              .observe = c.schema_evolution != "none"});
  if (!decoder.ok()) {
    return AtDecode(c, input.fixed ? "avro_schema_file" : "", decoder.status());
  }
  return std::unique_ptr<transform::Decoder>(std::move(*decoder));
}

Result<std::unique_ptr<transform::Decoder>> MakeDebeziumAvroDecoder(
    const config::PipelineConfig& c, const columnar::SchemaPtr& schema,
    std::vector<std::string> columns, const AvroInput& input) {
  for (const auto& [field, column] : c.decode.envelope_columns) {
    std::erase(columns, column);
  }
  Result<std::unique_ptr<transform::DebeziumAvroDecoder>> decoder =
      transform::DebeziumAvroDecoder::Create(schema, {.schemas = input.schemas,
                                                      .columns = std::move(columns),
                                                      .envelope_columns = c.decode.envelope_columns,
                                                      .observe = c.schema_evolution != "none"});
  if (!decoder.ok()) {
    return AtDecode(c, "", decoder.status());
  }
  return std::unique_ptr<transform::Decoder>(std::move(*decoder));
}

}  // namespace ferry::app
