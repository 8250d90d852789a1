// The sources of temporary AWS credentials: STS web identity, container endpoints, EC2 instance
// metadata (credentials_internal.h).
#include <time.h>

#include <cctype>
#include <charconv>

#include <nlohmann/json.hpp>

#include "ferry/base/file.h"
#include "ferry/http/retry.h"
#include "ferry/http/url.h"
#include "ferry/http/xml.h"
#include "ferry/storage/s3/aws_error.h"
#include "ferry/storage/s3/credentials_internal.h"

namespace ferry::storage::s3::internal {

namespace {

using SystemClock = std::chrono::system_clock;

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

std::string WithoutTrailingSlash(std::string s) {
  while (!s.empty() && s.back() == '/') {
    s.pop_back();
  }
  return s;
}

// Token endpoints answer quickly or not at all: a few quick attempts within the deadline.
const http::RetryPolicy& TokenRetryPolicy() {
  static const http::RetryPolicy policy(
      http::RetryOptions{.max_attempts = 4,
                         .initial_backoff = std::chrono::milliseconds(100),
                         .max_backoff = std::chrono::milliseconds(2000)});
  return policy;
}

// A secret read from a file (a web identity token, a container authorization token), trimmed.
// The message names the file, never the content.
Result<std::string> ReadSecretFile(const std::string& path, std::string_view what) {
  Result<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return InvalidArgument("{} file: {}", what, text.status().message());
  }
  std::string secret(TrimSpace(*text));
  if (secret.empty()) {
    return InvalidArgument("{} file {} is empty", what, path);
  }
  return secret;
}

http::ServiceError ParseJsonError(const http::HttpResponse& response) {
  nlohmann::json j = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  http::ServiceError e;
  if (j.is_object()) {
    for (const char* key : {"code", "Code"}) {
      if (j.contains(key) && j[key].is_string()) {
        e.code = j[key].get<std::string>();
      }
    }
    for (const char* key : {"message", "Message"}) {
      if (j.contains(key) && j[key].is_string()) {
        e.message = j[key].get<std::string>();
      }
    }
  }
  return e;
}

bool IsAllowedContainerHost(const http::Url& url) {
  if (url.scheme == "https") {
    return true;
  }
  const std::string& h = url.host;
  return h == "localhost" || h == "::1" || h.starts_with("127.") || h == "169.254.170.2" ||
         h == "169.254.170.23" || h == "fd00:ec2::23";
}

int Digits(std::string_view s, size_t pos, size_t n, bool* ok) {
  int v = 0;
  if (pos + n > s.size()) {
    *ok = false;
    return 0;
  }
  auto [end, ec] = std::from_chars(s.data() + pos, s.data() + pos + n, v);
  if (ec != std::errc() || end != s.data() + pos + n) {
    *ok = false;
  }
  return v;
}

}  // namespace

Result<SystemClock::time_point> ParseIso8601(std::string_view text) {
  // yyyy-mm-ddThh:mm:ss[.fraction](Z|+hh:mm|-hh:mm)
  bool ok = text.size() >= 20 && text[4] == '-' && text[7] == '-' &&
            (text[10] == 'T' || text[10] == 't' || text[10] == ' ') && text[13] == ':' &&
            text[16] == ':';
  struct tm tm {};
  tm.tm_year = Digits(text, 0, 4, &ok) - 1900;
  tm.tm_mon = Digits(text, 5, 2, &ok) - 1;
  tm.tm_mday = Digits(text, 8, 2, &ok);
  tm.tm_hour = Digits(text, 11, 2, &ok);
  tm.tm_min = Digits(text, 14, 2, &ok);
  tm.tm_sec = Digits(text, 17, 2, &ok);
  size_t pos = 19;
  int64_t micros = 0;
  if (ok && pos < text.size() && text[pos] == '.') {
    int64_t scale = 100'000;
    for (++pos; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos) {
      micros += (text[pos] - '0') * scale;
      scale /= 10;
    }
  }
  int offset_minutes = 0;
  if (ok && pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z') && pos + 1 == text.size()) {
    // UTC
  } else if (ok && pos + 6 == text.size() && (text[pos] == '+' || text[pos] == '-') &&
             text[pos + 3] == ':') {
    int sign = text[pos] == '-' ? -1 : 1;
    offset_minutes = sign * (Digits(text, pos + 1, 2, &ok) * 60 + Digits(text, pos + 4, 2, &ok));
  } else {
    ok = false;
  }
  if (!ok || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
      tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60) {
    return InvalidArgument("'{}' is not an ISO 8601 UTC time (yyyy-mm-ddThh:mm:ssZ)", text);
  }
  time_t secs = timegm(&tm);
  return SystemClock::from_time_t(secs) + std::chrono::microseconds(micros) -
         std::chrono::minutes(offset_minutes);
}

Result<AwsCredentials> ParseStsCredentials(std::string_view xml, std::string_view action) {
  FERRY_ASSIGN_OR_RETURN(http::XmlElement root, http::ParseXml(xml));
  const http::XmlElement* creds = root.Find(std::string(action) + "Result/Credentials");
  if (creds == nullptr) {
    return Unavailable("STS {}: the answer has no {}Result/Credentials", action, action);
  }
  AwsCredentials out;
  out.access_key_id = std::string(TrimSpace(creds->ChildText("AccessKeyId").value_or("")));
  out.secret_access_key = std::string(TrimSpace(creds->ChildText("SecretAccessKey").value_or("")));
  out.session_token = std::string(TrimSpace(creds->ChildText("SessionToken").value_or("")));
  if (out.access_key_id.empty() || out.secret_access_key.empty() || out.session_token.empty()) {
    return Unavailable("STS {}: the credentials lack AccessKeyId, SecretAccessKey or SessionToken",
                       action);
  }
  std::optional<std::string_view> expiration = creds->ChildText("Expiration");
  if (!expiration) {
    return Unavailable("STS {}: the credentials have no Expiration", action);
  }
  FERRY_ASSIGN_OR_RETURN(out.expiration, ParseIso8601(TrimSpace(*expiration)));
  return out;
}

Result<AwsCredentials> ParseJsonCredentials(std::string_view json, std::string_view what) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  auto field = [&](const char* key) -> std::string {
    if (j.is_object() && j.contains(key) && j[key].is_string()) {
      return j[key].get<std::string>();
    }
    return {};
  };
  if (!j.is_object()) {
    return Unavailable("{}: the answer is not a JSON object", what);
  }
  std::string code = field("Code");
  if (!code.empty() && code != "Success") {
    return Unavailable("{}: the answer's Code is '{}'", what, code);
  }
  AwsCredentials out{.access_key_id = field("AccessKeyId"),
                     .secret_access_key = field("SecretAccessKey"),
                     .session_token = field("Token")};
  if (out.access_key_id.empty() || out.secret_access_key.empty()) {
    return Unavailable("{}: the answer lacks AccessKeyId or SecretAccessKey", what);
  }
  std::string expiration = field("Expiration");
  if (!expiration.empty()) {
    FERRY_ASSIGN_OR_RETURN(out.expiration, ParseIso8601(expiration));
  }
  return out;
}

CredentialFetch MakeWebIdentityFetch(http::HttpClient* client, WebIdentityConfig config) {
  return [client, config](http::Deadline deadline) -> Result<AwsCredentials> {
    FERRY_ASSIGN_OR_RETURN(std::string token,
                           ReadSecretFile(config.token_file, "web identity token"));
    // A form in the body: the token must not be in the URL (URLs appear in messages).
    std::string form = http::BuildQuery({{"Action", "AssumeRoleWithWebIdentity"},
                                         {"Version", "2011-06-15"},
                                         {"RoleArn", config.role_arn},
                                         {"RoleSessionName", config.session_name},
                                         {"WebIdentityToken", token}});
    http::HttpRequest request;
    request.method = "POST";
    request.url = WithoutTrailingSlash(config.sts_endpoint) + "/";
    request.headers.Set("Content-Type", "application/x-www-form-urlencoded");
    request.headers.Set("Accept", "application/xml");
    request.body = form;
    request.deadline = deadline;
    http::HttpOutcome out = http::SendWithRetry(*client, TokenRetryPolicy(), std::move(request),
                                                {.parse_error = ParseAwsError});
    if (!out.ok()) {
      return out.status.WithContext("STS AssumeRoleWithWebIdentity for {}", config.role_arn);
    }
    FERRY_ASSIGN_OR_RETURN(AwsCredentials creds,
                           ParseStsCredentials(out.response.body, "AssumeRoleWithWebIdentity"));
    creds.source = "web identity (" + config.role_arn + ")";
    return creds;
  };
}

Result<CredentialFetch> MakeContainerFetch(http::HttpClient* client, const EnvLookup& env,
                                           const std::string& container_endpoint) {
  std::optional<std::string> relative = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  std::optional<std::string> full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  std::string url;
  if (relative && !relative->empty()) {
    url = WithoutTrailingSlash(container_endpoint) + (relative->front() == '/' ? "" : "/") +
          *relative;
  } else if (full && !full->empty()) {
    url = *full;
  } else {
    return InvalidArgument(
        "container credentials: neither AWS_CONTAINER_CREDENTIALS_RELATIVE_URI "
        "nor AWS_CONTAINER_CREDENTIALS_FULL_URI is set");
  }
  Result<http::Url> parsed = http::ParseUrl(url);
  if (!parsed.ok()) {
    return parsed.status().WithContext("container credentials URI");
  }
  if (!IsAllowedContainerHost(*parsed)) {
    return InvalidArgument(
        "container credentials: {} is plain http to a host other than loopback or the container "
        "credential hosts (169.254.170.2, 169.254.170.23, fd00:ec2::23)",
        http::RedactUrl(url));
  }
  std::string token_file = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE").value_or("");
  std::string token_value = env("AWS_CONTAINER_AUTHORIZATION_TOKEN").value_or("");
  return CredentialFetch([client, url, token_file,
                          token_value](http::Deadline deadline) -> Result<AwsCredentials> {
    std::string token = token_value;
    if (!token_file.empty()) {
      FERRY_ASSIGN_OR_RETURN(token, ReadSecretFile(token_file, "container authorization token"));
    }
    if (token.find_first_of("\r\n") != std::string::npos) {
      return InvalidArgument("container credentials: the authorization token holds a line break");
    }
    http::HttpRequest request;
    request.url = url;
    request.deadline = deadline;
    request.headers.Set("Accept", "application/json");
    if (!token.empty()) {
      request.headers.Set("Authorization", token);
    }
    http::HttpOutcome out = http::SendWithRetry(*client, TokenRetryPolicy(), std::move(request),
                                                {.parse_error = ParseJsonError});
    if (!out.ok()) {
      return out.status.WithContext("container credentials");
    }
    FERRY_ASSIGN_OR_RETURN(AwsCredentials creds,
                           ParseJsonCredentials(out.response.body, "container credentials at " +
                                                                       http::RedactUrl(url)));
    creds.source = "container credentials";
    return creds;
  });
}

CredentialFetch MakeImdsFetch(http::HttpClient* client, std::string endpoint,
                              std::chrono::milliseconds probe_timeout) {
  endpoint = WithoutTrailingSlash(std::move(endpoint));
  return [client, endpoint, probe_timeout](http::Deadline deadline) -> Result<AwsCredentials> {
    auto step = [&](std::string method, std::string path, std::string_view token) {
      http::HttpRequest r;
      r.method = std::move(method);
      r.url = endpoint + path;
      r.deadline = std::min(deadline, http::DeadlineAfter(probe_timeout));
      if (r.method == "PUT") {
        r.headers.Set("X-aws-ec2-metadata-token-ttl-seconds", "21600");
      } else {
        r.headers.Set("X-aws-ec2-metadata-token", token);
      }
      static const http::RetryPolicy two_tries(
          http::RetryOptions{.max_attempts = 2, .initial_backoff = std::chrono::milliseconds(50)});
      return http::SendWithRetry(*client, two_tries, std::move(r));
    };
    // 1. A session token.
    http::HttpOutcome out = step("PUT", "/latest/api/token", "");
    if (!out.ok() && !out.response_complete) {
      return NotFound("instance metadata at {} did not answer ({})", endpoint,
                      out.status.message());
    }
    if (!out.ok()) {
      return out.status.WithContext("instance metadata session token (IMDSv2)");
    }
    std::string token(TrimSpace(out.response.body));
    // 2. The role attached to the instance.
    out = step("GET", "/latest/meta-data/iam/security-credentials/", token);
    if (out.status.code() == StatusCode::kNotFound) {
      return InvalidArgument("instance metadata at {}: the instance has no IAM role", endpoint);
    }
    if (!out.ok()) {
      return out.status.WithContext("instance metadata role");
    }
    std::string_view roles = TrimSpace(out.response.body);
    std::string role(TrimSpace(roles.substr(0, roles.find('\n'))));
    if (role.empty()) {
      return InvalidArgument("instance metadata at {}: the instance has no IAM role", endpoint);
    }
    // 3. Its credentials.
    out = step("GET", "/latest/meta-data/iam/security-credentials/" + http::UriEncode(role), token);
    if (!out.ok()) {
      return out.status.WithContext("instance metadata credentials of role {}", role);
    }
    FERRY_ASSIGN_OR_RETURN(AwsCredentials creds,
                           ParseJsonCredentials(out.response.body, "instance metadata"));
    creds.source = "EC2 instance metadata (role " + role + ")";
    return creds;
  };
}

}  // namespace ferry::storage::s3::internal
