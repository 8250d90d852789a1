// Elastic scale-out on JetStream (docs/jetstream.md, "Elastic scale-out"): several `ferry run`
// processes given one config with `partitions = { subject = "orders.{partition}.>", count = 16 }`
// share the partitions through leases in a key-value bucket, while a publisher writes to all 16.
// Three start; a fourth joins; one leaves cleanly (SIGTERM); one is SIGKILLed; one is SIGSTOPped
// for three lease TTLs and resumed. After each step the test reads the bucket (as `ferry status`
// does) until every partition is owned by a live process with the spread at most
// ceil(16 / live) + 1, and reports how long after the last renewal of a killed process its
// partitions were taken again. At the end every id is in the table once (ferry's reader and
// DuckDB). On Debian's nats-server 2.9.10 and the pinned current release, into a local table;
// and on the pinned current release into an S3 table on radosgw (one gateway per test binary,
// RadosGw::Shared(); the processes reach it through the standard AWS variables, and the test
// reads the table back from a copy `aws s3 sync` keeps up to date).
// Label: integration.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config_toml.h"
#include "jetstream_test_client.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"
#include <nlohmann/json.hpp>

#include "ferry/source/jetstream/partition_leases.h"
#include "ferry/testing/nats_server.h"
#include "ferry/testing/radosgw.h"
#include "ferry/testing/s3_test_store.h"
#include "ferry/testing/wait_until.h"

namespace ferry {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";
constexpr int kPartitions = 16;
constexpr int64_t kTtlMs = 2000;
constexpr char kPipeline[] = "elastic";
constexpr char kStream[] = "orders";

int Ceil(int a, int b) {
  return (a + b - 1) / b;
}

// The pid in a default member id "<host>-<pid>-<random>".
pid_t PidOf(const std::string& member) {
  size_t last = member.rfind('-');
  if (last == std::string::npos || last == 0) {
    return -1;
  }
  size_t before = member.rfind('-', last - 1);
  if (before == std::string::npos) {
    return -1;
  }
  return static_cast<pid_t>(std::stol(member.substr(before + 1, last - before - 1)));
}

int64_t UnixMillis() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The nats-server (a name of TestedNatsServers()) and where the table lives: "local" (a
// directory) or "s3" (a bucket of its own on the binary's radosgw).
struct ElasticParam {
  std::string server;
  std::string store;
};

// For gtest's messages and ctest's listing (instead of the struct's bytes).
void PrintTo(const ElasticParam& param, std::ostream* os) {
  *os << param.server << ", " << param.store;
}

std::string ElasticParamName(const ::testing::TestParamInfo<ElasticParam>& info) {
  return testing::NatsServerTestName(info.param.server) + "_" + info.param.store;
}

class JetStreamElasticTest : public ::testing::TestWithParam<ElasticParam> {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(e2e::StartNatsServer(&server_, &client_, GetParam().server));
    if (IsSkipped()) {
      return;
    }
    auto reader = testing::JetStreamTestClient::Connect(server_->url());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    reader_ = std::move(*reader);
    dir_ = e2e::FreshTestDir("ferry-js-elastic");
    if (GetParam().store == "s3") {
      Result<testing::RadosGw*> rgw = testing::RadosGw::Shared();
      ASSERT_TRUE(rgw.ok()) << rgw.status().ToString() << " (Ceph missing: `make setup`)";
      rgw_ = *rgw;
      Result<std::string> bucket = testing::NewRadosGwBucket(*rgw_);
      ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
      bucket_ = *bucket;
      // The ferry children inherit the test's environment: the standard AWS variables alone
      // reach the store (entries without '=' are unset).
      std::vector<std::string> env = rgw_->Cli().AwsEnv();
      env.push_back("AWS_ALLOW_HTTP=true");
      for (const std::string& entry : env) {
        size_t eq = entry.find('=');
        if (eq == std::string::npos) {
          unsetenv(entry.c_str());
        } else {
          setenv(entry.substr(0, eq).c_str(), entry.substr(eq + 1).c_str(), 1);
          set_env_.push_back(entry.substr(0, eq));
        }
      }
    }
  }
  void TearDown() override {
    stop_publisher_ = true;
    if (publisher_.joinable()) {
      publisher_.join();
    }
    for (auto& [pid, p] : ferries_) {
      kill(pid, SIGCONT);
      kill(pid, SIGKILL);
      p->Wait();
    }
    ferries_.clear();
    reader_.reset();
    client_.reset();
    server_.reset();
    for (const std::string& name : set_env_) {
      unsetenv(name.c_str());
    }
    if (rgw_ != nullptr) {
      EXPECT_TRUE(rgw_->Alive()) << rgw_->Log();
    }
    std::filesystem::remove_all(dir_);
  }

  bool s3() const { return rgw_ != nullptr; }
  // The table's location as ferry is given it.
  std::string table() const {
    return s3() ? "s3://" + bucket_ + "/table" : (dir_ / "table").string();
  }
  // The table read with ferry's reader: the directory itself, or its copy kept by `aws s3 sync`
  // (new objects only; a Delta log only grows).
  e2e::TableContents ReadBack() {
    if (!s3()) {
      return e2e::ReadTable(table());
    }
    const std::string copy = (dir_ / "copy").string();
    Status synced = rgw_->Cli().DownloadPrefix(bucket_, "table", copy);
    EXPECT_TRUE(synced.ok()) << synced.ToString();
    return e2e::ReadTable(copy);
  }
  // Polls ReadBack() until it holds at least `rows` rows or `deadline` passes; the last count.
  size_t WaitForRows(size_t rows, std::chrono::seconds deadline) {
    if (!s3()) {
      return e2e::WaitForRows(table(), rows, deadline);
    }
    size_t have = 0;
    testing::WaitUntil(
        [&] {
          have = ReadBack().rows.size();
          return have >= rows;
        },
        deadline);
    return have;
  }

  // `routed`: the table is the template "<dir>/t_{subject:3}" (a table per last subject token);
  // `metrics_port`: the status page's port (a config per process: ferry-<port>.toml).
  std::string WriteConfig(bool routed = false, int metrics_port = 0) {
    return e2e::WriteConfig(
        dir_ / (metrics_port == 0 ? std::string("ferry.toml")
                                  : fmt::format("ferry-{}.toml", metrics_port)),
        {{.id = kPipeline,
          .table = routed ? (dir_ / "t_{subject:3}").string() : table(),
          .schema = "payload STRING",
          .metadata_columns = R"(sequence = "_sequence", subject = "_subject")",
          .source = e2e::JetStreamSection(
              {.servers = server_->url(),
               .stream = kStream,
               .subjects = {},
               .start = "all",
               .extra = fmt::format("partitions = {{ subject = \"orders.{{partition}}.>\", count = "
                                    "{} }}\nlease_ttl = \"{}ms\"\nreconnect_wait = \"200ms\"",
                                    kPartitions, kTtlMs)}),
          .sections = fmt::format("[pipeline.decode]\nformat = \"raw\"\ncolumn = \"payload\"{}",
                                  routed ? fmt::format("\n\n[pipeline.table_name_rules]\n"
                                                       "fallback = \"{}\"",
                                                       (dir_ / "t_other").string())
                                         : ""),
          .max_rows = 500}},
        metrics_port == 0 ? "" : fmt::format("[metrics]\nlisten = \"127.0.0.1:{}\"", metrics_port));
  }

  pid_t StartFerry() { return StartFerry(config_); }
  pid_t StartFerry(const std::string& config) {
    auto p = ChildProcess::Start({kFerry, "run", "--config", config});
    EXPECT_TRUE(p.ok());
    pid_t pid = (*p)->pid();
    ferries_[pid] = std::move(*p);
    live_.insert(pid);
    return pid;
  }

  // Publishes "test #<i>" round robin over the partitions' subjects until told to stop.
  void StartPublisher() {
    publisher_ = std::thread([this] {
      int next = 1;
      while (!stop_publisher_) {
        for (int p = 0; p < kPartitions && !stop_publisher_; ++p) {
          auto seqs = client_->Publish(fmt::format("orders.{}.x", p), 5, "test #", next);
          if (!seqs.ok()) {
            ADD_FAILURE() << seqs.status().ToString();
            stop_publisher_ = true;
            break;
          }
          next += 5;
        }
        std::this_thread::sleep_for(milliseconds(100));
      }
      published_ = next - 1;
    });
  }

  source::jetstream::LeaseListing Leases() {
    auto listing = source::jetstream::ReadLeases(reader_->js(), "ferry_leases",
                                                 source::jetstream::LeaseScope(kPipeline, kStream),
                                                 kPartitions);
    if (listing.status().code() == StatusCode::kNotFound) {
      return {};  // no process has created the bucket yet
    }
    EXPECT_TRUE(listing.ok()) << listing.status().ToString();
    return listing.ok() ? *listing : source::jetstream::LeaseListing{};
  }

  // Every partition owned by a live process, none by another, and at most ceil(16/live) + 1
  // each, with every live process holding at least one.
  bool Balanced(const source::jetstream::LeaseListing& l, std::string* why) {
    std::map<pid_t, int> held;
    for (const auto& lease : l.leases) {
      pid_t pid = lease.owner.empty() ? -1 : PidOf(lease.owner);
      if (live_.count(pid) == 0) {
        *why = fmt::format("partition {} owned by '{}'", lease.partition, lease.owner);
        return false;
      }
      ++held[pid];
    }
    const int bound = Ceil(kPartitions, static_cast<int>(live_.size())) + 1;
    for (pid_t pid : live_) {
      if (held[pid] == 0 || held[pid] > bound) {
        *why = fmt::format("pid {} holds {} (bound {})", pid, held[pid], bound);
        return false;
      }
    }
    return true;
  }

  // Waits until the leases are balanced over the live processes; returns the listing.
  source::jetstream::LeaseListing WaitBalanced(const std::string& step) {
    std::string why;
    source::jetstream::LeaseListing last;
    bool ok = testing::WaitUntil(
        [&] {
          last = Leases();
          return Balanced(last, &why);
        },
        seconds(60));
    EXPECT_TRUE(ok) << step << ": not balanced: " << why;
    std::map<pid_t, int> held;
    for (const auto& lease : last.leases) {
      ++held[PidOf(lease.owner)];
    }
    std::string spread;
    for (auto [pid, n] : held) {
      spread += fmt::format(" {}:{}", pid, n);
    }
    std::cout << "[elastic] " << step << ": " << live_.size() << " live, spread" << spread
              << std::endl;
    return last;
  }

  // How long after the last renewal `pid` made (before it stopped renewing) its partitions were
  // taken by others: max over its partitions of (taken - renewed), server times.
  void ReportTakeover(const std::string& step, const source::jetstream::LeaseListing& before,
                      const source::jetstream::LeaseListing& after, pid_t pid) {
    int64_t worst = 0;
    for (const auto& lease : before.leases) {
      if (PidOf(lease.owner) != pid) {
        continue;
      }
      const auto& now = after.leases[static_cast<size_t>(lease.partition)];
      worst = std::max(worst, now.taken_unix_ms - lease.renewed_unix_ms);
    }
    std::cout << "[elastic] " << step << ": partitions taken over at most " << worst
              << " ms after the last renewal observed (lease_ttl " << kTtlMs << " ms, renewal "
              << kTtlMs / 3 << " ms)" << std::endl;
    // The lease TTL plus one renewal, plus what the listing before the stop may have missed
    // (one renewal period) and the server's expiry timer.
    EXPECT_LE(worst, kTtlMs + 2 * (kTtlMs / 3) + 1000) << step;
  }

  // Whether each running process's /api/status (`ports`: pid -> its status page) and
  // `ferry status --json` show the leases the bucket holds: every partition's owner; `mine`
  // exactly for the process's own, with a lag measured; each lease's age the page's now minus
  // the time its owner took it; a state of a running pipeline. *why says what differs.
  bool StatusViewsMatchTheBucket(const std::map<pid_t, int>& ports, const std::string& config,
                                 bool routed, std::string* why) {
    source::jetstream::LeaseListing bucket = Leases();
    if (!Balanced(bucket, why)) {
      return false;
    }
    auto partition_of = [](const std::string& key) {  // "jetstream/orders/orders.<p>.>"
      for (int p = 0; p < kPartitions; ++p) {
        if (key == fmt::format("jetstream/{}/orders.{}.>", kStream, p)) {
          return p;
        }
      }
      return -1;
    };
    for (auto [pid, port] : ports) {
      httplib::Client http("127.0.0.1", port);
      httplib::Result r = http.Get("/api/status");
      if (!r || r->status != 200) {
        *why = fmt::format("pid {}: no answer from /api/status on port {}", pid, port);
        return false;
      }
      nlohmann::json status = nlohmann::json::parse(r->body, nullptr, false);
      const nlohmann::json* pipeline = nullptr;
      for (const nlohmann::json& p : status["pipelines"]) {
        if (p["id"] == kPipeline) {
          pipeline = &p;
        }
      }
      if (pipeline == nullptr) {
        *why = fmt::format("pid {}: no pipeline '{}' in {}", pid, kPipeline, r->body);
        return false;
      }
      const std::string state = (*pipeline)["state"].get<std::string>();
      if (state != "running" && state != "catching_up") {
        *why = fmt::format("pid {}: pipeline state '{}'", pid, state);
        return false;
      }
      const nlohmann::json& leases = (*pipeline)["leases"];
      if (leases.size() != static_cast<size_t>(kPartitions)) {
        *why = fmt::format("pid {}: {} leases listed: {}", pid, leases.size(), leases.dump());
        return false;
      }
      const int64_t now_ms = status["now_ms"].get<int64_t>();
      int mine = 0;
      int held = 0;
      for (const auto& lease : bucket.leases) {
        held += PidOf(lease.owner) == pid ? 1 : 0;
      }
      for (const nlohmann::json& l : leases) {
        const int p = partition_of(l["partition"].get<std::string>());
        if (p < 0) {
          *why = fmt::format("pid {}: unknown partition in {}", pid, l.dump());
          return false;
        }
        const source::jetstream::LeaseView& in_bucket = bucket.leases[static_cast<size_t>(p)];
        const bool is_mine = PidOf(in_bucket.owner) == pid;
        if (!l["owner"].is_string() || l["owner"].get<std::string>() != in_bucket.owner ||
            l["mine"].get<bool>() != is_mine) {
          *why = fmt::format("pid {}: {} but the bucket says owner '{}'", pid, l.dump(),
                             in_bucket.owner);
          return false;
        }
        if (!l["lease_age_ms"].is_number() ||
            now_ms - l["lease_age_ms"].get<int64_t>() != in_bucket.taken_unix_ms) {
          *why = fmt::format("pid {}: {} at {} but the lease was taken at {}", pid, l.dump(),
                             now_ms, in_bucket.taken_unix_ms);
          return false;
        }
        if (l["lag_messages"].is_number() != is_mine) {
          *why = fmt::format("pid {}: lag of {} (mine: {})", pid, l.dump(), is_mine);
          return false;
        }
        mine += is_mine ? 1 : 0;
      }
      if (mine != held) {
        *why = fmt::format("pid {}: {} leases mine on its page, {} in the bucket", pid, mine, held);
        return false;
      }
    }
    // `ferry status --json`: per partition (and per table when routed) its owner as the bucket
    // holds it, a lease age no older than the test, and its lag.
    CommandResult r = RunCommand({kFerry, "status", "--config", config, "--json"});
    if (r.exit_code != 0) {
      *why = "ferry status: " + r.err;
      return false;
    }
    std::istringstream lines(r.out);
    std::string line;
    std::map<std::string, int> rows_per_table;
    while (std::getline(lines, line)) {
      nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
      const int p =
          partition_of(row["partition"].is_string() ? row["partition"].get<std::string>() : "");
      if (p < 0 || !row["owner"].is_string() || !row["lease_age_ms"].is_number() ||
          !row["lag"].is_number() ||
          row["owner"].get<std::string>() != bucket.leases[static_cast<size_t>(p)].owner ||
          row["lease_age_ms"].get<int64_t>() > UnixMillis() - started_ms_) {
        *why = fmt::format("ferry status row {} (bucket: owner '{}')", line,
                           p < 0 ? "?" : bucket.leases[static_cast<size_t>(p)].owner);
        return false;
      }
      ++rows_per_table[row["table"].is_string() ? row["table"].get<std::string>() : ""];
    }
    // Routed: the tables "x" and "y", and the fallback table (which holds no rows: only resume
    // positions) named in the config.
    const size_t tables = routed ? 3 : 1;
    if (rows_per_table.size() != tables) {
      *why = fmt::format("ferry status: rows for {} tables, not {}:\n{}", rows_per_table.size(),
                         tables, r.out);
      return false;
    }
    for (const auto& [table, rows] : rows_per_table) {
      if (rows != kPartitions) {
        *why = fmt::format("ferry status: {} rows for table '{}':\n{}", rows, table, r.out);
        return false;
      }
    }
    return true;
  }

  // The step that ends every scenario: once `published` rows are in the table, `pids` leave
  // cleanly (SIGTERM, exit 0) and release every lease; then "test #1".."test #<published>" are
  // each in the table once, by ferry's reader and by DuckDB. Returns what was read.
  e2e::TableContents SettleAndCheck(int published, const std::vector<pid_t>& pids) {
    EXPECT_EQ(WaitForRows(static_cast<size_t>(published), seconds(120)),
              static_cast<size_t>(published));
    for (pid_t pid : pids) {
      kill(pid, SIGTERM);
      EXPECT_EQ(ferries_[pid]->Wait(), 0) << ferries_[pid]->Log();
    }
    ferries_.clear();
    // A clean leave releases everything: the bucket holds no lease of the pipeline.
    for (const auto& lease : Leases().leases) {
      EXPECT_EQ(lease.owner, "") << "partition " << lease.partition;
    }
    e2e::TableContents t = ReadBack();
    std::multiset<std::string> payloads;
    for (const std::string& row : t.rows) {
      payloads.insert(e2e::Field(row, "payload"));
    }
    std::multiset<std::string> expected;
    for (int i = 1; i <= published; ++i) {
      expected.insert("test #" + std::to_string(i));
    }
    EXPECT_EQ(payloads.size(), expected.size());
    EXPECT_TRUE(payloads == expected) << "payloads differ (duplicates or missing)";
    e2e::ExpectDuckDbCounts(t.files, "payload", expected.size());
    std::cout << "[elastic] " << published << " messages, " << t.rows.size() << " rows"
              << std::endl;
    return t;
  }

  // The scenario of the StatusViews tests below.
  void RunStatusViews(bool routed);

  std::unique_ptr<testing::NatsServer> server_;
  std::unique_ptr<testing::JetStreamTestClient> client_;
  std::unique_ptr<testing::JetStreamTestClient> reader_;
  std::filesystem::path dir_;
  testing::RadosGw* rgw_ = nullptr;  // the S3 variant's gateway (shared by the binary)
  std::string bucket_;
  std::vector<std::string> set_env_;  // variables SetUp set, unset by TearDown
  std::string config_;
  std::map<pid_t, std::unique_ptr<ChildProcess>> ferries_;
  std::set<pid_t> live_;
  std::thread publisher_;
  const int64_t started_ms_ = UnixMillis();
  std::atomic<bool> stop_publisher_{false};
  std::atomic<int> published_{0};
};

TEST_P(JetStreamElasticTest, JoinLeaveKillPauseEveryIdOnce) {
  ASSERT_TRUE(client_->AddStream({.name = kStream, .subjects = {"orders.>"}}).ok());
  config_ = WriteConfig();
  StartPublisher();
  pid_t a = StartFerry();
  pid_t b = StartFerry();
  pid_t c = StartFerry();
  WaitBalanced("three processes");
  {
    // `ferry status` names each partition's owner (a live process) and its lease age.
    CommandResult r = RunCommand({kFerry, "status", "--config", config_, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::istringstream lines(r.out);
    std::string line;
    int rows = 0;
    while (std::getline(lines, line)) {
      nlohmann::json row = nlohmann::json::parse(line);
      ++rows;
      ASSERT_TRUE(row["owner"].is_string()) << line;
      EXPECT_EQ(live_.count(PidOf(row["owner"].get<std::string>())), 1u) << line;
      EXPECT_GE(row["lease_age_ms"].get<int64_t>(), 0) << line;
      EXPECT_TRUE(row["lag"].is_number()) << line;
    }
    EXPECT_EQ(rows, kPartitions) << r.out;
  }

  pid_t d = StartFerry();
  WaitBalanced("a fourth joined");

  kill(a, SIGTERM);
  EXPECT_EQ(ferries_[a]->Wait(), 0) << ferries_[a]->Log();
  live_.erase(a);
  WaitBalanced("one left cleanly");

  source::jetstream::LeaseListing before_kill = Leases();
  kill(b, SIGKILL);
  ferries_[b]->Wait();
  live_.erase(b);
  ReportTakeover("SIGKILL", before_kill, WaitBalanced("one SIGKILLed"), b);

  source::jetstream::LeaseListing before_stop = Leases();
  kill(c, SIGSTOP);
  live_.erase(c);
  ReportTakeover("SIGSTOP", before_stop, WaitBalanced("one SIGSTOPped"), c);
  std::this_thread::sleep_for(milliseconds(2 * kTtlMs));
  kill(c, SIGCONT);
  live_.insert(c);
  WaitBalanced("the stopped one resumed");

  stop_publisher_ = true;
  publisher_.join();
  const int published = published_;
  ASSERT_GT(published, 0);
  SettleAndCheck(published, {c, d});
}

// The zombie: a process paused in the middle of a commit (its writer thread held by a failpoint
// before the commit, then SIGSTOP) past its lease. Another process takes its partitions and
// commits them; the paused one, resumed, finishes its commit against positions that moved: the
// Delta commit fences it (its log says so), it drops the batch, and every id is in the table once.
TEST_P(JetStreamElasticTest, APausedProcessMidCommitIsFenced) {
  ASSERT_TRUE(client_->AddStream({.name = kStream, .subjects = {"orders.>"}}).ok());
  config_ = WriteConfig();
  int next = 1;
  auto publish = [&](int per_partition) {
    for (int p = 0; p < kPartitions; ++p) {
      ASSERT_TRUE(
          client_->Publish(fmt::format("orders.{}.x", p), per_partition, "test #", next).ok());
      next += per_partition;
    }
  };
  publish(20);
  setenv("FERRY_FAILPOINTS", "pipeline.before_commit=sleep(1500)@1", 1);
  pid_t zombie = StartFerry();
  unsetenv("FERRY_FAILPOINTS");
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        return ferries_[zombie]->Log(1 << 22).find("failpoint pipeline.before_commit: sleep") !=
               std::string::npos;
      },
      seconds(60)))
      << ferries_[zombie]->Log();
  kill(zombie, SIGSTOP);
  live_.erase(zombie);
  pid_t other = StartFerry();
  WaitBalanced("the zombie paused mid-commit");
  EXPECT_EQ(WaitForRows(static_cast<size_t>(next - 1), seconds(120)),
            static_cast<size_t>(next - 1));
  kill(zombie, SIGCONT);
  live_.insert(zombie);
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        return ferries_[zombie]->Log(1 << 22).find("another writer committed positions") !=
               std::string::npos;
      },
      seconds(60)))
      << ferries_[zombie]->Log();
  WaitBalanced("the zombie resumed");
  publish(10);
  SettleAndCheck(next - 1, {zombie, other});
}

// Partitions made by the server (2.10+): a stream on "orders.*" whose subject transform stores
// "orders.<id>" as "orders.<partition(16) of id>.<id>". nats.c 3.4.1 cannot create such a stream,
// so the test sends the JetStream API request itself.
TEST_P(JetStreamElasticTest, PartitionsFromAStreamSubjectTransform) {
  if (GetParam().server == testing::kDebianNatsServer) {
    GTEST_SKIP() << "subject transforms need nats-server 2.10 or later (Debian's is 2.9.10)";
  }
  natsConnection* nc = nullptr;
  ASSERT_EQ(natsConnection_ConnectTo(&nc, server_->url().c_str()), NATS_OK);
  std::string create =
      fmt::format(R"({{"name":"{}","subjects":["orders.*"],"retention":"limits","storage":"file",)"
                  R"("num_replicas":1,"subject_transform":{{"src":"orders.*",)"
                  R"("dest":"orders.{{{{partition({},1)}}}}.{{{{wildcard(1)}}}}"}}}})",
                  kStream, kPartitions);
  natsMsg* reply = nullptr;
  ASSERT_EQ(natsConnection_RequestString(&reply, nc, "$JS.API.STREAM.CREATE.orders", create.c_str(),
                                         5000),
            NATS_OK);
  std::string answer(natsMsg_GetData(reply), static_cast<size_t>(natsMsg_GetDataLength(reply)));
  natsMsg_Destroy(reply);
  natsConnection_Destroy(nc);
  ASSERT_EQ(answer.find("\"error\""), std::string::npos) << create << "\n" << answer;
  const int kCount = 400;
  for (int i = 1; i <= kCount; ++i) {
    ASSERT_TRUE(client_->Publish(fmt::format("orders.{}", i), 1, "test #", i).ok());
  }
  config_ = WriteConfig();
  pid_t a = StartFerry();
  pid_t b = StartFerry();
  WaitBalanced("two processes on transformed subjects");
  e2e::TableContents t = SettleAndCheck(kCount, {a, b});
  std::set<std::string> partitions;
  for (const std::string& row : t.rows) {
    std::string subject = e2e::Field(row, "_subject");  // "orders.<partition>.<id>"
    partitions.insert(subject.substr(0, subject.rfind('.')));
  }
  EXPECT_EQ(partitions.size(), static_cast<size_t>(kPartitions));
}

// What running processes show of their leases, for a one-table pipeline and for a routed one
// (a table per last subject token, "x" and "y"; its lease view is the routed pipeline's own, as a
// one-table pipeline's): two processes, each with its status page. Each page's /api/status
// `leases` and `ferry status` (--json, and its OWNER and LEASE AGE columns) agree with the bucket
// on every partition's owner and lease age, each page marks its own partitions `mine` with their
// lag, the spread is within ceil(16 / 2) + 1, and `ferry status` reports each partition's lag
// (per table when routed), 0 once everything is in.
void JetStreamElasticTest::RunStatusViews(bool routed) {
  if (s3()) {
    GTEST_SKIP() << "the lease views do not depend on the table's store: the local variants "
                    "cover them";
  }
  ASSERT_TRUE(client_->AddStream({.name = kStream, .subjects = {"orders.>"}}).ok());
  int next = 1;
  auto publish = [&] {
    for (int p = 0; p < kPartitions; ++p) {
      for (const char* leaf : {"x", "y"}) {
        ASSERT_TRUE(client_->Publish(fmt::format("orders.{}.{}", p, leaf), 5, "test #", next).ok());
        next += 5;
      }
    }
  };
  ASSERT_NO_FATAL_FAILURE(publish());
  std::map<pid_t, int> ports;
  std::string config;
  for (int i = 0; i < 2; ++i) {
    Result<int> port = testing::PickFreePort();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    config = WriteConfig(routed, *port);
    ports[StartFerry(config)] = *port;
  }
  WaitBalanced(routed ? "two processes, routed" : "two processes");
  ASSERT_NO_FATAL_FAILURE(publish());  // after the leases settled
  const int published = next - 1;
  const std::vector<std::string> tables =
      routed ? std::vector<std::string>{(dir_ / "t_x").string(), (dir_ / "t_y").string()}
             : std::vector<std::string>{table()};
  auto read_all = [&] {
    std::vector<e2e::TableContents> out;
    for (const std::string& t : tables) {
      out.push_back(e2e::ReadTable(t));
    }
    return out;
  };
  size_t rows = 0;
  testing::WaitUntil(
      [&] {
        rows = 0;
        for (const e2e::TableContents& t : read_all()) {
          rows += t.rows.size();
        }
        return rows >= static_cast<size_t>(published);
      },
      seconds(120));
  EXPECT_EQ(rows, static_cast<size_t>(published));

  std::string why;
  EXPECT_TRUE(testing::WaitUntil(
      [&] { return StatusViewsMatchTheBucket(ports, config, routed, &why); }, seconds(60)))
      << why;
  // Everything is in: `ferry status` shows lag 0 on every row (a routed table's own position may
  // stay behind the partition's head until it commits again: its lag counts the resume position).
  std::string last;
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        CommandResult status = RunCommand({kFerry, "status", "--config", config, "--json"});
        last = status.out + status.err;
        std::istringstream lines(status.out);
        std::string line;
        int listed = 0;
        while (std::getline(lines, line)) {
          nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
          if (row["lag"] != 0 || (!routed && row["position"] != row["head"])) {
            return false;
          }
          ++listed;
        }
        return status.exit_code == 0 && listed == kPartitions * (routed ? 3 : 1);
      },
      seconds(60)))
      << last;
  CommandResult text = RunCommand({kFerry, "status", "--config", config});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  for (const char* column : {"OWNER", "LEASE AGE", "LAG"}) {
    EXPECT_NE(text.out.find(column), std::string::npos) << column << "\n" << text.out;
  }
  EXPECT_EQ(text.out.find("TABLE") != std::string::npos, routed) << text.out;
  for (auto [pid, port] : ports) {
    EXPECT_NE(text.out.find(fmt::format("-{}-", pid)), std::string::npos) << pid << text.out;
  }

  std::vector<pid_t> pids;
  for (auto [pid, port] : ports) {
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    kill(pid, SIGTERM);
    EXPECT_EQ(ferries_[pid]->Wait(), 0) << ferries_[pid]->Log();
  }
  ferries_.clear();
  std::multiset<std::string> payloads;
  for (const e2e::TableContents& t : read_all()) {
    for (const std::string& row : t.rows) {
      payloads.insert(e2e::Field(row, "payload"));
    }
    e2e::ExpectDuckDbCounts(t.files, "payload", t.rows.size());
  }
  std::multiset<std::string> expected;
  for (int i = 1; i <= published; ++i) {
    expected.insert("test #" + std::to_string(i));
  }
  EXPECT_TRUE(payloads == expected) << "payloads differ (duplicates or missing)";
}

TEST_P(JetStreamElasticTest, StatusViewsShowTheLeasesTheProcessesHold) {
  RunStatusViews(/*routed=*/false);
}

TEST_P(JetStreamElasticTest, RoutedPipelineStatusViewsShowTheLeases) {
  RunStatusViews(/*routed=*/true);
}

std::vector<ElasticParam> LocalOnEveryServer() {
  std::vector<ElasticParam> out;
  for (const std::string& server : testing::TestedNatsServers()) {
    out.push_back({server, "local"});
  }
  return out;
}

// Every tested server into a local table; the S3 table on the current release only (the store
// is what differs: the leases and the source are the local variants').
INSTANTIATE_TEST_SUITE_P(Servers, JetStreamElasticTest, ::testing::ValuesIn(LocalOnEveryServer()),
                         ElasticParamName);
INSTANTIATE_TEST_SUITE_P(S3, JetStreamElasticTest,
                         ::testing::Values(ElasticParam{testing::kCurrentNatsServer, "s3"}),
                         ElasticParamName);

}  // namespace
}  // namespace ferry
