// Per-file statistics for `add.stats` (PROTOCOL.md "Per-file Statistics"), computed from the
// columnar batches written to the file, independently of the Parquet writer's own statistics.
// The JSON matches what Spark's StatisticsCollection writes:
//
//   {"numRecords":3,"minValues":{"id":1,"s":{"name":"a"}},"maxValues":{...},
//    "nullCount":{"id":0,"s":{"name":1},"tags":0}}
//
//   - min/max for numeric, decimal, date, timestamp, timestamp_ntz and string leaves, nested
//     like the schema (not dotted names); nullCount for every leaf, with lists and maps counted
//     as one leaf; a value under a null struct counts as null;
//   - only the first `num_indexed_cols` leaf columns in schema order (delta.
//     dataSkippingNumIndexedCols, default 32, -1 = all), or the columns named by
//     delta.dataSkippingStatsColumns, plus the clustering columns of a clustered table;
//     partition columns are never in stats;
//   - strings are cut to 32 UTF-16 code units like Spark: the min is the prefix, the max is the
//     prefix plus a tie-breaker (U+007F, or U+10FFFF) so it stays an upper bound (no max when
//     that cannot be done within 64 units);
//   - dates "YYYY-MM-DD"; timestamps truncated to milliseconds, "2000-01-01T00:00:00.000Z"
//     (timestamp_ntz without the Z); decimals as plain JSON numbers;
//   - a float/double column holding NaN or an infinity gets no min/max (JSON cannot hold them;
//     no bound is always a safe bound). Leaves whose values are all null get no min/max.
//
// The Parquet writer of the file computes the same null counts and min/max for most leaves
// anyway (parquet/statistics.h). A collector made with `parquet_leaves` scans only the leaves
// it cannot take from there (floats: NaN and -0.0 are treated differently; lists and maps:
// Parquet counts their repeated leaves, Delta the list) and takes the others from the file's
// column_statistics() when the file is closed (TakeParquetStatistics).
//
// Thread-safety: a StatsCollector is used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/columnar/record_batch.h"
#include "ferry/columnar/types.h"
#include "ferry/parquet/statistics.h"

namespace ferry::delta {

struct StatsOptions {
  int64_t num_indexed_cols = 32;
  // When set, replaces num_indexed_cols: top-level or dotted nested column names.
  std::optional<std::vector<std::string>> stats_columns;
  // Dotted column paths that get stats whatever the two options above say (a clustered table's
  // clustering columns, PROTOCOL.md "Writer Requirements for Clustered Table"); they do not
  // count against num_indexed_cols.
  std::vector<std::string> always_columns;
  int string_prefix_length = 32;
};

class StatsCollector {
 public:
  // `data_schema`: the schema of the batches (the data file's columns). `parquet_leaves`: Update
  // skips the leaves that TakeParquetStatistics fills in (see above).
  StatsCollector(const columnar::Schema& data_schema, const StatsOptions& options,
                 bool parquet_leaves = false);
  ~StatsCollector();
  StatsCollector(StatsCollector&&) noexcept;
  StatsCollector& operator=(StatsCollector&&) noexcept;

  // REQUIRES: batch.schema() has the data schema's fields in order.
  void Update(const columnar::RecordBatch& batch);
  // With `parquet_leaves`: the skipped leaves' null counts and bounds from the statistics of the
  // file the batches went to (parquet::FileWriter::column_statistics(), written with
  // WriterOptions::whole_statistics_bounds), one per Parquet leaf of the data schema,
  // depth-first (more may follow: hidden columns). Internal when they do not line up.
  Status TakeParquetStatistics(const std::vector<parquet::ColumnStatistics>& leaves);
  int64_t num_records() const { return num_records_; }
  std::string ToJson() const;

  struct Node;

 private:
  std::vector<std::unique_ptr<Node>> roots_;  // one per top-level field with stats (or null)
  int64_t num_records_ = 0;
  int string_prefix_length_;
};

// numRecords of a stats JSON string; nullopt if absent or not parsable.
std::optional<int64_t> StatsNumRecords(std::string_view stats_json);

// Spark's truncateMinStringAgg / truncateMaxStringAgg on UTF-8 text, lengths in UTF-16 units.
std::string TruncateMinString(std::string_view value, int prefix_length);
std::optional<std::string> TruncateMaxString(std::string_view value, int prefix_length);

}  // namespace ferry::delta
