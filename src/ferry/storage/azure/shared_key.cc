#include "ferry/storage/azure/shared_key.h"

#include <algorithm>
#include <map>
#include <vector>

#include "ferry/http/digest.h"
#include "ferry/http/headers.h"
#include "ferry/http/url.h"

namespace ferry::storage::azure {
namespace {

// Leading whitespace trimmed, trailing too, inner runs of whitespace (folded lines) as one space.
std::string CanonicalHeaderValue(std::string_view value) {
  std::string out;
  bool pending_space = false;
  for (char c : value) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) {
      out.push_back(' ');
      pending_space = false;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

Result<std::string> SharedKeyCanonicalizedResource(std::string_view url, std::string_view account) {
  FERRY_ASSIGN_OR_RETURN(http::Url parsed, http::ParseUrl(url));
  std::string out = "/";
  out += account;
  out += parsed.path.empty() ? "/" : parsed.path;
  FERRY_ASSIGN_OR_RETURN(std::vector<http::QueryParam> params, http::ParseQuery(parsed.query));
  std::map<std::string, std::vector<std::string>> by_name;
  for (http::QueryParam& p : params) {
    by_name[http::ToLowerAscii(p.key)].push_back(std::move(p.value));
  }
  for (auto& [name, values] : by_name) {
    std::sort(values.begin(), values.end());
    out += "\n";
    out += name;
    out += ":";
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) {
        out += ",";
      }
      out += values[i];
    }
  }
  return out;
}

uint64_t RequestContentLength(const http::HttpRequest& request) {
  if (request.body_reader != nullptr) {
    return request.body_reader->size < 0 ? 0 : static_cast<uint64_t>(request.body_reader->size);
  }
  return request.body.size();
}

Result<std::string> SharedKeyStringToSign(const http::HttpRequest& request,
                                          std::string_view account, uint64_t content_length) {
  const http::HttpHeaders& h = request.headers;
  std::string out = request.method;
  out += "\n";
  for (std::string_view name : {"Content-Encoding", "Content-Language"}) {
    out += h.GetOr(name);
    out += "\n";
  }
  if (content_length > 0) {
    out += std::to_string(content_length);
  }
  out += "\n";
  for (std::string_view name : {"Content-MD5", "Content-Type", "Date", "If-Modified-Since",
                                "If-Match", "If-None-Match", "If-Unmodified-Since", "Range"}) {
    out += h.GetOr(name);
    out += "\n";
  }
  std::map<std::string, std::string> ms_headers;
  for (const auto& [name, value] : h.fields()) {
    std::string lower = http::ToLowerAscii(name);
    if (lower.starts_with("x-ms-")) {
      ms_headers[lower] = CanonicalHeaderValue(value);
    }
  }
  for (const auto& [name, value] : ms_headers) {
    out += name;
    out += ":";
    out += value;
    out += "\n";
  }
  FERRY_ASSIGN_OR_RETURN(std::string resource,
                         SharedKeyCanonicalizedResource(request.url, account));
  out += resource;
  return out;
}

Status SignSharedKey(http::HttpRequest* request, std::string_view account, std::string_view key) {
  if (!request->headers.Has("x-ms-date")) {
    return InvalidArgument("Shared Key signing: {} has no x-ms-date",
                           http::RedactUrl(request->url));
  }
  FERRY_ASSIGN_OR_RETURN(std::string to_sign,
                         SharedKeyStringToSign(*request, account, RequestContentLength(*request)));
  request->headers.Set("Authorization", "SharedKey " + std::string(account) + ":" +
                                            http::Base64Encode(http::HmacSha256(key, to_sign)));
  return Status::OK();
}

}  // namespace ferry::storage::azure
