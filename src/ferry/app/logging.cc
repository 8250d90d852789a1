#include "ferry/app/logging.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>

#include "ferry/base/json_escape.h"

namespace ferry::app {

namespace {

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendJsonEscaped(s, &out);
  return out;
}

class RedactingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  RedactingSink(bool json, std::vector<std::string> secrets)
      : json_(json), secrets_(std::move(secrets)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string text = Redact(std::string(msg.payload.data(), msg.payload.size()), secrets_);
    auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(msg.time.time_since_epoch());
    std::time_t secs = static_cast<std::time_t>(millis.count() / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    std::string ts =
        fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z", tm, static_cast<int>(millis.count() % 1000));
    std::string_view level(spdlog::level::to_string_view(msg.level).data(),
                           spdlog::level::to_string_view(msg.level).size());
    std::string line;
    if (json_) {
      line = fmt::format("{{\"ts\":\"{}\",\"level\":\"{}\",\"msg\":\"{}\"}}\n", ts, level,
                         JsonEscape(text));
    } else {
      std::string upper(level);
      for (char& c : upper) {
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      }
      line = fmt::format("{} {:<5} {}\n", ts, upper, text);
    }
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  bool json_;
  std::vector<std::string> secrets_;
};

}  // namespace

std::string Redact(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) {
      continue;
    }
    size_t pos = 0;
    while ((pos = text.find(secret, pos)) != std::string::npos) {
      text.replace(pos, secret.size(), "***");
      pos += 3;
    }
  }
  return text;
}

Status SetupLogging(const LogOptions& options) {
  if (options.format != "text" && options.format != "json") {
    return InvalidArgument("log format \"{}\": expected text or json", options.format);
  }
  spdlog::level::level_enum level = spdlog::level::from_str(options.level);
  if (level == spdlog::level::off && options.level != "off") {
    return InvalidArgument("log level \"{}\": expected trace, debug, info, warn, error or off",
                           options.level);
  }
  auto sink = std::make_shared<RedactingSink>(options.format == "json", options.secrets);
  auto logger = std::make_shared<spdlog::logger>("ferry", std::move(sink));
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
  return Status::OK();
}

}  // namespace ferry::app
