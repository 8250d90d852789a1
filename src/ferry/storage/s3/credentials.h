// AWS credentials and where they come from: the provider interface, and the default chain in the
// order the AWS SDKs use (docs/storage.md, "Credentials"):
//
//   1. explicit options (aws_access_key_id / aws_secret_access_key / aws_session_token);
//   2. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN;
//   3. the shared files: ~/.aws/credentials then ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE,
//      AWS_CONFIG_FILE), profile AWS_PROFILE or "default": static keys, or a web identity
//      (role_arn + web_identity_token_file) in the profile;
//   4. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN [+ AWS_ROLE_SESSION_NAME],
//      exchanged at STS (AssumeRoleWithWebIdentity), as EKS sets up;
//   5. container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI (relative to
//      http://169.254.170.2), with AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE), as ECS sets up;
//   6. EC2 instance metadata (IMDSv2) unless AWS_EC2_METADATA_DISABLED=true; endpoint
//      AWS_EC2_METADATA_SERVICE_ENDPOINT (default http://169.254.169.254).
//
// The first source that is configured wins; one that is configured but fails ends the chain
// with its error (a broken web identity setup is not papered over by instance metadata). Only
// instance metadata is "configured" by being reachable: when it does not answer, the chain
// reports that no credentials were found, naming every place it looked.
//
// Temporary credentials (4-6) are cached and refreshed before they expire by the refresh logic
// all stores share (storage/refreshing_credentials.h): from `margin` before expiry (5 minutes, or
// a quarter of the lifetime for short-lived ones) a background thread fetches new ones while
// callers keep getting the current ones, so a refresh never blocks ingestion. A failed
// background refresh is logged and retried after a backoff; callers block only when the cached
// credentials have expired (or are about to: within a tenth of their lifetime, at most 30
// seconds).
//
// Secrets (secret key, session token, web identity token, container authorization token) never
// reach a log line or an error message.
//
// Thread-safety: providers are thread-safe; Get may be called from many threads at once.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/http/client.h"
#include "ferry/http/deadline.h"
#include "ferry/storage/refreshing_credentials.h"

namespace ferry::storage::s3 {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  // Empty for long-term keys.
  std::string session_token;
  // When temporary credentials stop working; nullopt for long-term keys.
  std::optional<std::chrono::system_clock::time_point> expiration;
  // Where they came from ("environment", "profile prod", "web identity", ...), for logs.
  std::string source;
};

class AwsCredentialProvider {
 public:
  virtual ~AwsCredentialProvider() = default;
  // Credentials valid now. Blocks (within `deadline`) only for a first fetch or when the
  // cached ones have expired. Fails with Unavailable (a source that is down: retry), or
  // InvalidArgument / NotSupported (configuration), or Internal; never with a code that a store
  // could take for an answer about an object (NotFound, AlreadyExists, Aborted).
  virtual Result<AwsCredentials> Get(http::Deadline deadline) = 0;
  // "environment", "web identity (arn:aws:iam::1:role/x)", ...: for logs and messages.
  virtual std::string Describe() const = 0;
};

// Reads an environment variable; tests pass a map instead of the process environment.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
// The process environment (getenv).
EnvLookup ProcessEnvironment();

struct AwsCredentialOptions {
  // 1. Explicit credentials. Both key fields set, or neither.
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  // A profile to use instead of AWS_PROFILE / "default".
  std::string profile;
  // The region, for the regional STS endpoint (otherwise AWS_REGION, AWS_DEFAULT_REGION, the
  // profile's region; the global endpoint when none is known).
  std::string region;
  // STS endpoint (tests, private endpoints); else AWS_ENDPOINT_URL_STS, else
  // https://sts.<region>.amazonaws.com.
  std::string sts_endpoint;
  // Where container credentials live for a relative URI (tests); default http://169.254.170.2.
  std::string container_endpoint = "http://169.254.170.2";
  // Instance metadata endpoint (tests); else AWS_EC2_METADATA_SERVICE_ENDPOINT, else
  // http://169.254.169.254.
  std::string imds_endpoint;
  EnvLookup env = ProcessEnvironment();
  // Sends the token and metadata requests. Must outlive the provider. The client must allow
  // plain http (the container and metadata endpoints are http).
  http::HttpClient* client = nullptr;
};

// The default chain (above). InvalidArgument for inconsistent explicit options or a profile
// that does not exist when named explicitly; other problems surface on the first Get.
Result<std::unique_ptr<AwsCredentialProvider>> MakeDefaultCredentialChain(
    const AwsCredentialOptions& options);

// A provider of fixed credentials (explicit options, environment, a profile's keys).
std::unique_ptr<AwsCredentialProvider> MakeStaticCredentialProvider(AwsCredentials credentials);

// A source of temporary credentials (STS, a container endpoint, instance metadata) wrapped in
// the cache described above.
using CredentialFetch = std::function<Result<AwsCredentials>(http::Deadline deadline)>;

// The refresh timing of storage/refreshing_credentials.h, shared with the other stores.
using RefreshOptions = CredentialRefreshOptions;

std::unique_ptr<AwsCredentialProvider> MakeRefreshingCredentialProvider(
    std::string description, CredentialFetch fetch, RefreshOptions options = {});

}  // namespace ferry::storage::s3
