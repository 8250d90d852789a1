// The S3 protocol of an S3Store (s3_store.h) on the shared shape of the HTTP stores
// (storage/http_object_store.h): S3Core supplies the URLs (path-style or virtual-hosted), AWS
// Signature V4 with fresh credentials on every attempt, the S3 error parser and mapping, the
// PutObject of a whole object and the multipart upload (s3_writer.cc). Files and writers hold it
// by shared_ptr, so they outlive nothing they use.
//
// Internal to storage/s3. Thread-safety: immutable after construction but for the counters of
// the shared core; Send may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/http/client.h"
#include "ferry/storage/http_object_store.h"
#include "ferry/storage/s3/credentials.h"
#include "ferry/storage/s3/s3_store.h"

namespace ferry::storage::s3 {

class S3Core final : public HttpStoreCore {
 public:
  S3Core(S3StoreOptions o, std::shared_ptr<http::HttpClient> c,
         std::shared_ptr<AwsCredentialProvider> creds, std::string base);

  const S3StoreOptions& options() const { return options_; }

  std::string Url(const HttpCall& call) const override;
  // SigV4 (sigv4.h) with the call's payload hash (UNSIGNED-PAYLOAD for a streamed body).
  Status Authorize(http::HttpRequest* request, const HttpCall& call) const override;
  http::ServiceError ParseError(const http::HttpResponse& response) const override;
  // InvalidArgument for a bucket that does not exist (NoSuchBucket), NotFound for another 404,
  // the classification's code otherwise, with the S3 error in the message.
  Status Error(const http::HttpOutcome& outcome, std::string_view what) const override;
  // "s3://bucket/<object key>".
  std::string Describe(std::string_view object) const override;
  // PutObject with Content-MD5 (and If-None-Match: *).
  HttpCall PutCall(std::string object, std::string_view data, bool if_absent) const override;
  // 412 PreconditionFailed.
  bool Taken(const http::HttpOutcome& outcome) const override;
  std::unique_ptr<MultipartUpload> NewUpload(std::string object) const override;
  // ListObjectsV2 (delimiter '/' unless recursive, start-after, continuation tokens,
  // url-encoded keys).
  Result<ListedPage> ListPage(const std::string& prefix, bool recursive,
                              const std::string& start_after, const std::string& token,
                              const std::string& what) const override;
  // DeleteObjects, 1000 keys a request, Content-MD5.
  Status DeleteObjects(const std::vector<std::string>& objects) const override;

 private:
  const S3StoreOptions options_;
  const std::shared_ptr<AwsCredentialProvider> credentials_;
  // Everything before the key: "http://host:port/bucket" or "https://bucket.host".
  const std::string base_url_;
};

// The multipart / single-PUT upload of OpenAtomicWriter (s3_writer.cc).
std::unique_ptr<MultipartUpload> NewS3Upload(std::shared_ptr<const S3Core> core,
                                             std::string object_key);

}  // namespace ferry::storage::s3
