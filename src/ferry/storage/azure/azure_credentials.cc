#include "ferry/storage/azure/azure_credentials.h"

#include <fmt/format.h>

#include "ferry/http/digest.h"
#include "ferry/storage/azure/shared_key.h"
#include "ferry/storage/refreshing_credentials.h"

namespace ferry::storage::azure {
namespace {

// Published by Microsoft with the storage emulator (Azurite); it opens nothing but emulators.
constexpr char kEmulatorKey[] =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

class StaticProvider final : public AzureCredentialProvider {
 public:
  explicit StaticProvider(AzureCredential credential) : credential_(std::move(credential)) {}
  Result<AzureCredential> Get(http::Deadline) override { return credential_; }
  std::string Describe() const override { return credential_.source; }

 private:
  const AzureCredential credential_;
};

class TokenProvider final : public AzureCredentialProvider {
 public:
  TokenProvider(std::string description, AzureTokenFetch fetch)
      : description_(std::move(description)),
        cache_("Azure token from " + description_, std::move(fetch)) {}
  Result<AzureCredential> Get(http::Deadline deadline) override { return cache_.Get(deadline); }
  std::string Describe() const override { return description_; }

 private:
  const std::string description_;
  RefreshingCredentials<AzureCredential> cache_;
};

Result<std::unique_ptr<AzureCredentialProvider>> SharedKeyProvider(std::string account,
                                                                   std::string_view key_base64,
                                                                   std::string source) {
  if (account.empty()) {
    return InvalidArgument(
        "Azure credentials: an account key needs the account's name (azure_storage_account_name, "
        "or a location that names it)");
  }
  std::string key;
  if (key_base64.empty() || !http::Base64Decode(key_base64, &key)) {
    return InvalidArgument("Azure credentials: {} is not a base64 account key", source);
  }
  return std::unique_ptr<AzureCredentialProvider>(
      std::make_unique<StaticProvider>(AzureCredential{.kind = AzureCredential::Kind::kSharedKey,
                                                       .account_key = std::move(key),
                                                       .source = std::move(source)}));
}

// Names the Entra ID settings that are missing, or "" when none is.
std::string MissingEntraSettings(const AzureCredentialOptions& o) {
  std::string missing;
  for (const auto& [value, name] : {std::pair(&o.client_id, "azure_client_id (AZURE_CLIENT_ID)"),
                                    std::pair(&o.tenant_id, "azure_tenant_id (AZURE_TENANT_ID)")}) {
    if (value->empty()) {
      missing += missing.empty() ? name : std::string(" and ") + name;
    }
  }
  return missing;
}

}  // namespace

Result<std::unique_ptr<AzureCredentialProvider>> MakeAzureCredentialProvider(
    const AzureCredentialOptions& o) {
  using Kind = AzureCredential::Kind;
  // 1. A bearer token as is.
  if (!o.bearer_token.empty()) {
    return std::unique_ptr<AzureCredentialProvider>(std::make_unique<StaticProvider>(
        AzureCredential{.kind = Kind::kBearerToken,
                        .token = o.bearer_token,
                        .source = "the storage options (azure_storage_token)"}));
  }
  // 2. The account key.
  if (!o.account_key.empty()) {
    return SharedKeyProvider(o.account, o.account_key,
                             "the storage options (azure_storage_account_key)");
  }
  // 3, 4. Entra ID.
  const bool workload = !o.federated_token_file.empty();
  if (workload || !o.client_secret.empty()) {
    const std::string what = workload ? "azure_federated_token_file (AZURE_FEDERATED_TOKEN_FILE)"
                                      : "azure_client_secret";
    if (std::string missing = MissingEntraSettings(o); !missing.empty()) {
      return InvalidArgument("Azure credentials: {} is set without {}", what, missing);
    }
    if (o.client == nullptr) {
      return Internal("Azure credentials: Entra ID tokens need an HTTP client");
    }
    std::string description =
        fmt::format("{} (client {}, tenant {})", workload ? "workload identity" : "client secret",
                    o.client_id, o.tenant_id);
    EntraTokenRequest request{
        .authority_host = o.authority_host, .tenant_id = o.tenant_id, .client_id = o.client_id};
    if (workload) {
      request.federated_token_file = o.federated_token_file;
    } else {
      request.client_secret = o.client_secret;
    }
    AzureTokenFetch fetch = MakeEntraTokenFetch(o.client, std::move(request));
    return std::unique_ptr<AzureCredentialProvider>(
        std::make_unique<TokenProvider>(std::move(description), std::move(fetch)));
  }
  // 5. A shared access signature.
  if (!o.sas.empty()) {
    std::string_view sas = o.sas;
    if (sas.front() == '?') {
      sas.remove_prefix(1);
    }
    return std::unique_ptr<AzureCredentialProvider>(std::make_unique<StaticProvider>(
        AzureCredential{.kind = Kind::kSas,
                        .sas = std::string(sas),
                        .source = "the storage options (azure_storage_sas_key)"}));
  }
  // 6. The emulator's well-known account.
  if (o.use_emulator) {
    return SharedKeyProvider(o.account.empty() ? kEmulatorAccount : o.account, kEmulatorKey,
                             "the storage emulator's development key");
  }
  return InvalidArgument(
      "no Azure credentials found for account '{}': set azure_storage_account_key, "
      "azure_storage_sas_key or azure_storage_token, or an Entra ID identity (azure_client_id and "
      "azure_tenant_id with azure_federated_token_file or azure_client_secret), or "
      "azure_storage_use_emulator=true",
      o.account);
}

Status AuthorizeAzureRequest(http::HttpRequest* request, const AzureCredential& credential,
                             std::string_view account) {
  switch (credential.kind) {
    case AzureCredential::Kind::kSharedKey:
      return SignSharedKey(request, account, credential.account_key);
    case AzureCredential::Kind::kBearerToken:
      request->headers.Set("Authorization", "Bearer " + credential.token);
      return Status::OK();
    case AzureCredential::Kind::kSas:
      request->url += request->url.find('?') == std::string::npos ? "?" : "&";
      request->url += credential.sas;
      return Status::OK();
  }
  return Internal("Azure credentials: unknown kind");
}

}  // namespace ferry::storage::azure
