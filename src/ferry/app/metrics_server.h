// MetricsServer: the HTTP endpoint of `ferry run` (`[metrics] listen = "host:port"`):
//   GET /metrics        Prometheus text exposition of the registry
//   GET /health/live    200 while the process serves
//   GET /health/ready   200 when every pipeline runs (ferry_pipeline_up = 1), 503 otherwise
//
// Thread-safety: Start/Stop from one thread; requests are served on the server's own thread.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "ferry/base/status.h"
#include "ferry/metrics/metrics.h"

namespace httplib {
class Server;
}

namespace ferry::app {

class MetricsServer {
 public:
  MetricsServer(metrics::Registry* registry, int expected_pipelines);
  ~MetricsServer();

  // Binds `listen` ("host:port"; port 0 picks a free one) and serves in the background.
  // InvalidArgument for a malformed address, Unavailable when the port cannot be bound.
  Status Start(const std::string& listen);
  void Stop();
  int port() const { return port_; }

 private:
  metrics::Registry* registry_;
  int expected_pipelines_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace ferry::app
