// Where a torture run's tables live, and the harness's own look at them: a local directory or an
// object-store URI (s3://bucket/prefix/table), with what ferry's child processes need to reach
// it (their environment: AWS_ENDPOINT_URL, keys, ...; extra `--storage-option` flags) and the
// storage options the harness opens the same table with in its own process (the harness reads
// the store directly, beside any proxy the children go through). Every look goes through the
// ObjectStore the location names (storage/store_factory.h), so the same code polls a local log
// and an S3 one: the newest version (by listing, cheap enough to poll), the txn positions, the
// rows of a table, `ferry verify` on it.
//
// Thread-safety: a TableLocation is an immutable handle to shared state; every function may be
// called from any thread (the store is opened once, under a mutex).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/storage/object_store.h"
#include "ferry/storage/storage_options.h"

namespace ferry::fault {

class Process;

class TableLocation {
 public:
  TableLocation() = default;
  // A local directory (it need not exist yet).
  static TableLocation Local(std::string path);
  // A table in an object store: `uri` (s3://...), `env` ("NAME=value") for every ferry child
  // that touches it, `flags` ("key=value", given to `run`, `verify` and `optimize` as
  // --storage-option), `harness_options` (canonical storage options, explicit credentials
  // included) for the harness's own reads.
  static TableLocation Remote(std::string uri, std::vector<std::string> env,
                              std::vector<std::string> flags,
                              storage::StorageOptions harness_options);

  const std::string& uri() const;
  bool local() const;
  const std::vector<std::string>& env() const;
  // argv followed by `--storage-option key=value` for each flag (table commands and `run`).
  std::vector<std::string> WithFlags(std::vector<std::string> argv) const;
  // The table's store for the harness, opened on first use; null (and a test failure naming
  // the location) when it cannot be opened. A local directory that does not exist yet is not
  // an error: the next call tries again.
  std::shared_ptr<storage::ObjectStore> Store() const;
  // The newest version in the table's _delta_log (-1 when none), by listing only what follows
  // the newest version seen before: cheap enough to poll. A listing that fails (the store down)
  // answers the newest version seen before.
  int64_t LatestVersion() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Waits until the table has a version newer than its newest one at the call, `ferry` exits, or
// `limit` passes.
void WaitForNewVersion(const TableLocation& table, Process* ferry, std::chrono::milliseconds limit);

// The table's txn versions by appId (no data read; empty when the table has no commit yet). A
// read that fails is tried five times, a second apart, then its error returned.
Result<std::map<std::string, int64_t>> TablePositions(const TableLocation& table);
// Every row of the latest snapshot, rendered ("col=value|..."; testing::RenderRow); empty when
// the table has no commit yet. A table that cannot be read is a test failure.
std::vector<std::string> TableRows(const TableLocation& table);

// The same rows read through delta/file_scan.h: deletion vectors applied (TableRows refuses a
// file with one), without TableRows' checks of each file against its add.
std::vector<std::string> LiveTableRows(const TableLocation& table);

// The live data files of the latest snapshot as local files a reader no one here wrote can open
// (DuckDB): a local table's own paths; an object store's files copied, through the harness's
// store, into `dir` (created). Empty when the table has no commit yet.
Result<std::vector<std::string>> LocalLiveFiles(const TableLocation& table, const std::string& dir);

// LocalLiveFiles with, for each file, the rows its deletion vector deletes (ferry's own DV
// decoding: delta/deletion_vector.h), ascending; empty for a file without one. A reader that
// cannot apply Delta's deletion vectors (DuckDB over the Parquet files) leaves these rows out by
// their position in the file (DuckDB's file_row_number).
struct LiveFile {
  std::string path;
  std::vector<uint64_t> deleted_rows;
};
Result<std::vector<LiveFile>> LocalLiveFilesWithDeletions(const TableLocation& table,
                                                          const std::string& dir);

// `ferry verify TABLE --id id --expect N --range 1..N --json`, its exit code and counts.
struct VerifyResult {
  int exit_code = -1;
  int64_t rows = -1;
  int64_t distinct = -1;
  int64_t duplicates = -1;
  int64_t missing = -1;
  int64_t position_mismatches = -1;
  std::string output;  // stdout and stderr, for failure messages
};
VerifyResult Verify(const TableLocation& table, int64_t expect);

}  // namespace ferry::fault
