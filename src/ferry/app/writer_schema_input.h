// What the formats with writer schemas (avro_input.h, protobuf_input.h) share: errors placed at
// their configuration key, the registry subject of a new table, and the registry client built
// from [pipeline.decode.schema_registry]. Internal to app/.
//
// Thread-safety: stateless functions.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/config/config.h"
#include "ferry/registry/schema_registry.h"

namespace ferry::app {

// "ferry.toml:12: pipeline[0].decode.<key>: <message>" (the schema_registry table's keys at it).
Status AtDecode(const config::PipelineConfig& c, std::string_view key, const Status& st);

// The only Kafka topic of the source, for the subject name strategies that name it.
// InvalidArgument telling to set `setting` otherwise.
Result<std::string> OnlyTopic(const config::PipelineConfig& c, std::string_view setting);

// The subject of a new table's value schema (avro_input.h, "Subjects").
Result<std::string> ValueSubject(const config::PipelineConfig& c);

// The key subject: key_subject, or "<topic>-key".
Result<std::string> KeySubject(const config::PipelineConfig& c);

// The client of [pipeline.decode.schema_registry] (nothing asked yet). InvalidArgument at the
// key for settings it refuses.
Result<std::shared_ptr<registry::SchemaRegistryClient>> OpenRegistryClient(
    const config::PipelineConfig& c);

// The registry's latest version of `subject` (for a new table's columns) and its schema,
// parsed by `schemas` (registry_schemas.h: RegistryWriterSchemas, RegistryProtoSchemas). Errors
// name the pipeline, the subject and the version.
template <typename Schemas>
auto LatestSchema(const config::PipelineConfig& c, registry::SchemaRegistryClient& registry,
                  Schemas& schemas, const std::string& subject, registry::RegisteredSchema* version)
    -> decltype(schemas.Get(int32_t{0})) {
  Result<registry::RegisteredSchema> latest = registry.LatestVersion(subject);
  if (!latest.ok()) {
    return Status(latest.status().code(),
                  fmt::format("pipeline {}: the schema of the new table, from the registry's "
                              "subject {}: {}",
                              c.id, subject, latest.status().message()));
  }
  *version = *latest;
  auto parsed = schemas.Get(latest->id);
  if (!parsed.ok()) {
    return parsed.status().WithContext("pipeline {}: subject {} version {}", c.id, subject,
                                       latest->version);
  }
  return parsed;
}

}  // namespace ferry::app
