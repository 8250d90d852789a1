// Azure Storage Shared Key authorization for the Blob service (version 2009-09-19 and later), as
// Microsoft's "Authorize with Shared Key" describes it:
//
//   1. String to sign: the verb, then the values of Content-Encoding, Content-Language,
//      Content-Length (empty when 0), Content-MD5, Content-Type, Date, If-Modified-Since,
//      If-Match, If-None-Match, If-Unmodified-Since and Range (empty when absent), one per line;
//      then the canonicalized headers and the canonicalized resource.
//   2. Canonicalized headers: every x-ms-* header, name in lower case, sorted by name,
//      "name:value\n" with the value's leading whitespace trimmed and runs of whitespace folded.
//   3. Canonicalized resource: "/" + account + the URL's path as sent (percent-encoded; for a
//      path-style emulator URL the account appears twice: /devstoreaccount1/devstoreaccount1/c),
//      then for each query parameter, by lower-case name, "\nname:value" with the value decoded
//      (several values of one name sorted and joined with ',').
//   4. Authorization: "SharedKey <account>:" + base64 of HMAC-SHA256(key, string to sign), where
//      the key is the account key base64-decoded.
//
// The request is signed as it will be sent: x-ms-date must be set, and the headers and URL must
// not change afterwards. Date is left out (x-ms-date takes its place).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/base/status.h"
#include "ferry/http/message.h"

namespace ferry::storage::azure {

// Step 3 for an absolute URL. InvalidArgument for a URL that does not parse or a malformed
// escape in its query.
Result<std::string> SharedKeyCanonicalizedResource(std::string_view url, std::string_view account);

// Steps 1-3. `content_length` is the number of body bytes the request will carry.
Result<std::string> SharedKeyStringToSign(const http::HttpRequest& request,
                                          std::string_view account, uint64_t content_length);

// The body size of `request` as it will be sent (its body, or its body reader's size).
uint64_t RequestContentLength(const http::HttpRequest& request);

// Steps 1-4: sets the Authorization header. `key` is the account key's bytes (decoded).
// InvalidArgument without x-ms-date or for a URL that does not parse.
Status SignSharedKey(http::HttpRequest* request, std::string_view account, std::string_view key);

}  // namespace ferry::storage::azure
