// DedupIndex: key-based dedup of a pipeline (`dedup = { key = "msg_id", window = "24h" }`), the
// replacement for the Spark job's MERGE on a message id. A row whose key was committed to the
// table within the window, or that repeats a key earlier in the same batch, is not written
// again (ferry_dedup_hits_total); its position is consumed like any other.
//
// The index holds the keys of committed rows only and is derived from the table, so it can never
// cause a loss or a duplicate after a crash:
//   - Load(): at start and after fencing. The index lives beside the table, under
//     `_ferry/dedup/<pipeline id>/` (a hidden directory: Delta readers and both ferry's and
//     Spark's VACUUM leave it alone): a base file holding every key at one table version, and one
//     segment file per later commit of the pipeline holding the keys that commit wrote. Load
//     reads the base and the segments and reads the Delta log (and the data files it adds) only
//     for the versions no segment covers: commits of other writers, or a crash between a commit
//     and its segment. A base of another table (its metaData id), of another key, newer than the
//     table, damaged (its checksum), or a log cleaned past its version makes Load rebuild;
//   - Rebuild(): every live file added within the window (its modificationTime), read with the
//     table reader;
//   - CatchUp(): before each batch, the files of commits made by other writers since the version
//     the index reflects;
//   - Remember() and Persist(): after a durable commit, the keys this pipeline just wrote, in
//     memory and as that version's segment; every `compact_every` segments Persist folds the
//     index into a new base and deletes the segments it covers.
// Memory is bounded by max_keys: beyond it the oldest keys are forgotten first (the window is
// then effectively shorter; logged once). Work per batch is proportional to the batch (a
// segment per commit; a base, proportional to the index, every `compact_every` commits).
//
// Exact for one writer per key space (a Kafka key always maps to one partition, so to one
// process; a JetStream filter has one owner). Two processes committing the same new key at the
// same instant can both write it: dedup across concurrent writers is best effort. Processes of
// one pipeline id share the index directory safely: segments are per version, bases are
// replaced atomically, and anything missing is read from the log.
//
// Thread-safety: one thread (the pipeline's).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/delta/snapshot.h"
#include "ferry/delta/table.h"
#include "ferry/transform/expression.h"

namespace ferry::pipeline {

struct DedupSpec {
  // A column or a Spark SQL expression over the table's columns; compared as its STRING cast.
  std::string key;
  std::chrono::milliseconds window{24LL * 3600 * 1000};
  int64_t max_keys = 10'000'000;
  std::string origin = "dedup.key";
  std::string time_zone = "UTC";
  // The directory under `_ferry/dedup/` beside the table (the pipeline id); empty = the index
  // is not persisted and Load() always rebuilds.
  std::string index_name;
  // Segments written before Persist() folds them into a new base.
  int compact_every = 64;
};

// What the last Load() did, for logs and tests.
struct DedupLoadStats {
  bool rebuilt = false;
  std::string rebuild_reason;    // why the persisted index was not used
  int64_t base_version = -1;     // -1: no base used
  int64_t segments = 0;          // segment files read
  int64_t commits_from_log = 0;  // versions read from the Delta log instead
  int64_t files_read = 0;        // data files read (rebuild or log catch-up)
};

class DedupIndex {
 public:
  // InvalidArgument when the key does not compile against the table schema.
  static Result<std::unique_ptr<DedupIndex>> Create(const columnar::SchemaPtr& table_schema,
                                                    DedupSpec spec);

  // Brings the index to `snapshot` from its files beside the table, or rebuilds it (see above);
  // after a rebuild or a long catch-up it writes a new base. Errors are the table's (reading
  // its log or data files); a damaged index file is not an error, it is rebuilt.
  Status Load(const delta::Table& table, const delta::Snapshot& snapshot, int64_t now_ms);
  // Forgets everything and reads the keys of the files of `snapshot` added within the window.
  Status Rebuild(const delta::Table& table, const delta::Snapshot& snapshot, int64_t now_ms);
  // Adds the keys of the data files committed after the index's version up to `up_to`
  // (default: `snapshot`'s version), read through `snapshot`.
  Status CatchUp(const delta::Table& table, const delta::Snapshot& snapshot,
                 std::optional<int64_t> up_to = std::nullopt);

  // Compiles the key again for rows of `schema` when the table's schema changed since it was
  // compiled (schema evolution). InvalidArgument when the key no longer compiles.
  Status UseSchema(const columnar::SchemaPtr& schema);

  // The rows of `batch` (table schema) to write, and their keys (null keys are never dropped).
  std::vector<int64_t> Filter(const columnar::RecordBatch& batch,
                              std::vector<std::string>* kept_keys) const;
  // After the durable commit `version` of `keys` (Filter's).
  void Remember(const std::vector<std::string>& keys, int64_t version, int64_t now_ms);
  // After Remember(): writes `version`'s segment (the same keys) beside `table`, and a new base
  // every compact_every segments. An error leaves the table correct (Load reads the log for a
  // missing segment); the caller logs it and goes on.
  Status Persist(const delta::Table& table, const delta::Snapshot& snapshot, int64_t version,
                 const std::vector<std::string>& keys, int64_t now_ms);

  // The key prefix of the index files of `table` (ends with '/').
  std::string IndexDir(const delta::Table& table) const;
  const DedupLoadStats& last_load() const { return last_load_; }

  size_t size() const { return keys_.size(); }
  int64_t version() const { return version_; }

 private:
  DedupIndex() = default;
  void Add(std::string key, int64_t time_ms);
  void Expire(int64_t now_ms);
  Status AddFile(const delta::Table& table, const delta::Snapshot& snapshot,
                 const delta::AddFile& add);
  // The data files `version` added (dataChange only), into the index.
  Status AddCommit(const delta::Table& table, const delta::Snapshot& snapshot, int64_t version);
  // Load() from the persisted files; a non-empty string is why they could not be used.
  Result<std::string> LoadPersisted(const delta::Table& table, const delta::Snapshot& snapshot);
  Status WriteBase(const delta::Table& table, const delta::Snapshot& snapshot);

  DedupSpec spec_;
  std::unique_ptr<transform::Expression> key_;
  columnar::SchemaPtr key_schema_;                 // what key_ was compiled for
  std::unordered_map<std::string, int64_t> keys_;  // key -> commit time (ms)
  // (time, key), oldest first; an entry whose time is not the key's current one is stale.
  std::deque<std::pair<int64_t, std::string>> order_;
  int64_t version_ = -1;
  bool warned_full_ = false;
  int64_t segments_since_base_ = 0;
  DedupLoadStats last_load_;
};

}  // namespace ferry::pipeline
