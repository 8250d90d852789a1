#include "ferry/app/progress_reporter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ferry/base/log.h"

namespace ferry::app {
namespace {

double Sum(const metrics::Registry& r, std::string_view name) {
  double total = 0;
  for (const auto& [labels, value] : r.Values(name)) {
    total += value;
  }
  return total;
}

std::string Thousands(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string Eta(const ProgressSample& s) {
  if (s.lag == 0) {
    return "0s";
  }
  if (s.rate <= 0) {
    return "?";
  }
  auto seconds = static_cast<int64_t>(std::ceil(static_cast<double>(s.lag) / s.rate));
  if (seconds >= 3600) {
    return fmt::format("{}h{:02}m", seconds / 3600, (seconds % 3600) / 60);
  }
  if (seconds >= 60) {
    return fmt::format("{}m{:02}s", seconds / 60, seconds % 60);
  }
  return fmt::format("{}s", seconds);
}

}  // namespace

std::string RenderProgressBar(const ProgressSample& s, int width) {
  int64_t total = s.rows + s.lag;
  double fraction = total == 0 ? 1.0 : static_cast<double>(s.rows) / static_cast<double>(total);
  int filled = std::clamp(static_cast<int>(fraction * width), 0, width);
  return fmt::format("[{}{}] {:3}%  {}/{} rows  {} msg/s  lag {}  ETA {}",
                     std::string(static_cast<size_t>(filled), '#'),
                     std::string(static_cast<size_t>(width - filled), '.'),
                     static_cast<int>(fraction * 100), Thousands(s.rows), Thousands(total),
                     Thousands(static_cast<int64_t>(s.rate)), Thousands(s.lag), Eta(s));
}

std::string RenderProgressLine(const ProgressSample& s) {
  return fmt::format("progress: {} rows, {} msg/s, lag {}, ETA {}", s.rows,
                     static_cast<int64_t>(s.rate), s.lag, Eta(s));
}

ProgressReporter::ProgressReporter(const metrics::Registry* registry, bool terminal,
                                   std::chrono::milliseconds interval)
    : registry_(registry), terminal_(terminal), interval_(interval) {}

ProgressReporter::~ProgressReporter() {
  if (thread_.joinable()) {
    Stop();
  }
}

void ProgressReporter::Start() {
  started_ = last_time_ = std::chrono::steady_clock::now();
  last_rows_ = Sum(*registry_, "ferry_rows_written_total");
  thread_ = std::thread([this] { Loop(); });
}

ProgressSample ProgressReporter::Sample() {
  auto now = std::chrono::steady_clock::now();
  double rows = Sum(*registry_, "ferry_rows_written_total");
  double seconds = std::chrono::duration<double>(now - last_time_).count();
  if (seconds > 0) {
    double instant = (rows - last_rows_) / seconds;
    // Smoothed: commits arrive in batches, so a raw per-tick rate jumps.
    rate_ = rate_ == 0 ? instant : 0.7 * rate_ + 0.3 * instant;
  }
  last_rows_ = rows;
  last_time_ = now;
  return ProgressSample{.rows = static_cast<int64_t>(rows),
                        .lag = static_cast<int64_t>(Sum(*registry_, "ferry_lag_messages")),
                        .rate = rate_};
}

void ProgressReporter::Emit(const ProgressSample& s) {
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s", RenderProgressBar(s).c_str());
    std::fflush(stderr);
  } else {
    FERRY_LOG_INFO("{}", RenderProgressLine(s));
  }
}

void ProgressReporter::Loop() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, interval_, [this] { return stop_; })) {
    Emit(Sample());
  }
}

void ProgressReporter::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  ProgressSample last = Sample();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  last.rate = seconds > 0 ? static_cast<double>(last.rows) / seconds : 0;
  Emit(last);
  if (terminal_) {
    std::fputc('\n', stderr);
  }
}

}  // namespace ferry::app
