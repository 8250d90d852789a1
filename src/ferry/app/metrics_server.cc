#include "ferry/app/metrics_server.h"

#include <httplib.h>

#include <charconv>

namespace ferry::app {

MetricsServer::MetricsServer(metrics::Registry* registry, int expected_pipelines)
    : registry_(registry), expected_pipelines_(expected_pipelines) {}

MetricsServer::~MetricsServer() {
  Stop();
}

Status MetricsServer::Start(const std::string& listen) {
  size_t colon = listen.rfind(':');
  int port = -1;
  const char* end = listen.data() + listen.size();
  if (colon == std::string::npos ||
      std::from_chars(listen.data() + colon + 1, end, port).ptr != end || port < 0 ||
      port > 65535) {
    return InvalidArgument("metrics.listen: \"{}\" is not host:port", listen);
  }
  std::string host = listen.substr(0, colon);
  if (host.empty()) {
    host = "0.0.0.0";
  }
  server_ = std::make_unique<httplib::Server>();
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(registry_->RenderPrometheus(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/health/live", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server_->Get("/health/ready", [this](const httplib::Request&, httplib::Response& res) {
    int up = 0;
    std::string body;
    for (const auto& [labels, value] : registry_->Values("ferry_pipeline_up")) {
      up += value == 1 ? 1 : 0;
      for (const auto& [k, v] : labels) {
        body += v + (value == 1 ? " up\n" : " down\n");
      }
    }
    res.status = up == expected_pipelines_ ? 200 : 503;
    res.set_content(body.empty() ? "no pipeline running\n" : body, "text/plain");
  });
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else {
    port_ = server_->bind_to_port(host, port) ? port : -1;
  }
  if (port_ < 0) {
    server_.reset();
    return Unavailable("metrics.listen: cannot listen on {}", listen);
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return Status::OK();
}

void MetricsServer::Stop() {
  if (server_) {
    server_->stop();
  }
  if (thread_.joinable()) {
    thread_.join();
  }
  server_.reset();
}

}  // namespace ferry::app
