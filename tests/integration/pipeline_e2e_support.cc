#include "pipeline_e2e_support.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "ferry/delta/file_scan.h"
#include "ferry/delta/table.h"
#include "ferry/storage/local_store.h"
#include "ferry/testing/table_verifier.h"
#include "ferry/testing/wait_until.h"

namespace ferry::e2e {

std::filesystem::path FreshTestDir(const std::string& prefix, const std::string& name) {
  std::string test =
      name.empty() ? ::testing::UnitTest::GetInstance()->current_test_info()->name() : name;
  // A parameterized test's name ends in "/N": one directory level, not two (the parent would
  // be left behind).
  std::replace(test.begin(), test.end(), '/', '_');
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("{}-{}-{}", prefix, getpid(), test);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

namespace {

// ReadTable and ReadLiveTable: `live`, each file's rows read through delta/file_scan.h with its
// deletion vector applied; otherwise testing::ReadTableRows (which refuses deletion vectors).
TableContents ReadTableContents(const std::string& dir, bool live) {
  TableContents out;
  if (!std::filesystem::exists(dir + "/_delta_log")) {
    return out;
  }
  auto store = storage::LocalStore::Create(dir);
  EXPECT_TRUE(store.ok());
  auto table = delta::Table::Open(std::shared_ptr<storage::ObjectStore>(std::move(*store)), "");
  EXPECT_TRUE(table.ok());
  auto snap = (*table)->LoadSnapshot();
  if (!snap.ok() && snap.status().code() == StatusCode::kNotFound) {
    return out;  // created, first commit not written yet
  }
  if (!snap.ok()) {
    ADD_FAILURE() << snap.status().ToString();
    return out;
  }
  out.version = snap->version();
  if (!live) {
    auto rows = testing::ReadTableRows(**table, *snap);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (rows.ok()) {
      out.rows = std::move(*rows);
    }
  }
  for (const auto& [app_id, txn] : snap->txns()) {
    out.txns[app_id] = txn.version;
  }
  for (const auto& [key, add] : snap->files()) {
    Result<std::string> path = delta::RelativeFilePath(add);  // the URI encoding undone
    EXPECT_TRUE(path.ok()) << path.status().ToString();
    out.files.push_back(dir + "/" + path.value_or(add.path));
    if (live) {
      out.deletion_vectors += add.deletion_vector ? 1 : 0;
      Result<columnar::RecordBatch> rows = delta::ReadLiveFile(**table, *snap, add);
      EXPECT_TRUE(rows.ok()) << rows.status().ToString();
      if (rows.ok()) {
        for (std::string& row : testing::RenderRows(*rows)) {
          out.rows.push_back(std::move(row));
        }
      }
    }
  }
  if (live) {
    std::sort(out.rows.begin(), out.rows.end());  // as ReadTableRows sorts them
  }
  return out;
}

}  // namespace

TableContents ReadTable(const std::string& dir) {
  return ReadTableContents(dir, /*live=*/false);
}

TableContents ReadLiveTable(const std::string& dir) {
  return ReadTableContents(dir, /*live=*/true);
}

std::string Field(std::string_view row, std::string_view column) {
  std::string needle = std::string(column) + "=";
  size_t at = 0;
  while (true) {
    at = row.find(needle, at);
    if (at == std::string_view::npos) {
      return "";
    }
    if (at == 0 || row[at - 1] == '|') {
      break;
    }
    ++at;
  }
  size_t begin = at + needle.size();
  size_t end = row.find('|', begin);
  return std::string(
      row.substr(begin, end == std::string_view::npos ? row.size() - begin : end - begin));
}

int64_t IntField(std::string_view row, std::string_view column) {
  std::string v = Field(row, column);
  return v.empty() ? -1 : std::stoll(v);
}

size_t WaitForRows(const std::string& table, size_t rows, std::chrono::seconds deadline) {
  size_t have = 0;
  testing::WaitUntil(
      [&] {
        have = ReadTable(table).rows.size();
        return have >= rows;
      },
      deadline);
  return have;
}

std::vector<nlohmann::json> DuckDbRows(const std::vector<std::string>& files, std::string sql) {
  std::string list;
  for (const std::string& f : files) {
    list += (list.empty() ? "'" : ", '") + f + "'";
  }
  for (size_t at = sql.find("{files}"); at != std::string::npos; at = sql.find("{files}")) {
    sql.replace(at, 7, "[" + list + "]");
  }
  std::string cmd = "node " + std::string(FERRY_SOURCE_DIR) + "/tests/duckdb/query.mjs '";
  for (char c : sql) {
    cmd += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  cmd += "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr) << "cannot run: " << cmd;
  if (p == nullptr) {
    return {};
  }
  std::string out;
  char buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), p)) > 0) {
    out.append(buf, got);
  }
  EXPECT_EQ(pclose(p), 0) << sql << "\n" << out.substr(0, 4000);
  std::vector<nlohmann::json> rows;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
    EXPECT_TRUE(row.is_object()) << "DuckDB printed: " << line;
    rows.push_back(std::move(row));
  }
  return rows;
}

void ExpectDuckDbCounts(const std::vector<std::string>& files, const std::string& column,
                        size_t n) {
  std::string list;
  for (const std::string& f : files) {
    list += (list.empty() ? "'" : ", '") + f + "'";
  }
  std::string sql = "SELECT count(*)::VARCHAR AS n, count(DISTINCT " + column +
                    ")::VARCHAR AS d FROM read_parquet([" + list + "])";
  std::string cmd =
      "node " + std::string(FERRY_SOURCE_DIR) + "/tests/duckdb/query.mjs \"" + sql + "\" 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr) << "cannot run: " << cmd;
  std::string out;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), p)) > 0) {
    out.append(buf, got);
  }
  EXPECT_EQ(pclose(p), 0) << out;
  // One row, the counts as strings (DuckDB's BIGINTs print as strings). Anything else (DuckDB
  // missing: `make setup-npm`) fails here with DuckDB's output, not with a JSON exception below.
  nlohmann::json duck = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(duck.is_object()) << "DuckDB printed no JSON object:\n" << out;
  EXPECT_EQ(duck.value("n", std::string()), std::to_string(n)) << duck.dump();
  EXPECT_EQ(duck.value("d", std::string()), std::to_string(n)) << duck.dump();
}

}  // namespace ferry::e2e
