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
//     another deletion vector that deletes every row the index holds as deleted (a DELETE,
//     ferry's own upsert) drops only the rows the new vector deletes; one whose vector keeps
//     such a row (a RESTORE to a version with a smaller vector: the row is live again) is read
//     again like an added file; a file added is read like Rebuild reads it. This is also how the
//     index learns ferry's own commits, so it stays exact whatever other writers (Spark
//     OPTIMIZE, MERGE, DELETE, RESTORE) do. A commit that cannot be read (a log cleaned past the
//     index) makes it rebuild.
// Work per batch is proportional to the commits since the last batch (the files they add).
//
// A key that is in two live files at once (a table another writer filled with duplicates) keeps
// the location read last; the upsert then replaces that one only (logged at rebuild as a count).
//
// Memory: each key is held once, in a KeyTable (key_table.h: one arena of key bytes, a dense id
// per key, an open-addressing table of ids); an Entry per id; per indexed file, the key id of
// each physical row (a row is the key's live row only while the key's Entry points back at it,
// so an id left behind by a row that lost its key to a later file, or by a key erased and its id
// given to another key, is never taken for that row). About 50 bytes per key for 9-byte keys,
// in a handful of large vectors: nothing is freed key by key at exit. Rebuild() reserves room
// for the files' numRecords; loading a file, for the counts its header holds.
//
// Deleted keys (tombstones; with a sequence column only): a key an upsert deleted is remembered
// with the sequence of its delete, so that a change with a lower sequence arriving later (a CDC
// connector re-sending changes after its own restart) does not bring it back. A tombstone is
// needed only while such a change can still arrive, so tombstones are dropped every
// persist_every commits (when the index is written, if it is persisted) and after a Load(): those
// whose sequence is more than `tombstone_retention` (in the sequence column's units) below the
// highest sequence the index holds (its watermark), then, past `max_tombstones`, those with the
// lowest sequences. A change older than a dropped tombstone (or arriving after a rebuild, which
// forgets them all) is applied like a change to a key never seen. A tombstone whose sequence is
// null (the lowest) guards nothing and is not kept.
//
// Persisted beside the table, one file `_ferry/upsert/<pipeline id>/keys.idx` (index_dir.h),
// holding the whole index at one table version v: every indexed file's path and, per physical
// row, its key and sequence when the row is the key's live row; the tombstones; the partitions.
// Load() reads it and catches up from the log (the files the later commits add: the data files
// of the table are read only for those), and rebuilds from the table instead when the file is
// missing, damaged (its checksum), of another table (metaData id), key (names or types),
// sequence or pruning, of a format 2 file (which records no derived key columns) when there are
// derived key columns now, newer than the table (v > the table's version: commits lost, a restored
// table), of another table history (the commit file of version v is not the one the index was
// built from: its XXH64 is recorded), or when a commit after v has left the log. The file is
// never needed for correctness, with one exception: a file whose derived key columns
// (KeyIndexOptions::derived) were computed by another expression or time zone than now makes
// Load() fail with InvalidArgument (the table's rows lie in the old definition's partitions,
// where lookups under the new one would not find them; docs/cdc.md "Partition pruning").
//
// Writing (Persist(), and after a Load() that rebuilt or read commits): the index is encoded on
// the calling thread at its version, which is a committed version of the table (the index only
// ever learns versions from the log), and written by a thread of its own (KeyIndexWriter): that
// thread reads commit v's file for its XXH64, adds it and the checksum, and replaces the file
// whole, atomically. One write at a time: a Persist() while one is in flight is skipped (the next
// one writes a newer index). Committed() persists every `persist_every` commits. Processes of one
// pipeline id may share the file: each writes a complete index of some committed version, and a
// reader catches up from whatever version it finds.
//
// File format, version 3: magic "FERRYKIX", a format version byte (3), then as varints and
// varint-length strings: table id, the key columns as "name TYPE" joined by ',', the sequence
// column as "name TYPE" (or ""), the pruning partition columns joined by ',' (or ""), the count
// of derived key columns and each one's name and definition (KeyIndexOptions::derived), table
// version, key count (live and deleted), key bytes, the highest sequence (zig-zag), file count;
// per file its path, row count and per row its key ("" when the row is not the key's live row)
// then, when the key is not "" and there is a sequence column, the sequence (zig-zag); the count
// of tombstones and each key with its sequence; the loaded partitions; the files of the
// partitions not loaded (path, partition); last, the XXH64 of commit v's file and the XXH64 of
// everything before, both little-endian 8 bytes. Version 2 (ferry before the derived key
// columns were recorded) is the same without their count and list; it is read as recording none.
//
// Partition pruning (UsePartitions): when every partition column of the table is a key column
// of an integer, string or date type, a key's partition follows from the key. Then Rebuild()
// and CatchUp() read no data file: they note each file under its partition, and
// LoadPartitions() reads the files of the partitions a batch touches, once; a loaded partition
// is kept up to date like an unpartitioned table from then on. The partitions not loaded are
// persisted as their file paths.
//
// Thread-safety: one thread (the writer thread of the pipeline); the file is written on a thread
// of KeyIndexWriter's that touches none of the index.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
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
#include "ferry/metrics/metrics.h"
#include "ferry/pipeline/change_keys.h"
#include "ferry/pipeline/key_table.h"

namespace ferry::pipeline {

class KeyIndexWriter;

// What the last Load() did, for logs and tests.
struct KeyIndexLoad {
  bool rebuilt = false;
  std::string reason;            // why the persisted index was not used
  int64_t base_version = -1;     // the persisted index's version, when used
  int64_t commits_from_log = 0;  // versions read from the Delta log after it
  int64_t files_read = 0;        // data files read (rebuild or catch-up)
};

// The index's series (each may be null), labelled by the pipeline.
struct KeyIndexMetrics {
  metrics::Gauge* keys = nullptr;        // ferry_upsert_index_keys: live keys
  metrics::Gauge* tombstones = nullptr;  // ferry_upsert_index_tombstones: deleted keys kept
  metrics::Gauge* bytes = nullptr;       // ferry_upsert_index_bytes: heap held by the index
  // ferry_upsert_index_loads_total{source="file"|"rebuilt"}: Load()s
  metrics::Counter* loaded = nullptr;
  metrics::Counter* rebuilt = nullptr;
  // ferry_upsert_index_writes_total{outcome="written"|"failed"|"skipped"}
  metrics::Counter* written = nullptr;
  metrics::Counter* write_failed = nullptr;
  metrics::Counter* write_skipped = nullptr;       // a write was still in flight
  metrics::Counter* tombstones_dropped = nullptr;  // ferry_upsert_index_tombstones_dropped_total
};

struct KeyIndexOptions {
  // The pipeline id naming the file beside the table; empty: not persisted, Load() rebuilds.
  std::string name;
  // Committed() writes the file every this many commits (>= 1).
  int64_t persist_every = 100;
  // Tombstones more than this below the highest sequence are dropped (nullopt: by count only).
  std::optional<int64_t> tombstone_retention;
  int64_t max_tombstones = 1'000'000;  // past it, the lowest sequences are dropped
  KeyIndexMetrics metrics;
  // Key columns the pipeline derives from the other key columns (UpsertSpec::key_partitions)
  // -> how (their expression and time zone, UpsertSpec::key_partition_definitions). Recorded
  // in the file: one written under another definition is not used.
  std::map<std::string, std::string> derived;
};

class KeyIndex {
 public:
  struct Entry {
    int32_t file = -1;  // -1: the key is deleted (kept for its sequence)
    uint32_t row = 0;   // physical row in the file
    int64_t sequence = kNoSequence;
  };

  explicit KeyIndex(ChangeKeys keys, KeyIndexOptions options = {});
  ~KeyIndex();  // waits for a write in flight
  KeyIndex(const KeyIndex&) = delete;
  KeyIndex& operator=(const KeyIndex&) = delete;

  // The index as of `snapshot`: from the persisted file caught up from the log, or rebuilt (see
  // above). A failed write of the file is logged, not returned.
  Status Load(const delta::Table& table, const delta::Snapshot& snapshot);
  // After a commit of ours: catches up to `snapshot` (which includes it), and every
  // persist_every calls writes the file.
  Status Committed(const delta::Table& table, const delta::Snapshot& snapshot);
  // Drops the tombstones not needed any more, then starts writing the index (at version()) as
  // the file; skipped while a write is in flight. `snapshot` is of the same table. A failed
  // write leaves the table correct (the next start reads more of the log, or rebuilds).
  void Persist(const delta::Table& table, const delta::Snapshot& snapshot);
  // Waits for the write in flight, if any (tests; a clean end).
  void WaitForWrite() const;
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

  // nullptr when the key was never seen (or its tombstone was dropped). Valid until the index
  // changes.
  const Entry* Find(std::string_view key) const;
  // The log path (add.path) of an entry's file.
  const std::string& path(int32_t file) const { return files_[static_cast<size_t>(file)].path; }
  // A key deleted by this process (Entry::file = -1) with its sequence.
  void NoteDeleted(std::string_view key, int64_t sequence);
  // Applies the tombstone rule above; returns how many were dropped.
  int64_t DropOldTombstones();

  int64_t version() const { return version_; }
  size_t live_keys() const { return live_; }
  size_t tombstones() const { return table_.size() - live_; }
  int64_t high_sequence() const { return high_sequence_; }
  int64_t files_read() const { return files_read_; }
  // Heap bytes of the keys, entries and per-file rows (capacities).
  size_t MemoryBytes() const;
  const ChangeKeys& keys() const { return keys_; }

 private:
  struct File {
    std::string path;
    std::vector<uint32_t> ids;  // key id by physical row; KeyTable::kNoKey for rows not live
    size_t deleted_rows = 0;    // rows whose id is kNoKey
  };
  // Whether row `row` of file `file` is its key's live row.
  bool LiveRow(int32_t file, size_t row) const;
  // The key's entry (inserted when new) set to `entry`, keeping live_ and high_sequence_.
  uint32_t SetEntry(std::string_view key, Entry entry);
  // Erases the key (a live row leaving the index).
  void EraseLive(uint32_t id);
  Status AddFile(const delta::Table& table, const delta::Snapshot& snapshot,
                 const delta::AddFile& add);
  void DropFile(const std::string& path);
  // `path` was re-added with deletion vector rows `deleted`: those rows leave the index.
  void DropRows(const std::string& path, const delta::RoaringBitmap64& deleted);
  // Whether a deletion vector of `deleted` rows keeps a row of `file` that the index holds as
  // deleted (its key id is kNoKey: a row an earlier vector deleted, or, in a file loaded from
  // the persisted index, a row whose key another file's row holds). O(rows in `deleted`).
  bool Revives(int32_t file, const delta::RoaringBitmap64& deleted) const;
  void Clear();
  void Publish() const;  // the gauges
  // The partition of a file (its partitionValues) in the form RowPartitions gives.
  std::string FilePartition(const delta::Snapshot& snapshot, const delta::AddFile& add) const;
  // The key and sequence columns with their types in `snapshot` ("id BIGINT", "seq BIGINT").
  std::string KeySignature(const delta::Snapshot& snapshot) const;
  std::string SequenceSignature(const delta::Snapshot& snapshot) const;
  // Load() from the persisted file; a non-empty string is why it could not be used.
  Result<std::string> LoadPersisted(const delta::Table& table, const delta::Snapshot& snapshot);
  // The file's bytes but its last 16 (KeyIndexWriter adds those).
  std::string Encode(const delta::Snapshot& snapshot) const;
  // The index from `bytes` (whose header LoadPersisted checked); a non-empty string is what is
  // wrong with them.
  std::string DecodeBody(std::string_view bytes, size_t body_offset);

  ChangeKeys keys_;
  KeyIndexOptions options_;
  KeyTable table_;
  std::vector<Entry> entries_;  // by key id
  std::vector<File> files_;
  std::unordered_map<std::string, int32_t> file_ids_;  // live files only
  std::vector<int32_t> free_ids_;
  int64_t version_ = -1;
  size_t live_ = 0;
  int64_t high_sequence_ = kNoSequence;
  int64_t files_read_ = 0;
  int64_t rebuilds_ = 0;
  int64_t commits_since_persist_ = 0;
  // Partition pruning: the pruning columns and their types (empty: off), the partitions whose
  // files are read, and the files of the others (partition -> paths, path -> partition).
  std::vector<std::string> partition_columns_;
  std::vector<columnar::TypeId> partition_types_;
  std::set<std::string> loaded_;
  std::map<std::string, std::set<std::string>> pending_;
  std::unordered_map<std::string, std::string> pending_paths_;
  KeyIndexLoad last_load_;
  // Last: destroyed first, waiting for its write (which uses none of the members above).
  std::unique_ptr<KeyIndexWriter> writer_;
};

}  // namespace ferry::pipeline
