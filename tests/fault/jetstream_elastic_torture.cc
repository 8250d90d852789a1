#include "jetstream_elastic_torture.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "config_toml.h"

namespace ferry::fault {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kElasticPartitions = 16;
constexpr int kLeaseTtlMs = 2000;
constexpr size_t kMaxProcesses = 5;
constexpr char kElasticTemplate[] = R"({"id": {{seq}}, "payload": "test #{{seq}}"})";

struct Member {
  std::unique_ptr<Process> process;
  std::string log;
};

}  // namespace

void RunElasticProcesses(const TortureSettings& settings, const std::filesystem::path& dir,
                         const std::string& server_url, const std::string& stream,
                         const TableLocation& table, const std::string& label) {
  const int64_t messages = std::clamp<int64_t>(settings.messages / 2, 4000, 200000);
  const int events = std::max(10, settings.kills);
  std::mt19937_64 rng(settings.seed + 2);
  fmt::print(
      "torture {}: seed={} messages={} events={} table={} (rerun with FERRY_TORTURE_SEED={})\n",
      label, settings.seed, messages, events, table.uri(), settings.seed);
  const std::string logs = (dir / "logs").string();
  std::filesystem::create_directories(logs);
  const std::string config = e2e::WriteConfig(
      dir / "elastic.toml",
      {{.id = "torture",
        .table = table.uri(),
        .schema = "id BIGINT NOT NULL, payload STRING",
        .metadata_columns = R"(sequence = "_sequence", subject = "_subject")",
        .source = e2e::JetStreamSection(
            {.servers = server_url,
             .stream = stream,
             .subjects = {},
             .start = "all",
             .extra =
                 fmt::format("partitions = {{ subject = \"{}.{{partition}}.>\", count = {} }}\n"
                             "lease_ttl = \"{}ms\"\nreconnect_wait = \"200ms\"",
                             stream, kElasticPartitions, kLeaseTtlMs)}),
        .max_rows = 500}},
      settings.log_level.empty() ? ""
                                 : fmt::format("[log]\nlevel = \"{}\"\n\n", settings.log_level));

  const auto start = std::chrono::steady_clock::now();
  // Ids 1..messages, a contiguous slice per partition, spread over about two seconds per event.
  const int64_t rate = std::max<int64_t>(16, messages / (events * 2));
  std::vector<std::unique_ptr<Process>> producers;
  const int64_t slice = messages / kElasticPartitions;
  for (int p = 0; p < kElasticPartitions; ++p) {
    const int64_t first = 1 + p * slice;
    const int64_t count = p + 1 == kElasticPartitions ? messages - first + 1 : slice;
    auto producer = Process::Start(
        NatsProducerArgs(server_url, stream, fmt::format("{}.{}.x", stream, p), first, count,
                         std::max<int64_t>(1, rate / kElasticPartitions), kElasticTemplate),
        {}, fmt::format("{}/producer-{}.log", logs, p));
    ASSERT_TRUE(producer.ok()) << producer.status().ToString();
    producers.push_back(std::move(*producer));
  }
  OptimizeLoop optimize(table, logs + "/optimize.log", milliseconds(2000));

  std::vector<Member> live;
  int incarnation = 0;
  auto join = [&] {
    const std::string home = (dir / fmt::format("process-{}", incarnation)).string();
    std::filesystem::create_directories(home + "/tmp");
    Member m{.log = fmt::format("{}/ferry-{}.log", logs, incarnation++)};
    std::vector<std::string> env = table.env();
    env.push_back("TMPDIR=" + home + "/tmp");
    auto p = Process::Start(table.WithFlags({kFerry, "run", "--config", config}), env, m.log, home);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    m.process = std::move(*p);
    live.push_back(std::move(m));
  };
  for (int i = 0; i < 3; ++i) {
    ASSERT_NO_FATAL_FAILURE(join());
  }
  int sigkills = 0, sigterms = 0, sigstops = 0, joins = 0;
  for (int e = 0; e < events; ++e) {
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(300, 2500)(rng)));
    for (Member& m : live) {
      ASSERT_TRUE(m.process->Running()) << "ferry exited on its own:\n" << Tail(m.log);
    }
    // 0 SIGKILL, 1 SIGTERM, 2 SIGSTOP and SIGCONT, 3 a new process joins. One process left is
    // never taken away; five are never joined by a sixth.
    int what = static_cast<int>(rng() % 4);
    if (what != 3 && live.size() == 1) {
      what = 3;
    } else if (what == 3 && live.size() >= kMaxProcesses) {
      what = static_cast<int>(rng() % 3);
    }
    const size_t victim = rng() % live.size();
    Member& m = live[victim];
    switch (what) {
      case 0:
        m.process->Signal(SIGKILL);
        EXPECT_EQ(m.process->Wait(), 128 + SIGKILL) << Tail(m.log);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(victim));
        ++sigkills;
        break;
      case 1:
        m.process->Signal(SIGTERM);
        EXPECT_EQ(m.process->Wait(), 0) << Tail(m.log);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(victim));
        ++sigterms;
        break;
      case 2:
        // Past its lease: the others take its partitions; it wakes up to a fenced commit or
        // leases it no longer holds.
        m.process->Signal(SIGSTOP);
        std::this_thread::sleep_for(
            milliseconds(std::uniform_int_distribution<int>(kLeaseTtlMs, 3 * kLeaseTtlMs)(rng)));
        m.process->Signal(SIGCONT);
        ++sigstops;
        break;
      default:
        ASSERT_NO_FATAL_FAILURE(join());
        ++joins;
        break;
    }
  }
  for (size_t p = 0; p < producers.size(); ++p) {
    EXPECT_EQ(producers[p]->Wait(), 0) << Tail(fmt::format("{}/producer-{}.log", logs, p));
  }
  // The live processes catch up: every id in the table (the leases of the killed ones expire
  // within lease_ttl and move to them).
  VerifyResult v;
  const auto limit =
      std::chrono::steady_clock::now() + std::min<seconds>(ChildLimit(), seconds(600));
  while (true) {
    v = Verify(table, messages);
    if (v.rows >= messages || std::chrono::steady_clock::now() > limit) {
      break;
    }
    std::this_thread::sleep_for(seconds(2));
  }
  for (Member& m : live) {
    m.process->Signal(SIGTERM);
  }
  for (Member& m : live) {
    EXPECT_EQ(m.process->Wait(), 0) << Tail(m.log);
  }
  const int optimize_runs = optimize.Stop();
  v = Verify(table, messages);
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_EQ(v.rows, messages) << v.output;
  EXPECT_EQ(v.duplicates, 0) << v.output;
  EXPECT_EQ(v.missing, 0) << v.output;
  EXPECT_EQ(v.position_mismatches, 0) << v.output;
  Figures figures{
      .source = label,
      .kills = sigkills + sigterms + sigstops,
      .optimize_runs = optimize_runs,
      .messages = messages,
      .verify = v,
      .wall_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
      .seed = settings.seed};
  fmt::print("{} (SIGKILL {}, SIGTERM {}, SIGSTOP {}, joins {}, processes {})\n",
             FiguresLine(figures), sigkills, sigterms, sigstops, joins, incarnation);
}

}  // namespace ferry::fault
