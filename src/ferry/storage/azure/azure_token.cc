// The Microsoft Entra ID token exchange of azure_credentials.h: the OAuth 2.0 client credentials
// grant at <authority>/<tenant>/oauth2/v2.0/token, with a client secret or a federated token
// (client_assertion, as AKS workload identity provides it).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ferry/base/file.h"
#include "ferry/http/retry.h"
#include "ferry/http/url.h"
#include "ferry/storage/azure/azure_credentials.h"

namespace ferry::storage::azure {
namespace {

constexpr char kDefaultAuthority[] = "https://login.microsoftonline.com";
constexpr char kStorageScope[] = "https://storage.azure.com/.default";

// Token endpoints answer quickly or not at all: a few quick attempts within the deadline.
const http::RetryPolicy& TokenRetryPolicy() {
  static const http::RetryPolicy policy(
      http::RetryOptions{.max_attempts = 4,
                         .initial_backoff = std::chrono::milliseconds(100),
                         .max_backoff = std::chrono::milliseconds(2000)});
  return policy;
}

// The federated token, trimmed; the message names the file, never the content.
Result<std::string> ReadFederatedToken(const std::string& path) {
  Result<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return InvalidArgument("Azure federated token file: {}", text.status().message());
  }
  std::string_view token = *text;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.remove_suffix(1);
  }
  while (!token.empty() && (token.front() == ' ' || token.front() == '\n')) {
    token.remove_prefix(1);
  }
  if (token.empty()) {
    return InvalidArgument("Azure federated token file {} is empty", path);
  }
  return std::string(token);
}

// {"error": "invalid_client", "error_description": "AADSTS7000215: ..."}.
http::ServiceError ParseOAuthError(const http::HttpResponse& response) {
  nlohmann::json j = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  http::ServiceError e;
  if (j.is_object()) {
    if (j.contains("error") && j["error"].is_string()) {
      e.code = j["error"].get<std::string>();
    }
    if (j.contains("error_description") && j["error_description"].is_string()) {
      e.message = j["error_description"].get<std::string>();
    }
  }
  return e;
}

std::string TokenUrl(const EntraTokenRequest& r) {
  std::string_view authority = r.authority_host.empty() ? std::string_view(kDefaultAuthority)
                                                        : std::string_view(r.authority_host);
  while (!authority.empty() && authority.back() == '/') {
    authority.remove_suffix(1);
  }
  return fmt::format("{}/{}/oauth2/v2.0/token", authority, http::UriEncode(r.tenant_id));
}

}  // namespace

Result<AzureCredential> ParseEntraTokenResponse(std::string_view json,
                                                std::chrono::system_clock::time_point fetched_at) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return Unavailable("Entra ID token endpoint: the answer is not a JSON object");
  }
  if (!j.contains("access_token") || !j["access_token"].is_string() ||
      j["access_token"].get<std::string>().empty()) {
    return Unavailable("Entra ID token endpoint: the answer has no access_token");
  }
  if (j.contains("token_type") && j["token_type"].is_string()) {
    std::string type = j["token_type"].get<std::string>();
    if (type != "Bearer" && type != "bearer") {
      return Unavailable("Entra ID token endpoint: token_type '{}', expected Bearer", type);
    }
  }
  int64_t expires_in = -1;
  if (j.contains("expires_in")) {
    const nlohmann::json& v = j["expires_in"];
    if (v.is_number_integer()) {
      expires_in = v.get<int64_t>();
    } else if (v.is_string()) {
      // Some endpoints (managed identity) send the number as a string.
      const std::string s = v.get<std::string>();
      char* end = nullptr;
      long long parsed = std::strtoll(s.c_str(), &end, 10);  // NOLINT(google-runtime-int)
      if (end != s.c_str() && *end == '\0') {
        expires_in = parsed;
      }
    }
  }
  if (expires_in < 0) {
    return Unavailable("Entra ID token endpoint: the answer has no usable expires_in");
  }
  return AzureCredential{.kind = AzureCredential::Kind::kBearerToken,
                         .token = j["access_token"].get<std::string>(),
                         .expiration = fetched_at + std::chrono::seconds(expires_in)};
}

AzureTokenFetch MakeEntraTokenFetch(http::HttpClient* client, EntraTokenRequest r) {
  return [client, r = std::move(r)](http::Deadline deadline) -> Result<AzureCredential> {
    std::vector<http::QueryParam> form = {
        {"client_id", r.client_id}, {"scope", kStorageScope}, {"grant_type", "client_credentials"}};
    if (!r.federated_token_file.empty()) {
      FERRY_ASSIGN_OR_RETURN(std::string token, ReadFederatedToken(r.federated_token_file));
      form.push_back(
          {"client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"});
      form.push_back({"client_assertion", std::move(token)});
    } else {
      form.push_back({"client_secret", r.client_secret});
    }
    // A form in the body: secrets stay out of the URL (URLs appear in messages).
    const std::string body = http::BuildQuery(form);
    http::HttpRequest request;
    request.method = "POST";
    request.url = TokenUrl(r);
    request.headers.Set("Content-Type", "application/x-www-form-urlencoded");
    request.headers.Set("Accept", "application/json");
    request.body = body;
    request.deadline = deadline;
    const auto fetched_at = std::chrono::system_clock::now();
    http::HttpOutcome out = http::SendWithRetry(*client, TokenRetryPolicy(), std::move(request),
                                                {.parse_error = ParseOAuthError});
    const std::string what =
        fmt::format("Entra ID token for client {} (tenant {})", r.client_id, r.tenant_id);
    if (!out.ok()) {
      return out.status.WithContext("{}", what);
    }
    Result<AzureCredential> token = ParseEntraTokenResponse(out.response.body, fetched_at);
    if (!token.ok()) {
      return token.status().WithContext("{}", what);
    }
    token->source = r.federated_token_file.empty() ? "client secret" : "workload identity";
    return token;
  };
}

}  // namespace ferry::storage::azure
