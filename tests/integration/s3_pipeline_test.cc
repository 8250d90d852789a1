// `ferry run` and the table commands on S3 tables, end to end with the real binaries, the mock
// Kafka cluster and radosgw, configured the way users of the AWS CLI and delta-rs already are:
// the standard variables alone (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_REGION, AWS_ALLOW_HTTP) and no [storage] table.
//   - a table ferry wrote to S3 is read back by clients no one here wrote: `aws s3 sync` to disk,
//     then DuckDB, row for row; `verify`, `table inspect|history`, `config check`, `status`,
//     `optimize` and `vacuum` on its s3:// URI;
//   - a store that ignores If-None-Match (npm s3rver 3.7, tests/s3rver) is refused before
//     anything is written, with a message naming the store and aws_s3_allow_unsafe_rename, and
//     works with that override (one writer);
//   - a missing bucket and wrong keys are clear errors from every command.
// One radosgw serves the whole binary (one ctest test: WHOLE_BINARY).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "config_toml.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"
#include <nlohmann/json.hpp>

#include "ferry/testing/loopback.h"
#include "ferry/testing/nats_server.h"
#include "ferry/testing/radosgw.h"
#include "ferry/testing/s3_cli.h"
#include "ferry/testing/s3_test_store.h"
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

// s3rver (npm, pinned in tests/s3rver): an S3 server that ignores If-None-Match on PUT. Its data
// in a temp dir, on a free port, killed and removed by the destructor.
class S3rver {
 public:
  static Result<std::unique_ptr<S3rver>> Start(const std::string& bucket) {
    FERRY_ASSIGN_OR_RETURN(std::string node, testing::FindProgram("node", {}, "Node.js"));
    const std::string main =
        std::string(FERRY_SOURCE_DIR) + "/tests/s3rver/node_modules/.bin/s3rver";
    if (access(main.c_str(), R_OK) != 0) {
      return NotFound("{} not found: run `make setup-npm` (npm ci in tests/s3rver)", main);
    }
    char tmpl[] = "/tmp/ferry-s3rver-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      return IOError("mkdtemp {}", tmpl);
    }
    std::unique_ptr<S3rver> server(new S3rver(tmpl));
    FERRY_ASSIGN_OR_RETURN(server->port_, testing::PickFreePort());
    FERRY_ASSIGN_OR_RETURN(
        server->process_,
        testing::Subprocess::Start(
            {node, main, "--directory", server->dir_ + "/data", "--address", "127.0.0.1", "--port",
             std::to_string(server->port_), "--configure-bucket", bucket},
            server->dir_ + "/s3rver.log"));
    for (int i = 0; i < 3000; ++i) {
      if (!server->process_.Alive()) {
        return Unavailable("s3rver exited during start-up: {}", server->Log());
      }
      int fd = testing::ConnectToLoopback(server->port_);
      if (fd >= 0) {
        close(fd);
        return server;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return Unavailable("s3rver did not accept connections within 30 s: {}", server->Log());
  }
  ~S3rver() {
    process_.Kill().IgnoreError();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string endpoint() const { return fmt::format("http://127.0.0.1:{}", port_); }
  // s3rver's fixed development keys.
  testing::S3Cli Cli() const {
    return testing::S3Cli({.endpoint = endpoint(),
                           .access_key = "S3RVER",
                           .secret_key = "S3RVER",
                           .scratch_dir = dir_});
  }
  std::string Log() const {
    std::ifstream in(dir_ + "/s3rver.log");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

 private:
  explicit S3rver(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  int port_ = 0;
  testing::Subprocess process_;
};

class S3PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = e2e::FreshTestDir("ferry-s3-pipeline");
    Result<testing::RadosGw*> rgw = testing::RadosGw::Shared();
    ASSERT_TRUE(rgw.ok()) << rgw.status().ToString();
    rgw_ = *rgw;
    Result<std::string> bucket = testing::NewRadosGwBucket(*rgw_);
    ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
    bucket_ = *bucket;
    env_ = StandardEnv(rgw_->Cli());
  }
  void TearDown() override {
    mock_.reset();
    EXPECT_TRUE(rgw_->Alive()) << rgw_->Log();
    std::filesystem::remove_all(dir_);
  }

  // The standard AWS variables for the store `cli` reaches, and nothing else that could
  // configure ferry (no config or credential files, no instance metadata).
  static std::vector<std::string> StandardEnv(const testing::S3Cli& cli) {
    std::vector<std::string> env = cli.AwsEnv();
    // Only the five: not the awscli's AWS_DEFAULT_REGION nor a service-specific endpoint.
    env.insert(env.end(), {"AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_S3", "AWS_ALLOW_HTTP=true"});
    return env;
  }

  void StartKafka(int64_t messages) {
    auto mock = StartMockKafka(kFerry, 1, {"events:3"});
    ASSERT_TRUE(mock.ok()) << mock.status().ToString();
    mock_ = std::move(mock->child);
    brokers_ = mock->bootstrap;
    Produce(messages, 1);
  }
  void Produce(int64_t count, int64_t start) {
    ProgramOutput out = Ferry({"produce", "kafka", "--brokers", brokers_, "--topic", "events",
                               "--count", std::to_string(count), "--start", std::to_string(start),
                               "--key", "k{{seq}}", "--template", kTemplate});
    ASSERT_EQ(out.exit_code, 0) << out.err;
  }

  // A configuration with no [storage] table: the store is reached through the environment.
  std::string WriteConfig(const std::string& table) {
    return e2e::WriteConfig(
        dir_ / "ferry.toml",
        {{.table = table,
          .schema = "id BIGINT NOT NULL, dateTime STRING, payload STRING",
          .source = e2e::KafkaSection({.brokers = brokers_, .group_id = "ferry-s3"}),
          .max_rows = 700}});
  }

  // `ferry ARGS...` run to completion with env_ (and `extra_env`) over the test's environment.
  ProgramOutput Ferry(const std::vector<std::string>& args,
                      const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> argv = {kFerry};
    argv.insert(argv.end(), args.begin(), args.end());
    ProgramOptions options;
    options.env = env_;
    options.env.insert(options.env.end(), extra_env.begin(), extra_env.end());
    auto out = testing::RunProgram(argv, std::chrono::minutes(5), options);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : ProgramOutput{};
  }

  // The table as the awscli downloads it, read by ferry's reader and by DuckDB: each of ids
  // 1..n exactly once, every partition's txn position the largest offset it holds.
  void ExpectTableHoldsEachIdOnce(const testing::S3Cli& cli, const std::string& bucket,
                                  const std::string& prefix, int64_t n) {
    const std::string local = (dir_ / ("download-" + std::to_string(downloads_++))).string();
    Status synced = cli.DownloadPrefix(bucket, prefix, local);
    ASSERT_TRUE(synced.ok()) << synced.ToString();
    e2e::TableContents t = e2e::ReadTable(local);
    std::vector<int64_t> ids;
    std::map<int64_t, int64_t> max_offset;
    for (const std::string& row : t.rows) {
      ids.push_back(e2e::IntField(row, "id"));
      int64_t& m = max_offset[e2e::IntField(row, "_partition")];
      m = std::max(m, e2e::IntField(row, "_offset"));
    }
    std::sort(ids.begin(), ids.end());
    ASSERT_EQ(ids.size(), static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(ids[static_cast<size_t>(i)], i + 1) << "duplicates or missing ids";
    }
    for (const auto& [partition, offset] : max_offset) {
      EXPECT_EQ(t.txns[fmt::format("events/kafka/events/{}", partition)], offset)
          << "partition " << partition;
    }
    ExpectDuckDbReadsTheSameRows(t, n);
  }

  // DuckDB reads the downloaded files row for row: ids 1..n in order, each row's payload the
  // message produced with that id, its Kafka partition and offset those ferry's reader found.
  void ExpectDuckDbReadsTheSameRows(const e2e::TableContents& t, int64_t n) {
    std::map<int64_t, std::pair<int64_t, int64_t>> coordinates;  // id -> (partition, offset)
    for (const std::string& row : t.rows) {
      coordinates[e2e::IntField(row, "id")] = {e2e::IntField(row, "_partition"),
                                               e2e::IntField(row, "_offset")};
    }
    std::string files;
    for (const std::string& file : t.files) {
      files += (files.empty() ? "'" : ", '") + file + "'";
    }
    const std::string sql = fmt::format(
        "SELECT id::VARCHAR AS id_text, payload, dateTime IS NOT NULL AS has_time, "
        "_partition::VARCHAR AS p, _offset::VARCHAR AS o FROM read_parquet([{}]) ORDER BY id",
        files);
    auto node = testing::FindProgram("node", {}, "Node.js");
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    auto out =
        testing::RunProgram({*node, std::string(FERRY_SOURCE_DIR) + "/tests/duckdb/query.mjs", sql},
                            std::chrono::minutes(2));
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ASSERT_EQ(out->exit_code, 0) << out->err << " (DuckDB missing: `make setup-npm`)";
    std::istringstream lines(out->out);
    std::string line;
    int64_t expected_id = 1;
    while (std::getline(lines, line)) {
      Json row = Json::parse(line, nullptr, false);
      ASSERT_TRUE(row.is_object()) << line;
      const int64_t id = std::stoll(row.value("id_text", std::string("0")));
      ASSERT_EQ(id, expected_id) << "DuckDB reads duplicates or misses ids: " << line;
      EXPECT_EQ(row.value("payload", std::string()), fmt::format("test #{}", id)) << line;
      EXPECT_EQ(row.value("has_time", false), true) << line;
      EXPECT_EQ(row.value("p", std::string()), std::to_string(coordinates[id].first)) << line;
      EXPECT_EQ(row.value("o", std::string()), std::to_string(coordinates[id].second)) << line;
      ++expected_id;
    }
    EXPECT_EQ(expected_id - 1, n) << "rows DuckDB read";
  }

  std::filesystem::path dir_;
  testing::RadosGw* rgw_ = nullptr;
  std::string bucket_;
  std::vector<std::string> env_;
  std::unique_ptr<ChildProcess> mock_;
  std::string brokers_;
  int downloads_ = 0;
};

// Kafka into s3://bucket/lake/events, twice (the second run resumes from the positions in the
// S3 table); read back with the awscli and DuckDB; every table command on the s3:// URI.
// Nothing but the standard variables configures the store.
TEST_F(S3PipelineTest, KafkaIntoS3ReadBackByAwsCliAndDuckDb) {
  ASSERT_NO_FATAL_FAILURE(StartKafka(5000));
  const std::string table = "s3://" + bucket_ + "/lake/events";
  const std::string config = WriteConfig(table);
  ProgramOutput run = Ferry({"run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectTableHoldsEachIdOnce(rgw_->Cli(), bucket_, "lake/events", 5000);

  ASSERT_NO_FATAL_FAILURE(Produce(2000, 5001));
  run = Ferry({"run", "--config", config, "--until-caught-up"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectTableHoldsEachIdOnce(rgw_->Cli(), bucket_, "lake/events", 7000);

  ProgramOutput verify = Ferry({"verify", table, "--id", "id", "--expect", "7000"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  ProgramOutput inspect = Ferry({"table", "inspect", table, "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  Json j = Json::parse(inspect.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << inspect.out;
  EXPECT_EQ(j["num_rows"], 7000);
  EXPECT_EQ(j["txns"].size(), 3u);
  ProgramOutput history = Ferry({"table", "history", "s3a://" + bucket_ + "/lake/events/"});
  EXPECT_EQ(history.exit_code, 0) << history.err;
  EXPECT_NE(history.out.find("CREATE TABLE"), std::string::npos) << history.out;
  // The other commands on the same URI and environment: config check, status, optimize (the
  // packed table read back again by the awscli and DuckDB), vacuum.
  ProgramOutput check = Ferry({"config", "check", config});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  ProgramOutput status = Ferry({"status", "--config", config, "--json"});
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  ProgramOutput optimize = Ferry({"optimize", table, "--json"});
  EXPECT_EQ(optimize.exit_code, 0) << optimize.out << optimize.err;
  ExpectTableHoldsEachIdOnce(rgw_->Cli(), bucket_, "lake/events", 7000);
  ProgramOutput vacuum = Ferry({"vacuum", table, "--dry-run", "--json"});
  EXPECT_EQ(vacuum.exit_code, 0) << vacuum.out << vacuum.err;
  // Nothing but the table and its dead-letter table (created beside it at start): no probe of
  // the conditional-write check, no incomplete upload.
  auto keys = rgw_->Cli().ListKeys(bucket_, "");
  ASSERT_TRUE(keys.ok());
  for (const std::string& key : *keys) {
    EXPECT_TRUE(key.rfind("lake/events/", 0) == 0 || key.rfind("lake/events_dead_letter/", 0) == 0)
        << key;
    EXPECT_EQ(key.find("_ferry/probe"), std::string::npos) << key;
  }
  auto uploads = rgw_->Cli().Aws({"s3api", "list-multipart-uploads", "--bucket", bucket_});
  ASSERT_TRUE(uploads.ok());
  EXPECT_EQ(uploads->find("UploadId"), std::string::npos) << *uploads;
}

// s3rver ignores If-None-Match: `ferry run` refuses it before writing anything, naming the
// store and the override; with aws_s3_allow_unsafe_rename=true (one writer) it works.
TEST_F(S3PipelineTest, StoreThatIgnoresIfNoneMatchIsRefusedBeforeAnythingIsWritten) {
  auto s3rver = S3rver::Start("lake");
  ASSERT_TRUE(s3rver.ok()) << s3rver.status().ToString();
  env_ = StandardEnv((*s3rver)->Cli());
  ASSERT_NO_FATAL_FAILURE(StartKafka(3000));
  const std::string config = WriteConfig("s3://lake/events");
  ProgramOutput refused = Ferry({"run", "--config", config, "--until-caught-up"});
  EXPECT_NE(refused.exit_code, 0) << refused.err;
  EXPECT_NE(refused.err.find("s3://lake/events"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("aws_s3_allow_unsafe_rename"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("If-None-Match"), std::string::npos) << refused.err;
  auto keys = (*s3rver)->Cli().ListKeys("lake", "");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  EXPECT_TRUE(keys->empty()) << "written although refused: " << (*keys)[0];

  ProgramOutput allowed =
      Ferry({"run", "--config", config, "--until-caught-up"}, {"AWS_S3_ALLOW_UNSAFE_RENAME=true"});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err << "\ns3rver:\n" << (*s3rver)->Log();
  ExpectTableHoldsEachIdOnce((*s3rver)->Cli(), "lake", "events", 3000);
  ProgramOutput verify = Ferry({"verify", "s3://lake/events", "--id", "id", "--expect", "3000"},
                               {"AWS_S3_ALLOW_UNSAFE_RENAME=true"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

// A missing bucket and wrong keys: every command fails with a message that names the table's
// store and the reason, and never prints the secret.
TEST_F(S3PipelineTest, MissingBucketAndWrongKeysAreClearErrors) {
  ProgramOutput missing = Ferry({"table", "inspect", "s3://no-such-bucket/lake/events"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("s3://no-such-bucket/lake/events"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("NoSuchBucket"), std::string::npos) << missing.err;

  const std::string secret = "wrong-secret-0123456789abcdefWXYZ";
  ProgramOutput wrong = Ferry({"table", "inspect", "s3://" + bucket_ + "/lake/events"},
                              {"AWS_SECRET_ACCESS_KEY=" + secret});
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("s3://" + bucket_ + "/lake/events"), std::string::npos) << wrong.err;
  EXPECT_NE(wrong.err.find("SignatureDoesNotMatch"), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.err.find(secret), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.out.find(secret), std::string::npos) << wrong.out;
  ProgramOutput verify = Ferry({"verify", "s3://" + bucket_ + "/lake/events", "--id", "id"},
                               {"AWS_SECRET_ACCESS_KEY=" + secret});
  EXPECT_NE(verify.exit_code, 0);
  EXPECT_EQ(verify.err.find(secret), std::string::npos) << verify.err;
}

}  // namespace
}  // namespace ferry
