#include "ferry/testing/http_stand_in.h"

#include <chrono>

namespace ferry::testing {

HttpStandIn::HttpStandIn(const HttpStandInOptions& options) {
  if (!options.tls_cert_file.empty()) {
    tls_ = true;
    server_ = std::make_unique<httplib::SSLServer>(
        options.tls_cert_file.c_str(), options.tls_key_file.c_str(),
        options.client_ca_file.empty() ? nullptr : options.client_ca_file.c_str());
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  // Tests count connections: keep them open as long as the client wants.
  server_->set_keep_alive_max_count(100'000);
  // Headers and body leave in separate writes; without this, Nagle's algorithm and the client's
  // delayed ACK hold each response back ~40 ms.
  server_->set_tcp_nodelay(true);
}

HttpStandIn::~HttpStandIn() {
  Stop();
}

Status HttpStandIn::Start() {
  if (!server_->is_valid()) {
    return Internal("test HTTP server: invalid setup (TLS certificate or key unreadable?)");
  }
  port_ = server_->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) {
    return Unavailable("test HTTP server: cannot bind a port on 127.0.0.1");
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!server_->is_running()) {
    return Unavailable("test HTTP server on port {} did not start", port_);
  }
  return Status::OK();
}

void HttpStandIn::Stop() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

std::string HttpStandIn::url(std::string_view path) const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) +
         std::string(path);
}

}  // namespace ferry::testing
