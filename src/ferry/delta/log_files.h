// Names of the files in a table's _delta_log directory (PROTOCOL.md "Delta Log Entries",
// "Checkpoints", "Checkpoint Naming Scheme"):
//   00000000000000000007.json                                  commit of version 7
//   00000000000000000010.checkpoint.parquet                    classic checkpoint
//   00000000000000000010.checkpoint.0000000001.0000000003.parquet   part 1 of 3
//   00000000000000000010.checkpoint.<uuid>.json|parquet        v2 (UUID-named) checkpoint
//   00000000000000000004.00000000000000000006.compacted.json   log compaction (not used)
//   00000000000000000007.crc, _last_checkpoint, _sidecars/...  not log entries
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::delta {

enum class LogFileKind {
  kCommit,
  kClassicCheckpoint,
  kMultiPartCheckpoint,
  kV2CheckpointJson,
  kV2CheckpointParquet,
};

struct LogFileName {
  LogFileKind kind = LogFileKind::kCommit;
  int64_t version = 0;
  int32_t part = 0;       // kMultiPartCheckpoint: 1-based part
  int32_t num_parts = 0;  // kMultiPartCheckpoint: total parts
};

// Parses the last path segment of a log file name; nullopt for names that are not commits or
// checkpoints (checksums, compactions, _last_checkpoint, temporary files, Spark's .crc files).
std::optional<LogFileName> ParseLogFileName(std::string_view name);

// "00000000000000000007.json"
std::string CommitFileName(int64_t version);
// "00000000000000000010.checkpoint.parquet"
std::string ClassicCheckpointFileName(int64_t version);
// The zero-padded 20-digit version.
std::string PaddedVersion(int64_t version);

inline constexpr std::string_view kLogDirName = "_delta_log";
inline constexpr std::string_view kLastCheckpointName = "_last_checkpoint";
inline constexpr std::string_view kSidecarDirName = "_sidecars";

}  // namespace ferry::delta
