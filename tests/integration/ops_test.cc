// Operations end to end with the real binaries against the mock Kafka cluster: `ferry status`
// (lag shown, exit 1 over --max-lag, 0 after catching up), metrics scraped from /metrics during
// a run agree with the table, `ferry optimize` while `ferry run` ingests, and no secret in a
// debug log (Kafka properties; NATS password, token, creds file and URL credentials, in text and
// JSON logs, on runs that succeed and runs that fail authentication). Label: integration.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config_toml.h"
#include "kafka_child_process.h"
#include "nats_auth_fixtures.h"
#include "pipeline_e2e_support.h"
#include <nlohmann/json.hpp>

#include "ferry/testing/nats_server.h"
#include "ferry/testing/wait_until.h"

namespace ferry {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using source::kafka::testing::StartMockKafka;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";
constexpr char kTemplate[] = R"({"id": {{seq}}, "payload": "test #{{seq}}"})";
constexpr char kSecret[] = "s3cr3t-Ferry-7f1c9";

// A port nothing listens on right now (the kernel's choice for port 0).
int FreePort() {
  Result<int> port = ferry::testing::PickFreePort();
  EXPECT_TRUE(port.ok()) << port.status().ToString();
  return port.ok() ? *port : 0;
}

// Prometheus text -> {"name{labels}": value}, and sums per metric name.
struct Scrape {
  std::map<std::string, double> series;
  double Sum(const std::string& name) const {
    double total = 0;
    for (const auto& [key, value] : series) {
      if (key == name || key.rfind(name + "{", 0) == 0) {
        total += value;
      }
    }
    return total;
  }
  double Get(const std::string& key) const {
    auto it = series.find(key);
    return it == series.end() ? -1 : it->second;
  }
};

Scrape Parse(const std::string& text) {
  Scrape s;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      continue;
    }
    size_t space = line.rfind(' ');
    s.series[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return s;
}

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) {
      out.push_back(nlohmann::json::parse(line));
    }
  }
  return out;
}

class OpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = e2e::FreshTestDir("ferry-ops");
    auto mock = StartMockKafka(kFerry, 1, {"events:2"});
    ASSERT_TRUE(mock.ok()) << mock.status().ToString();
    mock_ = std::move(mock->child);
    brokers_ = mock->bootstrap;
  }
  void TearDown() override {
    mock_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string table() const { return (dir_ / "table").string(); }

  std::string WriteConfig(const std::string& extra = "", const std::string& properties = "",
                          int max_rows = 500, const std::string& tail = "") {
    return e2e::WriteConfig(
        dir_ / "ferry.toml",
        {{.table = table(),
          .schema = "id BIGINT NOT NULL, payload STRING",
          .source = e2e::KafkaSection(
              {.brokers = brokers_,
               .group_id = "ferry-ops-test",
               .properties = R"("session.timeout.ms" = "6000", "heartbeat.interval.ms" = "500")" +
                             properties}),
          .max_rows = max_rows,
          .max_latency = "100ms",
          .after = tail}},
        extra);
  }

  void Produce(int64_t count, int64_t start, int rate = 0) {
    CommandResult r =
        RunCommand({kFerry, "produce", "kafka", "--brokers", brokers_, "--topic", "events",
                    "--count", std::to_string(count), "--start", std::to_string(start), "--rate",
                    std::to_string(rate), "--key", "k{{seq}}", "--template", kTemplate});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // `ferry status` as JSON lines; the exit code in *code.
  std::vector<nlohmann::json> Status(const std::vector<std::string>& extra, int* code) {
    std::vector<std::string> argv = {kFerry, "status", "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    CommandResult r = RunCommand(argv);
    *code = r.exit_code;
    return JsonLines(r.out);
  }

  std::filesystem::path dir_;
  std::unique_ptr<ChildProcess> mock_;
  std::string brokers_;
};

int64_t SumOf(const std::vector<nlohmann::json>& rows, const char* key) {
  int64_t total = 0;
  for (const nlohmann::json& r : rows) {
    if (!r[key].is_null()) {
      total += r[key].get<int64_t>();
    }
  }
  return total;
}

TEST_F(OpsTest, StatusShowsTheLagAndExitsOneOverMaxLagThenZeroAfterCatchingUp) {
  std::string config = WriteConfig();
  Produce(2000, 1);
  CommandResult run = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Not a terminal: plain progress log lines, the last one with every row.
  EXPECT_NE(run.err.find("progress: 2000 rows"), std::string::npos) << run.err;

  int code = -1;
  std::vector<nlohmann::json> rows = Status({"--config", config, "--max-lag", "0"}, &code);
  EXPECT_EQ(code, 0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(SumOf(rows, "lag"), 0);
  // Offsets 0..n-1 per partition: positions sum to 2000 - 2.
  EXPECT_EQ(SumOf(rows, "position"), 1998);
  EXPECT_EQ(SumOf(rows, "head"), 1998);
  for (const nlohmann::json& r : rows) {
    EXPECT_EQ(r["pipeline"], "events");
    EXPECT_FALSE(r["last_commit"].is_null());
  }

  Produce(600, 2001);
  rows = Status({"--config", config, "--max-lag", "10"}, &code);
  EXPECT_EQ(code, 1) << "lag 600 over --max-lag 10";
  EXPECT_EQ(SumOf(rows, "lag"), 600);
  EXPECT_EQ(SumOf(rows, "head"), 2598);
  EXPECT_EQ(SumOf(rows, "position"), 1998);
  Status({"--config", config, "--max-lag", "600"}, &code);
  EXPECT_EQ(code, 0);
  CommandResult human = RunCommand({kFerry, "status", "--config", config});
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_NE(human.out.find("kafka/events/0"), std::string::npos) << human.out;

  run = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  rows = Status({"--config", config, "--max-lag", "0"}, &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(SumOf(rows, "lag"), 0);
  EXPECT_EQ(SumOf(rows, "position"), 2598);

  // --table: the positions alone, from the table.
  std::vector<nlohmann::json> from_table = Status({"--table", table()}, &code);
  EXPECT_EQ(code, 0);
  ASSERT_EQ(from_table.size(), 2u);
  EXPECT_EQ(SumOf(from_table, "position"), 2598);
  EXPECT_TRUE(from_table[0]["lag"].is_null());

  Status({"--table", (dir_ / "nothing").string()}, &code);
  EXPECT_EQ(code, 2);
  Status({"--config", config, "--pipeline", "nope"}, &code);
  EXPECT_EQ(code, 2);
}

TEST_F(OpsTest, MetricsScrapedDuringARunAgreeWithTheTable) {
  int port = FreePort();
  std::string config = WriteConfig(fmt::format("[metrics]\nlisten = \"127.0.0.1:{}\"\n", port));
  auto ferry = ChildProcess::Start({kFerry, "run", "--config", config});
  ASSERT_TRUE(ferry.ok());
  constexpr int64_t kCount = 5000;
  std::thread producer([&] { Produce(kCount, 1, 2500); });

  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2);
  bool ready = false;
  double max_lag_seen = 0;
  Scrape last;
  testing::WaitUntil(
      [&] {
        if (auto r = client.Get("/health/ready"); r && r->status == 200) {
          ready = true;
        }
        if (auto r = client.Get("/metrics"); r && r->status == 200) {
          last = Parse(r->body);
          max_lag_seen = std::max(max_lag_seen, last.Sum("ferry_lag_messages"));
          return last.Sum("ferry_rows_written_total") == kCount &&
                 last.Sum("ferry_lag_messages") == 0;
        }
        return false;
      },
      seconds(120));
  producer.join();
  EXPECT_TRUE(ready) << "/health/ready answered 200 while running";
  if (auto r = client.Get("/health/live"); r) {
    EXPECT_EQ(r->status, 200);
  }
  EXPECT_EQ(last.Sum("ferry_rows_written_total"), kCount);
  EXPECT_EQ(last.Sum("ferry_lag_messages"), 0);
  EXPECT_EQ(last.Sum("ferry_messages_received_total"), kCount);
  double succeeded = last.Get(R"(ferry_commits_total{pipeline="events",outcome="succeeded"})");
  EXPECT_GT(succeeded, 0) << "series missing";

  kill((*ferry)->pid(), SIGTERM);
  EXPECT_EQ((*ferry)->Wait(), 0);

  CommandResult history = RunCommand({kFerry, "table", "history", table(), "--json"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  int64_t streaming = 0;
  for (const nlohmann::json& c : JsonLines(history.out)) {
    streaming += c.value("operation", "") == "STREAMING UPDATE" ? 1 : 0;
  }
  EXPECT_EQ(static_cast<int64_t>(succeeded), streaming);
  // The committed-position gauges are the table's txns.
  e2e::TableContents t = e2e::ReadTable(table());
  EXPECT_EQ(static_cast<int64_t>(t.rows.size()), kCount);
  for (const auto& [app_id, version] : t.txns) {
    std::string partition = app_id.substr(app_id.find('/') + 1);
    EXPECT_EQ(last.Get(fmt::format(
                  R"(ferry_committed_position{{pipeline="events",partition="{}"}})", partition)),
              static_cast<double>(version))
        << app_id;
  }
}

TEST_F(OpsTest, OptimizeWhileIngestingKeepsRowsAndPositionsAndReducesFiles) {
  std::string config = WriteConfig("", "", 150);
  auto ferry = ChildProcess::Start({kFerry, "run", "--config", config});
  ASSERT_TRUE(ferry.ok());
  constexpr int64_t kCount = 6000;
  constexpr int64_t kFirst = 150;
  // The first messages, and ferry's first commit: from here on ingestion follows the producer
  // (4 s at 1,500/s) instead of draining a backlog built up during the group join in one burst.
  Produce(kFirst, 1);
  auto until = std::chrono::steady_clock::now() + seconds(180);
  while (e2e::ReadTable(table()).rows.size() < static_cast<size_t>(kFirst) &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  std::thread producer([&] { Produce(kCount - kFirst, kFirst + 1, 1500); });

  int optimized_while_ingesting = 0;
  size_t rows = 0;
  size_t most_files = 0;  // the most live files seen before an optimize
  while (std::chrono::steady_clock::now() < until) {
    e2e::TableContents t = e2e::ReadTable(table());
    rows = t.rows.size();
    most_files = std::max(most_files, t.files.size());
    if (rows >= static_cast<size_t>(kCount)) {
      break;
    }
    if (rows > 0) {
      CommandResult opt = RunCommand({kFerry, "optimize", table()});
      // 0: packed (or nothing to pack); a conflict with a concurrent commit is reported, and
      // never corrupts anything (checked below).
      if (opt.exit_code == 0) {
        ++optimized_while_ingesting;
      } else {
        std::fprintf(stderr, "optimize exited %d: %s\n", opt.exit_code, opt.err.c_str());
      }
    }
    std::this_thread::sleep_for(milliseconds(500));
  }
  producer.join();
  EXPECT_GT(optimized_while_ingesting, 0);
  ASSERT_EQ(rows, static_cast<size_t>(kCount));
  CommandResult opt = RunCommand({kFerry, "optimize", table()});
  EXPECT_EQ(opt.exit_code, 0) << opt.err;
  kill((*ferry)->pid(), SIGTERM);
  EXPECT_EQ((*ferry)->Wait(), 0);

  size_t files_after = e2e::ReadTable(table()).files.size();
  EXPECT_GT(most_files, 1u);
  EXPECT_LT(files_after, most_files);
  EXPECT_EQ(files_after, 1u) << "one small partition-less table packs into one file";
  CommandResult verify =
      RunCommand({kFerry, "verify", table(), "--id", "id", "--expect", std::to_string(kCount)});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_F(OpsTest, ScheduledOptimizeAndVacuumRunInsideFerryRun) {
  int port = FreePort();
  std::string config =
      WriteConfig(fmt::format("[metrics]\nlisten = \"127.0.0.1:{}\"\n", port), "", 150,
                  "[pipeline.maintenance]\noptimize_every = \"1s\"\n"
                  "vacuum_every = \"1s\"\n");
  auto ferry = ChildProcess::Start({kFerry, "run", "--config", config});
  ASSERT_TRUE(ferry.ok());
  constexpr int64_t kCount = 4000;
  Produce(kCount, 1, 2000);
  // Once ingestion is done, the next scheduled optimize packs everything into one file.
  e2e::TableContents t;
  testing::WaitUntil(
      [&] {
        t = e2e::ReadTable(table());
        return t.rows.size() == static_cast<size_t>(kCount) && t.files.size() == 1;
      },
      seconds(120), milliseconds(200));
  EXPECT_EQ(t.rows.size(), static_cast<size_t>(kCount));
  EXPECT_EQ(t.files.size(), 1u);
  httplib::Client client("127.0.0.1", port);
  auto r = client.Get("/metrics");
  ASSERT_TRUE(r);
  Scrape m = Parse(r->body);
  EXPECT_GT(
      m.Get(R"(ferry_maintenance_runs_total{pipeline="events",operation="optimize",outcome="ok"})"),
      0);
  EXPECT_GT(
      m.Get(R"(ferry_maintenance_runs_total{pipeline="events",operation="vacuum",outcome="ok"})"),
      0);
  kill((*ferry)->pid(), SIGTERM);
  EXPECT_EQ((*ferry)->Wait(), 0);

  CommandResult history = RunCommand({kFerry, "table", "history", table(), "--json"});
  int64_t optimizes = 0;
  for (const nlohmann::json& c : JsonLines(history.out)) {
    optimizes += c.value("operation", "") == "OPTIMIZE" ? 1 : 0;
  }
  EXPECT_GT(optimizes, 0);
  // Vacuum with the 168h default retention deleted nothing a reader needs: every live file is
  // there and the table verifies.
  CommandResult verify =
      RunCommand({kFerry, "verify", table(), "--id", "id", "--expect", std::to_string(kCount)});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_F(OpsTest, ASecretInPropertiesNeverAppearsInADebugLog) {
  setenv("TEST_SECRET", kSecret, 1);
  std::string config =
      WriteConfig("[log]\nlevel = \"debug\"\n", R"(, "sasl.password" = "${TEST_SECRET}")");
  Produce(500, 1);
  CommandResult run = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("DEBUG"), std::string::npos) << "debug lines were logged";
  EXPECT_EQ(run.err.find(kSecret), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find(kSecret), std::string::npos);
  CommandResult status = RunCommand({kFerry, "status", "--config", config});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.err.find(kSecret), std::string::npos) << status.err;
  EXPECT_EQ(status.out.find(kSecret), std::string::npos);
  CommandResult check = RunCommand({kFerry, "config", "check", config});
  EXPECT_EQ(check.err.find(kSecret), std::string::npos) << check.err;
  EXPECT_EQ(check.out.find(kSecret), std::string::npos);
  EXPECT_EQ(e2e::ReadTable(table()).rows.size(), 500u);
  unsetenv("TEST_SECRET");
}

// librdkafka 2.0.2's mock cluster speaks neither SASL nor SSL (its handlers table has no
// SaslHandshake/SaslAuthenticate and its listeners are plain TCP), so what can be shown here is
// that the security settings reach librdkafka through `properties` untouched, that its errors
// are reported, and that the SASL password stays out of every log line.
TEST_F(OpsTest, SaslAndSslPropertiesReachLibrdkafkaAndThePasswordStaysOut) {
  setenv("TEST_SECRET", kSecret, 1);
  const std::string sasl = R"(, "sasl.username" = "ferry", "sasl.password" = "${TEST_SECRET}")";
  struct Case {
    std::string properties;
    std::string expected;  // in stderr of `ferry status`
  };
  for (const Case& c : std::vector<Case>{
           {R"(, "security.protocol" = "SASL_PLAINTEXT", "sasl.mechanisms" = "PLAIN")" + sasl,
            "SASL Handshake not supported by broker (required by mechanism PLAIN)"},
           {R"(, "security.protocol" = "SASL_SSL", "sasl.mechanisms" = "SCRAM-SHA-512")" + sasl,
            "SSL handshake failed"},
           {R"(, "security.protocol" = "SASL_PLAINTEXT", "sasl.mechanisms" = "NOPE")" + sasl,
            "Unsupported SASL mechanism: NOPE"}}) {
    SCOPED_TRACE(c.properties);
    std::string config = WriteConfig("[log]\nlevel = \"debug\"\n", c.properties);
    CommandResult status = RunCommand({kFerry, "status", "--config", config});
    EXPECT_EQ(status.exit_code, 2) << status.err;
    EXPECT_NE(status.err.find(c.expected), std::string::npos) << status.err;
    EXPECT_EQ(status.err.find(kSecret), std::string::npos) << status.err;
    EXPECT_EQ(status.out.find(kSecret), std::string::npos) << status.out;
  }
  // A setting librdkafka refuses stops `ferry run` at once (exit 1), naming it.
  std::string config =
      WriteConfig("[log]\nlevel = \"debug\"\nformat = \"json\"\n",
                  R"(, "security.protocol" = "SASL_PLAINTEXT", "sasl.mechanisms" = "NOPE")" + sasl);
  CommandResult run = RunCommand({kFerry, "run", "--config", config});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("Unsupported SASL mechanism: NOPE"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("sasl.password=***"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find(kSecret), std::string::npos) << run.err;
  unsetenv("TEST_SECRET");
}

// NATS secrets at debug level, in text and JSON logs: a password and a token from ${ENV}, a
// password inside a server URL, and the JWT and seed of a creds file. Each is checked on a run
// that ingests, `ferry status` and `ferry config check`, and on the error path: the same
// commands with a wrong credential, which must fail naming the authentication problem.
struct NatsAuthCase {
  std::string name;
  std::vector<std::string> server_args;
  std::vector<std::string> produce_flags;
  std::string servers;  // the `servers` value (may hold credentials)
  std::string auth;     // TOML lines of [pipeline.jetstream]
  std::string wrong_servers;
  std::string wrong_auth;
  std::vector<std::string> secrets;  // must never appear in any output
};

class NatsSecretsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = e2e::FreshTestDir("ferry-nats-secrets", GetParam());
    setenv("TEST_NATS_SECRET", kSecret, 1);
    setenv("TEST_NATS_WRONG", kWrong, 1);
  }
  void TearDown() override {
    unsetenv("TEST_NATS_SECRET");
    unsetenv("TEST_NATS_WRONG");
    std::filesystem::remove_all(dir_);
  }

  std::string WriteConfig(const std::string& name, const std::string& servers,
                          const std::string& auth) {
    return e2e::WriteConfig(
        dir_ / (name + ".toml"),
        {{.id = "secrets",
          .table = (dir_ / ("table-" + name)).string(),
          .schema = "payload STRING",
          .metadata_columns = "",
          .source = e2e::JetStreamSection(
              {.servers = servers,
               .stream = "s",
               .subjects = {"x"},
               .extra = "connect_timeout = \"2s\"\nmax_reconnects = 0\n" + auth}),
          .sections = "[pipeline.decode]\nformat = \"raw\"\ncolumn = \"payload\"",
          .max_latency = ""}},
        fmt::format("[log]\nlevel = \"debug\"\nformat = \"{}\"", GetParam()));
  }

  // Every command's stdout and stderr, checked for the secrets.
  void ExpectNoSecrets(const NatsAuthCase& c, const CommandResult& r, const std::string& what) {
    for (const std::string& secret : c.secrets) {
      EXPECT_EQ(r.err.find(secret), std::string::npos) << c.name << " " << what << ":\n" << r.err;
      EXPECT_EQ(r.out.find(secret), std::string::npos) << c.name << " " << what << ":\n" << r.out;
    }
  }

  void Check(const NatsAuthCase& c) {
    SCOPED_TRACE(c.name);
    ferry::testing::NatsServer::Options options;
    options.extra_args = c.server_args;
    auto server = ferry::testing::NatsServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    std::string url = (*server)->url();
    std::vector<std::string> produce = {
        kFerry,      "produce", "nats",    "--server", url,          "--stream", "s",
        "--subject", "x",       "--count", "20",       "--template", "m{{seq}}", "--create-stream"};
    produce.insert(produce.end(), c.produce_flags.begin(), c.produce_flags.end());
    CommandResult p = RunCommand(produce);
    ASSERT_EQ(p.exit_code, 0) << p.err;
    auto fill = [&](const std::string& text) {
      std::string out = text;
      size_t at = out.find("HOSTPORT");
      if (at != std::string::npos) {
        out.replace(at, 8, url.substr(std::string("nats://").size()));
      }
      return out;
    };

    std::string good = WriteConfig(c.name, fill(c.servers), c.auth);
    CommandResult run = RunCommand({kFerry, "run", "--config", good, "--until-caught-up"});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find(GetParam() == "json" ? "\"level\":\"debug\"" : "DEBUG"),
              std::string::npos)
        << "debug lines were logged:\n"
        << run.err;
    ExpectNoSecrets(c, run, "run");
    EXPECT_EQ(e2e::ReadTable((dir_ / ("table-" + c.name)).string()).rows.size(), 20u);
    CommandResult status = RunCommand({kFerry, "status", "--config", good});
    EXPECT_EQ(status.exit_code, 0) << status.err;
    ExpectNoSecrets(c, status, "status");
    CommandResult check = RunCommand({kFerry, "config", "check", good});
    EXPECT_EQ(check.exit_code, 0) << check.err;
    ExpectNoSecrets(c, check, "config check");

    std::string wrong = WriteConfig(c.name + "-wrong", fill(c.wrong_servers), c.wrong_auth);
    run = RunCommand({kFerry, "run", "--config", wrong, "--until-caught-up"});
    EXPECT_NE(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("Authorization Violation"), std::string::npos) << run.err;
    ExpectNoSecrets(c, run, "failed run");
    status = RunCommand({kFerry, "status", "--config", wrong});
    EXPECT_NE(status.exit_code, 0) << status.err;
    ExpectNoSecrets(c, status, "failed status");
  }

  static constexpr char kWrong[] = "wr0ng-Ferry-a93e1";
  std::filesystem::path dir_;
};

TEST_P(NatsSecretsTest, PasswordTokenUrlAndCredsNeverAppearInLogs) {
  const std::string user = "user = \"ferry\"\n";
  Check({.name = "password",
         .server_args = {"--user", "ferry", "--pass", kSecret},
         .produce_flags = {"--user", "ferry", "--password", kSecret},
         .servers = "nats://HOSTPORT",
         .auth = user + "password = \"${TEST_NATS_SECRET}\"",
         .wrong_servers = "nats://HOSTPORT",
         .wrong_auth = user + "password = \"${TEST_NATS_WRONG}\"",
         .secrets = {kSecret, kWrong}});
  Check({.name = "token",
         .server_args = {"--auth", kSecret},
         .produce_flags = {"--token", kSecret},
         .servers = "nats://HOSTPORT",
         .auth = "token = \"${TEST_NATS_SECRET}\"",
         .wrong_servers = "nats://HOSTPORT",
         .wrong_auth = "token = \"${TEST_NATS_WRONG}\"",
         .secrets = {kSecret, kWrong}});
  Check({.name = "url",
         .server_args = {"--user", "ferry", "--pass", kSecret},
         .produce_flags = {"--user", "ferry", "--password", kSecret},
         .servers = "nats://ferry:${TEST_NATS_SECRET}@HOSTPORT",
         .auth = "",
         .wrong_servers = "nats://ferry:${TEST_NATS_WRONG}@HOSTPORT",
         .wrong_auth = "",
         .secrets = {kSecret, kWrong}});
  ferry::testing::nats_auth::TempDir keys;
  auto setup = ferry::testing::nats_auth::MakeOperatorSetup(keys, "");
  auto stranger = ferry::testing::nats_auth::MakeOperatorSetup(keys, "other-");
  ASSERT_TRUE(setup.has_value() && stranger.has_value()) << "openssl could not make the JWTs";
  // The JWT is a bearer of identity, the seed the private key: neither may be logged.
  Check({.name = "creds",
         .server_args = {"-c", setup->config},
         .produce_flags = {"--creds", setup->creds},
         .servers = "nats://HOSTPORT",
         .auth = "creds_file = \"" + setup->creds + "\"",
         .wrong_servers = "nats://HOSTPORT",
         .wrong_auth = "creds_file = \"" + stranger->creds + "\"",
         .secrets = {setup->user_jwt, setup->user_seed, stranger->user_jwt, stranger->user_seed}});
}

INSTANTIATE_TEST_SUITE_P(LogFormats, NatsSecretsTest, ::testing::Values("text", "json"));

}  // namespace
}  // namespace ferry
