#include "kafka_torture_source.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "config_toml.h"
#include "pipeline_e2e_support.h"

namespace ferry::fault {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int64_t kFirstBadId = 1'000'000'000;  // numbers of bad records (keys, payloads)

}  // namespace

Result<std::map<int32_t, int64_t>> GroupOffsets(const std::string& brokers,
                                                const std::string& group, const std::string& topic,
                                                int partitions) {
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
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int32_t p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p);
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

std::string KafkaTortureSource::MetadataColumns() const {
  return R"(offset = "_offset", partition = "_partition")";
}

std::string KafkaTortureSource::SourceSection(const std::string& run) const {
  // A short session by default: a SIGKILLed member's partitions move after 3 s, not 10.
  // (Shorter sessions, or a max.poll.interval.ms of 8 s, made the mock's JoinGroup time out
  // and retry every 11 s without ever completing, even for a fresh group.)
  return e2e::KafkaSection(
      {.brokers = options_.brokers,
       .topics = {kKafkaTortureTopic},
       .group_id = Group(run),
       .properties = fmt::format(R"("session.timeout.ms" = "{}", "heartbeat.interval.ms" = "300", )"
                                 R"("topic.metadata.refresh.interval.ms" = "1000")",
                                 options_.session_ms)});
}

std::string KafkaTortureSource::Group(const std::string& run) const {
  return run.empty() ? options_.group : options_.group + "-" + run;
}

std::vector<std::string> KafkaTortureSource::ProducerArgs(int64_t first, int64_t count,
                                                          int64_t rate,
                                                          const std::string& templ) const {
  return KafkaProducerArgs(options_.brokers, kKafkaTortureTopic, first, count, rate, templ,
                           options_.producer_extra);
}

std::vector<std::unique_ptr<Process>> KafkaTortureSource::StartProducers(int64_t first,
                                                                         int64_t count,
                                                                         int64_t rate,
                                                                         const std::string& log) {
  std::vector<std::unique_ptr<Process>> out;
  auto p = Process::Start(ProducerArgs(first, count, rate, kKafkaTortureTemplate), {}, log);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (p.ok()) {
    out.push_back(std::move(*p));
  }
  return out;
}

bool KafkaTortureSource::Produce(int64_t first, int64_t count, const std::string& log) {
  return RunToExit(ProducerArgs(first, count, 0, kKafkaTortureTemplate), {}, log) == 0;
}

bool KafkaTortureSource::ProduceBad(int64_t count, const std::string& log) {
  bad_ += count;
  return RunToExit(ProducerArgs(kFirstBadId + bad_ - count + 1, count, 0, "not json #{{seq}}"), {},
                   log) == 0;
}

void KafkaTortureSource::CheckBrokerPositions(const TableLocation& table, const std::string& run,
                                              const std::string& what) {
  auto offsets =
      GroupOffsets(options_.brokers, Group(run), kKafkaTortureTopic, options_.partitions);
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
    auto txn = txns.find(fmt::format("torture/kafka/{}/{}", kKafkaTortureTopic, p));
    ASSERT_TRUE(txn != txns.end()) << what << ": partition " << p << " has group offset "
                                   << committed << " but the table holds no position for it";
    EXPECT_LE(committed, txn->second + 1)
        << what << ": partition " << p << " group offset " << committed
        << " is past the table's position " << txn->second;
  }
}

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
  // A reader no one here wrote: DuckDB counts the rows and distinct ids of the live files
  // (copied out of an object store through the harness's store).
  Result<std::vector<std::string>> files = LocalLiveFiles(table, (dir / "live-files").string());
  EXPECT_TRUE(files.ok()) << files.status().ToString();
  if (files.ok()) {
    EXPECT_FALSE(files->empty());
    e2e::ExpectDuckDbCounts(*files, "id", static_cast<size_t>(messages));
  }
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

}  // namespace ferry::fault
