// The Google token exchanges of gcs_credentials_internal.h: the service account's signed JWT
// (OpenSSL's EVP API), the refresh token grant, the STS token exchange with its optional
// impersonation, and the metadata server.
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "ferry/base/file.h"
#include "ferry/http/digest.h"
#include "ferry/http/retry.h"
#include "ferry/http/url.h"
#include "ferry/storage/gcs/gcs_credentials_internal.h"

namespace ferry::storage::gcs {

using SystemClock = std::chrono::system_clock;

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out = http::Base64Encode(bytes);
  while (!out.empty() && out.back() == '=') {
    out.pop_back();
  }
  for (char& c : out) {
    c = c == '+' ? '-' : c == '/' ? '_' : c;
  }
  return out;
}

namespace {

struct PkeyDeleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// Never prompt for a passphrase (OpenSSL's default callback reads the terminal).
int NoPassphrase(char*, int, int, void*) {
  return 0;
}

int64_t UnixSeconds(SystemClock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace

Result<std::string> MakeServiceAccountAssertion(std::string_view private_key_pem,
                                                std::string_view private_key_id,
                                                std::string_view client_email,
                                                std::string_view scope, std::string_view audience,
                                                SystemClock::time_point now,
                                                std::string_view source) {
  std::unique_ptr<BIO, BioDeleter> bio(
      BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())));
  std::unique_ptr<EVP_PKEY, PkeyDeleter> key(
      bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr) : nullptr);
  if (key == nullptr || EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA) {
    ERR_clear_error();
    return InvalidArgument("{}: private_key is not a PEM RSA private key", source);
  }
  nlohmann::json header = {{"alg", "RS256"}, {"typ", "JWT"}};
  if (!private_key_id.empty()) {
    header["kid"] = std::string(private_key_id);
  }
  const int64_t iat = UnixSeconds(now);
  nlohmann::json claims = {{"iss", std::string(client_email)},
                           {"scope", std::string(scope)},
                           {"aud", std::string(audience)},
                           {"iat", iat},
                           {"exp", iat + 3600}};
  std::string signing_input = Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(claims.dump());
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  size_t len = 0;
  if (ctx == nullptr ||
      EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    ERR_clear_error();
    return Internal("{}: cannot sign the JWT assertion with the private key", source);
  }
  std::string signature(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &len,
                     reinterpret_cast<const unsigned char*>(signing_input.data()),
                     signing_input.size()) != 1) {
    ERR_clear_error();
    return Internal("{}: cannot sign the JWT assertion with the private key", source);
  }
  signature.resize(len);
  return signing_input + "." + Base64UrlEncode(signature);
}

namespace internal {
namespace {

// Token endpoints answer quickly or not at all: a few quick attempts within the deadline.
const http::RetryPolicy& TokenRetryPolicy() {
  static const http::RetryPolicy policy(
      http::RetryOptions{.max_attempts = 4,
                         .initial_backoff = std::chrono::milliseconds(100),
                         .max_backoff = std::chrono::milliseconds(2000)});
  return policy;
}

// OAuth's {"error": "invalid_grant", "error_description": "..."} and Google APIs'
// {"error": {"code": 403, "message": "...", "status": "PERMISSION_DENIED"}}.
http::ServiceError ParseGoogleError(const http::HttpResponse& response) {
  nlohmann::json j = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  http::ServiceError e;
  if (!j.is_object() || !j.contains("error")) {
    return e;
  }
  const nlohmann::json& error = j["error"];
  if (error.is_string()) {
    e.code = error.get<std::string>();
    if (j.contains("error_description") && j["error_description"].is_string()) {
      e.message = j["error_description"].get<std::string>();
    }
  } else if (error.is_object()) {
    if (error.contains("status") && error["status"].is_string()) {
      e.code = error["status"].get<std::string>();
    }
    if (error.contains("message") && error["message"].is_string()) {
      e.message = error["message"].get<std::string>();
    }
  }
  return e;
}

std::string StringField(const nlohmann::json& j, const char* name) {
  return j.is_object() && j.contains(name) && j[name].is_string() ? j[name].get<std::string>()
                                                                  : std::string();
}

// {"access_token": ..., "expires_in": N, "token_type": "Bearer"}; `fetched_at` is when the request
// was sent, so the token is believed to expire no later than it does.
Result<GoogleAccessToken> ParseTokenResponse(std::string_view body,
                                             SystemClock::time_point fetched_at,
                                             std::string_view what) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  GoogleAccessToken token{.token = StringField(j, "access_token")};
  if (token.token.empty()) {
    return Unavailable("{}: the answer has no access_token", what);
  }
  std::string type = StringField(j, "token_type");
  if (!type.empty() && type != "Bearer" && type != "bearer") {
    return Unavailable("{}: token_type '{}', expected Bearer", what, type);
  }
  // Google's access tokens live an hour; STS may leave expires_in out.
  int64_t expires_in = 3600;
  if (j.contains("expires_in")) {
    if (!j["expires_in"].is_number_integer() || j["expires_in"].get<int64_t>() < 0) {
      return Unavailable("{}: the answer has no usable expires_in", what);
    }
    expires_in = j["expires_in"].get<int64_t>();
  }
  token.expiration = fetched_at + std::chrono::seconds(expires_in);
  return token;
}

struct Exchange {
  std::string url;
  std::string content_type;
  std::string body;
  std::string authorization;  // a header value, or ""
  std::string method = "POST";
  bool metadata = false;
};

// Sends `e` with the token retry policy; the classified error names the endpoint (redacted URL)
// and `what`, never a header or a body.
http::HttpOutcome Send(http::HttpClient* client, const Exchange& e, http::Deadline deadline,
                       const http::RetryPolicy& policy = TokenRetryPolicy()) {
  http::HttpRequest request;
  request.method = e.method;
  request.url = e.url;
  if (!e.content_type.empty()) {
    request.headers.Set("Content-Type", e.content_type);
  }
  request.headers.Set("Accept", "application/json");
  if (!e.authorization.empty()) {
    request.headers.Set("Authorization", e.authorization);
  }
  if (e.metadata) {
    request.headers.Set("Metadata-Flavor", "Google");
  }
  request.body = e.body;
  request.deadline = deadline;
  return http::SendWithRetry(*client, policy, std::move(request),
                             {.parse_error = ParseGoogleError});
}

Result<GoogleAccessToken> PostForToken(http::HttpClient* client, const Exchange& e,
                                       http::Deadline deadline, std::string_view what) {
  const SystemClock::time_point fetched_at = SystemClock::now();
  http::HttpOutcome out = Send(client, e, deadline);
  if (!out.ok()) {
    return out.status.WithContext("{}", what);
  }
  return ParseTokenResponse(out.response.body, fetched_at, what);
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

// The external account's subject token, read again for every exchange (it is rotated).
Result<std::string> ReadSubjectToken(const ExternalAccount& a) {
  Result<std::string> text = ReadFileToString(a.subject_token_file);
  if (!text.ok()) {
    return InvalidArgument("credential_source.file: {}", text.status().message());
  }
  std::string token(TrimSpace(*text));
  if (!a.subject_token_field.empty()) {
    nlohmann::json j = nlohmann::json::parse(token, nullptr, /*allow_exceptions=*/false);
    token = StringField(j, a.subject_token_field.c_str());
    if (token.empty()) {
      return InvalidArgument("credential_source.file {} is not a JSON object with a string '{}'",
                             a.subject_token_file, a.subject_token_field);
    }
  }
  if (token.empty()) {
    return InvalidArgument("credential_source.file {} is empty", a.subject_token_file);
  }
  return token;
}

// "2014-10-02T15:01:23Z" or with fractional seconds ("...23.045123456Z"), as Google APIs write
// timestamps.
std::optional<SystemClock::time_point> ParseRfc3339Utc(const std::string& s) {
  struct tm tm = {};
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return std::nullopt;
  }
  std::string_view rest = std::string_view(s).substr(static_cast<size_t>(consumed));
  if (!rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    while (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.front()))) {
      rest.remove_prefix(1);  // fractions are dropped: the token is believed to expire earlier
    }
  }
  if (rest != "Z") {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return SystemClock::from_time_t(::timegm(&tm));
}

}  // namespace

TokenFetch MakeServiceAccountFetch(http::HttpClient* client, ServiceAccountKey key,
                                   std::string scope, std::string source) {
  return [client, key = std::move(key), scope = std::move(scope),
          source = std::move(source)](http::Deadline deadline) -> Result<GoogleAccessToken> {
    FERRY_ASSIGN_OR_RETURN(
        std::string assertion,
        MakeServiceAccountAssertion(key.private_key, key.private_key_id, key.client_email, scope,
                                    key.token_uri, SystemClock::now(), source));
    Exchange e{
        .url = key.token_uri,
        .content_type = "application/x-www-form-urlencoded",
        .body = http::BuildQuery({{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
                                  {"assertion", assertion}})};
    return PostForToken(client, e, deadline, "the token endpoint");
  };
}

TokenFetch MakeAuthorizedUserFetch(http::HttpClient* client, AuthorizedUser user) {
  return [client, user = std::move(user)](http::Deadline deadline) -> Result<GoogleAccessToken> {
    // A form in the body: secrets stay out of the URL (URLs appear in messages).
    Exchange e{.url = user.token_uri,
               .content_type = "application/x-www-form-urlencoded",
               .body = http::BuildQuery({{"grant_type", "refresh_token"},
                                         {"client_id", user.client_id},
                                         {"client_secret", user.client_secret},
                                         {"refresh_token", user.refresh_token}})};
    return PostForToken(client, e, deadline, "the token endpoint");
  };
}

TokenFetch MakeExternalAccountFetch(http::HttpClient* client, ExternalAccount a,
                                    std::string scope) {
  return [client, a = std::move(a),
          scope = std::move(scope)](http::Deadline deadline) -> Result<GoogleAccessToken> {
    FERRY_ASSIGN_OR_RETURN(std::string subject_token, ReadSubjectToken(a));
    const bool impersonate = !a.impersonation_url.empty();
    // 1. STS: the subject token for a federated access token (for impersonation, one that may
    //    call the IAM credentials API).
    Exchange sts{.url = a.token_url,
                 .content_type = "application/x-www-form-urlencoded",
                 .body = http::BuildQuery(
                     {{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
                      {"audience", a.audience},
                      {"scope", impersonate ? kCloudPlatformScope : scope},
                      {"requested_token_type", "urn:ietf:params:oauth:token-type:access_token"},
                      {"subject_token", subject_token},
                      {"subject_token_type", a.subject_token_type}})};
    if (!a.client_id.empty()) {
      sts.authorization = "Basic " + http::Base64Encode(a.client_id + ":" + a.client_secret);
    }
    FERRY_ASSIGN_OR_RETURN(GoogleAccessToken federated,
                           PostForToken(client, sts, deadline, "the STS token exchange"));
    if (!impersonate) {
      return federated;
    }
    // 2. The service account's token, bought with the federated one.
    nlohmann::json body = {{"scope", nlohmann::json::array({scope})}, {"lifetime", "3600s"}};
    Exchange imp{.url = a.impersonation_url,
                 .content_type = "application/json",
                 .body = body.dump(),
                 .authorization = "Bearer " + federated.token};
    const std::string imp_what = "the service account impersonation";
    http::HttpOutcome out = Send(client, imp, deadline);
    if (!out.ok()) {
      return out.status.WithContext("{}", imp_what);
    }
    nlohmann::json j = nlohmann::json::parse(out.response.body, nullptr, false);
    GoogleAccessToken token{.token = StringField(j, "accessToken")};
    std::optional<SystemClock::time_point> expiry = ParseRfc3339Utc(StringField(j, "expireTime"));
    if (token.token.empty() || !expiry) {
      return Unavailable("{}: the answer has no accessToken or no RFC 3339 expireTime", imp_what);
    }
    token.expiration = expiry;
    return token;
  };
}

TokenFetch MakeMetadataFetch(http::HttpClient* client, std::string host,
                             std::chrono::milliseconds probe_timeout) {
  auto answered = std::make_shared<std::atomic<bool>>(false);
  return [client, host = std::move(host), probe_timeout,
          answered](http::Deadline deadline) -> Result<GoogleAccessToken> {
    Exchange e{.url = fmt::format(
                   "http://{}/computeMetadata/v1/instance/service-accounts/default/token", host),
               .method = "GET",
               .metadata = true};
    const std::string what = "the metadata server";
    const SystemClock::time_point fetched_at = SystemClock::now();
    http::HttpOutcome out;
    if (!answered->load()) {
      // The probe: one short attempt. Outside Google Cloud nothing answers (or the name does not
      // resolve).
      static const http::RetryPolicy probe(http::RetryOptions{.max_attempts = 1});
      out = Send(client, e, std::min(deadline, http::DeadlineAfter(probe_timeout)), probe);
      const bool is_metadata_server =
          out.response_complete &&
          http::EqualsIgnoreCase(out.response.headers.GetOr("Metadata-Flavor"), "Google");
      if (!is_metadata_server) {
        return NotFound("no GCE metadata server at {} ({})", host,
                        out.response_complete
                            ? std::string("an answer without Metadata-Flavor: Google")
                            : out.status.message());
      }
      answered->store(true);
    } else {
      out = Send(client, e, deadline);
    }
    if (!out.ok()) {
      return out.status.WithContext("{}", what);
    }
    return ParseTokenResponse(out.response.body, fetched_at, what);
  };
}

}  // namespace internal
}  // namespace ferry::storage::gcs
