#include "ferry/storage/s3/sigv4.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <map>
#include <vector>

#include "ferry/http/url.h"

namespace ferry::storage::s3 {

namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

// Headers left unsigned: proxies and libcurl may add, drop or rewrite them.
constexpr std::array<std::string_view, 11> kUnsignedHeaders = {
    "authorization",      "user-agent", "expect",  "connection",      "keep-alive",
    "transfer-encoding",  "te",         "upgrade", "x-amzn-trace-id", "accept-encoding",
    "proxy-authorization"};

bool IsUnsigned(std::string_view lower_name) {
  return std::find(kUnsignedHeaders.begin(), kUnsignedHeaders.end(), lower_name) !=
         kUnsignedHeaders.end();
}

// Trims and collapses runs of spaces and tabs into one space.
std::string CanonicalValue(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) {
      out.push_back(' ');
      space = false;
    }
    out.push_back(c);
  }
  return out;
}

std::string_view AsView(const http::Sha256Digest& d) {
  return std::string_view(reinterpret_cast<const char*>(d.data()), d.size());
}

}  // namespace

std::string AmzDate(std::chrono::system_clock::time_point t) {
  time_t secs = std::chrono::system_clock::to_time_t(t);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[32];
  size_t n = strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf, n);
}

http::Sha256Digest SigV4SigningKey(std::string_view secret, std::string_view date,
                                   std::string_view region, std::string_view service) {
  std::string k_secret = "AWS4";
  k_secret += secret;
  http::Sha256Digest k_date = http::HmacSha256(k_secret, date);
  http::Sha256Digest k_region = http::HmacSha256(AsView(k_date), region);
  http::Sha256Digest k_service = http::HmacSha256(AsView(k_region), service);
  return http::HmacSha256(AsView(k_service), "aws4_request");
}

Result<std::string> CanonicalQueryString(std::string_view raw_query) {
  FERRY_ASSIGN_OR_RETURN(std::vector<http::QueryParam> params, http::ParseQuery(raw_query));
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(params.size());
  for (const http::QueryParam& p : params) {
    encoded.emplace_back(http::UriEncode(p.key), http::UriEncode(p.value));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded) {
    if (!out.empty()) {
      out.push_back('&');
    }
    out += k;
    out.push_back('=');
    out += v;
  }
  return out;
}

Result<std::string> CanonicalUri(std::string_view path, bool s3) {
  if (path.empty()) {
    return std::string("/");
  }
  if (s3) {
    FERRY_ASSIGN_OR_RETURN(std::string decoded, http::UriDecode(path));
    return http::UriEncodePath(decoded);
  }
  return http::UriEncodePath(path);
}

Result<SigV4Signature> ComputeSigV4(const http::HttpRequest& request,
                                    const AwsCredentials& credentials, const SigV4Params& params) {
  if (credentials.access_key_id.empty() || credentials.secret_access_key.empty()) {
    return InvalidArgument("signing {}: the credentials have no access key id or secret",
                           http::DescribeRequest(request));
  }
  FERRY_ASSIGN_OR_RETURN(http::Url url, http::ParseUrl(request.url));
  std::optional<std::string_view> amz_date = request.headers.Get("x-amz-date");
  if (!amz_date || amz_date->size() != 16) {
    return InvalidArgument("signing {}: no x-amz-date header of the form yyyymmddThhmmssZ",
                           http::DescribeRequest(request));
  }
  std::string payload_hash = params.payload_hash;
  if (payload_hash.empty()) {
    payload_hash = std::string(request.headers.GetOr("x-amz-content-sha256"));
  }
  if (payload_hash.empty()) {
    if (request.body_reader != nullptr) {
      return InvalidArgument("signing {}: a streamed body needs its payload hash (or {})",
                             http::DescribeRequest(request), kUnsignedPayload);
    }
    payload_hash = http::Sha256Hex(request.body);
  }

  // Canonical headers: lower-case names, sorted; values of repeated names joined by ','.
  std::map<std::string, std::string> headers;
  if (!request.headers.Has("host")) {
    headers["host"] = url.HostHeader();
  }
  for (const auto& [name, value] : request.headers.fields()) {
    std::string lower = http::ToLowerAscii(name);
    if (IsUnsigned(lower)) {
      continue;
    }
    auto [it, inserted] = headers.try_emplace(lower, CanonicalValue(value));
    if (!inserted) {
      it->second += ",";
      it->second += CanonicalValue(value);
    }
  }
  SigV4Signature sig;
  std::string canonical_headers;
  for (const auto& [name, value] : headers) {
    canonical_headers += name + ":" + value + "\n";
    if (!sig.signed_headers.empty()) {
      sig.signed_headers.push_back(';');
    }
    sig.signed_headers += name;
  }
  FERRY_ASSIGN_OR_RETURN(std::string uri, CanonicalUri(url.path, params.service == "s3"));
  FERRY_ASSIGN_OR_RETURN(std::string query, CanonicalQueryString(url.query));
  sig.canonical_request = request.method + "\n" + uri + "\n" + query + "\n" + canonical_headers +
                          "\n" + sig.signed_headers + "\n" + payload_hash;

  std::string_view date = amz_date->substr(0, 8);
  std::string scope = fmt::format("{}/{}/{}/aws4_request", date, params.region, params.service);
  sig.string_to_sign = fmt::format("{}\n{}\n{}\n{}", kAlgorithm, *amz_date, scope,
                                   http::Sha256Hex(sig.canonical_request));
  http::Sha256Digest key =
      SigV4SigningKey(credentials.secret_access_key, date, params.region, params.service);
  sig.signature = http::HexEncode(http::HmacSha256(AsView(key), sig.string_to_sign));
  sig.authorization =
      fmt::format("{} Credential={}/{}, SignedHeaders={}, Signature={}", kAlgorithm,
                  credentials.access_key_id, scope, sig.signed_headers, sig.signature);
  return sig;
}

Status SignV4(http::HttpRequest* request, const AwsCredentials& credentials,
              const SigV4Params& params) {
  std::chrono::system_clock::time_point when =
      params.time == std::chrono::system_clock::time_point{} ? std::chrono::system_clock::now()
                                                             : params.time;
  request->headers.Set("x-amz-date", AmzDate(when));
  SigV4Params p = params;
  if (p.payload_hash.empty() && request->body_reader == nullptr) {
    p.payload_hash = http::Sha256Hex(request->body);
  }
  if (p.content_sha256_header.value_or(p.service == "s3")) {
    if (p.payload_hash.empty()) {
      return InvalidArgument("signing {}: a streamed body needs its payload hash (or {})",
                             http::DescribeRequest(*request), kUnsignedPayload);
    }
    request->headers.Set("x-amz-content-sha256", p.payload_hash);
  }
  if (!credentials.session_token.empty()) {
    request->headers.Set("x-amz-security-token", credentials.session_token);
  } else {
    request->headers.Remove("x-amz-security-token");
  }
  request->headers.Remove("Authorization");
  FERRY_ASSIGN_OR_RETURN(SigV4Signature sig, ComputeSigV4(*request, credentials, p));
  request->headers.Set("Authorization", sig.authorization);
  return Status::OK();
}

}  // namespace ferry::storage::s3
