// The token exchanges behind gcs_credentials.h, one fetch per kind of credential (gcs_token.cc);
// the chain (gcs_credentials.cc) wraps each in the shared refresh cache.
//
// Thread-safety: a fetch may be called from any thread, one call at a time per cache.
#pragma once

#include <functional>
#include <string>

#include "ferry/storage/gcs/gcs_credentials.h"

namespace ferry::storage::gcs::internal {

inline constexpr char kDefaultTokenUri[] = "https://oauth2.googleapis.com/token";
inline constexpr char kCloudPlatformScope[] = "https://www.googleapis.com/auth/cloud-platform";

using TokenFetch = std::function<Result<GoogleAccessToken>(http::Deadline deadline)>;

struct ServiceAccountKey {
  std::string client_email;
  std::string private_key;  // PEM
  std::string private_key_id;
  std::string token_uri;
};

struct AuthorizedUser {
  std::string client_id;
  std::string client_secret;
  std::string refresh_token;
  std::string token_uri;
};

struct ExternalAccount {
  std::string audience;
  std::string subject_token_type;
  std::string token_url;
  // credential_source.file, and for format "json" the field holding the token.
  std::string subject_token_file;
  std::string subject_token_field;
  std::string impersonation_url;  // "" = use the STS token
  // Client authentication at STS (HTTP Basic), both or neither.
  std::string client_id;
  std::string client_secret;
};

// Errors name the endpoint (its URL) or the file; the cache in front of a fetch prefixes where
// the credentials came from. `source` ("GOOGLE_APPLICATION_CREDENTIALS=/k.json") names the key
// in a signing error.
TokenFetch MakeServiceAccountFetch(http::HttpClient* client, ServiceAccountKey key,
                                   std::string scope, std::string source);
TokenFetch MakeAuthorizedUserFetch(http::HttpClient* client, AuthorizedUser user);
TokenFetch MakeExternalAccountFetch(http::HttpClient* client, ExternalAccount account,
                                    std::string scope);
// GET http://<host>/computeMetadata/v1/instance/service-accounts/default/token with
// Metadata-Flavor: Google. NotFound when nothing answers there with `Metadata-Flavor: Google`
// (not on Google Cloud); the first call gives up after `probe_timeout`.
TokenFetch MakeMetadataFetch(http::HttpClient* client, std::string host,
                             std::chrono::milliseconds probe_timeout);

}  // namespace ferry::storage::gcs::internal
