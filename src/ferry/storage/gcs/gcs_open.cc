// OpenGcsStore (gcs_store.h): a gs:// table location and storage options -> a GcsStore with its
// HTTP client and, where one is needed, its source of access tokens.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "ferry/base/log.h"
#include "ferry/http/url.h"
#include "ferry/storage/gcs/gcs_credentials.h"
#include "ferry/storage/gcs/gcs_store.h"
#include "ferry/storage/transfer_options.h"

namespace ferry::storage::gcs {
namespace {

constexpr char kGoogleEndpoint[] = "https://storage.googleapis.com";
constexpr size_t kChunk = 256 * 1024;

// The storage options that configure credentials explicitly.
constexpr const char* kCredentialOptions[] = {
    "google_service_account", "google_service_account_key", "google_application_credentials"};

// STORAGE_EMULATOR_HOST as Google's clients take it: "host:port" (http) or a URL.
std::string EmulatorEndpoint(std::string_view host) {
  while (!host.empty() && host.back() == '/') {
    host.remove_suffix(1);
  }
  if (host.find("://") == std::string_view::npos) {
    return "http://" + std::string(host);
  }
  return std::string(host);
}

bool HasCredentialOption(const StorageOptions& o) {
  for (const char* name : kCredentialOptions) {
    if (!OptionOr(o, name).empty()) {
      return true;
    }
  }
  return false;
}

// The access token source of a store that needs credentials: the credential chain of
// gcs_credentials.h (the options, GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file, the metadata
// server); its errors name the table.
Result<std::function<Result<std::string>()>> ResolveGcsAccessToken(const TableUri& location,
                                                                   const StorageOptions& o) {
  Result<std::function<Result<std::string>()>> token =
      MakeGcsAccessToken(o, GcsProcessEnvironment());
  if (!token.ok()) {
    return token.status().WithContext("table {}", location.original);
  }
  return token;
}

}  // namespace

Result<std::unique_ptr<GcsStore>> OpenGcsStore(const TableUri& location, const StorageOptions& o) {
  GcsStoreOptions s{.bucket = location.bucket, .root = location.key_prefix};
  const std::string option_bucket = OptionOr(o, "google_bucket");
  if (!option_bucket.empty() && option_bucket != location.bucket) {
    return InvalidArgument("table {} names the bucket '{}' but google_bucket is '{}'",
                           location.original, location.bucket, option_bucket);
  }
  const std::string emulator = OptionOr(o, "storage_emulator_host");
  s.endpoint = emulator.empty() ? kGoogleEndpoint : EmulatorEndpoint(emulator);
  if (!http::ParseUrl(s.endpoint).ok()) {
    return InvalidArgument("table {}: storage_emulator_host = '{}' is not host:port or a URL",
                           location.original, emulator);
  }
  FERRY_ASSIGN_OR_RETURN(bool skip_signature, BoolOption(o, "google_skip_signature", false));

  http::HttpClientOptions client_options;
  FERRY_RETURN_IF_ERROR(ReadTransferOptions(o, &s.transfer, &client_options));
  // A resumable upload's chunks are multiples of 256 KiB: round the part size up to one.
  s.transfer.part_size = std::max(kChunk, (s.transfer.part_size + kChunk - 1) / kChunk * kChunk);
  client_options.allow_http = !emulator.empty();
  client_options.ca_file = OptionOr(o, "aws_ca_bundle");
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<http::HttpClient> client,
                         http::HttpClient::Create(client_options));

  std::string credentials = "anonymous";
  if (skip_signature) {
    credentials = "anonymous (google_skip_signature)";
  } else if (!emulator.empty() && !HasCredentialOption(o)) {
    credentials = "anonymous (emulator)";
  } else {
    FERRY_ASSIGN_OR_RETURN(s.access_token, ResolveGcsAccessToken(location, o));
    credentials = "access tokens";
  }
  FERRY_LOG_DEBUG("{}: bucket {}, endpoint {}, credentials: {}", location.original, s.bucket,
                  s.endpoint, credentials);
  return GcsStore::Create(std::move(s), std::move(client));
}

}  // namespace ferry::storage::gcs
