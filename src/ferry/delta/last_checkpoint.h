// _delta_log/_last_checkpoint: a hint pointing at a recent checkpoint (PROTOCOL.md "Last
// Checkpoint File Schema"). It is only a hint: it may be missing, stale (older than the newest
// checkpoint), corrupt, or written by a tool that spelled the keys in snake_case (a delta-rs
// release wrote `size_in_bytes`). Readers confirm it by listing; a hint that does not parse is
// treated as absent.
//
// Thread-safety: stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::delta {

struct LastCheckpoint {
  int64_t version = 0;
  std::optional<int64_t> size;  // actions in the checkpoint
  std::optional<int64_t> parts;
  std::optional<int64_t> size_in_bytes;
  std::optional<int64_t> num_of_add_files;
  // v2 checkpoints: the UUID-named checkpoint file (`v2Checkpoint.path`).
  std::optional<std::string> v2_checkpoint_path;
};

// nullopt when the text is not a usable hint (not JSON, no integer version, negative version).
std::optional<LastCheckpoint> ParseLastCheckpoint(std::string_view text);

// {"version":..,"size":..,"sizeInBytes":..,"numOfAddFiles":..} as Spark writes it (camelCase).
std::string LastCheckpointToJson(const LastCheckpoint& hint);

}  // namespace ferry::delta
