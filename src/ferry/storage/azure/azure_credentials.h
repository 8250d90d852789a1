// How ferry authorizes its requests to an Azure storage account, and where the credentials come
// from. In the order the Rust object_store crate (delta-rs) uses, the first that is configured
// winning (docs/storage.md, "Azure credentials"):
//
//   1. a bearer token given as is (azure_storage_token);
//   2. the account key (azure_storage_account_key): Shared Key signing (shared_key.h);
//   3. Microsoft Entra ID workload identity: azure_client_id + azure_tenant_id +
//      azure_federated_token_file (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE
//      as the AKS webhook sets them): the file's token (read again for every exchange, it is
//      rotated) is exchanged at <authority>/<tenant>/oauth2/v2.0/token for an access token;
//   4. a client secret: azure_client_id + azure_client_secret + azure_tenant_id, exchanged at
//      the same endpoint;
//   5. a shared access signature (azure_storage_sas_key), appended to every request's query;
//   6. the emulator (azure_storage_use_emulator): its published development key.
//
// Access tokens (3, 4) expire (usually after an hour) and are refreshed in the background before
// they do, by the refresh logic all stores share (storage/refreshing_credentials.h). The
// authority is azure_authority_host (AZURE_AUTHORITY_HOST), default
// https://login.microsoftonline.com; the scope https://storage.azure.com/.default.
//
// Secrets (account key, client secret, SAS, tokens, the federated token) never reach a log line
// or an error message.
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
#include "ferry/http/message.h"

namespace ferry::storage::azure {

// The storage emulator's (Azurite's) one account, published by Microsoft.
inline constexpr char kEmulatorAccount[] = "devstoreaccount1";

struct AzureCredential {
  enum class Kind { kSharedKey, kSas, kBearerToken };
  Kind kind = Kind::kSharedKey;
  // kSharedKey: the account key's bytes (base64-decoded).
  std::string account_key;
  // kSas: the signature's query parameters ("sv=...&sig=..."), without a leading '?'.
  std::string sas;
  // kBearerToken: the access token.
  std::string token;
  // When a token stops working; nullopt for keys, signatures and tokens given as is.
  std::optional<std::chrono::system_clock::time_point> expiration;
  // Where it came from ("the storage options (azure_storage_account_key)", "workload identity
  // (client ...)"), for logs.
  std::string source;
};

class AzureCredentialProvider {
 public:
  virtual ~AzureCredentialProvider() = default;
  // A credential usable now. Blocks (within `deadline`) only for a first token or when the
  // cached one has expired. Fails with Unavailable (retry), InvalidArgument or NotSupported
  // (configuration); never with a code a store could take for an answer about an object.
  virtual Result<AzureCredential> Get(http::Deadline deadline) = 0;
  virtual std::string Describe() const = 0;
};

struct AzureCredentialOptions {
  // The storage account (Shared Key signs with its name).
  std::string account;
  // Base64, as the portal shows it.
  std::string account_key;
  // "?sv=...&sig=..." or without the '?'.
  std::string sas;
  std::string bearer_token;
  std::string client_id;
  std::string client_secret;
  std::string tenant_id;
  std::string federated_token_file;
  // "https://login.microsoftonline.com" (a trailing '/' is fine).
  std::string authority_host;
  bool use_emulator = false;
  // Sends the token requests; must outlive the provider.
  http::HttpClient* client = nullptr;
};

// The provider of the first configured source (above). InvalidArgument when none is configured
// (naming what was looked for), for an account key that is not base64, or for a half-configured
// Entra ID setup (a client id without a tenant, ...).
Result<std::unique_ptr<AzureCredentialProvider>> MakeAzureCredentialProvider(
    const AzureCredentialOptions& options);

// Authorizes `request` with `credential`: Shared Key signing (REQUIRES: x-ms-date set; call it
// last), a bearer Authorization header, or the SAS appended to the URL's query.
Status AuthorizeAzureRequest(http::HttpRequest* request, const AzureCredential& credential,
                             std::string_view account);

// --- The Entra ID token exchange, exposed for tests ---

// One exchange at the token endpoint: a credential of kind kBearerToken with its expiration.
using AzureTokenFetch = std::function<Result<AzureCredential>(http::Deadline deadline)>;

struct EntraTokenRequest {
  std::string authority_host;  // default https://login.microsoftonline.com
  std::string tenant_id;
  std::string client_id;
  // Exactly one of these two.
  std::string client_secret;
  std::string federated_token_file;
};

// POSTs the form (client_credentials grant, scope https://storage.azure.com/.default) to
// <authority>/<tenant>/oauth2/v2.0/token. Errors: Unavailable for an endpoint that is down or
// answers 5xx; InvalidArgument for a refusal (the endpoint's error code and description in the
// message) or an unreadable token file.
AzureTokenFetch MakeEntraTokenFetch(http::HttpClient* client, EntraTokenRequest request);

// {"access_token": ..., "expires_in": seconds (number or string), "token_type": "Bearer"}, as the
// token endpoint answers; `fetched_at` is when the request was sent.
Result<AzureCredential> ParseEntraTokenResponse(std::string_view json,
                                                std::chrono::system_clock::time_point fetched_at);

}  // namespace ferry::storage::azure
