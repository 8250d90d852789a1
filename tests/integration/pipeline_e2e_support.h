// Helpers of the `ferry run` end-to-end tests (Kafka and JetStream): a fresh directory per test,
// a nats-server with a client (or a loud skip), read a table back with ferry's own Delta and
// Parquet readers (or wait for its rows), and count it again with DuckDB (tests/duckdb).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ferry::testing {
class JetStreamTestClient;
class NatsServer;
}  // namespace ferry::testing

namespace ferry::e2e {

// An empty directory TMPDIR/PREFIX-PID-NAME, removed first if an earlier run left it; NAME is
// the running test's name unless given, with '/' (parameterized tests) turned into '_'.
std::filesystem::path FreshTestDir(const std::string& prefix, const std::string& name = "");

// Starts a nats-server (ferry/testing/nats_server.h) and connects a test client to it.
// `server`: a name of testing::TestedNatsServers() or a path; a missing binary then FAILS the
// test, naming how to install it (`make setup-nats`), as CI installs every tested server. Empty:
// the run's default (FERRY_NATS_SERVER, else Debian's), and a missing binary skips the test
// loudly (GTEST_SKIP). Any other failure is fatal. In SetUp:
// ASSERT_NO_FATAL_FAILURE(StartNatsServer(&server, &client)), then return if IsSkipped().
void StartNatsServer(std::unique_ptr<testing::NatsServer>* server,
                     std::unique_ptr<testing::JetStreamTestClient>* client,
                     const std::string& server_name = "");

struct TableContents {
  int64_t version = -1;
  std::vector<std::string> rows;        // "col=value|col=value" (testing::RenderRow), sorted
  std::map<std::string, int64_t> txns;  // appId -> version
  std::vector<std::string> files;       // absolute paths of the live files
  int deletion_vectors = 0;             // live files carrying one (ReadLiveTable only)
};

// Empty contents (version -1) when the directory holds no table yet. A live file with a deletion
// vector fails the test: use ReadLiveTable.
TableContents ReadTable(const std::string& dir);
// ReadTable for tables with deletion vectors (upserts): each file's live rows, the vector
// applied by ferry's file scan (delta/file_scan.h).
TableContents ReadLiveTable(const std::string& dir);

// The value of `column` in a rendered row ("" when absent).
std::string Field(std::string_view row, std::string_view column);
int64_t IntField(std::string_view row, std::string_view column);

// Polls the table every 100 ms until it holds at least `rows` rows or `deadline` passes;
// returns the last count.
size_t WaitForRows(const std::string& table, size_t rows, std::chrono::seconds deadline);

// The rows DuckDB returns for `sql` (one JSON object each; BIGINTs as strings). `{files}` in
// `sql` becomes the list of `files` for read_parquet. A failure of DuckDB fails the test.
std::vector<nlohmann::json> DuckDbRows(const std::vector<std::string>& files, std::string sql);

// EXPECTs that DuckDB counts `n` rows and `n` distinct values of `column` in the live files.
void ExpectDuckDbCounts(const std::vector<std::string>& files, const std::string& column, size_t n);

}  // namespace ferry::e2e
