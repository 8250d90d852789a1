#include "ferry/registry/schema_registry.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ferry/http/deadline.h"
#include "ferry/http/digest.h"
#include "ferry/http/url.h"

namespace ferry::registry {

namespace {

using nlohmann::json;

constexpr std::string_view kAccept =
    "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, "
    "application/json";

// The registry's {"error_code", "message"}, when the body is that.
std::string RegistryError(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return "";
  }
  std::string out;
  if (auto code = j.find("error_code"); code != j.end() && code->is_number_integer()) {
    out = fmt::format("error {}", code->get<int64_t>());
  }
  if (auto message = j.find("message"); message != j.end() && message->is_string()) {
    out += fmt::format("{}{}", out.empty() ? "" : ": ", message->get<std::string>());
  }
  return out;
}

Result<RegisteredSchema> ParseAnswer(const std::string& body, const std::string& where) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("{}: the answer is not a JSON object", where);
  }
  RegisteredSchema out;
  auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string()) {
    return InvalidArgument("{}: the answer has no \"schema\" string", where);
  }
  out.schema = schema->get<std::string>();
  if (auto type = j.find("schemaType"); type != j.end() && type->is_string()) {
    out.schema_type = type->get<std::string>();
  }
  if (auto id = j.find("id"); id != j.end() && id->is_number_integer()) {
    out.id = static_cast<int32_t>(id->get<int64_t>());
  }
  if (auto subject = j.find("subject"); subject != j.end() && subject->is_string()) {
    out.subject = subject->get<std::string>();
  }
  if (auto version = j.find("version"); version != j.end() && version->is_number_integer()) {
    out.version = static_cast<int32_t>(version->get<int64_t>());
  }
  if (auto refs = j.find("references"); refs != j.end() && refs->is_array()) {
    for (const json& r : *refs) {
      auto name = r.find("name");
      auto subject = r.find("subject");
      auto version = r.find("version");
      if (!r.is_object() || name == r.end() || !name->is_string() || subject == r.end() ||
          !subject->is_string() || version == r.end() || !version->is_number_integer()) {
        return InvalidArgument("{}: a reference without a name, subject and version: {}", where,
                               r.dump());
      }
      out.references.push_back({name->get<std::string>(), subject->get<std::string>(),
                                static_cast<int32_t>(version->get<int64_t>())});
    }
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<SchemaRegistryClient>> SchemaRegistryClient::Create(
    SchemaRegistryOptions options) {
  if (options.urls.empty()) {
    return InvalidArgument("schema registry: no URL");
  }
  for (std::string& url : options.urls) {
    if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) {
      return InvalidArgument("schema registry: \"{}\" is not an http:// or https:// URL", url);
    }
    if (url.rfind("http://", 0) == 0) {
      options.http.allow_http = true;  // written so on purpose: a registry without TLS
    }
    while (!url.empty() && url.back() == '/') {
      url.pop_back();
    }
  }
  if (options.username.empty() != options.password.empty()) {
    return InvalidArgument(
        "schema registry: a username needs a password, and a password a "
        "username (HTTP basic auth)");
  }
  if (!options.username.empty() && !options.bearer_token.empty()) {
    return InvalidArgument("schema registry: basic auth and a bearer token both given; use one");
  }
  FERRY_ASSIGN_OR_RETURN(auto client, http::HttpClient::Create(options.http));
  return std::unique_ptr<SchemaRegistryClient>(
      new SchemaRegistryClient(std::move(options), std::move(client)));
}

SchemaRegistryClient::SchemaRegistryClient(SchemaRegistryOptions options,
                                           std::unique_ptr<http::HttpClient> client)
    : options_(std::move(options)), client_(std::move(client)) {
  if (!options_.username.empty()) {
    authorization_ = "Basic " + http::Base64Encode(options_.username + ":" + options_.password);
  } else if (!options_.bearer_token.empty()) {
    authorization_ = "Bearer " + options_.bearer_token;
  }
}

uint64_t SchemaRegistryClient::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

Result<RegisteredSchema> SchemaRegistryClient::Get(const std::string& path, std::string_view what) {
  std::vector<std::string> failures;
  for (const std::string& base : options_.urls) {
    http::HttpRequest request;
    request.url = base + path;
    request.headers.Set("Accept", kAccept);
    if (!authorization_.empty()) {
      request.headers.Set("Authorization", authorization_);
    }
    request.deadline = http::DeadlineAfter(options_.request_timeout);
    {
      std::lock_guard lock(mu_);
      ++requests_;
    }
    http::HttpOutcome outcome = client_->Send(request);
    const int code = outcome.status_code();
    const std::string where = fmt::format("schema registry {}: {}", base, what);
    if (outcome.ok()) {
      return ParseAnswer(outcome.response.body, where);
    }
    if (code == 0 || code >= 500 || code == 429) {
      failures.push_back(outcome.status.message());
      continue;  // not an answer: the next URL
    }
    std::string error = RegistryError(outcome.response.body);
    std::string detail =
        error.empty() ? fmt::format("HTTP {}", code) : fmt::format("HTTP {} ({})", code, error);
    if (code == 404) {
      return NotFound("{}: {}", where, detail);
    }
    if (code == 401 || code == 403) {
      return InvalidArgument("{}: {}: check the registry's credentials", where, detail);
    }
    return InvalidArgument("{}: {}", where, detail);
  }
  return Unavailable("schema registry: {}: no registry answered ({})", what,
                     fmt::join(failures, "; "));
}

Result<std::shared_ptr<const RegisteredSchema>> SchemaRegistryClient::SchemaById(int32_t id) {
  {
    std::lock_guard lock(mu_);
    if (auto it = by_id_.find(id); it != by_id_.end()) {
      return it->second;
    }
  }
  FERRY_ASSIGN_OR_RETURN(RegisteredSchema schema,
                         Get(fmt::format("/schemas/ids/{}", id), fmt::format("schema id {}", id)));
  schema.id = id;
  auto shared = std::make_shared<const RegisteredSchema>(std::move(schema));
  std::lock_guard lock(mu_);
  by_id_.emplace(id, shared);
  return shared;
}

Result<RegisteredSchema> SchemaRegistryClient::LatestVersion(std::string_view subject) {
  return Get(fmt::format("/subjects/{}/versions/latest", http::UriEncode(subject)),
             fmt::format("the latest version of subject \"{}\"", subject));
}

Result<std::shared_ptr<const RegisteredSchema>> SchemaRegistryClient::Version(
    std::string_view subject, int32_t version) {
  auto key = std::make_pair(std::string(subject), version);
  {
    std::lock_guard lock(mu_);
    if (auto it = by_version_.find(key); it != by_version_.end()) {
      return it->second;
    }
  }
  FERRY_ASSIGN_OR_RETURN(
      RegisteredSchema schema,
      Get(fmt::format("/subjects/{}/versions/{}", http::UriEncode(subject), version),
          fmt::format("version {} of subject \"{}\"", version, subject)));
  auto shared = std::make_shared<const RegisteredSchema>(std::move(schema));
  std::lock_guard lock(mu_);
  by_version_.emplace(std::move(key), shared);
  return shared;
}

}  // namespace ferry::registry
