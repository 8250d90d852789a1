// AWS Signature Version 4 for S3 (and STS, or any AWS service), header-based:
//
//   1. Canonical request: method, canonical URI, canonical query string, canonical headers
//      (lower-case names, sorted; values trimmed, inner runs of spaces collapsed, repeated
//      names joined by ','), the signed header names, and the payload hash.
//      - URI: for S3, each path segment URI-encoded once ('/' kept), exactly the key; for other
//        services the path as sent is encoded again (SigV4's double encoding). Paths are not
//        normalised (ferry builds them without "." or ".." segments).
//      - Query: every name and value URI-encoded ('/' too), sorted by name then value, "a=b"
//        joined by '&'; a bare name is "name=".
//   2. String to sign: "AWS4-HMAC-SHA256", x-amz-date, the scope
//      <yyyymmdd>/<region>/<service>/aws4_request, and the hex SHA-256 of the canonical request.
//   3. Signing key: HMAC-SHA256 chained over "AWS4" + secret, date, region, service,
//      "aws4_request".
//   4. Authorization: "AWS4-HMAC-SHA256 Credential=<key id>/<scope>, SignedHeaders=<names>,
//      Signature=<hex HMAC of the string to sign>".
//
// SignV4 also sets x-amz-date, x-amz-content-sha256 (the hex SHA-256 of the body, or
// UNSIGNED-PAYLOAD; S3 demands the header) and, for session credentials, x-amz-security-token.
// Signed are Host and every header the request carries except those a proxy or libcurl may
// rewrite (User-Agent, Expect, Connection, Transfer-Encoding, Accept-Encoding, ...).
//
// Verified against the examples AWS publishes (sigv4_test.cc). The request must be sent as
// signed: headers unchanged, the URL's path and query exactly as given.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/http/digest.h"
#include "ferry/http/message.h"
#include "ferry/storage/s3/credentials.h"

namespace ferry::storage::s3 {

inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
inline constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct SigV4Params {
  std::string region;
  std::string service = "s3";
  // When the request is signed; the epoch means now.
  std::chrono::system_clock::time_point time{};
  // Hex SHA-256 of the body, or kUnsignedPayload. Empty: the SHA-256 of request.body (for a
  // body_reader request, give it or use kUnsignedPayload).
  std::string payload_hash;
  // Send x-amz-content-sha256 (S3 requires it). Default: for service "s3" only.
  std::optional<bool> content_sha256_header;
};

// The intermediate results, for tests and for debugging a SignatureDoesNotMatch (the server's
// error carries its canonical request). None of them holds the secret key.
struct SigV4Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;
  std::string signature;
  std::string authorization;
};

// Signs `request` in place (see above). InvalidArgument for a URL that does not parse, empty
// credentials, or a body_reader without a payload hash.
Status SignV4(http::HttpRequest* request, const AwsCredentials& credentials,
              const SigV4Params& params);

// The signature of `request` as it stands: its x-amz-date header gives the time, and every
// header it carries (but the unsigned ones) is signed. The payload hash is params.payload_hash,
// else the x-amz-content-sha256 header, else the SHA-256 of request.body.
Result<SigV4Signature> ComputeSigV4(const http::HttpRequest& request,
                                    const AwsCredentials& credentials, const SigV4Params& params);

// "20130524T000000Z" (UTC).
std::string AmzDate(std::chrono::system_clock::time_point t);
// The signing key of step 3 (`date` is yyyymmdd).
http::Sha256Digest SigV4SigningKey(std::string_view secret, std::string_view date,
                                   std::string_view region, std::string_view service);
// Step 1's query string from a raw (encoded) query. InvalidArgument on a malformed escape.
Result<std::string> CanonicalQueryString(std::string_view raw_query);
// Step 1's URI from a URL path as sent.
Result<std::string> CanonicalUri(std::string_view path, bool s3);

}  // namespace ferry::storage::s3
