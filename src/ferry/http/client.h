// HttpClient: the one HTTP client of ferry (object stores, token endpoints, the schema registry),
// over libcurl.
//
// Connections are kept alive and reused: the client keeps a pool of libcurl easy handles, each
// with its own connection cache, and a libcurl share object for the DNS cache and TLS sessions.
// A call takes an idle handle (or makes one), so several threads send at once (multipart parts
// in flight) without waiting for each other; a thread that finishes puts its handle, and the
// connections it holds, back for the next call. (libcurl's shared connection cache is not safe
// across concurrent threads, hence one cache per handle.)
//
// Every call has a deadline (the request's, or `default_timeout` from now) that bounds the whole
// exchange, and a separate connect timeout. HTTPS verifies the server against the system CAs,
// plus those of `ca_file` when given; a client certificate is optional. Plain http:// URLs are
// refused unless `allow_http` (local test servers, MinIO or Ceph without TLS).
//
// Send never retries (retry.h does) and never follows redirects. It returns an HttpOutcome
// classified by outcome.h, so the caller knows whether the request may have been applied.
// No header value or body is ever logged or put in a message.
//
// Thread-safety: Send may be called from any number of threads at once. The client must outlive
// every call (destroy it only when no Send is running).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/http/message.h"
#include "ferry/http/outcome.h"

namespace ferry::http {

struct HttpClientOptions {
  // Time allowed to set up a connection (TCP and TLS), within the request's deadline.
  std::chrono::milliseconds connect_timeout{10'000};
  // The deadline of a request that names none.
  std::chrono::milliseconds default_timeout{60'000};
  // Abort a transfer that moves fewer than `low_speed_bytes` per second for `low_speed_time`
  // (a stalled connection); 0 seconds: off, the deadline alone bounds it.
  std::chrono::seconds low_speed_time{0};
  int64_t low_speed_bytes = 1;
  // Accept http:// URLs. Off: only https.
  bool allow_http = false;
  // PEM file of extra CA certificates (a private endpoint's CA), trusted beside the system's.
  std::string ca_file;
  // Skip certificate verification (a self-signed development endpoint). Never for production.
  bool allow_invalid_certificates = false;
  // PEM client certificate and key (mutual TLS), both or neither.
  std::string client_cert_file;
  std::string client_key_file;
  // Idle handles (with their open connections) kept for reuse; more may be in use at once.
  size_t max_idle_handles = 16;
  // A response body read into memory may not be larger than this.
  size_t max_response_bytes = size_t{256} << 20;
  std::string user_agent = "ferry";
};

class HttpClient {
 public:
  // InvalidArgument when a certificate file named in `options` cannot be read or only one of
  // client_cert_file / client_key_file is given.
  static Result<std::unique_ptr<HttpClient>> Create(const HttpClientOptions& options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends `request` once and classifies how it ended (outcome.h). A non-2xx response is a
  // non-OK outcome that still carries the response, so the caller can read the service's error
  // from it (and call ClassifyResponse again with the parsed ServiceError).
  [[nodiscard]] HttpOutcome Send(const HttpRequest& request);

  struct Stats {
    uint64_t requests = 0;
    // New connections opened (TCP connects); requests - connections = reuses.
    uint64_t connections = 0;
    // libcurl handles made (each holds its own connections).
    uint64_t handles = 0;
  };
  Stats stats() const;

  const HttpClientOptions& options() const { return options_; }

 private:
  struct Share;
  struct Handle;
  explicit HttpClient(const HttpClientOptions& options);

  std::unique_ptr<Handle> Acquire();
  void Release(std::unique_ptr<Handle> handle);

  HttpClientOptions options_;
  // Destruction order: the handles (idle_) go before share_, which they point to.
  std::unique_ptr<Share> share_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Handle>> idle_;  // guarded by mu_
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> handles_{0};
};

}  // namespace ferry::http
