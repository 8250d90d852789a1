// Every `--json` output of every command is valid JSON on every table and file of
// ../shared/testdata that the command agrees to open (issue 16): `table inspect`, `table
// history`, `verify`, `optimize --dry-run`, `vacuum --dry-run`, `status --table` over the Delta
// golden and delta-kernel tables, `parquet inspect` over parquet-testing. Each stdout line is
// parsed by nlohmann's strict parser (which also refuses invalid UTF-8). The dry runs must leave
// the test data as they found it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kafka_child_process.h"
#include <nlohmann/json.hpp>

namespace ferry {
namespace {

using source::kafka::testing::CommandResult;
using source::kafka::testing::RunCommand;

const std::string kFerry = FERRY_BINARY_DIR "/src/ferry/app/ferry";
const std::filesystem::path kTestdata = FERRY_TESTDATA_DIR;

// Every directory below `root` that holds a `_delta_log`.
std::vector<std::string> DeltaTables(const std::filesystem::path& root) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.is_directory() && entry.path().filename() == "_delta_log") {
      out.push_back(entry.path().parent_path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Path -> size of every file below `root` (to show that the dry runs changed nothing).
std::map<std::string, uintmax_t> Files(const std::filesystem::path& root) {
  std::map<std::string, uintmax_t> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.is_regular_file()) {
      out[entry.path().string()] = entry.file_size();
    }
  }
  return out;
}

// Each non-empty line of `out` must parse as a JSON object; returns the number of lines.
int ExpectJsonLines(const std::vector<std::string>& argv, const CommandResult& r) {
  std::string command;
  for (const std::string& a : argv) {
    command += (command.empty() ? "" : " ") + a;
  }
  int lines = 0;
  size_t start = 0;
  while (start < r.out.size()) {
    size_t end = r.out.find('\n', start);
    if (end == std::string::npos) {
      end = r.out.size();
    }
    std::string line = r.out.substr(start, end - start);
    start = end + 1;
    if (line.empty()) {
      continue;
    }
    ++lines;
    nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(parsed.is_discarded())
        << command << " (exit " << r.exit_code << ") printed invalid JSON:\n"
        << line.substr(0, 2000);
    EXPECT_TRUE(parsed.is_discarded() || parsed.is_object()) << command << ": " << line;
  }
  return lines;
}

TEST(JsonOutputTest, EveryTableCommandOverEveryTestdataTable) {
  std::vector<std::string> tables = DeltaTables(kTestdata / "delta-golden");
  std::vector<std::string> kernel = DeltaTables(kTestdata / "delta-kernel");
  tables.insert(tables.end(), kernel.begin(), kernel.end());
  ASSERT_GE(tables.size(), 100u) << "testdata not found under " << kTestdata;
  const auto before = Files(kTestdata / "delta-golden");
  int inspected = 0;
  int verified = 0;
  for (const std::string& table : tables) {
    // verify needs an id column: the table's first one.
    std::string id_column = "id";
    CommandResult schema = RunCommand({kFerry, "table", "inspect", table, "--json"});
    nlohmann::json parsed = nlohmann::json::parse(schema.out, nullptr, false);
    if (!parsed.is_discarded() && parsed.contains("schema") && parsed["schema"].is_object() &&
        !parsed["schema"]["fields"].empty()) {
      id_column = parsed["schema"]["fields"][0]["name"].get<std::string>();
    }
    const std::vector<std::vector<std::string>> commands = {
        {kFerry, "table", "inspect", table, "--json"},
        {kFerry, "table", "history", table, "--json"},
        {kFerry, "verify", table, "--id", id_column, "--json"},
        {kFerry, "optimize", table, "--dry-run", "--json"},
        {kFerry, "vacuum", table, "--dry-run", "--json"},
        {kFerry, "status", "--table", table, "--json"},
    };
    for (const auto& argv : commands) {
      CommandResult r = RunCommand(argv);
      const int lines = ExpectJsonLines(argv, r);
      if (argv[1] == "table" && argv[2] == "inspect" && r.exit_code == 0) {
        EXPECT_EQ(lines, 1) << table << ": inspect --json printed " << lines << " lines";
        ++inspected;
      }
      if (argv[1] == "verify" && lines == 1) {
        ++verified;
      }
      // An error is reported on stderr, never as half a JSON document on stdout.
      if (r.exit_code != 0 && argv[1] != "verify") {
        EXPECT_FALSE(r.err.empty()) << argv[1] << " " << table << " failed without a message";
      }
    }
  }
  // Most of the tables open: the test must not pass because every command refused.
  EXPECT_GE(inspected, 90) << "of " << tables.size();
  EXPECT_GE(verified, 50) << "of " << tables.size();
  EXPECT_EQ(Files(kTestdata / "delta-golden"), before) << "a dry run changed the test data";
}

TEST(JsonOutputTest, ParquetInspectOverParquetTesting) {
  int files = 0;
  int opened = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(kTestdata / "parquet-testing")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".parquet") {
      continue;
    }
    ++files;
    std::vector<std::string> argv = {kFerry, "parquet", "inspect", entry.path().string(), "--json"};
    CommandResult r = RunCommand(argv);
    const int lines = ExpectJsonLines(argv, r);
    if (r.exit_code == 0) {
      EXPECT_EQ(lines, 1) << entry.path();
      ++opened;
    }
  }
  ASSERT_GE(files, 50);
  EXPECT_GE(opened, files * 3 / 4) << "of " << files;
}

}  // namespace
}  // namespace ferry
