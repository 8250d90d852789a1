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
// Persisted beside the table (Load() and Persist() with a pipeline id): one file,
// `_ferry/upsert/<pipeline id>/keys.idx` (index_dir.h), holds the whole index at one table
// version: every indexed file's path and, per physical row, its key (empty for a row not live),
// whether the key's entry points at that row, and its sequence; then the deleted keys with their
// sequence. Load() reads it and catches up from the log (the files the later commits add: the
// data files of the table are read only for those), and rebuilds from the table instead when the
// file is missing, damaged (its checksum), of another table (metaData id) or key, newer than the
// table, or when a commit after it has left the log. The file is never needed for correctness:
// it is written (replaced whole, atomically) after a Load() that rebuilt or read commits from
// the log, and by Persist() at the cadence its owner chooses (upsert_commit.h). Processes of one
// pipeline id may share it: each writes a complete index of some version, and a reader catches
// up from whatever version it finds.
//
// File format, version 1: magic "FERRYKIX", a format version byte (1), then as varints and
// varint-length strings: table id, the key columns joined by ',', the sequence column (or ""),
// the pruning partition columns joined by ',' (or ""), table version, file count, per file its
// path, row count and per row key, flags (1: the entry points here) and sequence (zig-zag); the
// count of deleted keys and each key with its sequence; the loaded partitions; the files of the
// partitions not loaded (path, partition); last, the XXH64 of everything before, little-endian.
//
// Partition pruning (UsePartitions): when every partition column of the table is a key column
// of an integer, string or date type, a key's partition follows from the key. Then Rebuild()
// and CatchUp() read no data file: they note each file under its partition, and
// LoadPartitions() reads the files of the partitions a batch touches, once; a loaded partition
// is kept up to date like an unpartitioned table from then on. The partitions not loaded are
// persisted as their file paths.
//
// Thread-safety: one thread (the writer thread of the pipeline).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/actions.h"
#include "ferry/delta/roaring_bitmap.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/pipeline/change_keys.h"

namespace ferry::pipeline {

// What the last Load() did, for logs and tests.
struct KeyIndexLoad {
  bool rebuilt = false;
  std::string reason;            // why the persisted index was not used
  int64_t base_version = -1;     // the persisted index's version, when used
  int64_t commits_from_log = 0;  // versions read from the Delta log after it
  int64_t files_read = 0;        // data files read (rebuild or catch-up)
};

class KeyIndex {
 public:
  struct Entry {
    int32_t file = -1;  // -1: the key is deleted (kept for its sequence)
    int64_t row = 0;
    int64_t sequence = kNoSequence;
  };

  explicit KeyIndex(ChangeKeys keys) : keys_(std::move(keys)) {}

  // The index as of `snapshot`: from the persisted file of pipeline `name` caught up from the
  // log, or rebuilt (see above; `name` empty: always rebuilt, nothing written). A failed write
  // of the file is logged, not returned.
  Status Load(const delta::Table& table, const delta::Snapshot& snapshot, const std::string& name);
  // Writes the index (at version()) as pipeline `name`'s file; `snapshot` is of the same table.
  // An error leaves the table correct (the next start reads more of the log, or rebuilds).
  Status Persist(const delta::Table& table, const delta::Snapshot& snapshot,
                 const std::string& name) const;
  // The key of pipeline `name`'s file beside `table`.
  static std::string IndexFileKey(const delta::Table& table, const std::string& name);
  const KeyIndexLoad& last_load() const { return last_load_; }

  // Turns partition pruning on when `partition_columns` (the table's) are all key columns of an
  // integer, string or date type; off otherwise. REQUIRES: before Load()/Rebuild().
  void UsePartitions(const columnar::Schema& schema,
                     const std::vector<std::string>& partition_columns);
  bool prunes() const { return !partition_columns_.empty(); }
  // The partitions of `rows` (the key columns by name) at `which`, as LoadPartitions takes them.
  std::set<std::string> RowPartitions(const columnar::RecordBatch& rows,
                                      const std::vector<int64_t>& which) const;
  // Reads the files of those of `partitions` not loaded yet (their keys become findable).
  // REQUIRES: the index is at `snapshot`'s version.
  Status LoadPartitions(const delta::Table& table, const delta::Snapshot& snapshot,
                        const std::set<std::string>& partitions);

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
  // The partition of a file (its partitionValues) in the form RowPartitions gives.
  std::string FilePartition(const delta::Snapshot& snapshot, const delta::AddFile& add) const;
  // Load() from the persisted file; a non-empty string is why it could not be used.
  Result<std::string> LoadPersisted(const delta::Table& table, const delta::Snapshot& snapshot,
                                    const std::string& name);
  std::string Encode(const std::string& table_id) const;
  // The index from `bytes`; a non-empty string is what is wrong with them.
  std::string Decode(std::string_view bytes, const std::string& table_id);

  ChangeKeys keys_;
  std::unordered_map<std::string, Entry> entries_;
  std::vector<File> files_;
  std::unordered_map<std::string, int32_t> file_ids_;  // live files only
  std::vector<int32_t> free_ids_;
  int64_t version_ = -1;
  size_t live_ = 0;
  int64_t files_read_ = 0;
  int64_t rebuilds_ = 0;
  // Partition pruning: the pruning columns and their types (empty: off), the partitions whose
  // files are read, and the files of the others (partition -> paths, path -> partition).
  std::vector<std::string> partition_columns_;
  std::vector<columnar::TypeId> partition_types_;
  std::set<std::string> loaded_;
  std::map<std::string, std::set<std::string>> pending_;
  std::unordered_map<std::string, std::string> pending_paths_;
  KeyIndexLoad last_load_;
};

}  // namespace ferry::pipeline
