// Writing a classic-named Parquet checkpoint and then _last_checkpoint (PROTOCOL.md
// "Checkpoints", "Checkpoint Schema", "Last Checkpoint File Schema"). The checkpoint follows the
// V1 spec, which PROTOCOL.md allows for every table ("Writers are always allowed create a
// classic checkpoint following v1 spec"), v2Checkpoint tables included; a table that asks for
// V2 checkpoints (the v2Checkpoint feature and delta.checkpointPolicy = v2, Spark's switch) gets
// a classic-named V2 spec checkpoint instead: the same rows plus one checkpointMetadata row
// {version, tags {}} in a checkpointMetadata column, all file actions inline (no sidecars, which
// the V2 spec allows; the table "Allowed combinations" marks V2 + classic name valid).
//
// Writing, numbered [failpoints in brackets]:
//   1. Collect the snapshot's actions: protocol, metaData, every txn (ferry's positions must
//      survive log cleanup), domain metadata, the live adds, and the removes whose
//      deletionTimestamp is within delta.deletedFileRetentionDuration. No commitInfo.
//   2. Write them as rows of `<v>.checkpoint.parquet` with the column layout Spark writes
//      (txn, add, remove, metaData, protocol, domainMetadata, and checkpointMetadata for a V2
//      checkpoint; every action an optional struct;
//      maps as key_value groups; add.stats as the JSON string, or no stats column when
//      delta.checkpoint.writeStatsAsJson is false) through the store's atomic writer: the file
//      appears complete or not at all. [delta.checkpoint.before_write]
//   3. Put `_last_checkpoint` = {version, size, sizeInBytes, numOfAddFiles}, unless it already
//      names a newer version (another writer's checkpoint landed meanwhile: the hint never
//      moves back).
//      [delta.checkpoint.before_last_checkpoint, delta.checkpoint.after_last_checkpoint]
// A crash between 2 and 3 leaves a valid checkpoint that _last_checkpoint does not name yet:
// readers find it by listing. A crash before 2 completes leaves nothing. Either way the next
// commit writes the checkpoint again (transaction.h, step 6).
//
// Tables with delta.checkpoint.writeStatsAsStruct=true get no checkpoint from ferry (it does not
// write stats_parsed); the protocol never requires a checkpoint, so this is safe, only slower to
// read.
//
// Thread-safety: stateless functions; concurrent writers of the same checkpoint write the same
// content and the last one wins, as the protocol allows.
#pragma once

#include <cstdint>

#include "ferry/base/status.h"
#include "ferry/delta/snapshot.h"

namespace ferry::delta {

class Table;

// The table asks for V2 spec checkpoints (see above).
bool WritesV2Checkpoints(const Snapshot& snapshot);

// Writes the checkpoint of `snapshot` (its version) and updates _last_checkpoint.
Status WriteCheckpoint(const Table& table, const Snapshot& snapshot);

}  // namespace ferry::delta
