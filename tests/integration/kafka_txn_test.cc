// Transactions on a real Apache Kafka broker (issue 38, proof 4), end to end with the real
// binaries. An independent transactional producer, Confluent's Python client
// (tests/kafka/txn_produce.py in the venv `make setup-kafka` makes), commits and aborts
// transactions interleaved across partitions and producers; ferry reads with its default
// isolation (read_committed, managed by ferry):
//   - the table holds exactly the committed ids, each once (ferry's reader and DuckDB), and each
//     partition's txn position steps over commit/abort markers and aborted ranges, through a
//     --until-caught-up run, a SIGKILLed run and a restart;
//   - a transaction left open holds the partition's last stable offset: --until-caught-up ends
//     there (it neither spins nor waits for the transaction), `ferry status` shows the lag the
//     open transaction holds back, and once it is aborted a new run ingests what was committed
//     behind it;
//   - isolation.level = "read_uncommitted" ingests the aborted records too.
//
// One broker serves the whole binary (WHOLE_BINARY); each test has its own topic, group and
// table. Label: integration. Needs `make setup-kafka` (the jars and the Python venv).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "kafka_broker_e2e_fixture.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"
#include <nlohmann/json.hpp>

#include "ferry/testing/cache_dir.h"
#include "ferry/testing/kafka_broker.h"

namespace ferry {
namespace {

using e2e::Ids;
using e2e::kFerry;
using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using std::chrono::seconds;

constexpr int kPartitions = 3;
constexpr char kScript[] = FERRY_SOURCE_DIR "/tests/kafka/txn_produce.py";

std::string VenvPython() {
  return ferry::testing::FerryCacheDir() + "/kafka-py-venv/bin/python";
}

class KafkaTxnTest : public e2e::KafkaBrokerE2eTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(VenvPython()))
        << VenvPython() << " is missing: run `make setup-kafka` (tools/setup_py_venv.sh)";
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    group_ = "ferry-" + name;
    UseSharedBroker("ferry-kafka-txn", "txn-" + name, kPartitions);
  }

  std::unique_ptr<ChildProcess> StartPlan(const std::string& plan) {
    auto p = ChildProcess::Start(
        {VenvPython(), kScript, "--bootstrap", brokers_, "--topic", topic_, "--plan", plan});
    EXPECT_TRUE(p.ok());
    return std::move(*p);
  }
  // Runs a plan whose transactions all end; the producer exits 0.
  void RunPlan(const std::string& plan) {
    auto p = StartPlan(plan);
    EXPECT_EQ(p->Wait(), 0) << p->Log();
  }
  void RunUntilCaughtUp(const std::string& config) {
    CommandResult r = RunCommand({kFerry, "run", "--config", config, "--until-caught-up"});
    ASSERT_EQ(r.exit_code, 0) << r.err << BrokerLog();
  }
  std::string BrokerLog() const { return "\nKafka broker log:\n" + broker_->Log(40); }
};

// Committed ids are 1..300, aborted ones 1001..1300. Two producers interleave their transactions
// in the partitions' logs; every partition ends with markers (a commit's or an abort's) after
// its last committed record, so its txn position is never the broker's last offset.
TEST_F(KafkaTxnTest, OnlyCommittedTransactionsAreIngestedThroughAKillAndRestart) {
  std::string config = WriteConfig();
  RunPlan(
      "A begin; A send 0 1-50; B begin; B send 0 1001-1050; A send 1 51-100; B send 1 1051-1100;"
      "A commit; B send 2 1101-1150; B abort");
  RunUntilCaughtUp(config);  // ends although every partition's last offsets are markers
  ExpectIds(Ids(1, 100));

  RunPlan(
      "B begin; B send 2 101-150; A begin; A send 0 1151-1200; B send 0 151-200; A abort;"
      "B commit");
  auto ferry = StartFerry(config);
  ASSERT_EQ(WaitForRows(200), 200u) << ferry->Log() << BrokerLog();
  ASSERT_EQ(kill(ferry->pid(), SIGKILL), 0);
  EXPECT_EQ(ferry->Wait(), 128 + SIGKILL);

  RunPlan(
      "A begin; A send 1 201-250; B begin; B send 1 1201-1250; A send 2 251-300; B abort;"
      "A commit; B begin; B send 0 1251-1300; B abort");
  RunUntilCaughtUp(config);  // resumes after positions followed by markers and aborted ranges
  ExpectIds(Ids(1, 300));
}

// A transaction of producer B stays open on partition 0 after 20 committed ids; A's ids 21..40,
// committed after B began, sit behind B's records, beyond the last stable offset.
TEST_F(KafkaTxnTest, OpenTransactionHoldsTheLastStableOffset) {
  std::string config = WriteConfig();
  auto producer = StartPlan(
      "A begin; A send 0 1-20; A commit; B begin; B send 0 1001-1010; A begin; A send 0 21-40;"
      "A commit");
  Result<std::string> ready = producer->ReadLine(std::chrono::milliseconds(60000));
  ASSERT_TRUE(ready.ok() && *ready == "ready") << ready.status().ToString() << producer->Log();

  RunUntilCaughtUp(config);  // ends at the last stable offset, B's first record
  ExpectIds(Ids(1, 20));

  // `ferry status` compares the table's position with the high watermark: B's open records
  // and A's records behind them (and the markers) are lag ferry cannot take yet.
  CommandResult status = RunCommand({kFerry, "status", "--config", config, "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  std::istringstream lines(status.out);
  std::string line;
  bool seen = false;
  while (std::getline(lines, line)) {
    nlohmann::json row = nlohmann::json::parse(line);
    if (row["partition"] != fmt::format("kafka/{}/0", topic_)) {
      continue;
    }
    seen = true;
    // Offsets: 0-19 A, 20 A's commit marker, 21-30 B (open), 31-50 A, 51 A's commit marker.
    EXPECT_EQ(row["position"], 19) << line;
    EXPECT_EQ(row["head"], 51) << line;
    EXPECT_EQ(row["lag"], 32) << line;
  }
  EXPECT_TRUE(seen) << status.out;

  ASSERT_EQ(kill(producer->pid(), SIGTERM), 0);  // B aborts
  EXPECT_EQ(producer->Wait(), 0) << producer->Log();
  RunUntilCaughtUp(config);
  ExpectIds(Ids(1, 40));
}

// isolation.level = "read_uncommitted" (allowed, docs/kafka.md): the aborted ids are ingested
// too. This is what breaks exactly-once for aborted data; --until-caught-up still ends.
TEST_F(KafkaTxnTest, ReadUncommittedIngestsAbortedTransactionsToo) {
  std::string config = WriteConfig({}, R"(, "isolation.level" = "read_uncommitted")");
  RunPlan(
      "A begin; A send 0 1-10; B begin; B send 0 1001-1010; A send 1 11-20; A commit;"
      "B send 1 1011-1020; B abort");
  RunUntilCaughtUp(config);
  std::vector<int64_t> expected = Ids(1, 20);
  for (int64_t id : Ids(1001, 1020)) {
    expected.push_back(id);
  }
  ExpectIds(expected);
}

}  // namespace
}  // namespace ferry
