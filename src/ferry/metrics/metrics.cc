#include "ferry/metrics/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "ferry/base/check.h"

namespace ferry::metrics {

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  for (size_t i = 0; i + 1 < bounds_.size(); i++) {
    FERRY_CHECK(bounds_[i] < bounds_[i + 1]);
  }
  for (size_t i = 0; i <= bounds_.size(); i++) {
    counts_[i].store(0);
  }
}

void Histogram::Observe(double v) {
  size_t i =
      static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<double> DurationBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
}

Registry::Family* Registry::GetFamily(std::string_view name, std::string_view help, Type type) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    it = families_.emplace(std::string(name), Family{type, std::string(help), {}, {}, {}}).first;
  }
  FERRY_CHECK_MSG(it->second.type == type, name);
  return &it->second;
}

Counter* Registry::GetCounter(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(mu_);
  auto& slot = GetFamily(name, help, Type::kCounter)->counters[labels];
  if (!slot) {
    slot = std::make_unique<Counter>();
  }
  return slot.get();
}

Gauge* Registry::GetGauge(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(mu_);
  auto& slot = GetFamily(name, help, Type::kGauge)->gauges[labels];
  if (!slot) {
    slot = std::make_unique<Gauge>();
  }
  return slot.get();
}

Histogram* Registry::GetHistogram(std::string_view name, std::string_view help,
                                  const Labels& labels, std::vector<double> bounds) {
  std::lock_guard lock(mu_);
  auto& slot = GetFamily(name, help, Type::kHistogram)->histograms[labels];
  if (!slot) {
    slot = std::make_unique<Histogram>(std::move(bounds));
  }
  return slot.get();
}

namespace {

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// {a="1",b="2"} with an optional extra label (le for histogram buckets).
std::string RenderLabels(const Labels& labels, std::string_view extra_name = {},
                         std::string_view extra_value = {}) {
  if (labels.empty() && extra_name.empty()) {
    return "";
  }
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    out += fmt::format("{}{}=\"{}\"", first ? "" : ",", k, EscapeLabelValue(v));
    first = false;
  }
  if (!extra_name.empty()) {
    out += fmt::format("{}{}=\"{}\"", first ? "" : ",", extra_name, extra_value);
  }
  return out + "}";
}

std::string FormatValue(double v) {
  if (std::isnan(v)) {
    return "NaN";
  }
  if (std::isinf(v)) {
    return v > 0 ? "+Inf" : "-Inf";
  }
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    return fmt::format("{}", static_cast<int64_t>(v));
  }
  return fmt::format("{}", v);
}

}  // namespace

std::string Registry::RenderPrometheus() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    static constexpr std::string_view kTypeNames[] = {"counter", "gauge", "histogram"};
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, EscapeHelp(family.help), name,
                       kTypeNames[static_cast<int>(family.type)]);
    for (const auto& [labels, c] : family.counters) {
      out += fmt::format("{}{} {}\n", name, RenderLabels(labels), FormatValue(c->value()));
    }
    for (const auto& [labels, g] : family.gauges) {
      out += fmt::format("{}{} {}\n", name, RenderLabels(labels), FormatValue(g->value()));
    }
    for (const auto& [labels, h] : family.histograms) {
      uint64_t cumulative = 0;
      for (size_t i = 0; i <= h->bounds().size(); i++) {
        cumulative += h->bucket_count(i);
        std::string le = i < h->bounds().size() ? FormatValue(h->bounds()[i]) : "+Inf";
        out += fmt::format("{}_bucket{} {}\n", name, RenderLabels(labels, "le", le), cumulative);
      }
      out += fmt::format("{}_sum{} {}\n", name, RenderLabels(labels), FormatValue(h->sum()));
      out += fmt::format("{}_count{} {}\n", name, RenderLabels(labels), h->count());
    }
  }
  return out;
}

double Registry::Value(std::string_view name, const Labels& labels) const {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it == families_.end()) {
    return 0;
  }
  if (auto c = it->second.counters.find(labels); c != it->second.counters.end()) {
    return c->second->value();
  }
  if (auto g = it->second.gauges.find(labels); g != it->second.gauges.end()) {
    return g->second->value();
  }
  return 0;
}

std::vector<std::pair<Labels, double>> Registry::Values(std::string_view name) const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<Labels, double>> out;
  auto it = families_.find(name);
  if (it == families_.end()) {
    return out;
  }
  for (const auto& [labels, c] : it->second.counters) {
    out.emplace_back(labels, c->value());
  }
  for (const auto& [labels, g] : it->second.gauges) {
    out.emplace_back(labels, g->value());
  }
  return out;
}

std::vector<Registry::HistogramTotals> Registry::Histograms(std::string_view name) const {
  std::lock_guard lock(mu_);
  std::vector<HistogramTotals> out;
  auto it = families_.find(name);
  if (it == families_.end()) {
    return out;
  }
  for (const auto& [labels, h] : it->second.histograms) {
    out.push_back({.labels = labels, .count = h->count(), .sum = h->sum()});
  }
  return out;
}

}  // namespace ferry::metrics
