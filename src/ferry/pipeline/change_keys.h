// Change keys: what an upsert pipeline (mode = "upsert", docs/cdc.md) compares rows by. The key
// of a row is its key columns encoded as one byte string (integers of any width as one int64, so
// a column widened by schema evolution keeps its keys; strings and binaries length-prefixed;
// dates, timestamps and decimals by value), and the sequence of a row, when `sequence` is set,
// its sequence column as an int64 (integer, date or timestamp columns).
//
//   FERRY_ASSIGN_OR_RETURN(ChangeKeys keys, ChangeKeys::Create(*schema, {"id"}, "lsn"));
//   FERRY_ASSIGN_OR_RETURN(std::vector<std::string> encoded, keys.Encode(batch));
//   std::vector<int64_t> last = CollapseChanges(encoded, keys.Sequences(batch));
//
// CollapseChanges keeps, for every key of a batch, the one change that wins: the one with the
// highest sequence (ties: the later one), or the last one in source order without a sequence.
// The winners come back in source order.
//
// Thread-safety: values; stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/columnar/types.h"

namespace ferry::pipeline {

class ChangeKeys {
 public:
  // InvalidArgument when a key column or the sequence column is not in `schema` (top level),
  // or has a type that cannot be a key (struct, list, map, float, double) or a sequence (not an
  // integer, date or timestamp).
  static Result<ChangeKeys> Create(const columnar::Schema& schema, std::vector<std::string> key,
                                   std::string sequence);

  const std::vector<std::string>& key() const { return key_; }
  const std::string& sequence() const { return sequence_; }
  bool has_sequence() const { return !sequence_.empty(); }
  // The columns a scan of a table file needs: the key columns, then the sequence column.
  std::vector<std::string> ScanColumns() const;

  // The key of every row of `batch` (which holds the key columns by name). InvalidArgument
  // naming the row when a key column is null.
  Result<std::vector<std::string>> Encode(const columnar::RecordBatch& batch) const;
  // The sequence of every row (empty without a sequence column); a null sequence is the
  // smallest (INT64_MIN).
  Result<std::vector<int64_t>> Sequences(const columnar::RecordBatch& batch) const;

 private:
  ChangeKeys() = default;
  std::vector<std::string> key_;
  std::string sequence_;
};

inline constexpr int64_t kNoSequence = INT64_MIN;

// The rows that win, one per key, in source order (see above). `sequences` empty: source order.
std::vector<int64_t> CollapseChanges(const std::vector<std::string>& keys,
                                     const std::vector<int64_t>& sequences);

}  // namespace ferry::pipeline
