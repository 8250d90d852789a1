// The mutable state behind a Snapshot and the replay that builds it; shared by the snapshot
// loader, the commit path (which applies its own commit to the read snapshot) and checkpoints.
// Not part of the delta API.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/types.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/snapshot.h"

namespace ferry::delta {

struct SnapshotState {
  int64_t version = -1;
  std::optional<Protocol> protocol;
  std::optional<Metadata> metadata;
  columnar::SchemaPtr schema;
  int64_t metadata_version = -1;  // where the current metaData came from (error messages)
  std::string metadata_file;      // the log file that held it, when known (error messages)
  std::map<FileKey, AddFile> files;
  std::map<FileKey, RemoveFile> tombstones;
  std::map<std::string, Txn> txns;
  std::map<std::string, DomainMetadata> domains;
  int64_t timestamp_ms = 0;
  // commitInfo.inCommitTimestamp of the commit at `version`; nullopt when it had none or the
  // state ends at a checkpoint (checkpoints keep no commitInfo).
  std::optional<int64_t> in_commit_timestamp;
  std::optional<int64_t> newest_checkpoint_version;
  // Cached file totals, kept in step with `files`.
  int64_t total_size = 0;
};

// Copy-on-write access to a snapshot's state: the state itself when `snapshot` is its only
// owner (the caller moved it in), else a private copy that `snapshot` now holds.
SnapshotState* MutableState(Snapshot* snapshot);

// Applies the actions of one commit (or one checkpoint) to `state`: removes before adds, as a
// valid commit never adds and removes the same logical file. Protocol and metaData replace the
// current ones. commitInfo, cdc and v2-checkpoint bookkeeping actions are ignored.
void ApplyActions(std::vector<Action>&& actions, int64_t version, SnapshotState* state);

// After replay: checks protocol and metaData are present and readable, parses the schema.
// `where` names the log for error messages.
Status FinishReplay(const std::string& where, SnapshotState* state);

}  // namespace ferry::delta
