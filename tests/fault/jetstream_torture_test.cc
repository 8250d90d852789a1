// The torture harness on JetStream (a real nats-server on a free port, file storage, one stream
// with two subject filters): the scenario of torture_scenario.h, with the server SIGKILLed and
// restarted on its store while ferry runs. Each id exactly once, by `ferry verify`. The local
// scenario runs on Debian's 2.9.10 and on the pinned current release (TestedNatsServers()).
// Two processes on one filter are covered by jetstream_pipeline_test
// (TwoProcessesOnOneFilterAreFencedNotDuplicated); the elastic mode (jetstream_elastic_torture.h:
// processes on 16 partitions SIGKILLed, SIGSTOPped past their leases, joining and leaving) runs
// on every tested server into a local table, and on the default server into an S3 table.
// Label: fault. Long form: `make torture` (docs/RELIABILITY.md).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "azure_torture_store.h"
#include "config_toml.h"
#include "gcs_torture_store.h"
#include "jetstream_elastic_torture.h"
#include "jetstream_test_client.h"
#include "pipeline_e2e_support.h"
#include "s3_torture_store.h"
#include "torture_scenario.h"
#include "torture_support.h"

#include "ferry/testing/nats_server.h"

namespace ferry::fault {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kStream[] = "torture";
constexpr char kTemplate[] = R"({"id": {{seq}}, "payload": "test #{{seq}}"})";
constexpr int64_t kBadIds = 1'000'000'000;  // numbers of bad records (their Nats-Msg-Id)

class JetStreamTortureSource : public TortureSource {
 public:
  explicit JetStreamTortureSource(testing::NatsServer* server) : server_(server) {}

  std::string name() const override { return "jetstream"; }
  std::string MetadataColumns() const override {
    return R"(sequence = "_sequence", subject = "_subject")";
  }
  std::string SourceSection(const std::string& /*run*/) const override {
    return e2e::JetStreamSection({.servers = server_->url(),
                                  .stream = kStream,
                                  .subjects = {"torture.a", "torture.b"},
                                  .start = "all",
                                  .extra = R"(reconnect_wait = "200ms")"});
  }
  std::vector<std::string> ProducerArgs(const std::string& subject, int64_t first, int64_t count,
                                        int64_t rate, const std::string& templ) const {
    return NatsProducerArgs(server_->url(), kStream, subject, first, count, rate, templ);
  }
  // Ids first..first+count-1: the lower half on torture.a, the upper half on torture.b.
  std::vector<std::unique_ptr<Process>> StartProducers(int64_t first, int64_t count, int64_t rate,
                                                       const std::string& log) override {
    std::vector<std::unique_ptr<Process>> out;
    const int64_t half = count / 2;
    for (auto [subject, from, n] :
         {std::tuple<const char*, int64_t, int64_t>{"torture.a", first, half},
          {"torture.b", first + half, count - half}}) {
      auto p = Process::Start(
          ProducerArgs(subject, from, n, std::max<int64_t>(1, rate / 2), kTemplate), {}, log);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      if (p.ok()) {
        out.push_back(std::move(*p));
      }
    }
    return out;
  }
  bool Produce(int64_t first, int64_t count, const std::string& log) override {
    const int64_t half = count / 2;
    return Publish("torture.a", first, half, kTemplate, log) &&
           Publish("torture.b", first + half, count - half, kTemplate, log);
  }
  bool ProduceBad(int64_t count, const std::string& log) override {
    bad_ += count;
    return Publish("torture.b", kBadIds + bad_ - count + 1, count, "not json #{{seq}}", log);
  }
  int BrokerFaults(Process* ferry, const TableLocation& table, int64_t first, int64_t count,
                   const std::string& log) override {
    int faults = 0;
    // A third of the ids before the faults and a third after each restart, so that every wait
    // for a new table version has something to commit (a wait with nothing to ingest would sit
    // out its whole limit).
    const int64_t third = count / 3;
    EXPECT_TRUE(Produce(first, third, log));
    WaitForNewVersion(table, ferry, seconds(60));
    for (int round = 0; round < 2; ++round) {
      // Give the server a moment to write what it acknowledged before it is killed: the test is
      // about ferry, not about the server's own durability on SIGKILL.
      std::this_thread::sleep_for(seconds(1));
      EXPECT_TRUE(server_->Kill9().ok());
      std::this_thread::sleep_for(seconds(1));
      Status restarted = server_->Restart();
      EXPECT_TRUE(restarted.ok()) << restarted.ToString() << "\n" << server_->Log();
      ++faults;
      const int64_t from = first + third * (round + 1);
      EXPECT_TRUE(Produce(from, round == 0 ? third : first + count - from, log));
      WaitForNewVersion(table, ferry, seconds(60));
    }
    return faults;
  }
  void CheckBrokerPositions(const TableLocation&, const std::string&, const std::string&) override {
    // ferry's JetStream consumer is an ordered consumer without acks: the server holds no
    // position of ferry's to check.
  }

 private:
  // A publish that fails while the server comes back is retried; --msg-id drops the repeats.
  bool Publish(const std::string& subject, int64_t first, int64_t count, const std::string& templ,
               const std::string& log) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (RunToExit(ProducerArgs(subject, first, count, 0, templ), {}, log) == 0) {
        return true;
      }
      std::this_thread::sleep_for(seconds(1));
    }
    return false;
  }

  testing::NatsServer* server_;
  int64_t bad_ = 0;
};

class JetStreamTortureTest : public ::testing::Test {
 protected:
  // The nats-server to run (a name of TestedNatsServers()); empty: the run's default.
  virtual std::string ServerName() const { return ""; }

  void SetUp() override {
    settings_ = TortureSettings::FromEnv(/*default_messages=*/15000, /*default_kills=*/20);
    ASSERT_NO_FATAL_FAILURE(e2e::StartNatsServer(&server_, &client_, ServerName()));
    if (IsSkipped()) {
      return;
    }
    ASSERT_TRUE(client_->AddStream({.name = kStream, .subjects = {"torture.>"}}).ok());
    dir_ = e2e::FreshTestDir("ferry-torture-jetstream");
    watchdog_ = std::make_unique<Watchdog>(
        "nats-server", [server = server_.get()] { return server->ExitReport(); });
  }
  void TearDown() override {
    watchdog_.reset();
    client_.reset();
    server_.reset();
    if (settings_.keep) {
      fmt::print("kept {}\n", dir_.string());
    } else if (!dir_.empty()) {
      std::filesystem::remove_all(dir_);
    }
  }

  TortureSettings settings_;
  std::unique_ptr<testing::NatsServer> server_;
  std::unique_ptr<testing::JetStreamTestClient> client_;
  std::filesystem::path dir_;
  std::unique_ptr<Watchdog> watchdog_;  // after server_: stops watching before it goes
};

// The local scenario on every tested server: in full on Debian's, and on the current release
// (short form) with a third of the ids, a quarter of the kills and without the failpoint steps,
// which test ferry's own steps (TortureSettings::ForAnotherServer). The object-store variants below
// add store faults, not server behaviour, and run on the default server only.
class JetStreamServersTortureTest : public JetStreamTortureTest,
                                    public ::testing::WithParamInterface<std::string> {
 protected:
  std::string ServerName() const override { return GetParam(); }
};

TEST_P(JetStreamServersTortureTest, KillsServerRestartsAndEveryFailpoint) {
  JetStreamTortureSource source(server_.get());
  Figures figures;
  RunTortureScenario(
      &source, GetParam() == testing::kDebianNatsServer ? settings_ : settings_.ForAnotherServer(),
      dir_.string(), LocalTortureTables(dir_.string()), &figures);
  fmt::print("{}\n", FiguresLine(figures));
}

INSTANTIATE_TEST_SUITE_P(Servers, JetStreamServersTortureTest,
                         ::testing::ValuesIn(testing::TestedNatsServers()),
                         testing::NatsServerParamName());

// The elastic mode: processes sharing 16 partitions through leases, SIGKILLed, SIGSTOPped past
// their leases, leaving and joining (jetstream_elastic_torture.h); every id once by `ferry verify`.
// On every tested server: in full on Debian's, and on the current release with the short form of
// TortureSettings::ForAnotherServer (4,000 ids, 10 events).
TEST_P(JetStreamServersTortureTest, ElasticProcessesKilledStoppedJoiningAndLeaving) {
  ASSERT_TRUE(client_->AddStream({.name = "elastic", .subjects = {"elastic.>"}}).ok());
  RunElasticProcesses(
      GetParam() == testing::kDebianNatsServer ? settings_ : settings_.ForAnotherServer(), dir_,
      server_->url(), "elastic", TableLocation::Local((dir_ / "elastic-table").string()),
      "jetstream-elastic-" + GetParam());
}

// The elastic mode into an S3 table on radosgw, the processes reaching it through the fault
// proxy relaying everything (the store faults are the scenario's below; here the kills, pauses,
// joins and leaves of processes that share one table on an object store, where each commit is a
// conditional PutObject). The short form with half the events (TortureSettings::ForObjectStore).
TEST_F(JetStreamTortureTest, ElasticProcessesOnS3KilledStoppedJoiningAndLeaving) {
  ASSERT_TRUE(client_->AddStream({.name = "elastic", .subjects = {"elastic.>"}}).ok());
  // radosgw's in-memory OSD: room for the long form's 200,000 ids and the files optimize replaced.
  auto store = S3TortureStore::Start(settings_.seed, int64_t{1} << 30);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  RunElasticProcesses(settings_.ForObjectStore(), dir_, server_->url(), "elastic",
                      (*store)->Table("elastic"), "jetstream-elastic-s3");
}

// The same scenario into tables on S3 (radosgw), ferry reaching it through a proxy that breaks
// requests, plus the store-fault phase (s3_torture_store.h): 503 SlowDown, resets, stalled
// uploads, the gateway stopped and restarted while ferry runs.
TEST_F(JetStreamTortureTest, KillsServerRestartsStoreFaultsAndEveryFailpointOnS3) {
  // radosgw's in-memory OSD: room for the long form's tables and the files optimize replaced.
  auto store = S3TortureStore::Start(settings_.seed, int64_t{2} << 30);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  JetStreamTortureSource source(server_.get());
  RunTortureScenarioOnStore(&source, settings_, dir_, store->get(), "-s3");
}

// The same scenario into tables on Azure Blob Storage (Azurite), ferry reaching it through the
// proxy in Azure's dialect (azure_torture_store.h): 503 ServerBusy, resets, stalled uploads, the
// account unreachable for a while.
TEST_F(JetStreamTortureTest, KillsServerRestartsStoreFaultsAndEveryFailpointOnAzure) {
  // Azurite's memory cap: room for the long form's tables and the files optimize replaced.
  auto store = AzureTortureStore::Start(settings_.seed, /*memory_limit_mb=*/2048);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  JetStreamTortureSource source(server_.get());
  RunTortureScenarioOnStore(&source, settings_, dir_, store->get(), "-azure");
}

// The same scenario into tables on GCS (fake-gcs-server), ferry reaching it through the proxy in
// GCS's dialect (gcs_torture_store.h): 503 backendError, resets, stalled uploads, the bucket
// unreachable for a while.
TEST_F(JetStreamTortureTest, KillsServerRestartsStoreFaultsAndEveryFailpointOnGcs) {
  auto store = GcsTortureStore::Start(settings_.seed);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  JetStreamTortureSource source(server_.get());
  RunTortureScenarioOnStore(&source, settings_, dir_, store->get(), "-gcs");
}

}  // namespace
}  // namespace ferry::fault
