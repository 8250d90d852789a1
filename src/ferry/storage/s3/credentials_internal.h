// Pieces of the credential chain shared by credentials.cc and credential_fetchers.cc, and
// tested on their own: the fetchers of temporary credentials and the parsers of their answers.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/http/client.h"
#include "ferry/storage/s3/credentials.h"

namespace ferry::storage::s3::internal {

struct WebIdentityConfig {
  std::string role_arn;
  std::string token_file;  // read again for every fetch (EKS rotates it)
  std::string session_name;
  std::string sts_endpoint;  // "https://sts.us-east-1.amazonaws.com"
};

// STS AssumeRoleWithWebIdentity: a POST of a form (the token stays out of the URL), answered
// in XML.
CredentialFetch MakeWebIdentityFetch(http::HttpClient* client, WebIdentityConfig config);

// Container credentials (ECS, EKS Pod Identity). InvalidArgument when neither variable is set
// usefully or a full URI is plain http to a host other than loopback or the container hosts
// (169.254.170.2, 169.254.170.23, fd00:ec2::23).
Result<CredentialFetch> MakeContainerFetch(http::HttpClient* client, const EnvLookup& env,
                                           const std::string& container_endpoint);

// EC2 instance metadata, IMDSv2: a session token (PUT), the role name, the role's credentials.
// `probe_timeout` bounds each request (the endpoint is missing outside EC2).
CredentialFetch MakeImdsFetch(http::HttpClient* client, std::string endpoint,
                              std::chrono::milliseconds probe_timeout);

// "2024-01-02T03:04:05Z", with optional fractional seconds and a "+hh:mm" offset.
Result<std::chrono::system_clock::time_point> ParseIso8601(std::string_view text);

// The <Credentials> of an STS Assume* answer.
Result<AwsCredentials> ParseStsCredentials(std::string_view xml, std::string_view action);
// {"AccessKeyId", "SecretAccessKey", "Token", "Expiration"} from a container or IMDS endpoint.
Result<AwsCredentials> ParseJsonCredentials(std::string_view json, std::string_view what);

}  // namespace ferry::storage::s3::internal
