// Every command that takes a table refuses a location whose scheme ferry does not serve, naming
// the scheme and the supported ones, and creates nothing: `gs://bucket/events` once became a
// local directory `gs:/bucket/events` that `ferry run` ingested into with exit 0 (issue 16).
// gs:// is served now: without an emulator or credentials every command refuses it naming the
// table and the credentials it looked for, and creates nothing either.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kafka_child_process.h"

namespace ferry {
namespace {

using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;

const std::string kFerry = FERRY_BINARY_DIR "/src/ferry/app/ferry";

class TableLocationCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // No emulator and no Google credentials reach the children.
    for (const char* name :
         {"STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_SERVICE_ACCOUNT",
          "GOOGLE_SERVICE_ACCOUNT_PATH", "GOOGLE_SERVICE_ACCOUNT_KEY", "GOOGLE_SKIP_SIGNATURE"}) {
      ::unsetenv(name);
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("ferry-table-location-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    old_cwd_ = std::filesystem::current_path();
    // Relative paths would land here: the test checks that nothing does.
    std::filesystem::current_path(dir_);
  }
  void TearDown() override {
    std::filesystem::current_path(old_cwd_);
    std::filesystem::remove_all(dir_);
  }
  bool DirIsEmpty() const { return std::filesystem::is_empty(dir_); }

  std::filesystem::path dir_;
  std::filesystem::path old_cwd_;
};

TEST_F(TableLocationCliTest, EveryTableCommandRefusesAnUnsupportedScheme) {
  for (const std::string location : {"wasbs://c@a.blob.core.windows.net/t", "hdfs://nn/events",
                                     "s3:/x", "gs:/x", "gs://bucket/events"}) {
    const std::string expected = location == "s3:/x"   ? "an s3 URI is s3://BUCKET/PREFIX"
                                 : location == "gs:/x" ? "a gs URI is gs://BUCKET/PREFIX"
                                 : location == "gs://bucket/events"
                                     ? "table gs://bucket/events: no Google credentials found"
                                     : "is not supported; supported: file://";
    const std::vector<std::vector<std::string>> commands = {
        {kFerry, "table", "inspect", location},     {kFerry, "table", "history", location},
        {kFerry, "verify", location, "--id", "id"}, {kFerry, "optimize", location},
        {kFerry, "vacuum", location, "--dry-run"},  {kFerry, "status", "--table", location},
    };
    for (const auto& argv : commands) {
      CommandResult r = RunCommand(argv);
      EXPECT_NE(r.exit_code, 0) << argv[1] << " " << location;
      EXPECT_NE(r.err.find(expected), std::string::npos)
          << argv[1] << " " << location << ": " << r.err;
    }
  }
  EXPECT_TRUE(DirIsEmpty()) << "a command created a local directory for a URI";
}

TEST_F(TableLocationCliTest, ConfigCheckAndRunRefuseAnUnsupportedScheme) {
  std::ofstream("ferry.toml") << R"toml([[pipeline]]
id = "events"
table = "hdfs://nn/events"
schema = "id BIGINT"
[pipeline.kafka]
brokers = "127.0.0.1:1"
topics = ["events"]
)toml";
  CommandResult check = RunCommand({kFerry, "config", "check", "ferry.toml"});
  EXPECT_EQ(check.exit_code, 1) << check.err;
  EXPECT_NE(check.err.find("ferry.toml:3:"), std::string::npos) << check.err;
  EXPECT_NE(check.err.find("scheme 'hdfs' is not supported"), std::string::npos) << check.err;
  CommandResult run = RunCommand({kFerry, "run", "--config", "ferry.toml", "--until-caught-up"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("scheme 'hdfs' is not supported"), std::string::npos) << run.err;
  std::filesystem::remove("ferry.toml");
  EXPECT_TRUE(DirIsEmpty()) << "run created a local directory for a URI";
}

}  // namespace
}  // namespace ferry
