// DedupIndex: key-based dedup of a pipeline (`dedup = { key = "msg_id", window = "24h" }`), the
// replacement for the Spark job's MERGE on a message id. A row whose key was committed to the
// table within the window, or that repeats a key earlier in the same batch, is not written
// again (ferry_dedup_hits_total); its position is consumed like any other.
//
// The index holds the keys of committed rows only and is derived from the table, so it can never
// cause a loss or a duplicate after a crash:
//   - Rebuild(): at start and after fencing, from the live files added within the window (their
//     modificationTime), reading the key's columns with the table reader;
//   - CatchUp(): before each batch, the files of commits made by other writers since the version
//     the index reflects;
//   - Remember(): after a durable commit, the keys this pipeline just wrote.
// Memory is bounded by max_keys: beyond it the oldest keys are forgotten first (the window is
// then effectively shorter; logged once). Work per batch is proportional to the batch.
//
// Exact for one writer per key space (a Kafka key always maps to one partition, so to one
// process; a JetStream filter has one owner). Two processes committing the same new key at the
// same instant can both write it: dedup across concurrent writers is best effort.
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
};

class DedupIndex {
 public:
  // InvalidArgument when the key does not compile against the table schema.
  static Result<std::unique_ptr<DedupIndex>> Create(const columnar::SchemaPtr& table_schema,
                                                    DedupSpec spec);

  // Forgets everything and reads the keys of the files of `snapshot` added within the window.
  Status Rebuild(const delta::Table& table, const delta::Snapshot& snapshot, int64_t now_ms);
  // Adds the keys of the data files committed after the index's version up to `up_to`
  // (default: `snapshot`'s version), read through `snapshot`.
  Status CatchUp(const delta::Table& table, const delta::Snapshot& snapshot,
                 std::optional<int64_t> up_to = std::nullopt);

  // The rows of `batch` (table schema) to write, and their keys (null keys are never dropped).
  std::vector<int64_t> Filter(const columnar::RecordBatch& batch,
                              std::vector<std::string>* kept_keys) const;
  // After the durable commit `version` of `keys` (Filter's).
  void Remember(const std::vector<std::string>& keys, int64_t version, int64_t now_ms);

  size_t size() const { return keys_.size(); }
  int64_t version() const { return version_; }

 private:
  DedupIndex() = default;
  void Add(std::string key, int64_t time_ms);
  void Expire(int64_t now_ms);
  Status AddFile(const delta::Table& table, const delta::Snapshot& snapshot,
                 const delta::AddFile& add);

  DedupSpec spec_;
  std::unique_ptr<transform::Expression> key_;
  std::unordered_map<std::string, int64_t> keys_;      // key -> commit time (ms)
  std::deque<std::pair<int64_t, std::string>> order_;  // oldest first
  int64_t version_ = -1;
  bool warned_full_ = false;
};

}  // namespace ferry::pipeline
