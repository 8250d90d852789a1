// HttpRequest and HttpResponse: what one exchange with a server carries, independent of the
// transport (client.h sends them with libcurl).
//
// A request body is either `body`, a view of the caller's bytes (sent without a copy of our own;
// the caller keeps them alive until the call returns), or `body_reader`, a stream read in pieces
// (multipart parts, large blobs) that must be able to start over for a retry. A response body goes
// into `HttpResponse::body`, or, for a ranged GET whose size the caller knows, straight into the
// caller's `response_buffer` (error bodies still go to `body`).
//
// Thread-safety: value types. A BodyReader is used by one call at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/http/deadline.h"
#include "ferry/http/headers.h"

namespace ferry::http {

struct BodyReader {
  // Total bytes the reader yields, or -1 when unknown (sent with chunked transfer encoding, which
  // S3 does not accept for PutObject: give S3 the size).
  int64_t size = -1;
  // Copies up to `len` bytes into `buf`; returns how many, 0 at the end. An error aborts the
  // request before it completes, so the server does not apply it.
  std::function<Result<size_t>(char* buf, size_t len)> read;
  // Starts over from the first byte (a retry, or libcurl resending on a connection that died).
  std::function<Status()> rewind;
};

struct HttpRequest {
  std::string method = "GET";
  // Absolute http(s) URL, path and query already percent-encoded (url.h).
  std::string url;
  HttpHeaders headers;
  // The body, when there is one in memory. Ignored when `body_reader` is set.
  std::string_view body;
  BodyReader* body_reader = nullptr;
  // When the call must have finished. The default (the clock's epoch) means "the client's
  // default timeout from now" (HttpClientOptions::default_timeout).
  Deadline deadline{};
  // False when repeating the request after it may have been applied could do harm or give a
  // misleading answer (a conditional create: the repeat would see its own object and answer 412).
  // Such requests are never retried once they were sent (outcome.h).
  bool idempotent = true;
  // Non-empty: a 2xx response body is written here (a ranged GET); a longer body is an error.
  std::span<char> response_buffer;
  // A response body larger than this is an error (0: the client's default).
  size_t max_response_bytes = 0;
};

struct HttpResponse {
  // 0 when no response arrived.
  int status_code = 0;
  HttpHeaders headers;
  // The body, unless it went to the request's response_buffer.
  std::string body;
  // Body bytes received (into `body` or the buffer).
  uint64_t body_size = 0;
};

}  // namespace ferry::http
