// HttpStandIn: a small HTTP(S) server for tests, on 127.0.0.1 and a free port the kernel picks,
// that stands in for the endpoints ferry talks to (an STS or container credential endpoint,
// instance metadata, a store answering 503s). Tests register cpp-httplib handlers, Start(), point
// the client at url(...), and the destructor stops it: no server outlives its test.
//
// Thread-safety: register handlers before Start; handlers run on the server's worker threads.
#pragma once

#include <httplib.h>

#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "ferry/base/status.h"

namespace ferry::testing {

struct HttpStandInOptions {
  // Both set: serve HTTPS with this PEM certificate and key.
  std::string tls_cert_file;
  std::string tls_key_file;
  // With TLS: require a client certificate signed by this CA.
  std::string client_ca_file;
};

class HttpStandIn {
 public:
  explicit HttpStandIn(const HttpStandInOptions& options = {});
  ~HttpStandIn();
  HttpStandIn(const HttpStandIn&) = delete;
  HttpStandIn& operator=(const HttpStandIn&) = delete;

  // Register handlers here before Start().
  httplib::Server& server() { return *server_; }

  // Binds a free port and serves in the background; returns once connections are accepted.
  Status Start();
  void Stop();

  int port() const { return port_; }
  // "http://127.0.0.1:PORT" + path (https with TLS).
  std::string url(std::string_view path = "") const;

 private:
  std::unique_ptr<httplib::Server> server_;
  bool tls_ = false;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace ferry::testing
