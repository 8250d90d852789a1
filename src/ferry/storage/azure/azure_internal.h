// The shared state of an AzureBlobStore, its files and its writers (azure_store.h): options, the
// HTTP client, credentials, the retry policy, and Send(), which builds, authorizes and sends one
// Blob service call with retries. Files and writers hold it by shared_ptr, so they outlive
// nothing they use.
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

namespace ferry::storage::azure {

// The REST API version ferry speaks (x-ms-version).
inline constexpr char kApiVersion[] = "2021-08-06";

struct AzureCall {
  std::string method = "GET";
  // The blob's full name in the container; "" for a call on the container.
  std::string blob;
  std::vector<http::QueryParam> query;
  http::HttpHeaders headers;
  std::string_view body;
  bool idempotent = true;
  std::span<char> response_buffer;
};

struct AzureCore {
  AzureStoreOptions options;
  std::shared_ptr<http::HttpClient> client;
  std::shared_ptr<AzureCredentialProvider> credentials;
  http::RetryCounters counters;
  http::RetryPolicy policy;
  // "<endpoint>/<container>".
  std::string container_url;
  // Set once the account refused a Blob Batch: DeleteMany deletes one by one from then on.
  std::atomic<bool> batch_refused{false};

  AzureCore(AzureStoreOptions o, std::shared_ptr<http::HttpClient> c,
            std::shared_ptr<AzureCredentialProvider> creds, std::string container_url);

  // The blob name of a store key: root + '/' + key.
  std::string BlobName(std::string_view key) const;
  // "<endpoint>/<container>/<blob>", for messages.
  std::string DescribeBlob(std::string_view blob) const;
  // The URL of `blob` in the container ("" for the container), without a query.
  std::string BlobUrl(std::string_view blob) const;
  // Builds the URL, authorizes each attempt with a fresh credential (x-ms-date, x-ms-version),
  // retries by the policy within retry_timeout (each attempt within request_timeout). The
  // outcome as http/outcome.h classifies it, with the service's error code (x-ms-error-code or
  // the XML <Error>) parsed.
  http::HttpOutcome Send(const AzureCall& call) const;
  // Authorizes `request` for one attempt: x-ms-date, x-ms-version (not for a Blob Batch
  // subrequest, azure_batch.cc: the batch's applies), then the credential.
  Status Authorize(http::HttpRequest* request, http::Deadline deadline,
                   bool batch_subrequest = false) const;
};

// The service's error of a non-2xx response: x-ms-error-code, else the XML body's <Code> and
// <Message>.
http::ServiceError ParseAzureError(const http::HttpResponse& response);

// The status of a failed call for `what` ("GET https://..."): NotFound for 404, the
// classification's code otherwise, with the service's error in the message.
Status AzureError(const http::HttpOutcome& outcome, std::string_view what);

// The error code of a response (x-ms-error-code), "" when absent.
std::string AzureErrorCode(const http::HttpOutcome& outcome);

// The multipart / single-Put-Blob writer of OpenAtomicWriter (azure_writer.cc).
std::unique_ptr<OutputStream> NewAzureWriter(std::shared_ptr<AzureCore> core, std::string blob);

// DeleteMany (azure_batch.cc): Blob Batch requests, or single deletes where refused.
Status DeleteBlobs(const std::shared_ptr<AzureCore>& core, const std::vector<std::string>& blobs);

}  // namespace ferry::storage::azure
