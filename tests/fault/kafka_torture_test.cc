// The torture harness on Kafka (librdkafka's mock cluster in a `ferry mock-kafka` child, three
// brokers, one 32-partition topic): the scenario of torture_scenario.h with broker outages,
// injected request errors and leader moves, and the group offsets checked after every
// failpoint step; then three ferry processes in one group killed, stopped and restarted at
// random (rebalances) beside an optimize loop. Each id exactly once, by `ferry verify`.
// Label: fault. Long form: `make torture` (docs/RELIABILITY.md).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "config_toml.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"
#include "s3_torture_store.h"
#include "torture_scenario.h"
#include "torture_support.h"

namespace ferry::fault {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::StartMockKafka;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kPartitions = 32;
constexpr char kTopic[] = "events";
constexpr char kGroup[] = "ferry-torture";
constexpr int64_t kBadIds = 1'000'000'000;  // numbers of bad records (keys, payloads)
constexpr char kTemplate[] = R"({"id": {{seq}}, "payload": "test #{{seq}}"})";
// radosgw's in-memory OSD for the S3 runs: room for the long form's tables and the files
// optimize replaced (nothing is vacuumed).
constexpr int64_t kMemstoreBytes = int64_t{2} << 30;

// The group's committed offsets of every partition (RD_KAFKA_OFFSET_INVALID when none), read
// by a consumer that never joins the group.
Result<std::map<int32_t, int64_t>> GroupOffsets(const std::string& brokers,
                                                const std::string& group) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", brokers.c_str(), err, sizeof(err));
  rd_kafka_conf_set(conf, "group.id", group.c_str(), err, sizeof(err));
  rd_kafka_conf_set(conf, "log_level", "0", err, sizeof(err));
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Internal("rd_kafka_new: {}", err);
  }
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(kPartitions);
  for (int32_t p = 0; p < kPartitions; ++p) {
    rd_kafka_topic_partition_list_add(list, kTopic, p);
  }
  rd_kafka_resp_err_t e = rd_kafka_committed(rk, list, 15000);
  std::map<int32_t, int64_t> out;
  for (int i = 0; i < list->cnt; ++i) {
    out[list->elems[i].partition] = list->elems[i].offset;
  }
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_destroy(rk);
  if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable("committed(): {}", rd_kafka_err2str(e));
  }
  return out;
}

class KafkaTortureSource : public TortureSource {
 public:
  // `session_ms`: the consumers' session.timeout.ms (kGroupSessionMs for several processes).
  KafkaTortureSource(ChildProcess* mock, std::string brokers, std::string group,
                     int session_ms = 3000)
      : mock_(mock),
        brokers_(std::move(brokers)),
        group_(std::move(group)),
        session_ms_(session_ms) {}

  std::string name() const override { return "kafka"; }
  std::string MetadataColumns() const override {
    return R"(offset = "_offset", partition = "_partition")";
  }
  std::string SourceSection(const std::string& run) const override {
    // A short session by default: a SIGKILLed member's partitions move after 3 s, not 10.
    // (Shorter sessions, or a max.poll.interval.ms of 8 s, made the mock's JoinGroup time out
    // and retry every 11 s without ever completing, even for a fresh group.)
    return e2e::KafkaSection(
        {.brokers = brokers_,
         .topics = {kTopic},
         .group_id = Group(run),
         .properties =
             fmt::format(R"("session.timeout.ms" = "{}", "heartbeat.interval.ms" = "300", )"
                         R"("topic.metadata.refresh.interval.ms" = "1000")",
                         session_ms_)});
  }
  std::string Group(const std::string& run) const {
    return run.empty() ? group_ : group_ + "-" + run;
  }
  std::vector<std::string> ProducerArgs(int64_t first, int64_t count, int64_t rate,
                                        const std::string& templ) const {
    // A linger of 100 ms: librdkafka 2.0.2's mock answers a Fetch with one record batch per
    // partition, so at the default 5 ms a rate-limited producer's batches of one to three records
    // made the catch-up after the kill loop crawl (~300 rows/s into S3, which kept the long form
    // on S3 from finishing in an hour). What is tested does not depend on the batch size.
    return KafkaProducerArgs(brokers_, kTopic, first, count, rate, templ, {"-X", "linger.ms=100"});
  }
  std::vector<std::unique_ptr<Process>> StartProducers(int64_t first, int64_t count, int64_t rate,
                                                       const std::string& log) override {
    std::vector<std::unique_ptr<Process>> out;
    auto p = Process::Start(ProducerArgs(first, count, rate, kTemplate), {}, log);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    if (p.ok()) {
      out.push_back(std::move(*p));
    }
    return out;
  }
  bool Produce(int64_t first, int64_t count, const std::string& log) override {
    return RunToExit(ProducerArgs(first, count, 0, kTemplate), {}, log) == 0;
  }
  bool ProduceBad(int64_t count, const std::string& log) override {
    bad_ += count;
    return RunToExit(ProducerArgs(kBadIds + bad_ - count + 1, count, 0, "not json #{{seq}}"), {},
                     log) == 0;
  }
  int BrokerFaults(Process* ferry, const TableLocation& table, int64_t first, int64_t count,
                   const std::string& log) override {
    int faults = 0;
    const int64_t half = count / 2;
    EXPECT_TRUE(Produce(first, half, log));
    for (const char* errors :
         {"errors Fetch 5 NOT_LEADER_FOR_PARTITION", "errors OffsetCommit 5 REQUEST_TIMED_OUT",
          "errors Metadata 3 _TRANSPORT", "errors Fetch 3 _TRANSPORT"}) {
      EXPECT_EQ(Control(errors), "ok") << errors;
      ++faults;
    }
    WaitForNewVersion(table, ferry, seconds(60));
    EXPECT_EQ(Control("down all"), "ok");
    std::this_thread::sleep_for(seconds(3));
    EXPECT_EQ(Control("up all"), "ok");
    ++faults;
    EXPECT_EQ(Control("leader events 0 2"), "ok");
    EXPECT_EQ(Control("leader events 1 3"), "ok");
    ++faults;
    // One broker down while the producer sends: its partitions wait until it is back.
    EXPECT_EQ(Control("down 1"), "ok");
    auto producer = Process::Start(ProducerArgs(first + half, count - half, 0, kTemplate), {}, log);
    EXPECT_TRUE(producer.ok());
    std::this_thread::sleep_for(seconds(2));
    EXPECT_EQ(Control("up 1"), "ok");
    ++faults;
    if (producer.ok()) {
      EXPECT_EQ((*producer)->Wait(), 0) << Tail(log);
    }
    WaitForNewVersion(table, ferry, seconds(60));
    return faults;
  }
  void CheckBrokerPositions(const TableLocation& table, const std::string& run,
                            const std::string& what) override {
    auto offsets = GroupOffsets(brokers_, Group(run));
    if (!offsets.ok()) {
      // The coordinator may be busy; the next step checks again.
      fmt::print("torture kafka: group offsets after {}: {}\n", what, offsets.status().ToString());
      return;
    }
    Result<std::map<std::string, int64_t>> positions = TablePositions(table);
    ASSERT_TRUE(positions.ok()) << what << ": " << positions.status().ToString();
    const std::map<std::string, int64_t>& txns = *positions;
    for (const auto& [p, committed] : *offsets) {
      if (committed < 0) {
        continue;  // nothing committed to the group for this partition
      }
      auto txn = txns.find(fmt::format("torture/kafka/{}/{}", kTopic, p));
      ASSERT_TRUE(txn != txns.end()) << what << ": partition " << p << " has group offset "
                                     << committed << " but the table holds no position for it";
      EXPECT_LE(committed, txn->second + 1)
          << what << ": partition " << p << " group offset " << committed
          << " is past the table's position " << txn->second;
    }
  }

 private:
  std::string Control(const std::string& command) {
    EXPECT_TRUE(mock_->WriteLine(command).ok());
    auto answer = mock_->ReadLine(milliseconds(10000));
    return answer.ok() ? *answer : answer.status().ToString();
  }

  ChildProcess* mock_;
  const std::string brokers_;
  const std::string group_;
  const int session_ms_;
  int64_t bad_ = 0;
};

class KafkaTortureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    settings_ = TortureSettings::FromEnv(/*default_messages=*/15000, /*default_kills=*/20);
    dir_ = e2e::FreshTestDir("ferry-torture-kafka");
    auto mock = StartMockKafka(kFerry, 3, {fmt::format("{}:{}", kTopic, kPartitions)});
    ASSERT_TRUE(mock.ok()) << mock.status().ToString();
    mock_ = std::move(mock->child);
    brokers_ = mock->bootstrap;
    watchdog_ = std::make_unique<Watchdog>("ferry mock-kafka",
                                           [mock = mock_.get()] { return mock->ExitReport(); });
  }
  void TearDown() override {
    watchdog_.reset();
    mock_.reset();
    if (settings_.keep) {
      fmt::print("kept {}\n", dir_.string());
    } else {
      std::filesystem::remove_all(dir_);
    }
  }

  TortureSettings settings_;
  std::filesystem::path dir_;
  std::unique_ptr<ChildProcess> mock_;
  std::string brokers_;
  std::unique_ptr<Watchdog> watchdog_;  // after mock_: stops watching before it goes
};

TEST_F(KafkaTortureTest, KillsBrokerFaultsAndEveryFailpoint) {
  KafkaTortureSource source(mock_.get(), brokers_, kGroup);
  Figures figures;
  RunTortureScenario(&source, settings_, dir_.string(), LocalTortureTables(dir_.string()),
                     &figures);
  fmt::print("{}\n", FiguresLine(figures));
}

// The same scenario into tables on S3 (radosgw), ferry reaching it through a proxy that breaks
// requests, plus the store-fault phase (s3_torture_store.h): 503 SlowDown, resets, stalled
// uploads, the gateway stopped and restarted while ferry runs.
TEST_F(KafkaTortureTest, KillsBrokerAndStoreFaultsAndEveryFailpointOnS3) {
  auto store = S3TortureStore::Start(settings_.seed, kMemstoreBytes);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  KafkaTortureSource source(mock_.get(), brokers_, kGroup);
  Figures figures;
  RunTortureScenario(&source, settings_.ForObjectStore(), dir_.string(),
                     {.table = (*store)->Table("table"),
                      .dead = (*store)->Table("dead"),
                      .store_faults = store->get(),
                      .suffix = "-s3"},
                     &figures);
  fmt::print("{}\n", FiguresLine(figures));
}

// N processes in one group writing `table`: each incarnation killed (SIGKILL: its partitions
// move after the session timeout) or stopped (SIGTERM: it leaves the group at once) at random,
// then started again, so the group rebalances all the time; an optimize loop commits beside
// them. Each process runs in a directory of its own (its working directory, TMPDIR and
// configuration), as on hosts of their own. Each id once, by `ferry verify`.
void RunGroupOfProcesses(const TortureSettings& settings, const std::filesystem::path& dir,
                         KafkaTortureSource* source, const TableLocation& table, size_t processes,
                         const std::string& label) {
  // Half the scenario's ids, at most 100,000: catching up from the mock cluster runs at only a
  // few thousand rows per second here (docs/RELIABILITY.md), and the kills are the point.
  const int64_t messages = std::clamp<int64_t>(settings.messages / 2, 4000, 100000);
  const int kills = std::max(6, settings.kills / 2);
  std::mt19937_64 rng(settings.seed + 1);
  fmt::print(
      "torture {}: seed={} messages={} kills={} table={} (rerun with FERRY_TORTURE_SEED={})\n",
      label, settings.seed, messages, kills, table.uri(), settings.seed);
  const std::string logs = (dir / "logs").string();
  std::filesystem::create_directories(logs);
  std::vector<std::string> homes(processes);
  std::vector<std::string> configs(processes);
  for (size_t i = 0; i < processes; ++i) {
    homes[i] = (dir / fmt::format("process-{}", i)).string();
    std::filesystem::create_directories(homes[i] + "/tmp");
    configs[i] = homes[i] + "/group.toml";
    e2e::WriteConfig(configs[i], {{.id = "torture",
                                   .table = table.uri(),
                                   .schema = "id BIGINT NOT NULL, payload STRING",
                                   .metadata_columns = source->MetadataColumns(),
                                   .source = source->SourceSection(""),
                                   .max_rows = 500}});
  }
  const auto start = std::chrono::steady_clock::now();
  auto producers = source->StartProducers(
      1, messages, std::max<int64_t>(200, messages / (kills * 2)), logs + "/producer.log");
  OptimizeLoop optimize(table, logs + "/optimize.log", milliseconds(2000));
  std::vector<std::unique_ptr<Process>> ferries(processes);
  std::vector<std::string> ferry_logs(processes);
  int incarnation = 0;
  auto start_ferry = [&](size_t i) {
    ferry_logs[i] = fmt::format("{}/ferry-{}-{}.log", logs, i, incarnation++);
    std::vector<std::string> env = table.env();
    env.push_back("TMPDIR=" + homes[i] + "/tmp");
    auto p = Process::Start(table.WithFlags({kFerry, "run", "--config", configs[i]}), env,
                            ferry_logs[i], homes[i]);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ferries[i] = std::move(*p);
  };
  // The mock coordinator (librdkafka 2.0.2) can livelock a group when a member dies in the
  // middle of a JoinGroup (torture_scenario.cc), so the next victim is chosen only after the
  // restarted process was given its partitions: the rebalance its start caused is over.
  auto wait_assigned = [&](size_t i) {
    WaitUntilReading(ferries[i].get(), ferry_logs[i], seconds(60));
  };
  for (size_t i = 0; i < ferries.size(); ++i) {
    ASSERT_NO_FATAL_FAILURE(start_ferry(i));
  }
  for (size_t i = 0; i < ferries.size(); ++i) {
    wait_assigned(i);
  }
  int sigkills = 0;
  int sigterms = 0;
  for (int k = 0; k < kills; ++k) {
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(300, 2500)(rng)));
    const size_t victim = rng() % ferries.size();
    const bool hard = rng() % 4 != 0;
    ASSERT_TRUE(ferries[victim]->Running()) << "ferry " << victim << " exited on its own:\n"
                                            << Tail(ferry_logs[victim]);
    ferries[victim]->Signal(hard ? SIGKILL : SIGTERM);
    EXPECT_EQ(ferries[victim]->Wait(), hard ? 128 + SIGKILL : 0) << Tail(ferry_logs[victim]);
    (hard ? sigkills : sigterms)++;
    std::this_thread::sleep_for(milliseconds(std::uniform_int_distribution<int>(0, 1000)(rng)));
    ASSERT_NO_FATAL_FAILURE(start_ferry(victim));
    wait_assigned(victim);
  }
  for (auto& producer : producers) {
    EXPECT_EQ(producer->Wait(), 0) << Tail(logs + "/producer.log");
  }
  // Every member took part: each process's log names partitions it was assigned.
  for (size_t i = 0; i < processes; ++i) {
    EXPECT_NE(ReadFile(ferry_logs[i]).find(" starts at "), std::string::npos)
        << "process " << i << " was never assigned a partition:\n"
        << Tail(ferry_logs[i]);
  }
  for (size_t i = 0; i < ferries.size(); ++i) {
    ferries[i]->Signal(SIGTERM);
  }
  for (size_t i = 0; i < ferries.size(); ++i) {
    EXPECT_EQ(ferries[i]->Wait(), 0) << Tail(ferry_logs[i]);
  }
  const int optimize_runs = optimize.Stop();
  EXPECT_EQ(RunToExit(table.WithFlags({kFerry, "run", "--config", configs[0], "--until-caught-up"}),
                      table.env(), logs + "/final.log"),
            0)
      << Tail(logs + "/final.log");
  VerifyResult v = Verify(table, messages);
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_EQ(v.rows, messages) << v.output;
  EXPECT_EQ(v.duplicates, 0) << v.output;
  EXPECT_EQ(v.missing, 0) << v.output;
  EXPECT_EQ(v.position_mismatches, 0) << v.output;
  Figures figures{
      .source = label,
      .kills = sigkills + sigterms,
      .optimize_runs = optimize_runs,
      .messages = messages,
      .verify = v,
      .wall_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
      .seed = settings.seed};
  fmt::print("{} (SIGKILL {}, SIGTERM {})\n", FiguresLine(figures), sigkills, sigterms);
}

// The session of the consumers of a group of processes. The mock coordinator of librdkafka 2.0.2
// (i) keeps a member alive only by heartbeats that succeed, none of which do while the group
// rebalances, so a live process slow to hand back its partitions (it commits its open batch
// first, and the machine is loaded) loses its membership after one session; (ii) names a new
// member by the address of its struct, so the next member to join may get the lost member's id;
// (iii) when the slow process then rejoins with that id while the new member's JoinGroup is
// pending, aborts: rdkafka_mock_cgrp.c:567 `!member->resp` (2 of 18 runs at 3 s;
// FERRY_MOCK_KAFKA_DEBUG=mock,cgrp shows the ids reused). Kafka names members by UUID and gives
// a rebalancing member the rebalance timeout. A session of 10 s (ferry's default) gives a slow
// revocation 10 s instead of 3 before the mock can hand its id to another member.
constexpr int kGroupSessionMs = 10000;

TEST_F(KafkaTortureTest, ThreeProcessesInOneGroupWithKillsAndRebalances) {
  KafkaTortureSource source(mock_.get(), brokers_, "ferry-torture-group", kGroupSessionMs);
  RunGroupOfProcesses(settings_, dir_, &source, TableLocation::Local((dir_ / "table").string()), 3,
                      "kafka-group-of-3");
}

// Two processes, each in a directory of its own, writing one table on S3 (radosgw): nothing
// but the store and the consumer group joins them.
TEST_F(KafkaTortureTest, TwoProcessesInOneGroupWithKillsAndRebalancesOnS3) {
  auto store = S3TortureStore::Start(settings_.seed, kMemstoreBytes);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  KafkaTortureSource source(mock_.get(), brokers_, "ferry-torture-group", kGroupSessionMs);
  RunGroupOfProcesses(settings_, dir_, &source, (*store)->Table("table"), 2, "kafka-s3-group-of-2");
}

}  // namespace
}  // namespace ferry::fault
