// URLs as the http layer and the request signers need them: RFC 3986 percent-encoding, a small
// parser for the absolute http(s) URLs we build, query strings, and a form of a URL that is safe
// for error messages and logs.
//
// Encoding: the unreserved set (A-Z a-z 0-9 - _ . ~) is kept, every other byte becomes %XX with
// upper-case hex. This is the encoding AWS Signature V4 demands (its UriEncode) and the one S3,
// Azure and the registry accept. A path is encoded segment by segment: '/' is kept.
//
// Thread-safety: values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::http {

// Percent-encodes every byte outside the unreserved set; '/' too unless `keep_slash`.
std::string UriEncode(std::string_view s, bool keep_slash = false);
void AppendUriEncoded(std::string* out, std::string_view s, bool keep_slash = false);
// An object key or path as it goes into a URL: each segment encoded, '/' kept.
inline std::string UriEncodePath(std::string_view path) {
  return UriEncode(path, true);
}
// Decodes %XX escapes ('+' stays '+'). InvalidArgument on a malformed escape.
Result<std::string> UriDecode(std::string_view s);

struct QueryParam {
  std::string key;    // decoded
  std::string value;  // decoded; empty for a bare key ("?uploads")
};

// Splits "a=1&b&c=x%2Fy" into decoded pairs, in order. Empty pieces ("a=1&&b") are skipped.
Result<std::vector<QueryParam>> ParseQuery(std::string_view query);
// "a=1&b=&c=x%2Fy": every key and value encoded (with '/'), in the order given. A parameter
// with an empty value is written "key=" (S3 and SigV4 accept it for "?uploads").
std::string BuildQuery(const std::vector<QueryParam>& params);

// An absolute http or https URL, split. `path` and `query` stay encoded as they were written.
struct Url {
  std::string scheme;  // "http" or "https", lower case
  std::string host;    // without brackets for IPv6 literals; lower case
  int port = 0;        // as written; 0 when the URL names none
  std::string path;    // "/" when the URL has none
  std::string query;   // after '?', without it; "" when none
  bool ipv6 = false;   // the host was written in brackets

  // The port to connect to: `port`, or 80/443 by scheme.
  int EffectivePort() const;
  // host[:port] as the Host header carries it (the port only when written and not the default).
  std::string HostHeader() const;
};

// InvalidArgument for anything but http(s)://host[:port][/path][?query] (no user info, no
// fragment), naming the URL in redacted form.
Result<Url> ParseUrl(std::string_view url);

// `url` for an error message or a log line: user info dropped, and every query value replaced by
// "REDACTED" except those of parameters known to carry no secret (partNumber, uploadId, prefix,
// list-type, continuation-token, comp, blockid, ...). Signatures, credentials and SAS tokens
// (X-Amz-Signature, X-Amz-Credential, X-Amz-Security-Token, sig, ...) never survive.
std::string RedactUrl(std::string_view url);

}  // namespace ferry::http
