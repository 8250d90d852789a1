// The shared state of an S3Store, its files and its writers (s3_store.h): options, the HTTP
// client, credentials, the retry policy, and Send(), which builds, signs and sends one S3 call
// with retries. Files and writers hold it by shared_ptr, so they outlive nothing they use.
//
// Internal to storage/s3. Thread-safety: immutable after construction but for the atomic
// counters; Send may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/http/client.h"
#include "ferry/http/headers.h"
#include "ferry/http/retry.h"
#include "ferry/http/url.h"
#include "ferry/storage/s3/credentials.h"
#include "ferry/storage/s3/s3_store.h"

namespace ferry::storage::s3 {

struct S3Call {
  std::string method = "GET";
  // The full key inside the bucket ("" for a call on the bucket).
  std::string object_key;
  std::vector<http::QueryParam> query;
  http::HttpHeaders headers;
  std::string_view body;
  http::BodyReader* body_reader = nullptr;
  bool idempotent = true;
  std::span<char> response_buffer;
  // Hex SHA-256 of the body, or kUnsignedPayload; empty: hashed from `body`.
  std::string payload_hash;
};

struct S3Core {
  S3StoreOptions options;
  std::shared_ptr<http::HttpClient> client;
  std::shared_ptr<AwsCredentialProvider> credentials;
  http::RetryCounters counters;
  http::RetryPolicy policy;
  // Everything before the key: "http://host:port/bucket" or "https://bucket.host".
  std::string base_url;
  // The conditional-write check (s3_store.h), done once per store.
  std::mutex conditional_mu;
  bool conditional_checked = false;  // guarded by conditional_mu
  Status conditional_status;         // guarded by conditional_mu

  S3Core(S3StoreOptions o, std::shared_ptr<http::HttpClient> c,
         std::shared_ptr<AwsCredentialProvider> creds, std::string base);

  // The key inside the bucket of a store key: root + '/' + key.
  std::string ObjectKey(std::string_view key) const;
  // "s3://bucket/<object key>".
  std::string DescribeObject(std::string_view object_key) const;
  // Builds the URL, signs each attempt with fresh credentials, retries by the policy within
  // retry_timeout (each attempt within request_timeout). The outcome as http/outcome.h
  // classifies it, with the S3 error code and message parsed from the body.
  http::HttpOutcome Send(const S3Call& call) const;
};

// The status of a failed S3 call for `what` ("GET s3://b/k"): InvalidArgument for a bucket that
// does not exist (NoSuchBucket), NotFound for another 404, the classification's code otherwise,
// with the S3 error in the message.
Status S3Error(const http::HttpOutcome& outcome, std::string_view what);

// The multipart / single-PUT writer of OpenAtomicWriter (s3_writer.cc).
std::unique_ptr<OutputStream> NewS3Writer(std::shared_ptr<S3Core> core, std::string object_key);

}  // namespace ferry::storage::s3
