#include "ferry/storage/gcs/gcs_credentials.h"

#include <stdlib.h>

#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/base/file.h"
#include "ferry/base/log.h"
#include "ferry/http/url.h"
#include "ferry/storage/gcs/gcs_credentials_internal.h"

namespace ferry::storage::gcs {
namespace {

using internal::TokenFetch;

class RefreshingProvider final : public GcsCredentialProvider {
 public:
  RefreshingProvider(std::string description, TokenFetch fetch, CredentialRefreshOptions options)
      : description_(std::move(description)),
        cache_("Google token from " + description_, std::move(fetch), options) {}
  Result<GoogleAccessToken> Get(http::Deadline deadline) override { return cache_.Get(deadline); }
  std::string Describe() const override { return description_; }

 private:
  const std::string description_;
  RefreshingCredentials<GoogleAccessToken> cache_;
};

std::optional<std::string> NonEmpty(const EnvLookup& env, std::string_view name) {
  std::optional<std::string> v = env(name);
  if (!v || v->empty()) {
    return std::nullopt;
  }
  return v;
}

std::string Field(const nlohmann::json& j, const char* name) {
  return j.contains(name) && j[name].is_string() ? j[name].get<std::string>() : std::string();
}

// InvalidArgument naming the fields of `names` that `j` lacks, or OK.
Status RequireFields(const nlohmann::json& j, std::initializer_list<const char*> names,
                     std::string_view type, std::string_view source) {
  std::string missing;
  for (const char* name : names) {
    if (Field(j, name).empty()) {
      missing += missing.empty() ? name : std::string(", ") + name;
    }
  }
  if (!missing.empty()) {
    return InvalidArgument("{}: the {} credentials lack {}", source, type, missing);
  }
  return Status::OK();
}

// A token endpoint from a credentials file: https, or plain http only on this machine (a local
// stand-in), since assertions, refresh tokens and subject tokens are sent to it.
Status CheckEndpoint(const std::string& url, std::string_view field, std::string_view source) {
  Result<http::Url> parsed = http::ParseUrl(url);
  if (!parsed.ok()) {
    return InvalidArgument("{}: {} '{}' is not a URL", source, field, http::RedactUrl(url));
  }
  const bool loopback =
      parsed->host == "127.0.0.1" || parsed->host == "localhost" || parsed->host == "::1";
  if (parsed->scheme != "https" && !loopback) {
    return InvalidArgument("{}: {} '{}' must be https (plain http only to this machine)", source,
                           field, http::RedactUrl(url));
  }
  return Status::OK();
}

std::unique_ptr<GcsCredentialProvider> Refreshing(std::string description, TokenFetch fetch,
                                                  const GcsCredentialOptions& o) {
  return std::make_unique<RefreshingProvider>(std::move(description), std::move(fetch), o.refresh);
}

Result<std::unique_ptr<GcsCredentialProvider>> ServiceAccount(const nlohmann::json& j,
                                                              const std::string& source,
                                                              const GcsCredentialOptions& o) {
  FERRY_RETURN_IF_ERROR(
      RequireFields(j, {"client_email", "private_key"}, "service_account", source));
  internal::ServiceAccountKey key{.client_email = Field(j, "client_email"),
                                  .private_key = Field(j, "private_key"),
                                  .private_key_id = Field(j, "private_key_id"),
                                  .token_uri = Field(j, "token_uri")};
  if (key.token_uri.empty()) {
    key.token_uri = internal::kDefaultTokenUri;
  }
  FERRY_RETURN_IF_ERROR(CheckEndpoint(key.token_uri, "token_uri", source));
  // A key that cannot sign is a configuration error now, not at the first request.
  FERRY_RETURN_IF_ERROR(MakeServiceAccountAssertion(key.private_key, key.private_key_id,
                                                    key.client_email, o.scope, key.token_uri,
                                                    std::chrono::system_clock::now(), source)
                            .status());
  std::string description = fmt::format("service account {} ({})", key.client_email, source);
  return Refreshing(std::move(description),
                    internal::MakeServiceAccountFetch(o.client, std::move(key), o.scope, source),
                    o);
}

Result<std::unique_ptr<GcsCredentialProvider>> AuthorizedUser(const nlohmann::json& j,
                                                              const std::string& source,
                                                              const GcsCredentialOptions& o) {
  FERRY_RETURN_IF_ERROR(
      RequireFields(j, {"client_id", "client_secret", "refresh_token"}, "authorized_user", source));
  internal::AuthorizedUser user{.client_id = Field(j, "client_id"),
                                .client_secret = Field(j, "client_secret"),
                                .refresh_token = Field(j, "refresh_token"),
                                .token_uri = Field(j, "token_uri")};
  if (user.token_uri.empty()) {
    user.token_uri = internal::kDefaultTokenUri;
  }
  FERRY_RETURN_IF_ERROR(CheckEndpoint(user.token_uri, "token_uri", source));
  std::string description = fmt::format("authorized user ({})", source);
  return Refreshing(std::move(description),
                    internal::MakeAuthorizedUserFetch(o.client, std::move(user)), o);
}

Result<std::unique_ptr<GcsCredentialProvider>> ExternalAccount(const nlohmann::json& j,
                                                               const std::string& source,
                                                               const GcsCredentialOptions& o) {
  FERRY_RETURN_IF_ERROR(RequireFields(j, {"audience", "subject_token_type", "token_url"},
                                      "external_account", source));
  const nlohmann::json* cs = j.contains("credential_source") && j["credential_source"].is_object()
                                 ? &j["credential_source"]
                                 : nullptr;
  if (cs == nullptr) {
    return InvalidArgument("{}: an external_account credentials file needs credential_source",
                           source);
  }
  if (Field(*cs, "file").empty()) {
    for (const char* other : {"url", "executable", "environment_id"}) {
      if (cs->contains(other)) {
        return NotSupported(
            "{}: credential_source.{} is not supported; ferry reads the subject token from "
            "credential_source.file",
            source, other);
      }
    }
    return InvalidArgument("{}: credential_source has no file", source);
  }
  internal::ExternalAccount a{.audience = Field(j, "audience"),
                              .subject_token_type = Field(j, "subject_token_type"),
                              .token_url = Field(j, "token_url"),
                              .subject_token_file = Field(*cs, "file"),
                              .impersonation_url = Field(j, "service_account_impersonation_url"),
                              .client_id = Field(j, "client_id"),
                              .client_secret = Field(j, "client_secret")};
  FERRY_RETURN_IF_ERROR(CheckEndpoint(a.token_url, "token_url", source));
  if (!a.impersonation_url.empty()) {
    FERRY_RETURN_IF_ERROR(
        CheckEndpoint(a.impersonation_url, "service_account_impersonation_url", source));
  }
  if (cs->contains("format") && (*cs)["format"].is_object()) {
    const nlohmann::json& format = (*cs)["format"];
    if (Field(format, "type") == "json") {
      a.subject_token_field = Field(format, "subject_token_field_name");
      if (a.subject_token_field.empty()) {
        return InvalidArgument(
            "{}: credential_source.format of type json needs subject_token_field_name", source);
      }
    }
  }
  std::string description =
      fmt::format("workload identity federation, audience {}{} ({})", a.audience,
                  a.impersonation_url.empty() ? "" : ", impersonating a service account", source);
  return Refreshing(std::move(description),
                    internal::MakeExternalAccountFetch(o.client, std::move(a), o.scope), o);
}

// A credentials document of any supported type; `source` names where it came from.
Result<std::unique_ptr<GcsCredentialProvider>> FromJson(std::string_view text,
                                                        const std::string& source,
                                                        const GcsCredentialOptions& o) {
  if (o.client == nullptr) {
    return Internal("Google credentials: token requests need an HTTP client");
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return InvalidArgument("{}: not a JSON credentials file", source);
  }
  const std::string type = Field(j, "type");
  if (type == "service_account") {
    return ServiceAccount(j, source, o);
  }
  if (type == "authorized_user") {
    return AuthorizedUser(j, source, o);
  }
  if (type == "external_account") {
    return ExternalAccount(j, source, o);
  }
  if (!type.empty() && type != "impersonated_service_account" &&
      type != "external_account_authorized_user") {
    return InvalidArgument(
        "{}: unknown credentials type '{}' (expected service_account, authorized_user or "
        "external_account)",
        source, type);
  }
  return type.empty() ? InvalidArgument("{}: the credentials file has no \"type\"", source)
                      : NotSupported(
                            "{}: credentials of type '{}' are not supported (use service_account, "
                            "authorized_user or external_account)",
                            source, type);
}

Result<std::unique_ptr<GcsCredentialProvider>> FromFile(const std::string& path,
                                                        const std::string& source,
                                                        const GcsCredentialOptions& o) {
  Result<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return InvalidArgument("{}: cannot read the credentials file: {}", source,
                           text.status().message());
  }
  return FromJson(*text, source, o);
}

class ChainProvider final : public GcsCredentialProvider {
 public:
  ChainProvider(const GcsCredentialOptions& options, std::vector<std::string> tried,
                std::string metadata_host)
      : options_(options), tried_(std::move(tried)), metadata_host_(std::move(metadata_host)) {}

  // Step 4 now: InvalidArgument when there is no metadata server; other errors are left for Get.
  Status ProbeNow() {
    std::lock_guard lock(mu_);
    Result<std::unique_ptr<GcsCredentialProvider>> resolved =
        ResolveMetadata(http::DeadlineAfter(options_.metadata_probe_timeout));
    if (resolved.ok()) {
      chosen_ = std::move(resolved).value();
      FERRY_LOG_INFO("GCS credentials: {}", chosen_->Describe());
      return Status::OK();
    }
    return resolved.status().code() == StatusCode::kInvalidArgument ? resolved.status()
                                                                    : Status::OK();
  }

  Result<GoogleAccessToken> Get(http::Deadline deadline) override {
    GcsCredentialProvider* chosen = nullptr;
    {
      std::lock_guard lock(mu_);
      if (chosen_ == nullptr) {
        FERRY_ASSIGN_OR_RETURN(chosen_, ResolveMetadata(deadline));
        FERRY_LOG_INFO("GCS credentials: {}", chosen_->Describe());
      }
      chosen = chosen_.get();
    }
    return chosen->Get(deadline);
  }

  std::string Describe() const override {
    std::lock_guard lock(mu_);
    return chosen_ ? chosen_->Describe() : "the GCE metadata server at " + metadata_host_;
  }

 private:
  // Step 4: the metadata server, when it answers.
  Result<std::unique_ptr<GcsCredentialProvider>> ResolveMetadata(http::Deadline deadline) {
    TokenFetch fetch = internal::MakeMetadataFetch(options_.client, metadata_host_,
                                                   options_.metadata_probe_timeout);
    Result<GoogleAccessToken> first = fetch(deadline);
    if (!first.ok() && first.status().code() == StatusCode::kNotFound) {
      std::string list;
      for (const std::string& t : tried_) {
        list += t + "; ";
      }
      return InvalidArgument(
          "no Google credentials found: {}{}. For an emulator set storage_emulator_host "
          "(STORAGE_EMULATOR_HOST); for a public bucket google_skip_signature=true",
          list, first.status().message());
    }
    if (!first.ok()) {
      return CredentialCallerStatus(first.status(), "GCE metadata server at " + metadata_host_);
    }
    // The provider starts with what the probe fetched.
    auto seed = std::make_shared<std::optional<GoogleAccessToken>>(std::move(first).value());
    return Refreshing(
        "the GCE metadata server at " + metadata_host_,
        [seed, fetch](http::Deadline d) -> Result<GoogleAccessToken> {
          if (seed->has_value()) {
            GoogleAccessToken t = std::move(**seed);
            seed->reset();
            return t;
          }
          return fetch(d);
        },
        options_);
  }

  const GcsCredentialOptions options_;
  const std::vector<std::string> tried_;
  const std::string metadata_host_;
  mutable std::mutex mu_;
  std::unique_ptr<GcsCredentialProvider> chosen_;  // guarded by mu_
};

}  // namespace

EnvLookup GcsProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = ::getenv(std::string(name).c_str());
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  };
}

Result<std::unique_ptr<GcsCredentialProvider>> MakeGcsCredentialChain(
    const GcsCredentialOptions& o) {
  const EnvLookup env = o.env ? o.env : GcsProcessEnvironment();
  std::vector<std::string> tried;
  // 1. The storage options.
  if (!o.service_account_key.empty()) {
    return FromJson(o.service_account_key, "the storage option google_service_account_key", o);
  }
  if (!o.service_account_path.empty()) {
    return FromFile(o.service_account_path,
                    "the storage option google_service_account=" + o.service_account_path, o);
  }
  if (!o.application_credentials.empty()) {
    return FromFile(
        o.application_credentials,
        "the storage option google_application_credentials=" + o.application_credentials, o);
  }
  tried.push_back(
      "no google_service_account_key, google_service_account or google_application_credentials "
      "in the storage options");
  // 2. GOOGLE_APPLICATION_CREDENTIALS.
  if (std::optional<std::string> path = NonEmpty(env, "GOOGLE_APPLICATION_CREDENTIALS")) {
    return FromFile(*path, "GOOGLE_APPLICATION_CREDENTIALS=" + *path, o);
  }
  tried.push_back("GOOGLE_APPLICATION_CREDENTIALS not set");
  // 3. gcloud's well-known file.
  std::string well_known;
  if (std::optional<std::string> config = NonEmpty(env, "CLOUDSDK_CONFIG")) {
    well_known = *config + "/application_default_credentials.json";
  } else if (std::optional<std::string> home = NonEmpty(env, "HOME")) {
    well_known = *home + "/.config/gcloud/application_default_credentials.json";
  }
  if (!well_known.empty() && FileExists(well_known)) {
    return FromFile(well_known, "gcloud's application default credentials " + well_known, o);
  }
  tried.push_back(well_known.empty() ? std::string("no HOME or CLOUDSDK_CONFIG for gcloud's file")
                                     : "no gcloud credentials file " + well_known);
  // 4. The metadata server, on the first Get.
  if (o.client == nullptr) {
    return Internal("Google credentials: the metadata server needs an HTTP client");
  }
  std::string host =
      NonEmpty(env, "GCE_METADATA_HOST")
          .value_or(NonEmpty(env, "GCE_METADATA_ROOT").value_or("metadata.google.internal"));
  auto chain = std::make_unique<ChainProvider>(o, std::move(tried), std::move(host));
  if (o.probe_metadata_now) {
    FERRY_RETURN_IF_ERROR(chain->ProbeNow());
  }
  return std::unique_ptr<GcsCredentialProvider>(std::move(chain));
}

Result<std::function<Result<std::string>()>> MakeGcsAccessToken(const StorageOptions& options,
                                                                const EnvLookup& env_in) {
  const EnvLookup env = env_in ? env_in : GcsProcessEnvironment();
  GcsCredentialOptions o{
      .service_account_key = OptionOr(options, "google_service_account_key"),
      .service_account_path = OptionOr(options, "google_service_account",
                                       OptionOr(options, "google_service_account_path")),
      .application_credentials = OptionOr(options, "google_application_credentials"),
      .env = env,
      .probe_metadata_now = true};
  const bool configured = !o.service_account_key.empty() || !o.service_account_path.empty() ||
                          !o.application_credentials.empty();
  FERRY_ASSIGN_OR_RETURN(bool skip_signature, BoolOption(options, "google_skip_signature", false));
  const bool emulator =
      !OptionOr(options, "storage_emulator_host").empty() || NonEmpty(env, "STORAGE_EMULATOR_HOST");
  if (skip_signature || (emulator && !configured)) {
    return std::function<Result<std::string>()>();  // anonymous, as Google's clients
  }
  // Its own client: the metadata server and token endpoints may be plain http.
  struct Holder {
    // Destruction order: the provider (its refresh thread) before the client it uses.
    std::unique_ptr<http::HttpClient> client;
    std::unique_ptr<GcsCredentialProvider> provider;
  };
  auto holder = std::make_shared<Holder>();
  FERRY_ASSIGN_OR_RETURN(holder->client, http::HttpClient::Create(http::HttpClientOptions{
                                             .connect_timeout = std::chrono::seconds(5),
                                             .default_timeout = std::chrono::seconds(30),
                                             .allow_http = true}));
  o.client = holder->client.get();
  FERRY_ASSIGN_OR_RETURN(holder->provider, MakeGcsCredentialChain(o));
  return std::function<Result<std::string>()>([holder]() -> Result<std::string> {
    FERRY_ASSIGN_OR_RETURN(GoogleAccessToken token,
                           holder->provider->Get(http::DeadlineAfter(std::chrono::seconds(60))));
    return std::move(token.token);
  });
}

}  // namespace ferry::storage::gcs
