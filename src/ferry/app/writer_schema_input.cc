#include "ferry/app/writer_schema_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace ferry::app {

Status AtDecode(const config::PipelineConfig& c, std::string_view key, const Status& st) {
  const bool at_registry = c.decode.schema_registry && key != "avro_schema_file" &&
                           key != "protobuf_descriptor_file" && key != "protobuf_message" &&
                           key != "subject";
  const config::SourceLocation& where =
      at_registry ? c.decode.schema_registry->location : c.location;
  std::string path = at_registry ? where.key : where.key + ".decode";
  if (!key.empty()) {
    path = fmt::format("{}.{}", path, key);
  }
  return Status(st.code(),
                fmt::format("{}:{}: {}: {}", where.file, where.line, path, st.message()));
}

Result<std::string> OnlyTopic(const config::PipelineConfig& c, std::string_view setting) {
  if (!c.kafka || c.kafka->topics.size() != 1 || !c.kafka->topic_pattern.empty()) {
    return InvalidArgument(
        "the table does not exist and has no `schema`; to create it from the registry, set "
        "`{}` (the default subject needs the source's one Kafka topic)",
        setting);
  }
  return c.kafka->topics.front();
}

Result<std::string> ValueSubject(const config::PipelineConfig& c) {
  const config::DecodeConfig& d = c.decode;
  if (!d.subject.empty()) {
    return d.subject;
  }
  if (d.subject_name_strategy == "record") {
    return d.record_name;
  }
  FERRY_ASSIGN_OR_RETURN(std::string topic, OnlyTopic(c, "subject"));
  if (d.subject_name_strategy == "topic_record") {
    return fmt::format("{}-{}", topic, d.record_name);
  }
  return topic + "-value";
}

Result<std::string> KeySubject(const config::PipelineConfig& c) {
  if (!c.decode.key_subject.empty()) {
    return c.decode.key_subject;
  }
  FERRY_ASSIGN_OR_RETURN(std::string topic, OnlyTopic(c, "key_subject"));
  return topic + "-key";
}

Result<std::shared_ptr<registry::SchemaRegistryClient>> OpenRegistryClient(
    const config::PipelineConfig& c) {
  const config::SchemaRegistryConfig& r = *c.decode.schema_registry;
  registry::SchemaRegistryOptions o{.urls = r.urls,
                                    .username = r.username,
                                    .password = r.password,
                                    .bearer_token = r.bearer_token,
                                    .request_timeout = r.timeout};
  o.http.ca_file = r.tls_ca;
  o.http.client_cert_file = r.tls_cert;
  o.http.client_key_file = r.tls_key;
  o.http.connect_timeout = std::min(o.http.connect_timeout, r.timeout);
  for (const std::string& url : r.urls) {
    o.http.allow_http = o.http.allow_http || url.starts_with("http://");
  }
  Result<std::unique_ptr<registry::SchemaRegistryClient>> client =
      registry::SchemaRegistryClient::Create(std::move(o));
  if (!client.ok()) {
    return AtDecode(c, "", client.status());
  }
  return std::shared_ptr<registry::SchemaRegistryClient>(std::move(*client));
}

}  // namespace ferry::app
