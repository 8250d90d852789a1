// SchemaRegistryClient: the subset of the Confluent Schema Registry REST API that decoding needs,
// as Confluent's registry, Redpanda, Apicurio (its ccompat API) and Karapace serve it:
//
//   GET /schemas/ids/{id}                      the writer schema of framed messages
//   GET /subjects/{subject}/versions/latest    the schema a new table is created from
//   GET /subjects/{subject}/versions/{version} the schemas a Protobuf schema imports (references)
//
// Answers are JSON: {"schema": "<text>", "schemaType": "AVRO" | "PROTOBUF" | "JSON" (absent:
// AVRO), "references": [{"name", "subject", "version"}], and for subjects "subject", "version",
// "id"}. Errors are {"error_code": 40403, "message": "Schema not found"}.
//
//   FERRY_ASSIGN_OR_RETURN(auto registry, SchemaRegistryClient::Create(options));
//   FERRY_ASSIGN_OR_RETURN(auto schema, registry->SchemaById(frame.schema_id));
//
// Schemas by id and by subject version never change once registered, so they are cached for the
// client's life: a registry outage does not stop the decoding of ids seen before. `latest` is
// asked every time.
//
// Errors:
// - NotFound: the registry answered 404 (unknown id, subject or version; its error code and
//   message are in the text). For an id taken from a message, a bad record.
// - Unavailable: no registry URL answered, or one answered 5xx or 429. Not bad input: the caller
//   waits and asks again; the message names the URLs tried.
// - InvalidArgument: refused (401/403: check the credentials; another 4xx) or an answer that is
//   not the JSON above.
// With several URLs, each is tried in turn until one answers (a 404 is an answer).
//
// Thread-safety: thread-safe (the cache is behind a mutex; HttpClient is thread-safe).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/http/client.h"

namespace ferry::registry {

struct SchemaRegistryOptions {
  // Base URLs, e.g. "https://registry:8081" (a path prefix is kept: "http://host/apis/ccompat/v7").
  std::vector<std::string> urls;
  // HTTP basic auth (Confluent Cloud: API key and secret), both or neither.
  std::string username;
  std::string password;
  // Or a bearer token (OAuth).
  std::string bearer_token;
  // TLS (ca_file, client certificate), timeouts, allow_http for a plain-http registry.
  http::HttpClientOptions http;
  // Bound on each request.
  std::chrono::milliseconds request_timeout{10'000};
};

struct SchemaReference {
  std::string name;  // the import path as the schema names it
  std::string subject;
  int32_t version = 0;
};

struct RegisteredSchema {
  int32_t id = 0;  // 0 when the answer carried none
  std::string schema_type = "AVRO";
  std::string schema;
  std::vector<SchemaReference> references;
  std::string subject;  // by subject only
  int32_t version = 0;  // by subject only
};

class SchemaRegistryClient {
 public:
  // InvalidArgument for options that cannot work (no URL, a URL that is not http(s), both
  // basic auth and a token, one of username/password alone, an unreadable certificate file).
  static Result<std::unique_ptr<SchemaRegistryClient>> Create(SchemaRegistryOptions options);

  Result<std::shared_ptr<const RegisteredSchema>> SchemaById(int32_t id);
  Result<RegisteredSchema> LatestVersion(std::string_view subject);
  Result<std::shared_ptr<const RegisteredSchema>> Version(std::string_view subject,
                                                          int32_t version);

  // Requests sent (each URL tried counts), for tests and metrics.
  uint64_t requests() const;

 private:
  SchemaRegistryClient(SchemaRegistryOptions options, std::unique_ptr<http::HttpClient> client);
  // GET `path` (already percent-encoded) from the first URL that answers; the parsed answer.
  Result<RegisteredSchema> Get(const std::string& path, std::string_view what);

  const SchemaRegistryOptions options_;
  std::unique_ptr<http::HttpClient> client_;
  std::string authorization_;  // the Authorization header's value, or empty
  mutable std::mutex mu_;
  std::map<int32_t, std::shared_ptr<const RegisteredSchema>> by_id_;
  std::map<std::pair<std::string, int32_t>, std::shared_ptr<const RegisteredSchema>> by_version_;
  uint64_t requests_ = 0;
};

}  // namespace ferry::registry
