// Corrupted table files under the real binary: a torn last commit, a missing data file, a bad
// checkpoint, a wrong _last_checkpoint. A table is written by `ferry run` from the mock Kafka
// cluster (a checkpoint every 3 commits), damaged the way a disk or a foreign writer damages it,
// then `ferry verify`, `ferry table inspect|history`, `ferry optimize`, `ferry vacuum`,
// `ferry status` and `ferry run` are run against it. What each must do (docs/delta.md,
// "Corrupted tables"):
//   - a torn or corrupt commit and a corrupt checkpoint are DataLoss: every command that needs
//     the latest snapshot exits non-zero naming the version and the file; time travel to an
//     earlier version still works; ferry never repairs or rewrites anything;
//   - a missing data file fails the commands that read data (verify, optimize) naming the file;
//     commands that need only the log succeed, and `ferry run` keeps appending (a writer never
//     reads old data files, as with Spark) without touching any existing file;
//   - a corrupt or stale _last_checkpoint is only a hint (PROTOCOL.md): it is logged and the log
//     is listed instead; everything succeeds.
// Every file under the table is hashed before and after: the damaged files and all others are
// byte-identical afterwards (nothing written over them). Label: integration.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config_toml.h"
#include "kafka_child_process.h"
#include "pipeline_e2e_support.h"
#include <nlohmann/json.hpp>

namespace ferry {
namespace {

namespace fs = std::filesystem;
using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using source::kafka::testing::StartMockKafka;

constexpr char kFerry[] = FERRY_BINARY_DIR "/src/ferry/app/ferry";
constexpr char kTemplate[] = R"({"id": {{seq}}, "payload": "test #{{seq}}"})";

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Relative path -> contents of every file under `dir` (tables here are a few hundred KB).
std::map<std::string, std::string> Snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      files[fs::relative(entry.path(), dir).string()] = ReadAll(entry.path());
    }
  }
  return files;
}

// The files of `before` that are missing or differ in `after` (empty when none).
std::vector<std::string> Changed(const std::map<std::string, std::string>& before,
                                 const std::map<std::string, std::string>& after) {
  std::vector<std::string> changed;
  for (const auto& [path, bytes] : before) {
    auto it = after.find(path);
    if (it == after.end() || it->second != bytes) {
      changed.push_back(path);
    }
  }
  return changed;
}

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    out += item + " ";
  }
  return out;
}

class CorruptTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = e2e::FreshTestDir("ferry-corrupt");
    auto mock = StartMockKafka(kFerry, 1, {"events:2"});
    ASSERT_TRUE(mock.ok()) << mock.status().ToString();
    mock_ = std::move(mock->child);
    brokers_ = mock->bootstrap;
    config_ = e2e::WriteConfig(
        dir_ / "ferry.toml",
        {{.table = table(),
          .schema = "id BIGINT NOT NULL, payload STRING",
          .keys = "partition_by = [\"_partition\"]\n"
                  "table_properties = { \"delta.checkpointInterval\" = \"3\" }",
          .source = e2e::KafkaSection(
              {.brokers = brokers_,
               .group_id = "ferry-corrupt-test",
               .start = "",
               .properties = R"("session.timeout.ms" = "6000", "heartbeat.interval.ms" = "500")"}),
          .max_rows = 100,
          .max_latency = "100ms"}});
    // 500 ids in a few commits over two partitions: versions 0..N, a checkpoint at 3.
    Produce(500, 1);
    CommandResult run = RunCommand({kFerry, "run", "--config", config_, "--until-caught-up"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    ASSERT_TRUE(fs::exists(Log("_last_checkpoint")));
    ScanLog();
    // How many commits the run makes depends on timing; there are always a few, and the
    // snapshot is built from the newest checkpoint (3 or 6) plus the commits after it.
    ASSERT_GE(latest_, 4);
    ASSERT_GE(checkpoint_, 3);
  }
  void TearDown() override {
    mock_.reset();
    fs::remove_all(dir_);
  }

  std::string table() const { return (dir_ / "table").string(); }

  // The newest commit and checkpoint versions.
  void ScanLog() {
    for (const auto& entry : fs::directory_iterator(table() + "/_delta_log")) {
      std::string name = entry.path().filename().string();
      if (name.size() == 25 && name.ends_with(".json")) {
        latest_ = std::max<int64_t>(latest_, std::stoll(name.substr(0, 20)));
      }
      if (name.ends_with(".checkpoint.parquet")) {
        checkpoint_ = std::max<int64_t>(checkpoint_, std::stoll(name.substr(0, 20)));
      }
    }
  }
  std::string Log(const std::string& name) const { return table() + "/_delta_log/" + name; }
  static std::string CommitName(int64_t version) { return fmt::format("{:020}.json", version); }
  std::string CheckpointName() const {
    return fmt::format("{:020}.checkpoint.parquet", checkpoint_);
  }

  void Produce(int64_t count, int64_t start) {
    CommandResult r =
        RunCommand({kFerry, "produce", "kafka", "--brokers", brokers_, "--topic", "events",
                    "--count", std::to_string(count), "--start", std::to_string(start), "--key",
                    "k{{seq}}", "--template", kTemplate});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  // Runs `args` and expects a non-zero exit whose stderr holds every one of `parts`.
  void ExpectFailure(const std::vector<std::string>& args, const std::vector<std::string>& parts) {
    std::vector<std::string> argv = {kFerry};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = RunCommand(argv);
    EXPECT_NE(r.exit_code, 0) << Joined(args) << r.out;
    for (const std::string& part : parts) {
      EXPECT_NE(r.err.find(part), std::string::npos)
          << Joined(args) << ": '" << part << "' not in: " << r.err;
    }
  }
  CommandResult ExpectSuccess(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kFerry};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << Joined(args) << r.out << r.err;
    return r;
  }

  // Every command that needs the latest snapshot fails naming `parts`; nothing changes.
  void ExpectEveryCommandFails(const std::vector<std::string>& parts) {
    auto before = Snapshot(table());
    ExpectFailure({"verify", table(), "--id", "id"}, parts);
    ExpectFailure({"table", "inspect", table()}, parts);
    ExpectFailure({"optimize", table()}, parts);
    ExpectFailure({"vacuum", table()}, parts);
    ExpectFailure({"status", "--config", config_}, parts);
    Produce(50, 501);
    ExpectFailure({"run", "--config", config_, "--until-caught-up"}, parts);
    auto after = Snapshot(table());
    EXPECT_TRUE(Changed(before, after).empty()) << Joined(Changed(before, after));
    EXPECT_EQ(before.size(), after.size()) << "files were added to a corrupt table";
  }

  fs::path dir_;
  std::unique_ptr<ChildProcess> mock_;
  std::string brokers_;
  std::string config_;
  int64_t latest_ = -1;
  int64_t checkpoint_ = -1;  // the newest checkpoint's version
};

TEST_F(CorruptTableTest, ATornLastCommitIsAnErrorNamingVersionAndFile) {
  // A commit that a checkpoint of the same version covers is never read (the checkpoint holds
  // its actions), so make sure the last commit comes after the newest checkpoint.
  for (int64_t next = 501; latest_ == checkpoint_ && next < 531; next += 10) {
    Produce(10, next);
    ASSERT_EQ(RunCommand({kFerry, "run", "--config", config_, "--until-caught-up"}).exit_code, 0);
    ScanLog();
  }
  ASSERT_GT(latest_, checkpoint_);
  const std::string name = CommitName(latest_);
  const std::string text = ReadAll(Log(name));
  // Cut inside the second line, as a write that stopped half-way would leave it.
  size_t cut = text.find('\n') + 10;
  ASSERT_LT(cut, text.size());
  fs::resize_file(Log(name), cut);
  ExpectEveryCommandFails({fmt::format("version {}", latest_), name, "line 2"});
  ExpectFailure({"table", "history", table()}, {fmt::format("version {}", latest_), name});
  // The versions before it are intact and readable by time travel.
  CommandResult r = ExpectSuccess(
      {"table", "inspect", table(), "--version", std::to_string(latest_ - 1), "--json"});
  EXPECT_NE(r.out.find(fmt::format("\"version\":{}", latest_ - 1)), std::string::npos) << r.out;
}

TEST_F(CorruptTableTest, AMissingDataFileFailsReadersAndNeverTouchesTheRest) {
  e2e::TableContents contents = e2e::ReadTable(table());
  ASSERT_FALSE(contents.files.empty());
  const fs::path victim = contents.files.front();
  const std::string relative = fs::relative(victim, table()).string();
  fs::remove(victim);
  auto before = Snapshot(table());
  ExpectFailure({"verify", table(), "--id", "id"}, {relative, "unreadable"});
  ExpectFailure({"optimize", table()}, {relative, "unreadable"});
  // The log alone is intact: these only read it.
  ExpectSuccess({"table", "inspect", table()});
  ExpectSuccess({"table", "history", table()});
  ExpectSuccess({"status", "--config", config_});
  ExpectSuccess({"vacuum", table(), "--dry-run"});
  EXPECT_TRUE(Changed(before, Snapshot(table())).empty());
  // Ingestion goes on: new files and commits only, every existing file as it was.
  Produce(50, 501);
  ExpectSuccess({"run", "--config", config_, "--until-caught-up"});
  auto after = Snapshot(table());
  std::vector<std::string> changed = Changed(before, after);
  // _last_checkpoint is a hint that a new checkpoint rewrites (atomically); nothing else may.
  std::erase(changed, "_delta_log/_last_checkpoint");
  EXPECT_TRUE(changed.empty()) << Joined(changed);
  EXPECT_GT(after.size(), before.size());
  EXPECT_FALSE(fs::exists(victim)) << "ferry recreated a file it never had";
  ExpectFailure({"verify", table(), "--id", "id"}, {relative});
}

TEST_F(CorruptTableTest, ATruncatedCheckpointIsAnErrorNamingVersionAndFile) {
  const std::string name = CheckpointName();
  fs::resize_file(Log(name), fs::file_size(Log(name)) / 2);
  ExpectEveryCommandFails({fmt::format("checkpoint of version {}", checkpoint_), name});
  // Before the checkpoint, the log rebuilds the table (from an older checkpoint or commit 0).
  ExpectSuccess({"table", "inspect", table(), "--version", std::to_string(checkpoint_ - 1)});
}

TEST_F(CorruptTableTest, ACheckpointWithGarbageInsideIsAnErrorNamingVersionAndFile) {
  const std::string name = CheckpointName();
  std::string bytes = ReadAll(Log(name));
  // Same size and magic numbers, the middle overwritten (a bad sector, a bit rot).
  for (size_t i = bytes.size() / 4; i < bytes.size() * 3 / 4; ++i) {
    bytes[i] = 'Z';
  }
  std::ofstream(Log(name), std::ios::binary | std::ios::trunc) << bytes;
  ExpectEveryCommandFails({fmt::format("checkpoint of version {}", checkpoint_), name});
}

TEST_F(CorruptTableTest, AWrongLastCheckpointIsOnlyAHint) {
  for (const std::string& hint :
       {std::string("garbage{"), std::string(""), std::string(R"({"version":99,"size":8})"),
        std::string(R"({"version":1,"size":8})"), std::string(R"({"version":3,"size_in_bytes":1})"),
        std::string(R"({"version":3,"size":8,"parts":4})")}) {
    SCOPED_TRACE("_last_checkpoint = " + hint);
    std::ofstream(Log("_last_checkpoint"), std::ios::trunc) << hint;
    auto before = Snapshot(table());
    CommandResult r = ExpectSuccess({"verify", table(), "--id", "id", "--expect", "500", "--json"});
    EXPECT_EQ(nlohmann::json::parse(r.out, nullptr, false).value("ok", false), true) << r.out;
    r = ExpectSuccess({"table", "inspect", table(), "--json"});
    EXPECT_NE(r.out.find(fmt::format("\"version\":{}", latest_)), std::string::npos) << r.out;
    ExpectSuccess({"table", "history", table()});
    ExpectSuccess({"status", "--config", config_});
    EXPECT_TRUE(Changed(before, Snapshot(table())).empty());
  }
  // `ferry run` goes on too; its next checkpoint writes a correct hint.
  Produce(50, 501);
  ExpectSuccess({"run", "--config", config_, "--until-caught-up"});
  CommandResult r = ExpectSuccess({"verify", table(), "--id", "id", "--expect", "550", "--json"});
  EXPECT_EQ(nlohmann::json::parse(r.out, nullptr, false).value("ok", false), true) << r.out;
}

}  // namespace
}  // namespace ferry
