// KeyIndex: where the live row of each key of an upsert table is (docs/cdc.md): key -> (data
// file, physical row index in that file, sequence), so that an upsert batch finds the rows it
// replaces or deletes without scanning the table.
//
// The index is derived from the table only, so it can never disagree with it after a crash:
//   - Rebuild(): every live file of the snapshot, its key (and sequence) columns read with the
//     table reader (delta/file_scan.h); rows its deletion vector deletes are left out, and the
//     physical row index of each live row is kept (a deletion vector names physical rows).
//   - CatchUp(): the commits after the index's version, read from the log in order: a file
//     removed drops its keys (when they still point at it); a file removed and added again with
//     another deletion vector (a DELETE, ferry's own upsert) drops only the rows the new vector
//     deletes; a file added is read like Rebuild reads it. This is also how the index learns
//     ferry's own commits, so it stays exact whatever other writers (Spark OPTIMIZE, MERGE,
//     DELETE) do. A commit that cannot be read (a log cleaned past the index) makes it rebuild.
// Work per batch is proportional to the commits since the last batch (the files they add).
//
// A key that is in two live files at once (a table another writer filled with duplicates) keeps
// the location read last; the upsert then replaces that one only (logged at rebuild as a count).
// Deleted keys are remembered, with their sequence, while the process runs (so an older change
// arriving later does not bring them back); a rebuild forgets them.
//
// Not yet persisted beside the table: a start rebuilds from the table's files (reading only
// the key and sequence columns).
//
// Thread-safety: one thread (the writer thread of the pipeline).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/roaring_bitmap.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/pipeline/change_keys.h"

namespace ferry::pipeline {

class KeyIndex {
 public:
  struct Entry {
    int32_t file = -1;  // -1: the key is deleted (kept for its sequence)
    int64_t row = 0;
    int64_t sequence = kNoSequence;
  };

  explicit KeyIndex(ChangeKeys keys) : keys_(std::move(keys)) {}

  Status Rebuild(const delta::Table& table, const delta::Snapshot& snapshot);
  // Applies the commits after version() up to `snapshot`'s version (Rebuild if the index was
  // never built or a commit is gone).
  Status CatchUp(const delta::Table& table, const delta::Snapshot& snapshot);

  // nullptr when the key was never seen.
  const Entry* Find(const std::string& key) const;
  // The log path (add.path) of an entry's file.
  const std::string& path(int32_t file) const { return files_[static_cast<size_t>(file)].path; }
  // A key deleted by this process (Entry::file = -1) with its sequence.
  void NoteDeleted(const std::string& key, int64_t sequence);

  int64_t version() const { return version_; }
  size_t live_keys() const { return live_; }
  int64_t files_read() const { return files_read_; }
  const ChangeKeys& keys() const { return keys_; }

 private:
  struct File {
    std::string path;
    std::vector<std::string> keys;  // by physical row; empty for rows not live
  };
  Status AddFile(const delta::Table& table, const delta::Snapshot& snapshot,
                 const delta::AddFile& add);
  void DropFile(const std::string& path);
  // `path` was re-added with deletion vector rows `deleted`: those rows leave the index.
  void DropRows(const std::string& path, const delta::RoaringBitmap64& deleted);
  void Clear();

  ChangeKeys keys_;
  std::unordered_map<std::string, Entry> entries_;
  std::vector<File> files_;
  std::unordered_map<std::string, int32_t> file_ids_;  // live files only
  std::vector<int32_t> free_ids_;
  int64_t version_ = -1;
  size_t live_ = 0;
  int64_t files_read_ = 0;
};

}  // namespace ferry::pipeline
