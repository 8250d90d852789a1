// MetricsServer: the HTTP endpoint of `ferry run` (`[metrics] listen = "host:port"`):
//   GET /metrics        Prometheus text exposition of the registry
//   GET /health/live    200 while the process serves
//   GET /health/ready   200 when every pipeline runs (ferry_pipeline_up = 1), 503 otherwise
// and, unless `[metrics] status_page = false`, the status page (docs/running.md "Status page"):
//   GET /               the page (index.html; its status.css and status.js beside it)
//   GET /api/status     the JSON the page is drawn from (status_page/status_json.h); ?since=N
//                       returns only the samples from tick N on
//   GET /status_api.schema.json   that JSON's schema
// Every file is served from the binary (status_page/status_assets.h). Only GET is served: the
// page and the API are read-only.
//
// With `username`/`password`, every path but /health/* asks for HTTP basic auth (the same
// credentials for /metrics and the page); with `tls_cert`/`tls_key` (PEM) it serves HTTPS only.
//
// Thread-safety: Start/Stop from one thread; requests are served on the server's own threads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ferry/app/status_page/status_history.h"
#include "ferry/base/status.h"
#include "ferry/config/config.h"
#include "ferry/metrics/metrics.h"
#include "ferry/storage/storage_options.h"

namespace httplib {
class Server;
}

namespace ferry::app {

class MetricsServer {
 public:
  // The status page names `config`'s pipelines; the journal's texts are redacted of its secrets.
  MetricsServer(metrics::Registry* registry, const config::Config& config);
  ~MetricsServer();

  // Binds `config.listen` ("host:port"; port 0 picks a free one), starts the status page's
  // sampler and serves in the background. InvalidArgument for a malformed address or TLS files
  // that cannot be loaded (naming the key and file), Unavailable when the port cannot be bound.
  Status Start(const config::MetricsConfig& config);
  void Stop();
  int port() const { return port_; }
  // "http://host:port" or "https://host:port" (the listen host as configured).
  const std::string& url() const { return url_; }

 private:
  void AddRoutes(bool status_page);

  metrics::Registry* registry_;
  int expected_pipelines_;
  std::vector<StatusPipelineInfo> pipelines_;
  // Each pipeline's table -> its storage options (the status page's table probe opens them).
  std::map<std::string, storage::StorageOptions> table_storage_;
  std::vector<std::string> secrets_;
  std::unique_ptr<StatusHistory> history_;
  // The expected Authorization header ("Basic <base64(user:password)>"); empty: no auth.
  std::string authorization_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::string url_;
};

// "kafka topics a, b (group g) on host:9092" / "jetstream stream S, subjects x, y": how the page
// names a pipeline's source. No credentials: JetStream server URLs are left out.
std::string DescribeSource(const config::PipelineConfig& pipeline);

}  // namespace ferry::app
