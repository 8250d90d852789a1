#include "ferry/app/metrics_server.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <fstream>

#include "ferry/app/logging.h"
#include "ferry/app/status_page/status_assets.h"
#include "ferry/app/status_page/status_json.h"
#include "ferry/app/status_page/table_probe.h"
#include "ferry/app/table_location.h"
#include "ferry/base/clock.h"

namespace ferry::app {
namespace {

std::string Base64(std::string_view in) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint32_t{static_cast<unsigned char>(in[i])} << 16) |
                 (uint32_t{static_cast<unsigned char>(in[i + 1])} << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    out += {kDigits[n >> 18], kDigits[(n >> 12) & 63], kDigits[(n >> 6) & 63], kDigits[n & 63]};
  }
  if (i + 1 == in.size()) {
    uint32_t n = uint32_t{static_cast<unsigned char>(in[i])} << 16;
    out += {kDigits[n >> 18], kDigits[(n >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    uint32_t n = (uint32_t{static_cast<unsigned char>(in[i])} << 16) |
                 (uint32_t{static_cast<unsigned char>(in[i + 1])} << 8);
    out += {kDigits[n >> 18], kDigits[(n >> 12) & 63], kDigits[(n >> 6) & 63], '='};
  }
  return out;
}

// Compares in time that depends only on the lengths (no early exit on the first difference).
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  }
  return diff == 0;
}

Status CheckReadable(const char* key, const std::string& path) {
  if (!std::ifstream(path).good()) {
    return InvalidArgument("metrics.{}: cannot read \"{}\"", key, path);
  }
  return Status::OK();
}

void SetPageHeaders(httplib::Response& res) {
  // Everything comes from ferry itself; nothing may be framed, sniffed or loaded from elsewhere.
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                 "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-store");
}

}  // namespace

std::string DescribeSource(const config::PipelineConfig& p) {
  if (p.kafka) {
    std::string topics = p.kafka->topic_pattern.empty()
                             ? fmt::format("{}", fmt::join(p.kafka->topics, ", "))
                             : p.kafka->topic_pattern;
    return fmt::format("kafka {} (group {}) on {}", topics, p.kafka->group_id, p.kafka->brokers);
  }
  if (p.jetstream) {
    return fmt::format("jetstream stream {}, subjects {}", p.jetstream->stream,
                       fmt::join(p.jetstream->subjects, ", "));
  }
  return "unknown";
}

MetricsServer::MetricsServer(metrics::Registry* registry, const config::Config& config)
    : registry_(registry),
      expected_pipelines_(static_cast<int>(config.pipelines.size())),
      secrets_(config.secrets) {
  for (const config::PipelineConfig& p : config.pipelines) {
    pipelines_.push_back({.id = p.id, .source = DescribeSource(p), .table = p.table});
    table_storage_[p.table] = p.storage;
  }
}

MetricsServer::~MetricsServer() {
  Stop();
}

void MetricsServer::AddRoutes(bool status_page) {
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
      // A routed pipeline's tables have series of their own (a `table` label); the pipeline's
      // is the router's.
      bool per_table = std::any_of(labels.begin(), labels.end(),
                                   [](const auto& label) { return label.first == "table"; });
      if (per_table) {
        continue;
      }
      up += value == 1 ? 1 : 0;
      for (const auto& [k, v] : labels) {
        body += v + (value == 1 ? " up\n" : " down\n");
      }
    }
    res.status = up == expected_pipelines_ ? 200 : 503;
    res.set_content(body.empty() ? "no pipeline running\n" : body, "text/plain");
  });
  if (!status_page) {
    return;
  }
  for (const StatusAsset& asset : StatusAssets()) {
    auto serve = [&asset](const httplib::Request&, httplib::Response& res) {
      SetPageHeaders(res);
      res.set_content(asset.body.data(), asset.body.size(),
                      std::string(asset.content_type).c_str());
    };
    server_->Get(std::string(asset.path), serve);
    if (asset.path == "/index.html") {
      server_->Get("/", serve);
    }
  }
  server_->Get("/api/status", [this](const httplib::Request& req, httplib::Response& res) {
    StatusQuery query;
    for (auto [name, slot] :
         {std::pair{"since", &query.since}, std::pair{"points", &query.points}}) {
      if (!req.has_param(name)) {
        continue;
      }
      std::string text = req.get_param_value(name);
      int64_t v = 0;
      if (std::from_chars(text.data(), text.data() + text.size(), v).ptr !=
              text.data() + text.size() ||
          v < 0) {
        res.status = 400;
        res.set_content(fmt::format("{}: expected a non-negative integer\n", name), "text/plain");
        return;
      }
      *slot = v;
    }
    SetPageHeaders(res);
    res.set_content(RenderStatusJson(*history_, query, WallMillis()), "application/json");
  });
}

Status MetricsServer::Start(const config::MetricsConfig& config) {
  const std::string& listen = config.listen;
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
  bool tls = !config.tls_cert.empty();
  if (tls) {
    FERRY_RETURN_IF_ERROR(CheckReadable("tls_cert", config.tls_cert));
    FERRY_RETURN_IF_ERROR(CheckReadable("tls_key", config.tls_key));
    auto ssl =
        std::make_unique<httplib::SSLServer>(config.tls_cert.c_str(), config.tls_key.c_str());
    if (!ssl->is_valid()) {
      return InvalidArgument(
          "metrics.tls_cert, metrics.tls_key: \"{}\" and \"{}\" are not a PEM certificate and "
          "its private key",
          config.tls_cert, config.tls_key);
    }
    server_ = std::move(ssl);
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  authorization_.clear();
  if (!config.username.empty()) {
    authorization_ = "Basic " + Base64(config.username + ":" + config.password);
  }
  server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (authorization_.empty() || req.path.rfind("/health/", 0) == 0) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    if (SameSecret(req.get_header_value("Authorization"), authorization_)) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    res.status = 401;
    res.set_header("WWW-Authenticate", "Basic realm=\"ferry\", charset=\"UTF-8\"");
    res.set_content("authentication required\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
  if (config.status_page) {
    registry_->journal()->set_keep_payloads(config.show_payloads);
    registry_->journal()->set_redactor(
        [secrets = secrets_](std::string text) { return Redact(std::move(text), secrets); });
    history_ = std::make_unique<StatusHistory>(
        registry_, pipelines_,
        std::make_unique<TableProbe>([storage = table_storage_](const std::string& table)
                                         -> Result<std::unique_ptr<delta::Table>> {
          auto it = storage.find(table);
          return OpenTableAt(table, it == storage.end() ? storage::StorageOptions() : it->second);
        }));
  }
  AddRoutes(config.status_page);
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else {
    port_ = server_->bind_to_port(host, port) ? port : -1;
  }
  if (port_ < 0) {
    server_.reset();
    history_.reset();
    return Unavailable("metrics.listen: cannot listen on {}", listen);
  }
  url_ = fmt::format("{}://{}:{}", tls ? "https" : "http", host, port_);
  if (history_) {
    history_->Start();
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
  if (history_) {
    history_->Stop();
  }
  server_.reset();
}

}  // namespace ferry::app
