// Reading checkpoints into actions (PROTOCOL.md "Checkpoints", "Checkpoint Schema"):
//   - classic and multi-part checkpoints: Parquet files with one optional struct column per
//     action (txn, add, remove, metaData, protocol, domainMetadata; v2 adds checkpointMetadata
//     and sidecar); every row holds one action;
//   - UUID-named v2 checkpoints in JSON (one action per line) or Parquet;
//   - the sidecar files a v2 checkpoint names (Parquet, add/remove only, in _delta_log/_sidecars).
// Columns are matched by name, never by position (delta-rs orders them differently), and
// missing columns or struct fields read as null. stats_parsed and partitionValues_parsed are
// ignored (the JSON stats string is what ferry keeps).
//
// Errors name the checkpoint version and file: DataLoss for a part or sidecar that is missing or
// does not decode.
//
// Thread-safety: stateless functions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ferry/base/io.h"
#include "ferry/base/result.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/log_segment.h"
#include "ferry/storage/object_store.h"

namespace ferry::delta {

// Every action of `checkpoint` (all parts; sidecars of a v2 checkpoint included).
Result<std::vector<Action>> ReadCheckpoint(storage::ObjectStore& store, const std::string& log_dir,
                                           const CheckpointFiles& checkpoint);

// The actions in the rows of one Parquet checkpoint part or sidecar file.
Result<std::vector<Action>> ReadParquetActions(std::shared_ptr<const RandomAccessFile> file);

}  // namespace ferry::delta
