#include "proxied_torture_store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "torture_support.h"

#include "ferry/http/client.h"
#include "ferry/testing/wait_until.h"

namespace ferry::fault {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Commits ferry must make through the proxy's faults in phase 1.
constexpr int kPiecesThroughFaults = 10;
// How long the store stays away at least (phase 2): longer than a request's 4 attempts with
// their backoff (under a second), so that batches fail and the pipeline retries them.
constexpr seconds kOutage{4};

}  // namespace

int ProxiedTortureStore::Inject(Process* ferry, const TableLocation& table, int metrics_port,
                                int64_t ids, const std::function<void(int64_t n)>& publish,
                                const std::string& log) {
  // 1. Faults on the way to the store while ferry commits piece after piece.
  const ProxyCounts before = proxy().counts();
  const int64_t piece = std::max<int64_t>(1, ids / 2 / kPiecesThroughFaults);
  proxy().SetMix({.slow_down = 0.12, .reset_before = 0.05, .reset_after = 0.05, .stall = 0.03});
  for (int i = 0; i < kPiecesThroughFaults && ferry->Running(); ++i) {
    publish(piece);
    WaitForNewVersion(table, ferry, seconds(90));
  }
  proxy().SetMix({});
  const ProxyCounts after = proxy().counts();
  int faults = static_cast<int>(after.faults() - before.faults());
  fmt::print(
      "store faults: {} requests through the proxy, 503 throttled {}, reset before {}, reset "
      "after {}, stalled {}\n",
      after.requests - before.requests, after.slow_down - before.slow_down,
      after.reset_before - before.reset_before, after.reset_after - before.reset_after,
      after.stall - before.stall);
  EXPECT_GT(faults, 0) << "no request met a fault";
  EXPECT_TRUE(ferry->Running()) << "ferry exited during the proxy's faults:\n" << Tail(log);

  // 2. The store down while ids arrive.
  const int64_t version_at_stop = table.LatestVersion();
  const double failed_before =
      std::max(0.0, ScrapeMetric(metrics_port, "ferry_commits_total", "outcome=\"failed\""));
  Status stopped = TakeDown();
  EXPECT_TRUE(stopped.ok()) << stopped.ToString();
  ++faults;
  const auto down_since = std::chrono::steady_clock::now();
  publish(ids);  // the rest
  double failed_during = failed_before;
  testing::WaitUntil(
      [&] {
        failed_during = std::max(
            failed_during, ScrapeMetric(metrics_port, "ferry_commits_total", "outcome=\"failed\""));
        return !ferry->Running() || (std::chrono::steady_clock::now() - down_since >= kOutage &&
                                     failed_during > failed_before);
      },
      // At most 60 s from the outage's start (publishing the rest took some of them).
      std::chrono::duration_cast<milliseconds>(seconds(60) -
                                               (std::chrono::steady_clock::now() - down_since)),
      milliseconds(200));
  const double down_for =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - down_since).count();
  Status restarted = BringBack();
  EXPECT_TRUE(restarted.ok()) << restarted.ToString() << "\n" << ServerLog();
  EXPECT_TRUE(ferry->Running()) << "ferry exited while the store was down:\n" << Tail(log);
  WaitForNewVersion(table, ferry, seconds(90));

  // 3. It went on, and said so.
  const int64_t version_after = table.LatestVersion();
  EXPECT_GT(version_after, version_at_stop) << "no commit after the store came back:\n"
                                            << Tail(log);
  EXPECT_GT(failed_during, failed_before)
      << "ferry_commits_total{outcome=\"failed\"} did not count the batches the store refused "
         "while it was down ("
      << failed_before << " before, " << failed_during << " during)";
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("not committed"), std::string::npos)
      << "the log does not say that a batch could not be committed:\n"
      << Tail(log);
  fmt::print(
      "store faults: store down {:.1f} s, ferry_commits_total{{outcome=\"failed\"}} {} -> {}, "
      "versions {} -> {}\n",
      down_for, failed_before, failed_during, version_at_stop, version_after);
  return faults;
}

double ScrapeMetric(int port, const std::string& name, const std::string& labels) {
  static const std::unique_ptr<http::HttpClient> client = [] {
    http::HttpClientOptions options;
    options.allow_http = true;
    options.default_timeout = milliseconds(3000);
    options.connect_timeout = milliseconds(1000);
    auto c = http::HttpClient::Create(options);
    return c.ok() ? std::move(*c) : nullptr;
  }();
  if (client == nullptr) {
    return -1;
  }
  http::HttpRequest request;
  request.url = fmt::format("http://127.0.0.1:{}/metrics", port);
  http::HttpOutcome out = client->Send(request);
  if (!out.ok()) {
    return -1;
  }
  double sum = 0;
  std::istringstream lines(out.response.body);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with(name) || line.size() <= name.size() ||
        (line[name.size()] != '{' && line[name.size()] != ' ')) {
      continue;
    }
    const size_t space = line.rfind(' ');
    if (line.substr(0, space).find(labels) == std::string::npos) {
      continue;
    }
    sum += std::strtod(line.c_str() + space + 1, nullptr);
  }
  return sum;
}

}  // namespace ferry::fault
