// OpenAzureStore (azure_store.h): a table location and storage options -> an AzureBlobStore with
// its HTTP client and credentials.
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>

#include "ferry/base/log.h"
#include "ferry/http/url.h"
#include "ferry/storage/azure/azure_credentials.h"
#include "ferry/storage/azure/azure_store.h"
#include "ferry/storage/transfer_options.h"

namespace ferry::storage::azure {
namespace {

constexpr char kEmulatorUrl[] = "http://127.0.0.1:10000";

// The credential provider together with the HTTP client its token requests use.
class OwningProvider final : public AzureCredentialProvider {
 public:
  OwningProvider(std::unique_ptr<http::HttpClient> client,
                 std::unique_ptr<AzureCredentialProvider> inner)
      : client_(std::move(client)), inner_(std::move(inner)) {}
  Result<AzureCredential> Get(http::Deadline deadline) override { return inner_->Get(deadline); }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  // Destruction order: the provider (and its refresh thread) before the client it uses.
  std::unique_ptr<http::HttpClient> client_;
  std::unique_ptr<AzureCredentialProvider> inner_;
};

std::string WithoutTrailingSlashes(std::string_view s) {
  while (!s.empty() && s.back() == '/') {
    s.remove_suffix(1);
  }
  return std::string(s);
}

// A token endpoint on this machine (a test's, or a local identity proxy) may be plain http.
bool IsLoopbackUrl(std::string_view url) {
  Result<http::Url> parsed = http::ParseUrl(url);
  return parsed.ok() &&
         (parsed->host == "127.0.0.1" || parsed->host == "localhost" || parsed->host == "::1");
}

}  // namespace

Result<std::unique_ptr<AzureBlobStore>> OpenAzureStore(const TableUri& location,
                                                       const StorageOptions& o) {
  AzureStoreOptions s{.container = location.bucket, .root = location.key_prefix};
  FERRY_ASSIGN_OR_RETURN(bool use_emulator, BoolOption(o, "azure_storage_use_emulator", false));
  const std::string option_account = OptionOr(o, "azure_storage_account_name");
  if (!location.account.empty() && !option_account.empty() && option_account != location.account) {
    return InvalidArgument(
        "table {} names the storage account '{}' but azure_storage_account_name is '{}'",
        location.original, location.account, option_account);
  }
  s.account = !location.account.empty() ? location.account : option_account;
  if (s.account.empty()) {
    if (!use_emulator) {
      return InvalidArgument(
          "table {}: no storage account; set azure_storage_account_name (or "
          "AZURE_STORAGE_ACCOUNT_NAME), or write the location as "
          "abfss://{}@ACCOUNT.dfs.core.windows.net/{}",
          location.original, location.bucket, location.key_prefix);
    }
    s.account = kEmulatorAccount;
  }
  s.endpoint = WithoutTrailingSlashes(OptionOr(o, "azure_storage_endpoint"));
  if (s.endpoint.empty()) {
    if (use_emulator) {
      const char* url = getenv("AZURITE_BLOB_STORAGE_URL");
      s.endpoint = WithoutTrailingSlashes(url != nullptr && *url != '\0' ? url : kEmulatorUrl) +
                   "/" + s.account;
    } else {
      s.endpoint = "https://" +
                   (location.host.empty() ? s.account + ".blob.core.windows.net" : location.host);
    }
  }
  FERRY_ASSIGN_OR_RETURN(bool allow_http, BoolOption(o, "aws_allow_http", false));
  allow_http = allow_http || use_emulator;
  if (s.endpoint.starts_with("http://") && !allow_http) {
    return InvalidArgument(
        "storage option azure_storage_endpoint = {} is plain http; set allow_http=true (or "
        "azure_storage_use_emulator=true for an emulator) to allow it",
        s.endpoint);
  }
  http::HttpClientOptions client_options;
  FERRY_RETURN_IF_ERROR(ReadTransferOptions(o, &s.transfer, &client_options));
  client_options.allow_http = allow_http;
  client_options.ca_file = OptionOr(o, "aws_ca_bundle");
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<http::HttpClient> client,
                         http::HttpClient::Create(client_options));

  AzureCredentialOptions c{.account = s.account,
                           .account_key = OptionOr(o, "azure_storage_account_key"),
                           .sas = OptionOr(o, "azure_storage_sas_key"),
                           .bearer_token = OptionOr(o, "azure_storage_token"),
                           .client_id = OptionOr(o, "azure_storage_client_id"),
                           .client_secret = OptionOr(o, "azure_storage_client_secret"),
                           .tenant_id = OptionOr(o, "azure_storage_tenant_id"),
                           .federated_token_file = OptionOr(o, "azure_federated_token_file"),
                           .authority_host = OptionOr(o, "azure_storage_authority_host"),
                           .use_emulator = use_emulator};
  // The token endpoint: https, unless it is on this machine or http is allowed.
  http::HttpClientOptions token_options = client_options;
  token_options.allow_http = allow_http || IsLoopbackUrl(c.authority_host);
  token_options.default_timeout = std::chrono::milliseconds(10'000);
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<http::HttpClient> token_client,
                         http::HttpClient::Create(token_options));
  c.client = token_client.get();
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<AzureCredentialProvider> provider,
                         MakeAzureCredentialProvider(c));
  auto credentials = std::make_shared<OwningProvider>(std::move(token_client), std::move(provider));
  FERRY_LOG_DEBUG("{}: account {}, container {}, endpoint {}, credentials: {}", location.original,
                  s.account, s.container, s.endpoint, credentials->Describe());
  return AzureBlobStore::Create(std::move(s), std::move(client), std::move(credentials));
}

}  // namespace ferry::storage::azure
