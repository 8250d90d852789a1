// Where ferry's Google Cloud Storage requests get their OAuth 2.0 access token: Application
// Default Credentials, in the order Google's client libraries look (docs/storage.md, "GCS
// credentials"), the first that is configured winning:
//
//   1. the storage options: google_service_account_key (a key's JSON inline),
//      google_service_account / google_service_account_path (a key file),
//      google_application_credentials (a credentials file of any type below);
//   2. GOOGLE_APPLICATION_CREDENTIALS, a file of one of these types:
//      - "service_account": an RS256-signed JWT (iss = client_email, scope, aud = token_uri,
//        iat, exp = iat + 1 h), exchanged at the key's token_uri (jwt-bearer grant);
//      - "authorized_user" (gcloud auth application-default login): the refresh_token grant at
//        its token_uri (default https://oauth2.googleapis.com/token);
//      - "external_account" (workload identity federation): the subject token read from
//        credential_source.file (again for every exchange: it is rotated), exchanged at token_url
//        (STS, token-exchange grant, audience, subject_token_type); with
//        service_account_impersonation_url, that token then buys the final one there
//        (generateAccessToken);
//   3. gcloud's well-known file: $CLOUDSDK_CONFIG/application_default_credentials.json, else
//      ~/.config/gcloud/application_default_credentials.json, when it exists;
//   4. the GCE metadata server (GCE_METADATA_HOST, default metadata.google.internal), "configured"
//      by answering with `Metadata-Flavor: Google`; tried last, on the first Get. When it does not
//      answer, Get fails with InvalidArgument "no Google credentials found" naming every place
//      that was looked at.
//
// A source that is configured but broken (an unreadable or malformed file, a key that is not an
// RSA private key) ends the chain with its error, naming the option or variable and the file.
// Tokens are cached and refreshed in the background before they expire by the refresh logic all
// stores share (storage/refreshing_credentials.h), so a refresh never blocks ingestion. The scope
// is https://www.googleapis.com/auth/devstorage.read_write.
//
// Secrets (private keys, client secrets, refresh tokens, subject tokens, access tokens) never
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
#include "ferry/storage/storage_options.h"

namespace ferry::storage::gcs {

inline constexpr char kGcsScope[] = "https://www.googleapis.com/auth/devstorage.read_write";

struct GoogleAccessToken {
  std::string token;
  // When it stops working; nullopt: never (not from Google).
  std::optional<std::chrono::system_clock::time_point> expiration;
};

class GcsCredentialProvider {
 public:
  virtual ~GcsCredentialProvider() = default;
  // A token usable now. Blocks (within `deadline`) only for a first token or when the cached one
  // has expired. Fails with Unavailable (retry), InvalidArgument or NotSupported (configuration);
  // never with a code a store could take for an answer about an object.
  virtual Result<GoogleAccessToken> Get(http::Deadline deadline) = 0;
  // "service account key ferry@p.iam.gserviceaccount.com (GOOGLE_APPLICATION_CREDENTIALS=/k)".
  virtual std::string Describe() const = 0;
};

struct GcsCredentialOptions {
  // The storage options of step 1.
  std::string service_account_key;
  std::string service_account_path;
  std::string application_credentials;
  std::string scope = kGcsScope;
  // The process environment unless a test passes a map.
  EnvLookup env;
  // Sends the token requests; must allow http (the metadata server) and outlive the provider.
  http::HttpClient* client = nullptr;
  CredentialRefreshOptions refresh;
  // How long the metadata server may take to answer the first time before it is taken as absent.
  std::chrono::milliseconds metadata_probe_timeout{2000};
  // Ask the metadata server (step 4) already in MakeGcsCredentialChain, so that "no Google
  // credentials found" comes when the store is opened; otherwise on the first Get.
  bool probe_metadata_now = false;
};

// The chain above. Files are read and checked here (InvalidArgument naming the option or
// variable and the file); the metadata server is asked on the first Get or, with
// probe_metadata_now, here (a metadata server that answers but fails is then asked again on the
// first Get).
Result<std::unique_ptr<GcsCredentialProvider>> MakeGcsCredentialChain(
    const GcsCredentialOptions& options);

// The access token for every GCS request, from the chain, for GcsStoreOptions::access_token:
// the options of step 1 are read from `options` (canonical names, and the alias
// google_service_account_path); the metadata server is probed now (probe_metadata_now). An empty
// function (anonymous) with google_skip_signature=true, or when an emulator is named
// (storage_emulator_host, or STORAGE_EMULATOR_HOST in `env`) and none of the options of step 1 is
// set, as Google's clients talk to an emulator.
Result<std::function<Result<std::string>()>> MakeGcsAccessToken(const StorageOptions& options,
                                                                const EnvLookup& env);

// The process environment (getenv).
EnvLookup GcsProcessEnvironment();

// --- Exposed for tests ---

// The signed JWT of a service-account key: "base64url(header).base64url(claims).base64url(sig)",
// header {"alg":"RS256","typ":"JWT","kid":private_key_id}, claims {iss, scope, aud, iat, exp =
// iat + 3600}. InvalidArgument when `private_key_pem` is not an RSA private key (`source` names
// where it came from; the key itself is never shown).
Result<std::string> MakeServiceAccountAssertion(std::string_view private_key_pem,
                                                std::string_view private_key_id,
                                                std::string_view client_email,
                                                std::string_view scope, std::string_view audience,
                                                std::chrono::system_clock::time_point now,
                                                std::string_view source);

// RFC 4648 base64url without padding, as JWTs use it.
std::string Base64UrlEncode(std::string_view bytes);

}  // namespace ferry::storage::gcs
