// `ferry run` and the table commands on a gs:// table, end to end with the real binaries, the mock
// Kafka cluster and fake-gcs-server, configured the way users of Google's client libraries are:
// STORAGE_EMULATOR_HOST alone, no [storage] table.
//   - a table ferry wrote is read back by clients no one here wrote: Google's google-cloud-storage
//     Python client lists and downloads it (checking each object's stored checksum), then
//     ferry's reader and DuckDB read it row for row; `verify` and `table inspect` on its URI;
//   - a store that ignores `ifGenerationMatch` (the fault proxy strips it from every request) is
//     refused before anything is written, naming the store and the precondition.
// One emulator serves the whole binary (one ctest test: WHOLE_BINARY).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "config_toml.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"
#include "store_fault_proxy.h"
#include <nlohmann/json.hpp>

#include "ferry/testing/fake_gcs.h"
#include "ferry/testing/gcs_test_store.h"
#include "ferry/testing/subprocess.h"

namespace ferry {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::StartMockKafka;
using testing::ProgramOptions;
using testing::ProgramOutput;
using Json = nlohmann::json;

constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";
constexpr char kTemplate[] =
    R"({"id": {{seq}}, "dateTime": "{{now:MM/dd/yyyy - HH:mm:ss Z}}", "payload": "test #{{seq}}"})";

class GcsPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = e2e::FreshTestDir("ferry-gcs-pipeline");
    Result<testing::FakeGcs*> gcs = testing::FakeGcs::Shared();
    ASSERT_TRUE(gcs.ok()) << gcs.status().ToString();
    gcs_ = *gcs;
    Result<std::string> bucket = testing::NewFakeGcsBucket(*gcs_);
    ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
    bucket_ = *bucket;
    env_ = EmulatorEnv(gcs_->endpoint());
  }
  void TearDown() override {
    mock_.reset();
    EXPECT_TRUE(gcs_->Alive()) << gcs_->Log();
    std::filesystem::remove_all(dir_);
  }

  // STORAGE_EMULATOR_HOST as host:port (as Google's clients are configured), and nothing else
  // that could give ferry Google credentials.
  static std::vector<std::string> EmulatorEnv(const std::string& endpoint) {
    return {"STORAGE_EMULATOR_HOST=" + endpoint.substr(endpoint.find("//") + 2),
            "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_SERVICE_ACCOUNT",
            "GOOGLE_SERVICE_ACCOUNT_PATH", "GOOGLE_SERVICE_ACCOUNT_KEY"};
  }

  void StartKafka(int64_t messages) {
    auto mock = StartMockKafka(kFerry, 1, {"events:3"});
    ASSERT_TRUE(mock.ok()) << mock.status().ToString();
    mock_ = std::move(mock->child);
    brokers_ = mock->bootstrap;
    ProgramOutput out = Ferry({"produce", "kafka", "--brokers", brokers_, "--topic", "events",
                               "--count", std::to_string(messages), "--start", "1", "--key",
                               "k{{seq}}", "--template", kTemplate});
    ASSERT_EQ(out.exit_code, 0) << out.err;
  }

  std::string WriteConfig(const std::string& table) {
    return e2e::WriteConfig(
        dir_ / "ferry.toml",
        {{.table = table,
          .schema = "id BIGINT NOT NULL, dateTime STRING, payload STRING",
          .source = e2e::KafkaSection({.brokers = brokers_, .group_id = "ferry-gcs"}),
          .max_rows = 700}});
  }

  ProgramOutput Ferry(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kFerry};
    argv.insert(argv.end(), args.begin(), args.end());
    auto out = testing::RunProgram(argv, std::chrono::minutes(5), ProgramOptions{.env = env_});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : ProgramOutput{};
  }

  // The object names below `prefix` as Google's client lists them.
  std::vector<std::string> ClientList(const std::string& prefix) {
    Result<std::string> listed = testing::GcsPythonClient(*gcs_, {"list", bucket_, prefix});
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> names;
    std::istringstream lines(listed.value_or(""));
    for (std::string line; std::getline(lines, line);) {
      names.push_back(line.substr(0, line.find(' ')));
    }
    return names;
  }

  std::filesystem::path dir_;
  testing::FakeGcs* gcs_ = nullptr;
  std::string bucket_;
  std::vector<std::string> env_;
  std::unique_ptr<ChildProcess> mock_;
  std::string brokers_;
};

// Kafka into gs://bucket/lake/events; Google's client downloads the table (verifying every
// object's checksum), ferry's reader and DuckDB read the same 3000 rows, each id once.
TEST_F(GcsPipelineTest, KafkaIntoGcsReadBackByGoogleClientAndDuckDb) {
  constexpr int64_t kMessages = 3000;
  ASSERT_NO_FATAL_FAILURE(StartKafka(kMessages));
  const std::string table = "gs://" + bucket_ + "/lake/events";
  ProgramOutput run = Ferry({"run", "--config", WriteConfig(table), "--until-caught-up"});
  ASSERT_EQ(run.exit_code, 0) << run.err << "\nemulator:\n" << gcs_->Log();

  const std::string local = (dir_ / "download").string();
  Result<std::string> downloaded =
      testing::GcsPythonClient(*gcs_, {"download", bucket_, "lake/events", local});
  ASSERT_TRUE(downloaded.ok()) << downloaded.status().ToString();
  e2e::TableContents t = e2e::ReadTable(local);
  ASSERT_GE(t.version, 1);
  std::vector<int64_t> ids;
  std::map<int64_t, std::pair<int64_t, int64_t>> coordinates;  // id -> (partition, offset)
  std::map<int64_t, int64_t> max_offset;
  for (const std::string& row : t.rows) {
    const int64_t id = e2e::IntField(row, "id");
    ids.push_back(id);
    coordinates[id] = {e2e::IntField(row, "_partition"), e2e::IntField(row, "_offset")};
    int64_t& m = max_offset[e2e::IntField(row, "_partition")];
    m = std::max(m, e2e::IntField(row, "_offset"));
  }
  std::sort(ids.begin(), ids.end());
  ASSERT_EQ(ids.size(), static_cast<size_t>(kMessages));
  for (int64_t i = 0; i < kMessages; ++i) {
    ASSERT_EQ(ids[static_cast<size_t>(i)], i + 1) << "duplicates or missing ids";
  }
  for (const auto& [partition, offset] : max_offset) {
    EXPECT_EQ(t.txns[fmt::format("events/kafka/events/{}", partition)], offset)
        << "partition " << partition;
  }
  // DuckDB, row for row.
  std::vector<Json> rows = e2e::DuckDbRows(
      t.files,
      "SELECT id::VARCHAR AS id_text, payload, _partition::VARCHAR AS p, _offset::VARCHAR AS o "
      "FROM read_parquet({files}) ORDER BY id");
  ASSERT_EQ(rows.size(), static_cast<size_t>(kMessages));
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t id = static_cast<int64_t>(i) + 1;
    ASSERT_EQ(rows[i].value("id_text", std::string()), std::to_string(id)) << rows[i].dump();
    EXPECT_EQ(rows[i].value("payload", std::string()), fmt::format("test #{}", id));
    EXPECT_EQ(rows[i].value("p", std::string()), std::to_string(coordinates[id].first));
    EXPECT_EQ(rows[i].value("o", std::string()), std::to_string(coordinates[id].second));
  }

  ProgramOutput verify = Ferry({"verify", table, "--id", "id", "--expect", "3000"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  ProgramOutput inspect = Ferry({"table", "inspect", table + "/", "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  Json j = Json::parse(inspect.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << inspect.out;
  EXPECT_EQ(j["num_rows"], kMessages);
  // Nothing but the table and its dead-letter table: no probe of the precondition check left.
  for (const std::string& name : ClientList("")) {
    EXPECT_TRUE(name.starts_with("lake/events/") || name.starts_with("lake/events_dead_letter/"))
        << name;
    EXPECT_EQ(name.find("_ferry/probe"), std::string::npos) << name;
  }
}

// The fault proxy removes ifGenerationMatch from every request: the emulator then overwrites
// whatever exists, and ferry must refuse the store before its first commit.
TEST_F(GcsPipelineTest, StoreThatIgnoresIfGenerationMatchIsRefusedBeforeAnythingIsWritten) {
  auto proxy = fault::StoreFaultProxy::Start(gcs_->port(), 1, fault::StoreDialect::kGcs);
  ASSERT_TRUE(proxy.ok()) << proxy.status().ToString();
  (*proxy)->StripQueryParameter("ifGenerationMatch");
  env_ = EmulatorEnv((*proxy)->endpoint());
  ASSERT_NO_FATAL_FAILURE(StartKafka(500));
  const std::string table = "gs://" + bucket_ + "/events";
  ProgramOutput refused = Ferry({"run", "--config", WriteConfig(table), "--until-caught-up"});
  EXPECT_NE(refused.exit_code, 0) << refused.err;
  EXPECT_NE(refused.err.find("gs://" + bucket_ + "/events"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("ifGenerationMatch"), std::string::npos) << refused.err;
  // Refused at once with its reason, not retried as contention.
  EXPECT_EQ(refused.err.find("gave up after"), std::string::npos) << refused.err;
  EXPECT_GT((*proxy)->counts().requests, 0);
  EXPECT_TRUE(ClientList("").empty()) << "written although refused: " << ClientList("")[0];
}

}  // namespace
}  // namespace ferry
