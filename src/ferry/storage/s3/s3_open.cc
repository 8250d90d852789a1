// OpenS3Store (s3_store.h): storage options -> an S3Store with its HTTP client and credentials.
#include <fmt/format.h>

#include "ferry/base/log.h"
#include "ferry/storage/s3/aws_profile.h"
#include "ferry/storage/s3/credentials.h"
#include "ferry/storage/s3/s3_store.h"
#include "ferry/storage/transfer_options.h"

namespace ferry::storage::s3 {
namespace {

// The credential chain together with the HTTP client its token and metadata fetches use.
class OwningProvider final : public AwsCredentialProvider {
 public:
  OwningProvider(std::unique_ptr<http::HttpClient> client,
                 std::unique_ptr<AwsCredentialProvider> inner)
      : client_(std::move(client)), inner_(std::move(inner)) {}
  Result<AwsCredentials> Get(http::Deadline deadline) override { return inner_->Get(deadline); }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  // Destruction order: the chain (and its refresh thread) before the client it uses.
  std::unique_ptr<http::HttpClient> client_;
  std::unique_ptr<AwsCredentialProvider> inner_;
};

}  // namespace

Result<std::unique_ptr<S3Store>> OpenS3Store(const std::string& bucket, const std::string& root,
                                             const StorageOptions& o) {
  const EnvLookup env = ProcessEnvironment();
  S3StoreOptions s{.bucket = bucket, .root = root};
  const std::string profile_name = AwsProfileName(env, OptionOr(o, "aws_profile"));
  FERRY_ASSIGN_OR_RETURN(std::optional<AwsProfile> profile, LoadAwsProfile(env, profile_name));
  s.region = ResolveAwsRegion(env, OptionOr(o, "aws_region"), profile);
  if (s.region.empty()) {
    s.region = "us-east-1";
  }
  FERRY_ASSIGN_OR_RETURN(s.virtual_hosted,
                         BoolOption(o, "aws_virtual_hosted_style_request", false));
  s.endpoint = OptionOr(o, "aws_endpoint_url");
  if (s.endpoint.empty()) {
    // AWS itself: regional endpoint, virtual-hosted addressing (path style is deprecated there).
    s.endpoint = fmt::format("https://s3.{}.amazonaws.com", s.region);
    s.virtual_hosted = true;
  }
  FERRY_ASSIGN_OR_RETURN(bool allow_http, BoolOption(o, "aws_allow_http", false));
  if (s.endpoint.starts_with("http://") && !allow_http) {
    return InvalidArgument(
        "storage option aws_endpoint_url = {} is plain http; set aws_allow_http=true to allow it",
        s.endpoint);
  }
  FERRY_ASSIGN_OR_RETURN(s.allow_unsafe_rename, BoolOption(o, "aws_s3_allow_unsafe_rename", false));
  http::HttpClientOptions client_options;
  FERRY_RETURN_IF_ERROR(ReadTransferOptions(o, &s.transfer, &client_options));
  client_options.allow_http = allow_http;
  client_options.ca_file = OptionOr(o, "aws_ca_bundle", env("AWS_CA_BUNDLE").value_or(""));
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<http::HttpClient> client,
                         http::HttpClient::Create(client_options));
  // Token, container and instance-metadata endpoints are plain http by design.
  http::HttpClientOptions credential_options = client_options;
  credential_options.allow_http = true;
  credential_options.default_timeout = std::chrono::milliseconds(10'000);
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<http::HttpClient> credential_client,
                         http::HttpClient::Create(credential_options));
  AwsCredentialOptions chain{.access_key_id = OptionOr(o, "aws_access_key_id"),
                             .secret_access_key = OptionOr(o, "aws_secret_access_key"),
                             .session_token = OptionOr(o, "aws_session_token"),
                             .profile = OptionOr(o, "aws_profile"),
                             .region = s.region,
                             .env = env,
                             .client = credential_client.get()};
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<AwsCredentialProvider> provider,
                         MakeDefaultCredentialChain(chain));
  auto credentials =
      std::make_shared<OwningProvider>(std::move(credential_client), std::move(provider));
  FERRY_LOG_DEBUG("s3://{}/{}: endpoint {}, region {}, {} addressing, credentials: {}", bucket,
                  root, s.endpoint, s.region, s.virtual_hosted ? "virtual-hosted" : "path-style",
                  credentials->Describe());
  return S3Store::Create(std::move(s), std::move(client), std::move(credentials));
}

}  // namespace ferry::storage::s3
