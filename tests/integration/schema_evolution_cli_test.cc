// The CLI of schema evolution (issue 19): `ferry table add-columns` commits nullable columns (and
// fields of an existing struct) in one metaData commit and refuses what it must; `ferry table
// inspect` shows which version added which column; `ferry config check` explains what
// `schema_evolution` will do to an existing table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kafka_child_process.h"
#include <nlohmann/json.hpp>

#include "ferry/columnar/ddl.h"
#include "ferry/delta/table.h"
#include "ferry/storage/local_store.h"

namespace ferry {
namespace {

using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;

const std::string kFerry = FERRY_BINARY_DIR "/src/ferry/app/ferry";

class SchemaEvolutionCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ferry-evolution-cli-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "t");
    table_ = (dir_ / "t").string();
    auto store = storage::LocalStore::Create(table_);
    ASSERT_TRUE(store.ok());
    auto table = delta::Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(*store)), "");
    ASSERT_TRUE(table.ok());
    auto schema = columnar::ParseDdlSchema("id BIGINT NOT NULL, n INT, loc STRUCT<lat: DOUBLE>");
    ASSERT_TRUE(schema.ok());
    ASSERT_TRUE(
        (*table)->Create({.schema = std::make_shared<const columnar::Schema>(*schema)}).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string table_;
};

TEST_F(SchemaEvolutionCliTest, AddColumnsAndTheHistory) {
  CommandResult r =
      RunCommand({kFerry, "table", "add-columns", table_, "region STRING, tags ARRAY<STRING>"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("version 1: add column region STRING; add column tags ARRAY<STRING>"),
            std::string::npos)
      << r.out;
  r = RunCommand({kFerry, "table", "add-columns", table_, "loc STRUCT<alt: DOUBLE>"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("add column loc.alt DOUBLE"), std::string::npos) << r.out;
  // Refusals: a column that exists, NOT NULL, a name Delta cannot hold, a narrower type.
  struct Refusal {
    const char* columns;
    const char* says;
  };
  for (const Refusal& refusal : {Refusal{"region STRING", "column 'region' exists already"},
                                 Refusal{"x INT NOT NULL", "must be nullable"},
                                 Refusal{"`a b` INT", "Delta cannot hold this name"},
                                 Refusal{"n BIGINT", "widening it needs"}}) {
    r = RunCommand({kFerry, "table", "add-columns", table_, refusal.columns});
    EXPECT_EQ(r.exit_code, 1) << refusal.columns;
    EXPECT_NE(r.err.find(refusal.says), std::string::npos) << refusal.columns << ": " << r.err;
  }
  r = RunCommand({kFerry, "table", "inspect", table_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("schema history:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("created: id BIGINT NOT NULL, n INT, loc STRUCT<lat: DOUBLE>"),
            std::string::npos)
      << r.out;
  r = RunCommand({kFerry, "table", "inspect", table_, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  ASSERT_EQ(json["schema_history"].size(), 3u) << r.out;
  EXPECT_EQ(json["schema_history"][1]["version"], 1);
  EXPECT_EQ(json["schema_history"][1]["operation"], "ADD COLUMNS");
  EXPECT_EQ(json["schema_history"][2]["changes"][0], "add column loc.alt DOUBLE");
}

TEST_F(SchemaEvolutionCliTest, ConfigCheckExplainsWhatEvolutionWillDo) {
  const std::string config = (dir_ / "ferry.toml").string();
  auto write = [&](const std::string& mode) {
    std::ofstream(config) << "[[pipeline]]\nid = \"events\"\ntable = \"" << table_
                          << "\"\nschema_evolution = \"" << mode
                          << "\"\npartition_by = []\n"
                             "[pipeline.kafka]\nbrokers = \"127.0.0.1:1\"\ntopics = [\"events\"]\n"
                             "group_id = \"g\"\n";
  };
  write("add_columns_and_widen");
  CommandResult r = RunCommand({kFerry, "config", "check", config});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* says : {"schema_evolution = \"add_columns_and_widen\"",
                           "new fields:", "widening to a wider integer, up to BIGINT: n INT",
                           "the first widening adds the table feature typeWidening",
                           "from reader 1 / writer 2 to reader 3 / writer 7"}) {
    EXPECT_NE(r.out.find(says), std::string::npos) << says << "\n" << r.out;
  }
  write("none");
  r = RunCommand({kFerry, "config", "check", config});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the table's schema does not change"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ferry
