#include "ferry/storage/s3/credentials.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <mutex>

#include "ferry/base/clock.h"
#include "ferry/base/log.h"
#include "ferry/http/headers.h"
#include "ferry/storage/refreshing_credentials.h"
#include "ferry/storage/s3/aws_profile.h"
#include "ferry/storage/s3/credentials_internal.h"

namespace ferry::storage::s3 {

namespace {

// What a credential error tells a caller: retry (Unavailable) or fix the configuration.
Status CallerStatus(const Status& s, std::string_view description) {
  return CredentialCallerStatus(s, fmt::format("AWS credentials from {}", description));
}

// Finding the source failed: keep the codes a caller acts on; anything else (an unreadable
// shared file) is a configuration problem.
Status ConfigurationStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotSupported:
    case StatusCode::kUnavailable:
    case StatusCode::kCancelled:
    case StatusCode::kInternal:
      return s;
    default:
      return Status(StatusCode::kInvalidArgument, s.message());
  }
}

class StaticProvider final : public AwsCredentialProvider {
 public:
  explicit StaticProvider(AwsCredentials credentials) : credentials_(std::move(credentials)) {}
  Result<AwsCredentials> Get(http::Deadline) override { return credentials_; }
  std::string Describe() const override { return credentials_.source; }

 private:
  const AwsCredentials credentials_;
};

// The refresh logic shared with the other stores (storage/refreshing_credentials.h).
class RefreshingProvider final : public AwsCredentialProvider {
 public:
  RefreshingProvider(std::string description, CredentialFetch fetch, RefreshOptions options)
      : description_(std::move(description)),
        cache_("AWS credentials from " + description_, std::move(fetch), options) {}

  Result<AwsCredentials> Get(http::Deadline deadline) override { return cache_.Get(deadline); }
  std::string Describe() const override { return description_; }

 private:
  const std::string description_;
  RefreshingCredentials<AwsCredentials> cache_;
};

std::optional<std::string> NonEmpty(const EnvLookup& env, std::string_view name) {
  std::optional<std::string> v = env(name);
  if (v && v->empty()) {
    return std::nullopt;
  }
  return v;
}

std::string StsEndpoint(const AwsCredentialOptions& options, const std::string& region) {
  if (!options.sts_endpoint.empty()) {
    return options.sts_endpoint;
  }
  if (std::optional<std::string> e = NonEmpty(options.env, "AWS_ENDPOINT_URL_STS")) {
    return *e;
  }
  if (region.empty()) {
    return "https://sts.amazonaws.com";
  }
  return "https://sts." + region +
         (region.starts_with("cn-") ? ".amazonaws.com.cn" : ".amazonaws.com");
}

std::string SessionName(const EnvLookup& env, std::string_view from_profile) {
  if (!from_profile.empty()) {
    return std::string(from_profile);
  }
  if (std::optional<std::string> n = NonEmpty(env, "AWS_ROLE_SESSION_NAME")) {
    return *n;
  }
  return "ferry-" + std::to_string(WallMillis());
}

// The default chain: resolves its source on the first Get and keeps it.
class ChainProvider final : public AwsCredentialProvider {
 public:
  explicit ChainProvider(AwsCredentialOptions options) : options_(std::move(options)) {}

  Result<AwsCredentials> Get(http::Deadline deadline) override {
    AwsCredentialProvider* chosen = nullptr;
    {
      std::lock_guard lock(mu_);
      if (chosen_ == nullptr) {
        Result<std::unique_ptr<AwsCredentialProvider>> resolved = Resolve(deadline);
        if (!resolved.ok()) {
          return ConfigurationStatus(resolved.status());
        }
        chosen_ = std::move(resolved).value();
      }
      chosen = chosen_.get();
    }
    return chosen->Get(deadline);
  }

  std::string Describe() const override {
    std::lock_guard lock(mu_);
    return chosen_ ? chosen_->Describe() : std::string("the default AWS credential chain");
  }

 private:
  Result<std::unique_ptr<AwsCredentialProvider>> Resolve(http::Deadline deadline) {
    const EnvLookup& env = options_.env;
    std::vector<std::string> tried;
    // 1. Explicit options.
    if (!options_.access_key_id.empty()) {
      return MakeStaticCredentialProvider(
          AwsCredentials{.access_key_id = options_.access_key_id,
                         .secret_access_key = options_.secret_access_key,
                         .session_token = options_.session_token,
                         .source = "the storage options (aws_access_key_id)"});
    }
    tried.push_back("no aws_access_key_id in the storage options");
    // 2. Environment.
    std::optional<std::string> key = NonEmpty(env, "AWS_ACCESS_KEY_ID");
    std::optional<std::string> secret = NonEmpty(env, "AWS_SECRET_ACCESS_KEY");
    if (key.has_value() != secret.has_value()) {
      return InvalidArgument("AWS credentials: {} is set but {} is not",
                             key ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                             key ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
    }
    if (key) {
      return MakeStaticCredentialProvider(
          AwsCredentials{.access_key_id = *key,
                         .secret_access_key = *secret,
                         .session_token = NonEmpty(env, "AWS_SESSION_TOKEN").value_or(""),
                         .source = "the environment (AWS_ACCESS_KEY_ID)"});
    }
    tried.push_back("AWS_ACCESS_KEY_ID not set");
    // 3. The shared files.
    std::string profile_name = AwsProfileName(env, options_.profile);
    bool named = !options_.profile.empty() || NonEmpty(env, "AWS_PROFILE").has_value();
    FERRY_ASSIGN_OR_RETURN(std::optional<AwsProfile> profile, LoadAwsProfile(env, profile_name));
    if (!profile && named) {
      AwsSharedFiles files = AwsSharedFilePaths(env);
      return InvalidArgument("AWS profile '{}' is not in {} or {}", profile_name, files.credentials,
                             files.config);
    }
    std::string region = ResolveAwsRegion(env, options_.region, profile);
    if (profile) {
      std::string where = fmt::format("profile '{}' ({})", profile_name, profile->files);
      if (!profile->Get("aws_access_key_id").empty()) {
        if (profile->Get("aws_secret_access_key").empty()) {
          return InvalidArgument("AWS {}: aws_access_key_id without aws_secret_access_key", where);
        }
        return MakeStaticCredentialProvider(
            AwsCredentials{.access_key_id = std::string(profile->Get("aws_access_key_id")),
                           .secret_access_key = std::string(profile->Get("aws_secret_access_key")),
                           .session_token = std::string(profile->Get("aws_session_token")),
                           .source = where});
      }
      if (!profile->Get("role_arn").empty() && !profile->Get("web_identity_token_file").empty()) {
        return WebIdentity(std::string(profile->Get("role_arn")),
                           std::string(profile->Get("web_identity_token_file")),
                           SessionName(env, profile->Get("role_session_name")), region);
      }
      for (const char* unsupported : {"source_profile", "credential_source", "credential_process",
                                      "sso_start_url", "sso_session"}) {
        if (!profile->Get(unsupported).empty()) {
          return NotSupported(
              "AWS {}: '{}' is not supported; give keys, a web identity (role_arn with "
              "web_identity_token_file), or use the environment",
              where, unsupported);
        }
      }
      tried.push_back(where + " holds no credentials");
    } else {
      tried.push_back(fmt::format("no profile '{}' in the shared files", profile_name));
    }
    // 4. Web identity.
    std::optional<std::string> token_file = NonEmpty(env, "AWS_WEB_IDENTITY_TOKEN_FILE");
    std::optional<std::string> role = NonEmpty(env, "AWS_ROLE_ARN");
    if (token_file && role) {
      return WebIdentity(*role, *token_file, SessionName(env, ""), region);
    }
    if (token_file || role) {
      return InvalidArgument("AWS web identity: {} is set but {} is not",
                             token_file ? "AWS_WEB_IDENTITY_TOKEN_FILE" : "AWS_ROLE_ARN",
                             token_file ? "AWS_ROLE_ARN" : "AWS_WEB_IDENTITY_TOKEN_FILE");
    }
    tried.push_back("AWS_WEB_IDENTITY_TOKEN_FILE not set");
    // 5. Container credentials.
    if (NonEmpty(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI") ||
        NonEmpty(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
      FERRY_RETURN_IF_ERROR(RequireClient("container credentials"));
      FERRY_ASSIGN_OR_RETURN(
          CredentialFetch fetch,
          internal::MakeContainerFetch(options_.client, env, options_.container_endpoint));
      return MakeRefreshingCredentialProvider("container credentials", std::move(fetch));
    }
    tried.push_back("AWS_CONTAINER_CREDENTIALS_FULL_URI / _RELATIVE_URI not set");
    // 6. Instance metadata, if it answers.
    std::optional<std::string> disabled = env("AWS_EC2_METADATA_DISABLED");
    if (disabled && http::EqualsIgnoreCase(*disabled, "true")) {
      tried.push_back("instance metadata disabled (AWS_EC2_METADATA_DISABLED)");
      return NoCredentials(tried);
    }
    FERRY_RETURN_IF_ERROR(RequireClient("instance metadata"));
    std::string endpoint =
        !options_.imds_endpoint.empty()
            ? options_.imds_endpoint
            : NonEmpty(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT").value_or("http://169.254.169.254");
    // Outside EC2 nothing answers there: then no source is configured.
    CredentialFetch fetch =
        internal::MakeImdsFetch(options_.client, endpoint, std::chrono::seconds(1));
    Result<AwsCredentials> first = fetch(deadline);
    if (!first.ok() && first.status().code() == StatusCode::kNotFound) {
      tried.push_back(first.status().message());
      return NoCredentials(tried);
    }
    if (!first.ok()) {
      return CallerStatus(first.status(), "EC2 instance metadata at " + endpoint);
    }
    // The provider starts with what the probe fetched.
    auto seed = std::make_shared<std::optional<AwsCredentials>>(std::move(first).value());
    return MakeRefreshingCredentialProvider(
        "EC2 instance metadata at " + endpoint,
        [seed, fetch](http::Deadline d) -> Result<AwsCredentials> {
          if (seed->has_value()) {
            AwsCredentials c = std::move(**seed);
            seed->reset();
            return c;
          }
          return fetch(d);
        });
  }

  Status RequireClient(std::string_view what) const {
    if (options_.client == nullptr) {
      return Internal("AWS credentials: {} need an HTTP client (AwsCredentialOptions::client)",
                      what);
    }
    return Status::OK();
  }

  Result<std::unique_ptr<AwsCredentialProvider>> WebIdentity(std::string role_arn,
                                                             std::string token_file,
                                                             std::string session_name,
                                                             const std::string& region) {
    FERRY_RETURN_IF_ERROR(RequireClient("web identity credentials"));
    std::string description = "web identity (" + role_arn + ")";
    return MakeRefreshingCredentialProvider(
        description, internal::MakeWebIdentityFetch(
                         options_.client, internal::WebIdentityConfig{
                                              .role_arn = std::move(role_arn),
                                              .token_file = std::move(token_file),
                                              .session_name = std::move(session_name),
                                              .sts_endpoint = StsEndpoint(options_, region)}));
  }

  static Status NoCredentials(const std::vector<std::string>& tried) {
    std::string list;
    for (const std::string& t : tried) {
      list += list.empty() ? t : "; " + t;
    }
    return InvalidArgument("no AWS credentials found: {}", list);
  }

  const AwsCredentialOptions options_;
  mutable std::mutex mu_;
  std::unique_ptr<AwsCredentialProvider> chosen_;  // guarded by mu_
};

}  // namespace

EnvLookup ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = ::getenv(std::string(name).c_str());
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  };
}

std::unique_ptr<AwsCredentialProvider> MakeStaticCredentialProvider(AwsCredentials credentials) {
  return std::make_unique<StaticProvider>(std::move(credentials));
}

std::unique_ptr<AwsCredentialProvider> MakeRefreshingCredentialProvider(std::string description,
                                                                        CredentialFetch fetch,
                                                                        RefreshOptions options) {
  return std::make_unique<RefreshingProvider>(std::move(description), std::move(fetch), options);
}

Result<std::unique_ptr<AwsCredentialProvider>> MakeDefaultCredentialChain(
    const AwsCredentialOptions& options) {
  if (options.access_key_id.empty() != options.secret_access_key.empty()) {
    return InvalidArgument(
        "AWS credentials: aws_access_key_id and aws_secret_access_key go together");
  }
  if (!options.session_token.empty() && options.access_key_id.empty()) {
    return InvalidArgument("AWS credentials: aws_session_token needs aws_access_key_id");
  }
  if (!options.env) {
    return Internal("AWS credentials: no environment lookup");
  }
  return std::unique_ptr<AwsCredentialProvider>(std::make_unique<ChainProvider>(options));
}

}  // namespace ferry::storage::s3
