#include "ferry/app/status_watch.h"

#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "ferry/app/byte_rate.h"

namespace ferry::app {
namespace {

using nlohmann::json;

constexpr int kPoints = 60;  // the sparklines: the last minute

std::string Int(const json& v) {
  if (!v.is_number()) {
    return "-";
  }
  // Thousands separators, as on the page.
  std::string digits = fmt::format("{}", static_cast<int64_t>(std::llround(v.get<double>())));
  std::string out;
  size_t lead = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > lead && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return out;
}

std::string Seconds(const json& v) {
  if (!v.is_number()) {
    return "-";
  }
  double s = v.get<double>();
  if (s < 1) {
    return fmt::format("{:.0f} ms", s * 1000);
  }
  if (s < 120) {
    return fmt::format("{:.1f} s", s);
  }
  if (s < 7200) {
    return fmt::format("{:.0f} min", s / 60);
  }
  return fmt::format("{:.1f} h", s / 3600);
}

std::string Ago(const json& ms, int64_t now) {
  if (!ms.is_number()) {
    return "never";
  }
  return Seconds(std::max(0.0, static_cast<double>(now - ms.get<int64_t>()) / 1000)) + " ago";
}

std::string Bytes(const json& v) {
  if (!v.is_number()) {
    return "-";
  }
  double b = v.get<double>();
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int i = 0;
  while (b >= 1000 && i < 4) {
    b /= 1000;
    ++i;
  }
  return i == 0 ? fmt::format("{:.0f} B", b) : fmt::format("{:.1f} {}", b, units[i]);
}

// ▁▂▃▄▅▆▇█ over the series, a space where nothing was sampled.
std::string Sparkline(const json& series) {
  static const char* kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  double max = 0;
  for (const json& v : series) {
    if (v.is_number()) {
      max = std::max(max, v.get<double>());
    }
  }
  std::string out;
  for (const json& v : series) {
    if (!v.is_number()) {
      out += " ";
      continue;
    }
    int bar = max > 0 ? static_cast<int>(std::lround(v.get<double>() / max * 7)) : 0;
    out += kBars[std::clamp(bar, 0, 7)];
  }
  return out;
}

std::string StateText(const std::string& state) {
  std::string out = state;
  std::replace(out.begin(), out.end(), '_', ' ');
  return out;
}

std::string RenderPipeline(const json& p, int64_t now) {
  std::string out = fmt::format("{}  [{}] since {}\n  {} -> {}\n", p["id"].get<std::string>(),
                                StateText(p["state"]), Ago(p["state_since_ms"], now),
                                p["source"].get<std::string>(), p["table_uri"].get<std::string>());
  if (p["error"].is_string()) {
    out += fmt::format("  {} {}: {}\n", p["state"] == "failed" ? "FAILED" : "last error",
                       Ago(p["error_ms"], now), p["error"].get<std::string>());
  }
  const json& now_rates = p["now"];
  const json& s = p["series"];
  out += fmt::format("  rows/s {:>10}  {}\n", Int(now_rates["rows_per_s"]),
                     Sparkline(s["rows_per_s"]));
  out += fmt::format("  data   {:>10}  {}\n",
                     now_rates["mb_per_s"].is_number()
                         ? FormatByteRate(now_rates["mb_per_s"].get<double>() * 1e6)
                         : "-",
                     Sparkline(s["mb_per_s"]));
  out += fmt::format("  msgs/s {:>10}  {}\n", Int(now_rates["messages_per_s"]),
                     Sparkline(s["messages_per_s"]));
  auto last = [](const json& series) {
    for (auto it = series.rbegin(); it != series.rend(); ++it) {
      if (it->is_number()) {
        return *it;
      }
    }
    return json(nullptr);
  };
  const json& totals = p["totals"];
  out += fmt::format("  batch {}  commit {}  commits {} ({} retried, {} lost)  bad records {}\n",
                     Seconds(last(s["batch_seconds"])), Seconds(last(s["commit_seconds"])),
                     Int(totals["commits"]), Int(totals["commits_failed"]),
                     Int(totals["commits_lost"]), Int(totals["bad_records"]));
  const json& t = p["table"];
  out += fmt::format(
      "  table v{}, {}, {} files ({} small), last optimize {}, last checkpoint {}\n",
      Int(t["version"]), Bytes(t["size_bytes"]), Int(t["files"]), Int(t["small_files"]),
      Ago(t["optimize_ms"], now),
      t["checkpoint_version"].is_number()
          ? fmt::format("v{} {}", Int(t["checkpoint_version"]),
                        t["checkpoint_ms"].is_number() ? Ago(t["checkpoint_ms"], now) : "")
          : std::string("none"));
  auto last_commit = [&](const json& commits, const char* indent) {
    if (!commits.empty()) {
      const json& c = commits[0];
      out += fmt::format("{}last commit v{} {}: {} rows, {} files, {} in {}\n", indent,
                         Int(c["version"]), Ago(c["time_ms"], now), Int(c["rows"]), Int(c["files"]),
                         Bytes(c["bytes"]), Seconds(c["commit_seconds"]));
    }
  };
  last_commit(p["commits"], "  ");
  // A routed pipeline's tables: each its own state, version and last commit.
  for (const json& rt : p.value("tables", json::array())) {
    out +=
        fmt::format("  table {}  [{}] v{}, {} files\n", rt["table_uri"].get<std::string>(),
                    StateText(rt["state"]), Int(rt["table"]["version"]), Int(rt["table"]["files"]));
    if (rt["error"].is_string()) {
      out += fmt::format("    last error {}: {}\n", Ago(rt["error_ms"], now),
                         rt["error"].get<std::string>());
    }
    last_commit(rt["commits"], "    ");
  }
  size_t width = 9;
  for (const json& part : p["partitions"]) {
    width = std::max(width, part["key"].get<std::string>().size());
  }
  out += fmt::format("  {:<{}}  {:>12}  {:>12}  {:>10}  {:>8}  {:>6}  LAG (1 min)\n", "PARTITION",
                     width, "COMMITTED", "HEAD", "LAG", "LAG(s)", "PAUSES");
  for (const json& part : p["partitions"]) {
    out += fmt::format("  {:<{}}  {:>12}  {:>12}  {:>10}  {:>8}  {:>6}  {}\n",
                       part["key"].get<std::string>(), width, Int(part["committed"]),
                       Int(part["head"]), Int(part["lag_messages"]), Seconds(part["lag_seconds"]),
                       Int(part["rate_limit_pauses"]), Sparkline(part["series"]["lag_messages"]));
  }
  return out;
}

}  // namespace

int WatchStatus(const config::Config& config, const WatchOptions& options,
                const std::function<std::string()>& fallback) {
  const config::MetricsConfig& m = config.metrics;
  std::string base;
  std::unique_ptr<httplib::Client> client;
  if (!m.listen.empty() && m.status_page) {
    std::string host = m.listen.substr(0, m.listen.rfind(':'));
    if (host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]") {
      host = "127.0.0.1";
    }
    base = fmt::format("{}://{}:{}", m.tls_cert.empty() ? "http" : "https", host,
                       m.listen.substr(m.listen.rfind(':') + 1));
    client = std::make_unique<httplib::Client>(base);
    client->set_connection_timeout(2, 0);
    client->set_read_timeout(5, 0);
    if (!m.username.empty()) {
      client->set_basic_auth(m.username, m.password);
    }
    if (!m.tls_cert.empty()) {
      client->set_ca_cert_path(m.tls_cert.c_str());
      client->enable_server_certificate_verification(true);
    }
  }
  bool terminal = isatty(STDOUT_FILENO) == 1;
  auto next = std::chrono::steady_clock::now();
  for (int64_t frame = 0; options.count == 0 || frame < options.count; ++frame) {
    std::string out = fmt::format("ferry status --watch  {}  (every {} ms{})\n\n",
                                  base.empty() ? config.path : base, options.interval.count(),
                                  terminal ? ", Ctrl-C to stop" : "");
    std::string why;
    bool drawn = false;
    if (client) {
      httplib::Result res = client->Get(fmt::format("/api/status?points={}", kPoints));
      if (!res) {
        why = fmt::format("no answer from {} ({})", base, httplib::to_string(res.error()));
      } else if (res->status != 200) {
        why = fmt::format("{} answered HTTP {}", base, res->status);
      } else {
        json status = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
        if (status.is_discarded() || !status.contains("pipelines")) {
          why = fmt::format("{}/api/status did not answer JSON", base);
        } else {
          for (const json& p : status["pipelines"]) {
            if (options.pipelines.empty() || options.pipelines.count(p["id"]) != 0) {
              out += RenderPipeline(p, status["now_ms"].get<int64_t>()) + "\n";
            }
          }
          drawn = true;
        }
      }
    } else {
      why = "no [metrics] listen with the status page in " + config.path;
    }
    if (!drawn) {
      out += fmt::format(
          "ferry run is not reachable: {}.\nPositions from the tables and brokers:\n", why);
      out += fallback();
    }
    if (terminal) {
      std::fputs("\x1b[H\x1b[2J", stdout);
    } else if (frame > 0) {
      std::fputs("\n", stdout);
    }
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    if (options.count != 0 && frame + 1 >= options.count) {
      break;
    }
    next += options.interval;
    std::this_thread::sleep_until(next);
  }
  return 0;
}

}  // namespace ferry::app
