// Test-only writer process for delta_process_test.cc: appends to a Delta table so that several
// processes can write one table at once, or be killed at a failpoint (FERRY_FAILPOINTS in the
// environment, failpoint.h). TABLE is a local directory or a table URI (s3://bucket/prefix),
// opened through storage::OpenTableStore with the storage options of the environment
// (AWS_ENDPOINT_URL, AWS_ALLOW_HTTP, ...; storage_options.h) and the AWS credential chain.
//
//   delta_table_tool append TABLE WRITER COMMITS ROWS
//       COMMITS blind appends of ROWS rows each (one file per commit), keeping the post-commit
//       snapshot between commits. Row ids are WRITER * 1e6 + commit * 1000 + row. Prints
//       "committed <version> <attempts>" per commit.
//   delta_table_tool rounds TABLE WRITER APP_ID ROUNDS
//       For each round: reload the table, write a one-row file, print "ready <round> <position>",
//       wait for a line on stdin, then commit the file with SetPosition(APP_ID, position + 1).
//       Prints "won <round> <version> <position>" or "lost <round> <code>: <message>" followed,
//       after a reload, by "reread <round> <position>".
// The table (columns id BIGINT, writer BIGINT, n BIGINT) is created by the test.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ferry/columnar/column.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/table.h"
#include "ferry/delta/table_writer.h"
#include "ferry/delta/transaction.h"
#include "ferry/storage/store_factory.h"
#include "ferry/storage/table_uri.h"

namespace ferry {
namespace {

columnar::SchemaPtr ToolSchema() {
  return std::make_shared<const columnar::Schema>(std::vector<columnar::Field>{
      {"id", columnar::DataType::Int64(), false, {}},
      {"writer", columnar::DataType::Int64(), false, {}},
      {"n", columnar::DataType::Int64(), false, {}},
  });
}

columnar::RecordBatch Rows(int64_t writer, int64_t commit, int64_t rows) {
  auto batch = columnar::RecordBatch::MakeEmpty(ToolSchema());
  for (int64_t r = 0; r < rows; ++r) {
    batch.mutable_column(0)->As<columnar::Int64Column>()->Append(writer * 1000000 + commit * 1000 +
                                                                 r);
    batch.mutable_column(1)->As<columnar::Int64Column>()->Append(writer);
    batch.mutable_column(2)->As<columnar::Int64Column>()->Append(commit);
  }
  return batch;
}

Result<std::vector<delta::AddFile>> WriteFile(const delta::Table& table,
                                              const delta::Snapshot& snapshot, int64_t writer,
                                              int64_t commit, int64_t rows) {
  FERRY_ASSIGN_OR_RETURN(auto w, delta::TableWriter::Create(table, snapshot));
  FERRY_RETURN_IF_ERROR(w->Write(Rows(writer, commit, rows)));
  return w->Finish();
}

Status Append(const delta::Table& table, int64_t writer, int64_t commits, int64_t rows) {
  FERRY_ASSIGN_OR_RETURN(delta::Snapshot snapshot, table.LoadSnapshot());
  for (int64_t c = 0; c < commits; ++c) {
    FERRY_ASSIGN_OR_RETURN(auto adds, WriteFile(table, snapshot, writer, c, rows));
    delta::Transaction txn(table, snapshot);
    txn.AddFiles(std::move(adds));
    FERRY_ASSIGN_OR_RETURN(delta::CommitResult result, txn.Commit());
    std::printf("committed %lld %d\n", static_cast<long long>(result.version), result.attempts);
    std::fflush(stdout);
    snapshot = std::move(result.snapshot);
  }
  return Status::OK();
}

Status Rounds(const delta::Table& table, int64_t writer, const std::string& app_id,
              int64_t rounds) {
  for (int64_t round = 0; round < rounds; ++round) {
    FERRY_ASSIGN_OR_RETURN(delta::Snapshot snapshot, table.LoadSnapshot());
    int64_t position = snapshot.position(app_id).value_or(0);
    FERRY_ASSIGN_OR_RETURN(auto adds, WriteFile(table, snapshot, writer, round, 1));
    std::printf("ready %lld %lld\n", static_cast<long long>(round),
                static_cast<long long>(position));
    std::fflush(stdout);
    std::string line;
    if (!std::getline(std::cin, line)) {
      return Aborted("stdin closed");
    }
    delta::Transaction txn(table, snapshot);
    txn.AddFiles(std::move(adds));
    txn.SetPosition(app_id, position + 1);
    auto result = txn.Commit();
    if (result.ok()) {
      std::printf("won %lld %lld %lld\n", static_cast<long long>(round),
                  static_cast<long long>(result->version), static_cast<long long>(position + 1));
    } else {
      std::printf("lost %lld %s\n", static_cast<long long>(round),
                  result.status().ToString().c_str());
      FERRY_ASSIGN_OR_RETURN(delta::Snapshot reread, table.LoadSnapshot());
      std::printf("reread %lld %lld\n", static_cast<long long>(round),
                  static_cast<long long>(reread.position(app_id).value_or(0)));
    }
    std::fflush(stdout);
  }
  return Status::OK();
}

Result<std::shared_ptr<storage::ObjectStore>> Open(const std::string& location) {
  FERRY_ASSIGN_OR_RETURN(storage::TableUri uri, storage::ParseTableUri(location));
  const storage::StorageOptions options =
      storage::StorageOptionsFromEnvironment([](std::string_view name) {
        const char* v = std::getenv(std::string(name).c_str());
        return v == nullptr ? std::nullopt : std::optional<std::string>(v);
      });
  return storage::OpenTableStore(uri, options, storage::OpenMode::kExisting);
}

int Main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if ((cmd != "append" || argc != 6) && (cmd != "rounds" || argc != 6)) {
    std::fprintf(stderr,
                 "usage: delta_table_tool append TABLE WRITER COMMITS ROWS\n"
                 "       delta_table_tool rounds TABLE WRITER APP_ID ROUNDS\n");
    return 2;
  }
  Result<std::shared_ptr<storage::ObjectStore>> store = Open(argv[2]);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  auto table = delta::Table::Open(*store, "");
  if (!table.ok()) {
    std::fprintf(stderr, "%s\n", table.status().ToString().c_str());
    return 1;
  }
  int64_t writer = std::atoll(argv[3]);
  Status st = cmd == "append" ? Append(**table, writer, std::atoll(argv[4]), std::atoll(argv[5]))
                              : Rounds(**table, writer, argv[4], std::atoll(argv[5]));
  if (!st.ok()) {
    std::fprintf(stderr, "delta_table_tool: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ferry

int main(int argc, char** argv) {
  // stdout carries the protocol lines the test reads ("ready", "won", "reread"); the library's
  // log lines (a store's retry warnings under load) go to stderr, where they cannot be misread.
  spdlog::set_default_logger(spdlog::stderr_logger_mt("delta_table_tool"));
  return ferry::Main(argc, argv);
}
