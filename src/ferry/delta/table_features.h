// Protocol versions and table features: what ferry can read and write (PROTOCOL.md "Protocol
// Evolution", "Table Features", "Valid Feature Names in Table Features").
//
// Reading (a snapshot: the log, checkpoints, positions) works up to reader version 3 with the
// reader features columnMapping, deletionVectors, timestampNtz, v2Checkpoint,
// vacuumProtocolCheck, typeWidening and typeWidening-preview. Anything else (variantType,
// catalogManaged, reader version 4+) is NotSupported, naming the feature or version.
//
// Writing (appends) works up to writer version 7 when every writer feature is implemented or
// provably unused by an append:
//   appendOnly           honoured: ferry only adds files
//   invariants, checkConstraints  ferry does not evaluate SQL; a table that *has* an invariant
//                        (`delta.invariants` column metadata) or a CHECK constraint
//                        (`delta.constraints.*`) is refused, one without is fine
//   generatedColumns, identityColumns, allowColumnDefaults
//                        refused if a column uses them, fine otherwise
//   columnMapping        honoured in modes name and id (column_mapping.h): physical names and
//                        field ids in the data files, physical names in partitionValues and
//                        stats, new columns get ids and physical names; refused when the schema
//                        lacks an id or physical name, or the mode is unknown
//   changeDataFeed, deletionVectors, domainMetadata, timestampNtz, vacuumProtocolCheck,
//   v2Checkpoint, typeWidening(-preview)   nothing to do for an append (v2Checkpoint tables
//                        accept the classic V1 checkpoints ferry writes)
// Everything else (rowTracking, inCommitTimestamp, clustering, icebergCompat*, collations,
// variantType, unknown names) is NotSupported naming the feature.
//
// Legacy protocols (no feature lists) imply features: writer 2 appendOnly+invariants, 3
// +checkConstraints, 4 +changeDataFeed+generatedColumns, 5 +columnMapping, 6
// +identityColumns; reader 2 columnMapping.
//
// Thread-safety: stateless functions.
#pragma once

#include <string>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/columnar/types.h"
#include "ferry/delta/actions.h"

namespace ferry::delta {

inline constexpr int32_t kMaxReaderVersion = 3;
inline constexpr int32_t kMaxWriterVersion = 7;

// The reader / writer features a protocol requires, legacy versions expanded.
std::vector<std::string> EffectiveReaderFeatures(const Protocol& protocol);
std::vector<std::string> EffectiveWriterFeatures(const Protocol& protocol);

// OK if ferry can build a snapshot of a table with this protocol; NotSupported otherwise.
Status CheckReadSupported(const Protocol& protocol);

// OK if ferry may append to a table with this protocol, metadata and schema; NotSupported naming
// the feature, constraint or column otherwise.
Status CheckWriteSupported(const Protocol& protocol, const Metadata& metadata,
                           const columnar::Schema& schema);

}  // namespace ferry::delta
