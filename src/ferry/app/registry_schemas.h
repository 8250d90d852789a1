// RegistryWriterSchemas: the writer schemas of framed Avro messages (transform::WriterSchemas)
// read from the Confluent Schema Registry, schema references included, each id parsed once; and
// RegistryProtoSchemas, the same for Protobuf (transform::ProtoSchemas). They sit in app/
// because they join two layers that do not know each other: the registry client (registry/) and
// the decoders (transform/).
//
//   auto schemas = std::make_shared<RegistryWriterSchemas>(std::move(registry_client));
//   FERRY_ASSIGN_OR_RETURN(auto decoder, AvroDecoder::Create(table, {.schemas = schemas}));
//
// Get(id):
//   1. An id parsed before is answered from the cache, without the registry: an outage does not
//      stop the ids seen before.
//   2. GET /schemas/ids/{id}; its schemaType must be AVRO (absent means AVRO).
//   3. Its references, depth first: a reference's own references come before it, each subject
//      version once (a diamond is fetched and parsed once). A reference back to one still open on
//      the path is a cycle. The texts come from SchemaRegistryClient::Version, which keeps them
//      by subject and version for the client's life, so a reference shared by several ids is
//      fetched once in all.
//   4. avro::Schema::Parse(text, reference texts in that order), kept by id. Protobuf: the
//      reference texts under the import paths the references name (`name`), then the schema's
//      own text, parsed by protobuf::ProtoSchema::FromProtoFiles.
//
// Errors (transform::WriterSchemas; each message names the id, and the chain of references by
// subject and version down to the one at fault):
// - NotFound: the registry has no schema `id` (404).
// - Unavailable: the registry could not be reached for the id or one of its references. Nothing
//   is kept: the next Get asks again.
// - InvalidArgument: the id or a reference is not an Avro (Protobuf) schema, a reference
//   is missing (404: the id exists but cannot be read) or refused by the registry, the
//   references form a cycle or nest deeper than kMaxReferenceDepth, or the texts do not parse.
//
// Thread-safety: thread-safe. Two threads asking for the same new id may both resolve it; the
// first result stored is kept and returned to both.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "ferry/base/result.h"
#include "ferry/registry/schema_registry.h"
#include "ferry/transform/avro_decoder.h"
#include "ferry/transform/avro_schema.h"
#include "ferry/transform/protobuf_decoder.h"
#include "ferry/transform/protobuf_schema.h"

namespace ferry::app {

class RegistryWriterSchemas final : public transform::WriterSchemas {
 public:
  // References of references nested deeper than this are refused (a hostile or broken registry
  // cannot exhaust the stack).
  static constexpr int kMaxReferenceDepth = transform::avro::Schema::kMaxDepth;

  explicit RegistryWriterSchemas(std::shared_ptr<registry::SchemaRegistryClient> registry)
      : registry_(std::move(registry)) {}

  Result<std::shared_ptr<const transform::avro::Schema>> Get(int32_t id) override;

 private:
  const std::shared_ptr<registry::SchemaRegistryClient> registry_;
  std::mutex mu_;
  std::map<int32_t, std::shared_ptr<const transform::avro::Schema>> by_id_;  // guarded by mu_
};

class RegistryProtoSchemas final : public transform::ProtoSchemas {
 public:
  explicit RegistryProtoSchemas(std::shared_ptr<registry::SchemaRegistryClient> registry)
      : registry_(std::move(registry)) {}

  Result<std::shared_ptr<const transform::protobuf::ProtoSchema>> Get(int32_t id) override;

 private:
  const std::shared_ptr<registry::SchemaRegistryClient> registry_;
  std::mutex mu_;
  // guarded by mu_
  std::map<int32_t, std::shared_ptr<const transform::protobuf::ProtoSchema>> by_id_;
};

}  // namespace ferry::app
