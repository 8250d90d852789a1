// HttpOutcome and the one place that classifies how an exchange ended into a ferry Status and
// into what the caller may do next. Stores, token fetchers and the registry client all go
// through these functions; none classifies responses on its own (CONVENTIONS.md).
//
// The classes:
//   1. Not sent: DNS failure, connection refused, reset or timeout before the request left
//      (TLS handshake included). The server saw nothing: Unavailable, retryable.
//   2. Outcome unknown: a timeout, reset or empty reply after the request was (maybe partly)
//      sent, and 500/502/504 answers (a proxy or the store may have applied the request before
//      failing). Unavailable with `maybe_applied`; retryable only when the request is idempotent.
//      A conditional create in this state must be settled by reading back (object_store.h).
//   3. Throttled or busy: 429, 503 (S3 SlowDown, Azure ServerBusy) and the throttling error codes
//      services send with other statuses. Not applied: Unavailable, retryable, `throttled`.
//   4. Refused: other 4xx. Not retryable. A generic code (404 NotFound, 409 and 412 Aborted,
//      401/403 InvalidArgument, 413 ResourceExhausted, ...) that the caller maps further
//      (a 412 on put-if-absent is AlreadyExists; a 404 on delete is success).
//   5. Broken configuration: a certificate that fails verification, a missing CA or client cert
//      file, an http:// URL without allow_http: InvalidArgument, not retryable, not sent.
//
// Messages name the method and the URL with its query values redacted (url.h), the HTTP status,
// and the service's error code and message when the caller parsed them. They never carry a
// header value or a body, so no Authorization header, signature, SAS or session token can leak.
//
// Thread-safety: values and pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "ferry/base/status.h"
#include "ferry/http/message.h"

namespace ferry::http {

// A service's own error from a non-2xx response (S3's <Code>/<Message>, Azure's
// x-ms-error-code, STS's <Error>), parsed by the caller who knows the service.
struct ServiceError {
  std::string code;
  std::string message;
};

struct HttpOutcome {
  // OK for a 2xx response; otherwise the classified error (see above).
  Status status;
  // Another attempt may succeed.
  bool retryable = false;
  // The server may have applied the request: the caller cannot tell from this outcome.
  bool maybe_applied = false;
  // The server asked us to slow down (429, 503, a throttling code).
  bool throttled = false;
  // Retry-After of the response (delta-seconds), 0 when absent.
  std::chrono::milliseconds retry_after{0};
  // What arrived; status_code 0 when nothing did.
  HttpResponse response;
  // A whole response arrived (ClassifyResponse made this outcome, not a transport failure).
  bool response_complete = false;
  // Attempts made (SendWithRetry, retry.h); 1 for a single Send.
  int attempts = 1;

  bool ok() const { return status.ok(); }
  int status_code() const { return response.status_code; }
};

// How a transfer failed below HTTP, as the client (client.cc) reports it.
struct TransportFailure {
  enum class Kind {
    kResolve,           // DNS
    kConnect,           // refused, unreachable
    kTlsHandshake,      // TLS failed before the request was sent
    kTlsVerification,   // the server's certificate was refused
    kLocalConfig,       // a CA or client certificate file is unusable, a bad URL
    kTimeout,           // the deadline passed
    kConnectionLost,    // reset, broken pipe, empty reply, truncated response
    kBodyReadFailed,    // the request's BodyReader failed (its status is `detail`)
    kResponseTooLarge,  // the body exceeded the buffer or the limit
    kOther,
  };
  Kind kind = Kind::kOther;
  // Whether any byte of the request may have reached the server.
  bool maybe_sent = false;
  // What the transport said ("Connection refused", "SSL certificate problem: ...").
  std::string detail;
  // For kBodyReadFailed: the reader's status.
  Status reader_status;
};

// Classifies a transfer that ended without a complete response.
HttpOutcome ClassifyTransportFailure(const HttpRequest& request, const TransportFailure& failure);

// Classifies a complete response (moved into the outcome). `error` is the service's error, if
// the caller parsed one from a non-2xx response; its code can make a 400/403/409 retryable
// (RequestTimeout, Throttling, ExpiredToken, ConditionalRequestConflict, ...).
HttpOutcome ClassifyResponse(const HttpRequest& request, HttpResponse response,
                             const ServiceError& error = {});

// True for service error codes that mean "try again" whatever the HTTP status says.
bool IsTransientServiceErrorCode(std::string_view code);

// "PUT https://host/bucket/key?uploadId=...": the redacted request line for messages.
std::string DescribeRequest(const HttpRequest& request);

}  // namespace ferry::http
