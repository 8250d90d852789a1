// Delta commits across processes (delta_table_tool.cc is the writer):
//   - several processes appending blind to one table at once: every commit lands at its own
//     version, versions are contiguous, no version is overwritten, no add is lost;
//   - four processes holding the same txn appId commit in lock-step rounds, on local disk and on
//     S3 (radosgw): exactly one wins each round, the others get ConcurrentTransaction and
//     re-read the winner's position;
//   - a writer SIGKILLed at each failpoint of the commit and checkpoint path leaves a readable
//     table holding the whole commit or none of it, and the next commit succeeds (and retries
//     a checkpoint the crash cut short).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kafka_child_process.h"
#include <nlohmann/json.hpp>

#include "ferry/columnar/column.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/local_store.h"
#include "ferry/storage/s3/s3_store.h"
#include "ferry/storage/store_factory.h"
#include "ferry/storage/table_uri.h"
#include "ferry/testing/azure_test_store.h"
#include "ferry/testing/gcs_test_store.h"
#include "ferry/testing/radosgw.h"
#include "ferry/testing/s3_test_store.h"
#include "ferry/testing/table_verifier.h"

namespace ferry {
namespace {

using source::kafka::testing::ChildProcess;
using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;
using Json = nlohmann::json;

const std::string kTool = std::string(FERRY_BINARY_DIR) + "/tests/integration/delta_table_tool";

columnar::SchemaPtr ToolSchema() {
  return std::make_shared<const columnar::Schema>(std::vector<columnar::Field>{
      {"id", columnar::DataType::Int64(), false, {}},
      {"writer", columnar::DataType::Int64(), false, {}},
      {"n", columnar::DataType::Int64(), false, {}},
  });
}

// The rows delta_table_tool writes for (writer, commit), rendered like the table verifier.
std::vector<std::string> ToolRows(int64_t writer, int64_t commit, int64_t rows) {
  std::vector<std::string> out;
  for (int64_t r = 0; r < rows; ++r) {
    out.push_back("id=" + std::to_string(writer * 1000000 + commit * 1000 + r) +
                  "|writer=" + std::to_string(writer) + "|n=" + std::to_string(commit));
  }
  return out;
}

std::string CommitPath(const std::string& dir, int64_t v) {
  char name[32];
  std::snprintf(name, sizeof(name), "%020lld.json", static_cast<long long>(v));
  return dir + "/_delta_log/" + name;
}

class DeltaProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ferry-delta-proc-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::shared_ptr<storage::ObjectStore> store = *storage::LocalStore::Create(dir_);
    table_ = *delta::Table::Open(store, "");
    delta::TableSpec spec;
    spec.schema = ToolSchema();
    auto snap = table_->Create(spec);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // An append from this process (writer `writer`, commit number `commit`).
  Result<delta::CommitResult> AppendHere(int64_t writer, int64_t commit, int64_t rows,
                                         std::optional<int64_t> position = std::nullopt) {
    FERRY_ASSIGN_OR_RETURN(delta::Snapshot snap, table_->LoadSnapshot());
    FERRY_ASSIGN_OR_RETURN(auto w, delta::TableWriter::Create(*table_, snap));
    auto batch = columnar::RecordBatch::MakeEmpty(ToolSchema());
    for (int64_t r = 0; r < rows; ++r) {
      batch.mutable_column(0)->As<columnar::Int64Column>()->Append(writer * 1000000 +
                                                                   commit * 1000 + r);
      batch.mutable_column(1)->As<columnar::Int64Column>()->Append(writer);
      batch.mutable_column(2)->As<columnar::Int64Column>()->Append(commit);
    }
    FERRY_RETURN_IF_ERROR(w->Write(batch));
    FERRY_ASSIGN_OR_RETURN(auto adds, w->Finish());
    delta::Transaction txn(*table_, snap);
    txn.AddFiles(std::move(adds));
    if (position.has_value()) {
      txn.SetPosition("pipe/kafka/orders/0", *position);
    }
    return txn.Commit();
  }

  std::vector<std::string> TableRows() {
    auto snap = table_->LoadSnapshot();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    if (!snap.ok()) {
      return {};
    }
    Status files = testing::VerifyFiles(*table_, *snap);
    EXPECT_TRUE(files.ok()) << files.ToString();
    auto rows = testing::ReadTableRows(*table_, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<std::string>{};
  }

  std::string dir_;
  std::unique_ptr<delta::Table> table_;
};

TEST_F(DeltaProcessTest, ConcurrentBlindAppendsAllLandAtContiguousVersions) {
  constexpr int kWriters = 4;
  constexpr int kCommits = 15;
  constexpr int kRows = 20;
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int w = 1; w <= kWriters; ++w) {
    auto child = ChildProcess::Start({kTool, "append", dir_, std::to_string(w),
                                      std::to_string(kCommits), std::to_string(kRows)});
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    children.push_back(std::move(*child));
  }
  // version -> (writer, commit) as each writer reports it.
  std::map<int64_t, std::pair<int64_t, int64_t>> reported;
  int contended = 0;
  for (int w = 1; w <= kWriters; ++w) {
    ChildProcess& child = *children[static_cast<size_t>(w - 1)];
    for (int c = 0; c < kCommits; ++c) {
      auto line = child.ReadLine(std::chrono::seconds(120));
      ASSERT_TRUE(line.ok()) << "writer " << w << ": " << line.status().ToString();
      long long version = -1;
      int attempts = 0;
      ASSERT_EQ(std::sscanf(line->c_str(), "committed %lld %d", &version, &attempts), 2) << *line;
      EXPECT_TRUE(reported.emplace(version, std::make_pair(w, c)).second)
          << "version " << version << " reported twice";
      contended += attempts > 1 ? 1 : 0;
    }
    EXPECT_EQ(child.Wait(), 0) << "writer " << w;
  }
  constexpr int64_t kLast = int64_t{kWriters} * kCommits;
  ASSERT_EQ(reported.size(), static_cast<size_t>(kLast));
  EXPECT_EQ(reported.begin()->first, 1);
  EXPECT_EQ(reported.rbegin()->first, kLast);
  EXPECT_FALSE(std::filesystem::exists(CommitPath(dir_, kLast + 1)));
  // Each version's file holds exactly the add of the writer that reported it (nothing was
  // overwritten): its stats' minimum id identifies (writer, commit).
  for (const auto& [version, who] : reported) {
    std::ifstream in(CommitPath(dir_, version));
    std::string line;
    int adds = 0;
    while (std::getline(in, line)) {
      Json action = Json::parse(line);
      if (action.contains("add")) {
        adds++;
        Json stats = Json::parse(action["add"]["stats"].get<std::string>());
        EXPECT_EQ(stats["minValues"]["id"].get<int64_t>(), who.first * 1000000 + who.second * 1000)
            << "version " << version;
        EXPECT_EQ(stats["numRecords"].get<int64_t>(), kRows);
      }
    }
    EXPECT_EQ(adds, 1) << "version " << version;
  }
  // No add lost: the table holds every row of every writer.
  std::vector<std::string> expected;
  for (int w = 1; w <= kWriters; ++w) {
    for (int c = 0; c < kCommits; ++c) {
      for (std::string& row : ToolRows(w, c, kRows)) {
        expected.push_back(std::move(row));
      }
    }
  }
  std::sort(expected.begin(), expected.end());
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->version(), kLast);
  EXPECT_EQ(snap->num_files(), kLast);
  EXPECT_EQ(TableRows(), expected);
  // Checkpoints were written along the way (by whichever writer committed a multiple of 10).
  EXPECT_TRUE(snap->newest_checkpoint_version().has_value());
  std::printf("commits that needed more than one attempt: %d of %lld\n", contended,
              static_cast<long long>(kLast));
}

// ---- N processes racing for one commit version, round after round, on each kind of store.

// Where the race runs: "Local" (a temp dir), "S3" (a table on the test binary's radosgw,
// reached by the writers through the standard AWS variables alone) or "Azure" (a table on the
// test binary's Azurite, reached through AZURE_STORAGE_USE_EMULATOR and AZURE_STORAGE_ENDPOINT)
// or "Gcs" (a table on the test binary's fake-gcs-server, reached through STORAGE_EMULATOR_HOST
// alone).
class CommitRaceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::shared_ptr<storage::ObjectStore> store;
    if (GetParam() == "S3") {
      Result<testing::RadosGw*> rgw = testing::RadosGw::Shared();
      ASSERT_TRUE(rgw.ok()) << rgw.status().ToString();
      rgw_ = *rgw;
      Result<std::string> bucket = testing::NewRadosGwBucket(*rgw_);
      ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
      location_ = "s3://" + *bucket + "/race/t";
      env_ = rgw_->Cli().AwsEnv();
      // Only the five standard variables (not the awscli's AWS_DEFAULT_REGION).
      env_.insert(env_.end(), {"AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_S3", "AWS_ALLOW_HTTP=true"});
      auto s3 = storage::s3::OpenS3Store(*bucket, "race/t", testing::RadosGwStorageOptions(*rgw_));
      ASSERT_TRUE(s3.ok()) << s3.status().ToString();
      store = std::move(*s3);
    } else if (GetParam() == "Azure") {
      Result<testing::Azurite*> azurite = testing::Azurite::Shared();
      ASSERT_TRUE(azurite.ok()) << azurite.status().ToString();
      azurite_ = *azurite;
      Result<std::string> container = testing::NewAzuriteContainer(*azurite_);
      ASSERT_TRUE(container.ok()) << container.status().ToString();
      location_ = "az://" + *container + "/race/t";
      env_ = {"AZURE_STORAGE_USE_EMULATOR=true", "AZURE_STORAGE_ENDPOINT=" + azurite_->endpoint()};
      auto uri = storage::ParseTableUri(location_);
      ASSERT_TRUE(uri.ok()) << uri.status().ToString();
      auto azure = storage::OpenTableStore(*uri, testing::AzuriteStorageOptions(*azurite_),
                                           storage::OpenMode::kCreate);
      ASSERT_TRUE(azure.ok()) << azure.status().ToString();
      store = std::move(*azure);
    } else if (GetParam() == "Gcs") {
      Result<testing::FakeGcs*> gcs = testing::FakeGcs::Shared();
      ASSERT_TRUE(gcs.ok()) << gcs.status().ToString();
      gcs_ = *gcs;
      Result<std::string> bucket = testing::NewFakeGcsBucket(*gcs_);
      ASSERT_TRUE(bucket.ok()) << bucket.status().ToString();
      location_ = "gs://" + *bucket + "/race/t";
      env_ = {"STORAGE_EMULATOR_HOST=" + gcs_->endpoint()};
      auto uri = storage::ParseTableUri(location_);
      ASSERT_TRUE(uri.ok()) << uri.status().ToString();
      auto store_or = storage::OpenTableStore(*uri, testing::FakeGcsStorageOptions(*gcs_),
                                              storage::OpenMode::kCreate);
      ASSERT_TRUE(store_or.ok()) << store_or.status().ToString();
      store = std::move(*store_or);
    } else {
      char tmpl[] = "/tmp/ferry-delta-race-XXXXXX";
      ASSERT_NE(mkdtemp(tmpl), nullptr);
      dir_ = location_ = tmpl;
      store = *storage::LocalStore::Create(dir_);
    }
    table_ = *delta::Table::Open(store, "");
    delta::TableSpec spec;
    spec.schema = ToolSchema();
    auto snap = table_->Create(spec);
    ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  }
  void TearDown() override {
    if (!dir_.empty()) {
      std::filesystem::remove_all(dir_);
    }
    if (rgw_ != nullptr) {
      EXPECT_TRUE(rgw_->Alive()) << rgw_->Log();
    }
    if (azurite_ != nullptr) {
      EXPECT_TRUE(azurite_->Alive()) << azurite_->Log();
    }
    if (gcs_ != nullptr) {
      EXPECT_TRUE(gcs_->Alive()) << gcs_->Log();
    }
  }

  // `delta_table_tool ARGS...` with the test's environment changes (env(1) sets them).
  Result<std::unique_ptr<ChildProcess>> StartTool(const std::vector<std::string>& args) {
    // The last change to each variable; env(1) takes its options (--unset) before assignments.
    std::map<std::string, std::string> last;
    for (const std::string& change : env_) {
      last[change.substr(0, change.find('='))] = change;
    }
    std::vector<std::string> argv = {"/usr/bin/env"};
    for (const auto& [name, change] : last) {
      if (change.find('=') == std::string::npos) {
        argv.push_back("--unset=" + name);
      }
    }
    for (const auto& [name, change] : last) {
      if (change.find('=') != std::string::npos) {
        argv.push_back(change);
      }
    }
    argv.push_back(kTool);
    argv.insert(argv.end(), args.begin(), args.end());
    return ChildProcess::Start(argv);
  }

  testing::RadosGw* rgw_ = nullptr;
  testing::Azurite* azurite_ = nullptr;
  testing::FakeGcs* gcs_ = nullptr;
  std::string dir_;
  std::string location_;
  std::vector<std::string> env_;
  std::unique_ptr<delta::Table> table_;
};

// Four processes hold the same txn appId and commit in lock-step rounds: each round exactly one
// wins the next version, the others get ConcurrentTransaction and re-read the winner's position.
TEST_P(CommitRaceTest, SameAppIdExactlyOneWinnerPerRound) {
  constexpr int kWriters = 4;
  constexpr int kRounds = 25;
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (int w = 1; w <= kWriters; ++w) {
    auto child = StartTool(
        {"rounds", location_, std::to_string(w), "pipe/kafka/orders/0", std::to_string(kRounds)});
    ASSERT_TRUE(child.ok()) << child.status().ToString();
    children.push_back(std::move(*child));
  }
  std::map<size_t, int> wins;
  for (int round = 0; round < kRounds; ++round) {
    for (auto& child : children) {
      auto line = child->ReadLine(std::chrono::seconds(60));
      ASSERT_TRUE(line.ok()) << line.status().ToString();
      ASSERT_EQ(*line, "ready " + std::to_string(round) + " " + std::to_string(round));
    }
    for (auto& child : children) {
      ASSERT_TRUE(child->WriteLine("go").ok());
    }
    int won = 0;
    for (size_t w = 0; w < children.size(); ++w) {
      auto line = children[w]->ReadLine(std::chrono::seconds(60));
      ASSERT_TRUE(line.ok()) << line.status().ToString();
      if (line->rfind("won ", 0) == 0) {
        won++;
        wins[w]++;
        EXPECT_EQ(*line, "won " + std::to_string(round) + " " + std::to_string(round + 1) + " " +
                             std::to_string(round + 1));
      } else {
        EXPECT_EQ(line->rfind("lost " + std::to_string(round) + " Aborted", 0), 0u) << *line;
        EXPECT_NE(line->find("ConcurrentTransaction"), std::string::npos) << *line;
        auto reread = children[w]->ReadLine(std::chrono::seconds(60));
        ASSERT_TRUE(reread.ok());
        // The loser re-reads the log and sees the winner's position.
        EXPECT_EQ(*reread, "reread " + std::to_string(round) + " " + std::to_string(round + 1));
      }
    }
    ASSERT_EQ(won, 1) << "round " << round;
  }
  for (auto& child : children) {
    EXPECT_EQ(child->Wait(), 0);
  }
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->version(), kRounds);
  EXPECT_EQ(snap->position("pipe/kafka/orders/0"), kRounds);
  // Only the winners' files are in the table (the losers' are orphans).
  EXPECT_EQ(snap->num_files(), kRounds);
  auto rows = testing::ReadTableRows(*table_, *snap);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), static_cast<size_t>(kRounds));
  std::string spread;
  for (const auto& [w, n] : wins) {
    spread += fmt::format(" writer {}: {}", w + 1, n);
  }
  std::printf("%s: rounds won by%s\n", GetParam().c_str(), spread.c_str());
}

INSTANTIATE_TEST_SUITE_P(Stores, CommitRaceTest, ::testing::Values("Local", "S3", "Azure", "Gcs"),
                         [](const auto& p) { return p.param; });

// ---- `ferry table inspect|history` on a table with positions (the real binary).

TEST_F(DeltaProcessTest, TableInspectAndHistoryCommands) {
  const std::string ferry = std::string(FERRY_BINARY_DIR) + "/src/ferry/app/ferry";
  int64_t bytes = 0;
  for (int64_t c = 1; c <= 3; ++c) {
    auto r = AppendHere(0, c, 10, c * 100);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
    if (entry.path().extension() == ".parquet" &&
        entry.path().string().find("_delta_log") == std::string::npos) {
      bytes += static_cast<int64_t>(entry.file_size());
    }
  }
  CommandResult run = RunCommand({ferry, "table", "inspect", dir_, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  Json j = Json::parse(run.out);
  EXPECT_EQ(j["version"], 3);
  EXPECT_EQ(j["protocol"]["minReaderVersion"], 1);
  EXPECT_EQ(j["protocol"]["minWriterVersion"], 2);
  EXPECT_EQ(j["partition_columns"], Json::array());
  EXPECT_EQ(j["num_files"], 3);
  EXPECT_EQ(j["num_rows"], 30);
  EXPECT_EQ(j["size_bytes"], bytes);
  EXPECT_EQ(j["txns"], Json({{"pipe/kafka/orders/0", 300}}));

  run = RunCommand({ferry, "table", "inspect", dir_, "--version", "1", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  j = Json::parse(run.out);
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["num_files"], 1);
  EXPECT_EQ(j["num_rows"], 10);
  EXPECT_EQ(j["txns"], Json({{"pipe/kafka/orders/0", 100}}));

  run = RunCommand({ferry, "table", "inspect", dir_});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("pipe/kafka/orders/0"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("300"), std::string::npos) << run.out;

  run = RunCommand({ferry, "table", "history", dir_, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::vector<Json> commits;
  std::istringstream lines(run.out);
  std::string line;
  while (std::getline(lines, line)) {
    commits.push_back(Json::parse(line));
  }
  ASSERT_EQ(commits.size(), 4u) << run.out;
  for (int v = 0; v <= 3; ++v) {
    EXPECT_EQ(commits[static_cast<size_t>(v)]["version"], v);
    EXPECT_EQ(commits[static_cast<size_t>(v)]["files_added"], v == 0 ? 0 : 1);
    EXPECT_EQ(commits[static_cast<size_t>(v)]["files_removed"], 0);
  }
  EXPECT_EQ(commits[0]["operation"], "CREATE TABLE");
  EXPECT_EQ(commits[2]["operation"], "WRITE");
  EXPECT_EQ(commits[2]["txns"], Json({{"pipe/kafka/orders/0", 200}}));

  run = RunCommand({ferry, "table", "history", dir_});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 4) << run.out;
  EXPECT_NE(run.out.find("pipe/kafka/orders/0=200"), std::string::npos) << run.out;

  run = RunCommand({ferry, "table", "inspect", dir_ + "/no-such-table"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_FALSE(run.err.empty());
}

// ---- Crash at each failpoint.

enum class Outcome { kNone, kWhole };
enum class Checkpoint {
  kNotDue,    // the crash came before the commit (nothing to checkpoint)
  kRetried,   // no complete checkpoint at 10: the next commit (11) writes one
  kComplete,  // checkpoint 10 was complete before the crash
};

struct CrashCase {
  std::string failpoints;
  Outcome outcome;
  Checkpoint checkpoint;
};

void PrintTo(const CrashCase& c, std::ostream* os) {
  *os << c.failpoints;
}

class DeltaCrashTest : public DeltaProcessTest, public ::testing::WithParamInterface<CrashCase> {};

// The child commits version 10 (a checkpoint is due there: delta.checkpointInterval 10) with one
// data file. Storage hit counts: rename #1 publishes the data file, #2 the checkpoint, #3
// _last_checkpoint; fsync #1 is the data file, #2 the commit file.
TEST_P(DeltaCrashTest, KilledWriterLeavesWholeCommitOrNone) {
  const CrashCase& c = GetParam();
  std::vector<std::string> before;
  for (int64_t commit = 1; commit <= 9; ++commit) {
    auto r = AppendHere(0, commit, 10);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (std::string& row : ToolRows(0, commit, 10)) {
      before.push_back(std::move(row));
    }
  }
  CommandResult run = RunCommand(
      {"/usr/bin/env", "FERRY_FAILPOINTS=" + c.failpoints, kTool, "append", dir_, "7", "1", "10"});
  ASSERT_EQ(run.exit_code, 128 + 9)
      << "the failpoint did not kill the writer: " << run.out << run.err;

  // Readable, with the whole commit or none of it.
  auto snap = table_->LoadSnapshot();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  std::vector<std::string> expected = before;
  if (c.outcome == Outcome::kWhole) {
    for (std::string& row : ToolRows(7, 0, 10)) {
      expected.push_back(std::move(row));
    }
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(snap->version(), c.outcome == Outcome::kWhole ? 10 : 9);
  EXPECT_EQ(TableRows(), expected);
  bool checkpoint_10 =
      std::filesystem::exists(dir_ + "/_delta_log/" + "00000000000000000010.checkpoint.parquet");
  EXPECT_EQ(checkpoint_10, c.checkpoint == Checkpoint::kComplete);

  // The table takes the next commit; a checkpoint the crash cut short is written by it.
  auto next = AppendHere(1, 0, 10);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->version, snap->version() + 1);
  if (c.checkpoint == Checkpoint::kRetried) {
    EXPECT_EQ(next->checkpoint_version, std::optional<int64_t>(11));
    EXPECT_TRUE(next->checkpoint_status.ok()) << next->checkpoint_status.ToString();
  } else if (c.outcome == Outcome::kWhole) {
    EXPECT_FALSE(next->checkpoint_version.has_value());
  }
  auto reloaded = table_->LoadSnapshot();
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_EQ(reloaded->version(), next->version);
  if (c.outcome == Outcome::kWhole) {
    EXPECT_EQ(reloaded->newest_checkpoint_version(),
              std::optional<int64_t>(c.checkpoint == Checkpoint::kRetried ? 11 : 10));
  }
  for (std::string& row : ToolRows(1, 0, 10)) {
    expected.push_back(std::move(row));
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(TableRows(), expected);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Failpoints, DeltaCrashTest, ::testing::Values(
    CrashCase{"delta.write.after_file=crash", Outcome::kNone, Checkpoint::kNotDue},
    CrashCase{"storage.local.before_rename=crash@1", Outcome::kNone, Checkpoint::kNotDue},
    CrashCase{"storage.local.before_fsync=crash@2", Outcome::kNone, Checkpoint::kNotDue},
    CrashCase{"storage.local.after_fsync=crash@2", Outcome::kNone, Checkpoint::kNotDue},
    CrashCase{"delta.commit.before_put=crash", Outcome::kNone, Checkpoint::kNotDue},
    CrashCase{"storage.local.before_link=crash", Outcome::kNone, Checkpoint::kNotDue},
    CrashCase{"storage.local.after_link=crash", Outcome::kWhole, Checkpoint::kRetried},
    CrashCase{"delta.commit.after_put=crash", Outcome::kWhole, Checkpoint::kRetried},
    CrashCase{"delta.commit.before_checkpoint=crash", Outcome::kWhole, Checkpoint::kRetried},
    CrashCase{"delta.checkpoint.before_write=crash", Outcome::kWhole, Checkpoint::kRetried},
    CrashCase{"storage.local.before_rename=crash@2", Outcome::kWhole, Checkpoint::kRetried},
    CrashCase{"delta.checkpoint.before_last_checkpoint=crash", Outcome::kWhole,
              Checkpoint::kComplete},
    CrashCase{"storage.local.before_rename=crash@3", Outcome::kWhole, Checkpoint::kComplete},
    CrashCase{"delta.checkpoint.after_last_checkpoint=crash", Outcome::kWhole,
              Checkpoint::kComplete}),
    [](const auto& p) {
      std::string name;
      for (char ch : p.param.failpoints) {
        name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
      }
      return name;
    });
// clang-format on

}  // namespace
}  // namespace ferry
