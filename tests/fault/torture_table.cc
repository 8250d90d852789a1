#include "torture_table.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "torture_support.h"
#include <nlohmann/json.hpp>

#include "ferry/base/file.h"
#include "ferry/delta/deletion_vector.h"
#include "ferry/delta/file_scan.h"
#include "ferry/delta/partition_values.h"
#include "ferry/delta/stats.h"
#include "ferry/delta/table.h"
#include "ferry/storage/store_factory.h"
#include "ferry/storage/table_uri.h"
#include "ferry/testing/table_verifier.h"
#include "ferry/testing/wait_until.h"

namespace ferry::fault {

struct TableLocation::State {
  std::string uri;
  bool local = true;
  std::vector<std::string> env;
  std::vector<std::string> flags;
  storage::StorageOptions options;
  std::mutex mu;
  std::shared_ptr<storage::ObjectStore> store;  // guarded by mu
  bool reported = false;                        // guarded by mu
  std::atomic<int64_t> latest{-1};              // the newest version seen by LatestVersion
};

TableLocation TableLocation::Local(std::string path) {
  TableLocation t;
  t.state_ = std::make_shared<State>();
  t.state_->uri = std::move(path);
  return t;
}

TableLocation TableLocation::Remote(std::string uri, std::vector<std::string> env,
                                    std::vector<std::string> flags,
                                    storage::StorageOptions harness_options) {
  TableLocation t;
  t.state_ = std::make_shared<State>();
  t.state_->uri = std::move(uri);
  t.state_->local = false;
  t.state_->env = std::move(env);
  t.state_->flags = std::move(flags);
  t.state_->options = std::move(harness_options);
  return t;
}

const std::string& TableLocation::uri() const {
  return state_->uri;
}

bool TableLocation::local() const {
  return state_->local;
}

const std::vector<std::string>& TableLocation::env() const {
  return state_->env;
}

std::vector<std::string> TableLocation::WithFlags(std::vector<std::string> argv) const {
  for (const std::string& flag : state_->flags) {
    argv.push_back("--storage-option");
    argv.push_back(flag);
  }
  return argv;
}

std::shared_ptr<storage::ObjectStore> TableLocation::Store() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (state_->store != nullptr) {
    return state_->store;
  }
  Result<storage::TableUri> uri = storage::ParseTableUri(state_->uri);
  Result<std::shared_ptr<storage::ObjectStore>> store =
      uri.ok() ? storage::OpenTableStore(*uri, state_->options, storage::OpenMode::kExisting)
               : Result<std::shared_ptr<storage::ObjectStore>>(uri.status());
  if (store.ok()) {
    state_->store = *store;
  } else if (store.status().code() != StatusCode::kNotFound && !state_->reported) {
    state_->reported = true;
    ADD_FAILURE() << "the harness cannot open the table " << state_->uri << ": "
                  << store.status().ToString();
  }
  return state_->store;
}

int64_t TableLocation::LatestVersion() const {
  std::shared_ptr<storage::ObjectStore> store = Store();
  const int64_t known = state_->latest.load();
  if (store == nullptr) {
    return known;
  }
  storage::ListOptions options;
  if (known >= 0) {
    options.start_after = fmt::format("_delta_log/{:020}.json", known);
  }
  Result<std::vector<storage::ObjectInfo>> listed = store->List("_delta_log/", options);
  if (!listed.ok()) {
    return known;
  }
  int64_t latest = known;
  for (const storage::ObjectInfo& info : *listed) {
    std::string_view name = info.key;
    name.remove_prefix(name.rfind('/') + 1);
    if (name.size() == 25 && name.ends_with(".json")) {
      latest = std::max<int64_t>(latest, std::strtoll(std::string(name).c_str(), nullptr, 10));
    }
  }
  int64_t seen = state_->latest.load();
  while (seen < latest && !state_->latest.compare_exchange_weak(seen, latest)) {
  }
  return std::max(seen, latest);
}

void WaitForNewVersion(const TableLocation& table, Process* ferry,
                       std::chrono::milliseconds limit) {
  const int64_t version = table.LatestVersion();
  // Each look at a table in an object store is a LIST request: every 100 ms, not every 20, so
  // that the harness does not load the store it is testing (CPU the children need).
  const std::chrono::milliseconds poll(table.local() ? 20 : 100);
  testing::WaitUntil([&] { return !ferry->Running() || table.LatestVersion() > version; }, limit,
                     poll);
}

namespace {

// The table and its latest snapshot; nullopt-like (no table) when it has no commit yet.
struct Opened {
  std::unique_ptr<delta::Table> table;
  std::optional<delta::Snapshot> snapshot;
};

Result<Opened> OpenLatest(const TableLocation& location) {
  Opened out;
  std::shared_ptr<storage::ObjectStore> store = location.Store();
  if (store == nullptr) {
    return out;
  }
  FERRY_ASSIGN_OR_RETURN(out.table, delta::Table::Open(store, ""));
  Result<delta::Snapshot> snap = out.table->LoadSnapshot();
  if (!snap.ok() && snap.status().code() == StatusCode::kNotFound) {
    return out;
  }
  FERRY_RETURN_IF_ERROR(snap.status());
  out.snapshot = std::move(*snap);
  return out;
}

}  // namespace

Result<std::map<std::string, int64_t>> TablePositions(const TableLocation& table) {
  // A store loaded by the other tests of a CI run can fail one read: five tries, a second apart.
  Result<Opened> opened = OpenLatest(table);
  for (int attempt = 1; attempt < 5 && !opened.ok(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    opened = OpenLatest(table);
  }
  if (!opened.ok()) {
    return opened.status().WithContext("the txn positions of {}", table.uri());
  }
  std::map<std::string, int64_t> out;
  if (!opened->snapshot) {
    return out;
  }
  for (const auto& [app_id, txn] : opened->snapshot->txns()) {
    out[app_id] = txn.version;
  }
  return out;
}

std::vector<std::string> TableRows(const TableLocation& table) {
  Result<Opened> opened = OpenLatest(table);
  if (!opened.ok()) {
    ADD_FAILURE() << table.uri() << ": " << opened.status().ToString();
    return {};
  }
  if (!opened->snapshot) {
    return {};
  }
  Result<std::vector<std::string>> rows = testing::ReadTableRows(*opened->table, *opened->snapshot);
  if (!rows.ok()) {
    ADD_FAILURE() << table.uri() << ": " << rows.status().ToString();
    return {};
  }
  return std::move(*rows);
}

std::vector<std::string> LiveTableRows(const TableLocation& table) {
  Result<Opened> opened = OpenLatest(table);
  if (!opened.ok()) {
    ADD_FAILURE() << table.uri() << ": " << opened.status().ToString();
    return {};
  }
  if (!opened->snapshot) {
    return {};
  }
  std::vector<std::string> rows;
  for (const auto& [key, add] : opened->snapshot->files()) {
    Status st = delta::ScanLiveFile(*opened->table, *opened->snapshot, add, {},
                                    delta::kScanBatchRows, [&](columnar::RecordBatch& batch) {
                                      for (std::string& row : testing::RenderRows(batch)) {
                                        rows.push_back(std::move(row));
                                      }
                                      return Status::OK();
                                    });
    if (!st.ok()) {
      ADD_FAILURE() << table.uri() << ": " << st.ToString();
      return {};
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

Result<std::vector<LiveFile>> LocalLiveFilesWithDeletions(const TableLocation& table,
                                                          const std::string& dir) {
  FERRY_ASSIGN_OR_RETURN(Opened opened, OpenLatest(table));
  std::vector<LiveFile> out;
  if (!opened.snapshot) {
    return out;
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<std::string> paths, LocalLiveFiles(table, dir));
  size_t i = 0;
  // LocalLiveFiles lists the same snapshot's files in the same order, unless the table moved
  // on in between: the test reads a table no one writes any more.
  for (const auto& [key, add] : opened.snapshot->files()) {
    if (i >= paths.size()) {
      return Aborted("table {} changed while its files were read", table.uri());
    }
    LiveFile file{.path = paths[i++], .deleted_rows = {}};
    if (add.deletion_vector) {
      std::optional<int64_t> records =
          add.stats ? delta::StatsNumRecords(*add.stats) : std::nullopt;
      FERRY_ASSIGN_OR_RETURN(
          delta::RoaringBitmap64 rows,
          delta::LoadDeletionVector(*opened.table, add,
                                    records ? static_cast<uint64_t>(*records) : UINT64_MAX));
      file.deleted_rows = rows.ToVector();
    }
    out.push_back(std::move(file));
  }
  if (i != paths.size()) {
    return Aborted("table {} changed while its files were read", table.uri());
  }
  return out;
}

Result<std::vector<std::string>> LocalLiveFiles(const TableLocation& table,
                                                const std::string& dir) {
  FERRY_ASSIGN_OR_RETURN(Opened opened, OpenLatest(table));
  std::vector<std::string> out;
  if (!opened.snapshot) {
    return out;
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const auto& [key, add] : opened.snapshot->files()) {
    FERRY_ASSIGN_OR_RETURN(std::string path, delta::DecodeUriPath(add.path));
    if (table.local()) {
      out.push_back((std::filesystem::path(table.uri()) / path).string());
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(std::string bytes, opened.table->store().Read(opened.table->Key(path)));
    const std::string local = fmt::format("{}/{:06}.parquet", dir, out.size());
    FERRY_RETURN_IF_ERROR(WriteStringToFile(local, bytes, /*sync=*/false));
    out.push_back(local);
  }
  return out;
}

VerifyResult Verify(const TableLocation& table, int64_t expect) {
  VerifyResult r;
  char path_template[] = "/tmp/ferry_torture_verify_XXXXXX";
  int fd = ::mkstemp(path_template);
  if (fd >= 0) {
    ::close(fd);
  }
  const std::string out_path = path_template;
  r.exit_code = RunToExit(
      table.WithFlags({kFerry, "verify", table.uri(), "--id", "id", "--expect",
                       std::to_string(expect), "--range", fmt::format("1..{}", expect), "--json"}),
      table.env(), out_path);
  r.output = ReadFile(out_path);
  std::filesystem::remove(out_path);
  // The JSON object is the line that starts with '{' (logs may precede it).
  std::istringstream lines(r.output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '{') {
      continue;
    }
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      continue;
    }
    r.rows = j.value("rows", int64_t{-1});
    r.distinct = j.value("distinct", int64_t{-1});
    r.duplicates = j.value("duplicates", int64_t{-1});
    r.missing = j.value("missing", int64_t{-1});
    r.position_mismatches = 0;
    for (const auto& check : j.value("positions", nlohmann::json::array())) {
      r.position_mismatches += check.value("ok", false) ? 0 : 1;
    }
  }
  return r;
}

}  // namespace ferry::fault
