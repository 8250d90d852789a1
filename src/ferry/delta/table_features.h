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
//   invariants, checkConstraints, generatedColumns, identityColumns, allowColumnDefaults
//                        implemented for top-level columns: the rules are read by
//                        column_rules.h and evaluated per row by the pipeline
//                        (pipeline/table_rules.h). CHECK constraints may read nested fields
//                        (`s.x > 0`); invariants and NOT NULL are honoured on fields inside
//                        structs too; other such metadata on a nested field, and invariants
//                        below an array or a map, are refused
//   columnMapping        honoured in modes name and id (column_mapping.h): physical names and
//                        field ids in the data files, physical names in partitionValues and
//                        stats, new columns get ids and physical names; refused when the schema
//                        lacks an id or physical name, or the mode is unknown
//   inCommitTimestamp    implemented (transaction.h): when enabled (InCommitTimestampsEnabled),
//                        commitInfo is the first action of every commit and carries
//                        inCommitTimestamp = max(now, previous commit's ICT + 1) -- the previous
//                        commit's file time when this commit enables it; a commit that enables
//                        it after version 0 records delta.inCommitTimestampEnablementVersion /
//                        Timestamp
//   rowTracking          implemented (transaction.h) unless suspended (RowTrackingActive): every
//                        add gets baseRowId (above the `delta.rowTracking` domain's
//                        rowIdHighWaterMark, contiguous in commit order) and
//                        defaultRowCommitVersion = the commit's version; the commit raises the
//                        high-water mark with a domainMetadata action; removes carry the ids of
//                        the add they remove; a retry at a later version reassigns all of it.
//                        ferry's optimize keeps stable row ids and commit versions where row
//                        tracking is *enabled* (materialized columns, optimize.h)
//   clustering           implemented for appends: the `delta.clustering` domain is kept as it is,
//                        and stats cover every clustering column (ClusteringColumns, added to
//                        the stats columns by TableWriter). ferry's optimize clusters by the
//                        clustering columns (optimize.h, clustering_order.h)
//   domainMetadata       domains are kept by replay and checkpoints; the only domain ferry writes
//                        is delta.rowTracking, recomputed when a concurrent commit changed it
//   changeDataFeed, timestampNtz, vacuumProtocolCheck, typeWidening(-preview)
//                        nothing to do for an append
//   deletionVectors      nothing to do for an append (ferry writes no DV yet); readers of rows
//                        (file_scan.h) apply DVs (deletion_vector.h), optimize purges them
//   v2Checkpoint         PROTOCOL.md ("Checkpoints": writers are always allowed to create a
//                        classic checkpoint following the V1 spec; "V2 Checkpoint Table
//                        Feature": classic checkpoints may follow V1 or V2; only multi-part ones
//                        are forbidden) allows the classic V1 checkpoints ferry writes; a table
//                        with delta.checkpointPolicy = v2 gets classic-named V2 spec checkpoints
//                        (checkpoint_writer.h)
// Everything else (icebergCompat*, collations, variantType, catalogManaged, unknown names) is
// NotSupported naming the feature.
//
// Legacy protocols (no feature lists) imply features: writer 2 appendOnly+invariants, 3
// +checkConstraints, 4 +changeDataFeed+generatedColumns, 5 +columnMapping, 6
// +identityColumns; reader 2 columnMapping.
//
// Thread-safety: stateless functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
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

// The system domains ferry reads or writes.
inline constexpr const char* kRowTrackingDomain = "delta.rowTracking";
inline constexpr const char* kClusteringDomain = "delta.clustering";

// In-Commit Timestamps are enabled: the feature is listed and delta.enableInCommitTimestamps is
// true.
bool InCommitTimestampsEnabled(const Protocol& protocol, const Metadata& metadata);

// Row tracking is supported and not suspended (delta.rowTrackingSuspended): writers must assign
// row ids and row commit versions to every add.
bool RowTrackingActive(const Protocol& protocol, const Metadata& metadata);
// Row tracking is enabled (delta.enableRowTracking): rows copied by a rewrite must keep their
// stable ids (materialized row id columns, written by optimize).
bool RowTrackingEnabled(const Protocol& protocol, const Metadata& metadata);

// The rowIdHighWaterMark of the delta.rowTracking domain; -1 (nothing assigned yet) when the
// domain is absent. DataLoss when its configuration does not hold one.
Result<int64_t> RowIdHighWaterMark(const std::map<std::string, DomainMetadata>& domains);
// The delta.rowTracking domain action recording `high_water_mark`.
DomainMetadata RowIdHighWaterMarkDomain(int64_t high_water_mark);

// The table's clustering columns (the `clustering` feature): the delta.clustering domain's
// clusteringColumns, each a dotted path (Spark stores paths as lists of names, PROTOCOL.md's
// example as plain names; both are read). Empty when the table is not clustered. DataLoss when
// the domain does not parse.
Result<std::vector<std::string>> ClusteringColumns(
    const Protocol& protocol, const std::map<std::string, DomainMetadata>& domains);

}  // namespace ferry::delta
