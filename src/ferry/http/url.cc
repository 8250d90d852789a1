#include "ferry/http/url.h"

#include <array>
#include <charconv>

#include "ferry/base/hex.h"
#include "ferry/http/headers.h"

namespace ferry::http {

namespace {

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

// Query parameters whose values carry no secret and help to tell requests apart in a message.
constexpr std::array<std::string_view, 24> kPlainQueryKeys = {
    "partNumber",  "uploadId",    "uploads",
    "prefix",      "start-after", "list-type",
    "delimiter",   "max-keys",    "continuation-token",
    "marker",      "delete",      "versionId",
    "comp",        "restype",     "blockid",
    "maxresults",  "include",     "timeout",
    "api-version", "Action",      "Version",
    "location",    "tagging",     "encoding-type"};

bool IsPlainQueryKey(std::string_view key) {
  for (std::string_view k : kPlainQueryKeys) {
    if (k == key) {
      return true;
    }
  }
  return false;
}

}  // namespace

void AppendUriEncoded(std::string* out, std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out->reserve(out->size() + s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (IsUnreserved(c) || (keep_slash && c == '/')) {
      out->push_back(ch);
    } else {
      out->push_back('%');
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xF]);
    }
  }
}

std::string UriEncode(std::string_view s, bool keep_slash) {
  std::string out;
  AppendUriEncoded(&out, s, keep_slash);
  return out;
}

Result<std::string> UriDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    int hi = i + 2 < s.size() ? HexDigitValue(s[i + 1]) : -1;
    int lo = i + 2 < s.size() ? HexDigitValue(s[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return InvalidArgument("malformed percent-escape at offset {} of '{}'", i, s);
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

Result<std::vector<QueryParam>> ParseQuery(std::string_view query) {
  std::vector<QueryParam> params;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view piece = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (piece.empty()) {
      continue;
    }
    size_t eq = piece.find('=');
    QueryParam p;
    FERRY_ASSIGN_OR_RETURN(p.key, UriDecode(piece.substr(0, eq)));
    if (eq != std::string_view::npos) {
      FERRY_ASSIGN_OR_RETURN(p.value, UriDecode(piece.substr(eq + 1)));
    }
    params.push_back(std::move(p));
  }
  return params;
}

std::string BuildQuery(const std::vector<QueryParam>& params) {
  std::string out;
  for (const QueryParam& p : params) {
    if (!out.empty()) {
      out.push_back('&');
    }
    AppendUriEncoded(&out, p.key);
    out.push_back('=');
    AppendUriEncoded(&out, p.value);
  }
  return out;
}

int Url::EffectivePort() const {
  if (port != 0) {
    return port;
  }
  return scheme == "https" ? 443 : 80;
}

std::string Url::HostHeader() const {
  std::string out = ipv6 ? "[" + host + "]" : host;
  bool default_port =
      port == 0 || (scheme == "http" && port == 80) || (scheme == "https" && port == 443);
  if (!default_port) {
    out += ":" + std::to_string(port);
  }
  return out;
}

Result<Url> ParseUrl(std::string_view url) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument("URL '{}': {}", RedactUrl(url), why);
  };
  Url out;
  size_t colon = url.find("://");
  if (colon == std::string_view::npos) {
    return bad("expected http://host/... or https://host/...");
  }
  out.scheme = ToLowerAscii(url.substr(0, colon));
  if (out.scheme != "http" && out.scheme != "https") {
    return bad("only http and https are supported");
  }
  std::string_view rest = url.substr(colon + 3);
  if (rest.find('#') != std::string_view::npos) {
    return bad("a fragment ('#') is not allowed");
  }
  size_t authority_end = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, authority_end);
  rest = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (authority.find('@') != std::string_view::npos) {
    return bad("user info ('user:password@') is not allowed in the URL");
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return bad("unterminated IPv6 literal");
    }
    out.host = ToLowerAscii(authority.substr(1, close - 1));
    out.ipv6 = true;
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return bad("unexpected text after the IPv6 literal");
      }
      port_text = after.substr(1);
    }
  } else {
    size_t pc = authority.rfind(':');
    out.host = ToLowerAscii(authority.substr(0, pc));
    if (pc != std::string_view::npos) {
      port_text = authority.substr(pc + 1);
    }
  }
  if (out.host.empty()) {
    return bad("no host");
  }
  if (!port_text.empty()) {
    int port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port <= 0 ||
        port > 65535) {
      return bad("the port must be a number from 1 to 65535");
    }
    out.port = port;
  }
  size_t q = rest.find('?');
  out.path = std::string(rest.substr(0, q));
  if (out.path.empty()) {
    out.path = "/";
  }
  if (q != std::string_view::npos) {
    out.query = std::string(rest.substr(q + 1));
  }
  return out;
}

std::string RedactUrl(std::string_view url) {
  std::string_view head = url.substr(0, url.find_first_of("?#"));
  std::string out;
  // Drop user info: whatever sits between "://" and an '@' before the path.
  size_t scheme_end = head.find("://");
  if (scheme_end != std::string_view::npos) {
    size_t authority_start = scheme_end + 3;
    size_t path_start = head.find('/', authority_start);
    size_t at = head.substr(0, path_start).rfind('@');
    if (at != std::string_view::npos && at >= authority_start) {
      out = std::string(head.substr(0, authority_start));
      out += head.substr(at + 1);
    } else {
      out = std::string(head);
    }
  } else {
    out = std::string(head);
  }
  size_t q = url.find('?');
  if (q == std::string_view::npos) {
    return out;
  }
  std::string_view query = url.substr(q + 1);
  query = query.substr(0, query.find('#'));
  out.push_back('?');
  bool first = true;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view piece = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (piece.empty()) {
      continue;
    }
    if (!first) {
      out.push_back('&');
    }
    first = false;
    size_t eq = piece.find('=');
    std::string_view key = piece.substr(0, eq);
    Result<std::string> decoded = UriDecode(key);
    bool plain = decoded.ok() && IsPlainQueryKey(*decoded);
    if (!decoded.ok()) {
      out += "REDACTED";
      continue;
    }
    out += key;
    if (eq != std::string_view::npos) {
      std::string_view value = piece.substr(eq + 1);
      out.push_back('=');
      out += (plain || value.empty()) ? value : std::string_view("REDACTED");
    }
  }
  return out;
}

}  // namespace ferry::http
