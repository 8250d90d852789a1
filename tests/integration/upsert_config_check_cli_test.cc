// `ferry config check` on an upsert pipeline (issue 42): a key or sequence column the table's
// schema lacks is explained at its own line of the configuration, for the table a declared
// schema would create and for a table that exists, and nothing is created.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kafka_child_process.h"

#include "ferry/columnar/ddl.h"
#include "ferry/delta/table.h"
#include "ferry/storage/local_store.h"

namespace ferry {
namespace {

using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;

const std::string kFerry = FERRY_BINARY_DIR "/src/ferry/app/ferry";

class UpsertConfigCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ferry-upsert-check-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // `ferry config check` of a pipeline on `table` (under dir_) with `lines` after its table line
  // (the first of them is line 4).
  CommandResult Check(const std::string& table, const std::string& lines) {
    const std::string config = (dir_ / "ferry.toml").string();
    std::ofstream(config) << "[[pipeline]]\nid = \"cdc\"\ntable = \"" << (dir_ / table).string()
                          << "\"\n"
                          << lines
                          << "[pipeline.kafka]\nbrokers = \"127.0.0.1:1\"\ntopics = [\"t\"]\n";
    return RunCommand({kFerry, "config", "check", config});
  }

  std::filesystem::path dir_;
};

TEST_F(UpsertConfigCheckTest, AKeyColumnNotInTheDeclaredSchemaIsNamedAtItsLine) {
  const std::string schema = "schema = \"id BIGINT NOT NULL, v STRING, seq BIGINT\"\n";
  CommandResult r =
      Check("new", schema + "mode = \"upsert\"\nkey = [\"id\"]\nsequence = \"seq\"\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Check("new", schema + "mode = \"upsert\"\nkey = [\"id\", \"nope\"]\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(":6:7: pipeline[0].key: upsert: key column 'nope' is not in the table's "
                       "schema (id BIGINT"),
            std::string::npos)
      << r.err;
  r = Check("new", schema + "mode = \"upsert\"\nkey = [\"id\"]\nsequence = \"v\"\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(":7:12: pipeline[0].sequence: upsert: sequence column 'v' has type STRING"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "new"));  // nothing created
}

TEST_F(UpsertConfigCheckTest, AKeyColumnNotInAnExistingTableIsNamedAtItsLine) {
  std::filesystem::create_directories(dir_ / "old");
  auto store = storage::LocalStore::Create((dir_ / "old").string());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto table = delta::Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(*store)), "");
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto schema = columnar::ParseDdlSchema("id BIGINT NOT NULL, v STRING");
  ASSERT_TRUE(schema.ok());
  ASSERT_TRUE((*table)->Create({.schema = std::make_shared<const columnar::Schema>(*schema)}).ok());
  CommandResult r = Check("old", "mode = \"upsert\"\nkey = [\"id\"]\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Check("old", "mode = \"upsert\"\nkey = [\"customer\"]\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(":5:7: pipeline[0].key: upsert: key column 'customer' is not in the "
                       "table's schema (id BIGINT"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace ferry
