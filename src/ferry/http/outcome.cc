#include "ferry/http/outcome.h"

#include <array>
#include <charconv>

#include "ferry/http/url.h"

namespace ferry::http {

namespace {

// Error codes that mean "not applied, try again", by the services that send them.
constexpr std::array<std::string_view, 22> kTransientCodes = {
    // S3 (and S3-compatible stores)
    "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable",
    "ConditionalRequestConflict", "OperationAborted",
    // AWS APIs in general (STS among them)
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
    "TooManyRequestsException", "RequestLimitExceeded", "BandwidthLimitExceeded",
    "RequestThrottled", "PriorRequestNotComplete", "EC2ThrottledException", "IDPCommunicationError",
    "ProvisionedThroughputExceededException",
    // Azure Storage
    "ServerBusy", "OperationTimedOut", "InternalServerError", "TooManyRequests"};

bool IsThrottlingCode(std::string_view code) {
  return code == "SlowDown" || code.find("Throttl") != std::string_view::npos ||
         code.find("TooMany") != std::string_view::npos ||
         code.find("LimitExceeded") != std::string_view::npos || code == "ServerBusy";
}

std::chrono::milliseconds ParseRetryAfter(const HttpHeaders& headers) {
  std::optional<std::string_view> v = headers.Get("Retry-After");
  if (!v) {
    return std::chrono::milliseconds(0);
  }
  int64_t seconds = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), seconds);
  if (ec != std::errc() || end != v->data() + v->size() || seconds < 0 || seconds > 3600) {
    return std::chrono::milliseconds(0);  // an HTTP date or nonsense: use our own backoff
  }
  return std::chrono::seconds(seconds);
}

// The service's error, cut to a length that keeps messages readable.
std::string ServiceErrorText(const ServiceError& error) {
  std::string out;
  if (!error.code.empty()) {
    out += " ";
    out += error.code;
  }
  if (!error.message.empty()) {
    out += out.empty() ? " " : ": ";
    constexpr size_t kMax = 300;
    out += error.message.size() > kMax ? error.message.substr(0, kMax) + "..." : error.message;
  }
  return out;
}

}  // namespace

bool IsTransientServiceErrorCode(std::string_view code) {
  for (std::string_view c : kTransientCodes) {
    if (c == code) {
      return true;
    }
  }
  return false;
}

std::string DescribeRequest(const HttpRequest& request) {
  return request.method + " " + RedactUrl(request.url);
}

HttpOutcome ClassifyTransportFailure(const HttpRequest& request, const TransportFailure& failure) {
  using Kind = TransportFailure::Kind;
  HttpOutcome out;
  std::string what = DescribeRequest(request);
  switch (failure.kind) {
    case Kind::kTlsVerification:
      out.status = InvalidArgument(
          "{}: the server's TLS certificate was refused ({}); for a private endpoint, give its "
          "CA bundle",
          what, failure.detail);
      return out;
    case Kind::kLocalConfig:
      out.status = InvalidArgument("{}: {}", what, failure.detail);
      return out;
    case Kind::kBodyReadFailed:
      out.status = failure.reader_status.WithContext("{}: reading the request body", what);
      return out;
    case Kind::kResponseTooLarge:
      out.status = ResourceExhausted("{}: {}", what, failure.detail);
      return out;
    default:
      break;
  }
  out.retryable = true;
  if (!failure.maybe_sent) {
    out.status = Unavailable("{}: {} (the request was not sent)", what, failure.detail);
    return out;
  }
  // Sent, no answer: the server may have applied it.
  out.maybe_applied = true;
  out.retryable = request.idempotent;
  out.status = Unavailable("{}: {} after the request was sent; its outcome is unknown", what,
                           failure.detail);
  return out;
}

HttpOutcome ClassifyResponse(const HttpRequest& request, HttpResponse response,
                             const ServiceError& error) {
  HttpOutcome out;
  out.response_complete = true;
  const int code = response.status_code;
  out.retry_after = ParseRetryAfter(response.headers);
  if (code >= 200 && code < 300) {
    out.response = std::move(response);
    return out;
  }
  std::string what = DescribeRequest(request);
  std::string service = ServiceErrorText(error);
  auto message = [&](std::string_view hint) {
    return fmt::format("{}: HTTP {}{}{}", what, code, service, hint);
  };
  bool transient_code = IsTransientServiceErrorCode(error.code);
  if (code == 429 || code == 503 || (code >= 400 && code < 500 && transient_code)) {
    // Refused before any work: not applied, safe to repeat.
    out.retryable = true;
    out.throttled = code == 429 || code == 503 || IsThrottlingCode(error.code);
    out.status = Unavailable(message(""));
  } else if (code == 408) {
    out.retryable = true;
    out.status = Unavailable(message(" (the server timed out waiting for the request)"));
  } else if (code == 501) {
    out.status = NotSupported(message(""));
  } else if (code >= 500 && code < 600) {
    out.maybe_applied = true;
    out.retryable = request.idempotent;
    out.status = Unavailable(message("; the request's outcome is unknown"));
  } else if (code == 404 || code == 410) {
    out.status = NotFound(message(""));
  } else if (code == 409 || code == 412 || code == 304) {
    out.status = Aborted(message(code == 409 ? "" : " (precondition failed)"));
  } else if (code == 401 || code == 403) {
    out.status =
        InvalidArgument(message(" (access denied: check the credentials and permissions)"));
  } else if (code == 405) {
    out.status = NotSupported(message(""));
  } else if (code == 413) {
    out.status = ResourceExhausted(message(""));
  } else if (code >= 300 && code < 400) {
    std::optional<std::string_view> location = response.headers.Get("Location");
    out.status = InvalidArgument(
        message(location ? fmt::format(" (redirected to {}; redirects are not followed: name the "
                                       "endpoint or region the server expects)",
                                       RedactUrl(*location))
                         : std::string(" (redirects are not followed)")));
  } else if (code >= 400 && code < 500) {
    out.status = InvalidArgument(message(""));
  } else {
    out.status = Internal(message(" (unexpected status)"));
  }
  out.response = std::move(response);
  return out;
}

}  // namespace ferry::http
