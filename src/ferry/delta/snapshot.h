// Snapshot: the state of a Delta table at one version, reconstructed from its log (PROTOCOL.md
// "Action Reconciliation"): the latest protocol and metaData, the live logical files (add minus
// remove, keyed by path and deletion-vector id), the tombstones checkpoints must keep, the latest
// txn per appId (ferry's committed source positions), and domain metadata.
//
// Snapshots come from Table (table.h): LoadSnapshot() for the latest or a given version (time
// travel), Update() to move a snapshot forward by applying only the newer commits, and the
// result of every commit. A Snapshot is an immutable value that shares its state: copies are
// cheap, and Update() of the only copy reuses the state instead of copying it.
//
// Thread-safety: const methods may be called from many threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/table_properties.h"

namespace ferry::delta {

struct SnapshotState;

class Snapshot {
 public:
  // A snapshot of no table (version -1); only useful as a placeholder.
  Snapshot();
  explicit Snapshot(std::shared_ptr<SnapshotState> state) : state_(std::move(state)) {}

  int64_t version() const;
  const Protocol& protocol() const;
  const Metadata& metadata() const;
  // The table schema, partition columns included, parsed from metaData.schemaString.
  const columnar::SchemaPtr& schema() const;
  const std::vector<std::string>& partition_columns() const { return metadata().partition_columns; }
  // The schema of the data files: the table schema without the partition columns.
  columnar::SchemaPtr data_schema() const;

  // Live logical files, ordered by (path, deletion vector id).
  const std::map<FileKey, AddFile>& files() const;
  // Removed files not yet expired (kept for checkpoints; VACUUM uses them).
  const std::map<FileKey, RemoveFile>& tombstones() const;
  // Latest txn per appId.
  const std::map<std::string, Txn>& txns() const;
  // Domains that are not removed.
  const std::map<std::string, DomainMetadata>& domain_metadata() const;

  // The committed position of a source partition: the latest txn version of `app_id`, or
  // nullopt when the table holds none.
  std::optional<int64_t> position(std::string_view app_id) const;

  // Modification time of this version's commit (or its inCommitTimestamp), ms since the epoch.
  int64_t timestamp_ms() const;
  // The inCommitTimestamp of this version's commit (In-Commit Timestamps); nullopt when that
  // commit has none, or when the snapshot ends at a checkpoint (which keeps no commitInfo: read
  // the commit file of version() to learn it).
  std::optional<int64_t> in_commit_timestamp() const;
  // The newest complete checkpoint known when this snapshot was built (any version).
  std::optional<int64_t> newest_checkpoint_version() const;
  // The `delta.*` properties of metaData.configuration (table_properties.h).
  Result<TableProperties> properties() const;

  // Totals over the live files. num_records() sums stats.numRecords (logical rows: minus
  // deletion-vector cardinality); nullopt if any file lacks numRecords.
  int64_t num_files() const;
  int64_t size_bytes() const;
  std::optional<int64_t> num_records() const;

  const SnapshotState& state() const { return *state_; }

 private:
  friend SnapshotState* MutableState(Snapshot* snapshot);
  std::shared_ptr<SnapshotState> state_;
};

}  // namespace ferry::delta
