#include "ferry/config/config.h"

#include <fmt/format.h>

#include <cstdlib>
#include <set>

#include "ferry/base/file.h"
#include "ferry/config/config_internal.h"
#include "ferry/storage/table_uri.h"

namespace ferry::config {

using internal::ParseContext;
using internal::ReadPipeline;
using internal::ReadStorage;
using internal::Set;
using internal::TomlTable;

std::string SourceLocation::ToString() const {
  return fmt::format("{}:{}:{}: {}", file, line, column, key);
}

EnvLookup ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  };
}

namespace {

// [metrics]: everything but listen.
Status ReadMetricsOptions(TomlTable& t, MetricsConfig* out) {
  FERRY_ASSIGN_OR_RETURN(auto page, t.Bool("status_page"));
  FERRY_ASSIGN_OR_RETURN(auto payloads, t.Bool("show_payloads"));
  FERRY_ASSIGN_OR_RETURN(auto username, t.String("username"));
  FERRY_ASSIGN_OR_RETURN(auto password, t.String("password", /*secret=*/true));
  FERRY_ASSIGN_OR_RETURN(auto cert, t.String("tls_cert"));
  FERRY_ASSIGN_OR_RETURN(auto key, t.String("tls_key"));
  FERRY_ASSIGN_OR_RETURN(auto linger, t.DurationValue("linger_after_failure"));
  if (username.has_value() != password.has_value()) {
    return t.Error(username ? "username" : "password",
                   "basic auth needs both username and password");
  }
  if (username && (username->empty() || username->find(':') != std::string::npos)) {
    return t.Error("username", "expected a non-empty name without ':'");
  }
  if (cert.has_value() != key.has_value()) {
    return t.Error(cert ? "tls_cert" : "tls_key", "TLS needs both tls_cert and tls_key");
  }
  Set(page, &out->status_page);
  Set(payloads, &out->show_payloads);
  Set(username, &out->username);
  Set(password, &out->password);
  Set(cert, &out->tls_cert);
  Set(key, &out->tls_key);
  Set(linger, &out->linger_after_failure);
  return Status::OK();
}

}  // namespace

Result<Config> ParseConfig(std::string_view text, const std::string& path, const EnvLookup& env) {
  Config config;
  config.path = path;
  toml::table parsed;
  try {
    parsed = toml::parse(text, path);
  } catch (const toml::parse_error& err) {
    return InvalidArgument("{}:{}:{}: {}", path, err.source().begin.line, err.source().begin.column,
                           err.description());
  }
  ParseContext ctx{path, &env, &config.secrets};
  TomlTable root(parsed, "", &ctx);

  FERRY_ASSIGN_OR_RETURN(auto log, root.Table("log"));
  if (log) {
    FERRY_ASSIGN_OR_RETURN(auto format, log->String("format"));
    FERRY_ASSIGN_OR_RETURN(auto level, log->String("level"));
    if (format && *format != "text" && *format != "json") {
      return log->Error("format", "expected \"text\" or \"json\"");
    }
    static const std::set<std::string> kLevels = {"trace", "debug", "info", "warn", "error", "off"};
    if (level && kLevels.count(*level) == 0) {
      return log->Error("level", "expected trace, debug, info, warn, error or off");
    }
    Set(format, &config.log.format);
    Set(level, &config.log.level);
    FERRY_RETURN_IF_ERROR(log->Finish());
  }
  FERRY_ASSIGN_OR_RETURN(auto metrics, root.Table("metrics"));
  if (metrics) {
    FERRY_ASSIGN_OR_RETURN(auto listen, metrics->String("listen"));
    if (listen && listen->rfind(':') == std::string::npos) {
      return metrics->Error("listen", "expected \"host:port\", e.g. \"127.0.0.1:9464\"");
    }
    Set(listen, &config.metrics.listen);
    FERRY_RETURN_IF_ERROR(ReadMetricsOptions(*metrics, &config.metrics));
    FERRY_RETURN_IF_ERROR(metrics->Finish());
  }
  FERRY_ASSIGN_OR_RETURN(auto max_memory, root.Size("max_memory"));
  if (max_memory && *max_memory < (int64_t{1} << 20)) {
    return root.Error("max_memory", "must be at least 1MiB");
  }
  Set(max_memory, &config.max_memory);
  FERRY_ASSIGN_OR_RETURN(config.storage, ReadStorage(root, "storage"));
  FERRY_ASSIGN_OR_RETURN(auto pipelines, root.TableArray("pipeline"));
  if (pipelines.empty()) {
    return InvalidArgument("{}: no [[pipeline]] defined", path);
  }
  std::set<std::string> ids, tables;
  for (TomlTable& t : pipelines) {
    PipelineConfig p;
    FERRY_RETURN_IF_ERROR(ReadPipeline(t, config.storage, &p));
    if (!ids.insert(p.id).second) {
      return t.Error("id", fmt::format("pipeline id \"{}\" is used twice", p.id));
    }
    // One table may be spelled two ways (s3a:// and s3://, a trailing slash). A template is
    // compared as written.
    std::vector<std::string> own;
    if (p.routes.empty()) {
      own.push_back(p.table);
    }
    for (const RouteConfig& route : p.routes) {
      own.push_back(route.table);
    }
    for (const std::string& table : own) {
      Result<storage::TableUri> uri = storage::ParseTableUri(table);
      if (!tables.insert(uri.ok() && !p.table_is_template ? uri->Canonical() : table).second) {
        return t.Error(p.routes.empty() ? "table" : "route",
                       fmt::format("table \"{}\" is fed by two pipelines; give each "
                                   "pipeline its own table",
                                   table));
      }
    }
    config.pipelines.push_back(std::move(p));
  }
  FERRY_RETURN_IF_ERROR(root.Finish());
  AssignMemory(&config);
  FERRY_RETURN_IF_ERROR(CheckMemoryBudget(config));
  return config;
}

Result<Config> LoadConfig(const std::string& path, const EnvLookup& env) {
  Result<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return text.status().WithContext("reading config");
  }
  return ParseConfig(*text, path, env);
}

}  // namespace ferry::config
