// The Azure Blob protocol of an AzureBlobStore (azure_store.h) on the shared shape of the HTTP
// stores (storage/http_object_store.h): AzureCore supplies the URLs, the authorization of each
// attempt (x-ms-date, x-ms-version and the credential), the service's error parser and mapping,
// Put Blob and the block upload (azure_writer.cc). Files and writers hold it by shared_ptr, so
// they outlive nothing they use.
//
// Internal to storage/azure. Thread-safety: immutable after construction but for the atomic
// counters and the batch flag; Send may be called from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/http/client.h"
#include "ferry/http/headers.h"
#include "ferry/http/retry.h"
#include "ferry/http/url.h"
#include "ferry/storage/azure/azure_credentials.h"
#include "ferry/storage/azure/azure_store.h"
#include "ferry/storage/http_object_store.h"

namespace ferry::storage::azure {

// The REST API version ferry speaks (x-ms-version).
inline constexpr char kApiVersion[] = "2021-08-06";

class AzureCore final : public HttpStoreCore {
 public:
  AzureCore(AzureStoreOptions o, std::shared_ptr<http::HttpClient> c,
            std::shared_ptr<AzureCredentialProvider> creds, std::string container_url);

  const AzureStoreOptions options;
  // Set once the account refused a Blob Batch: DeleteMany deletes one by one from then on.
  mutable std::atomic<bool> batch_refused{false};

  // "<endpoint>/<container>/<blob>", for messages.
  std::string DescribeBlob(std::string_view blob) const;
  // The URL of `blob` in the container ("" for the container), without a query.
  std::string BlobUrl(std::string_view blob) const;
  // Authorizes `request` for one attempt: x-ms-date, x-ms-version (not for a Blob Batch
  // subrequest, azure_batch.cc: the batch's applies), then the credential.
  Status Authorize(http::HttpRequest* request, http::Deadline deadline,
                   bool batch_subrequest = false) const;

  // ---- The protocol (http_object_store.h).
  std::string Url(const HttpCall& call) const override;
  Status Authorize(http::HttpRequest* request, const HttpCall& call) const override;
  http::ServiceError ParseError(const http::HttpResponse& response) const override;
  // AzureError below.
  Status Error(const http::HttpOutcome& outcome, std::string_view what) const override;
  std::string Describe(std::string_view blob) const override { return DescribeBlob(blob); }
  // Put Blob (BlockBlob) with Content-MD5 (and If-None-Match: *).
  HttpCall PutCall(std::string blob, std::string_view data, bool if_absent) const override;
  // 409 BlobAlreadyExists, or 412 ConditionNotMet.
  bool Taken(const http::HttpOutcome& outcome) const override;
  std::unique_ptr<MultipartUpload> NewUpload(std::string blob) const override;
  // List Blobs pages of up to list_page_size (delimiter '/' unless recursive, marker
  // continuation; the API has no start-after). Directory entries of hierarchical-namespace
  // accounts are left out.
  Result<ListedPage> ListPage(const std::string& prefix, bool recursive,
                              const std::string& start_after, const std::string& token,
                              const std::string& what) const override;
  // DeleteBlobs below.
  Status DeleteObjects(const std::vector<std::string>& blobs) const override;
  // A directory of a hierarchical-namespace account (metadata hdi_isfolder=true, or
  // x-ms-resource-type: directory) is NotFound.
  Status CheckObject(const http::HttpResponse& response, std::string_view name) const override;

 private:
  const std::shared_ptr<AzureCredentialProvider> credentials_;
  // "<endpoint>/<container>".
  const std::string container_url_;
};

// The service's error of a non-2xx response: x-ms-error-code, else the XML body's <Code> and
// <Message>.
http::ServiceError ParseAzureError(const http::HttpResponse& response);

// The status of a failed call for `what` ("GET https://..."): NotFound for 404, the
// classification's code otherwise, with the service's error in the message.
Status AzureError(const http::HttpOutcome& outcome, std::string_view what);

// The error code of a response (x-ms-error-code), "" when absent.
std::string AzureErrorCode(const http::HttpOutcome& outcome);

// The multipart / single-Put-Blob upload of OpenAtomicWriter (azure_writer.cc).
std::unique_ptr<MultipartUpload> NewAzureUpload(std::shared_ptr<const AzureCore> core,
                                                std::string blob);

// DeleteMany (azure_batch.cc): Blob Batch requests, or single deletes where refused.
Status DeleteBlobs(const AzureCore& core, const std::vector<std::string>& blobs);

}  // namespace ferry::storage::azure
