// The `delta.*` table properties ferry acts on, parsed from metaData.configuration with Spark's
// defaults. Unknown properties are kept in the metadata and ignored here.
//
//   delta.appendOnly                       false
//   delta.enableChangeDataFeed             false (ferry writes no `cdc` files: commits that remove
//                                          rows are refused, transaction.h step 1)
//   delta.checkpointInterval               10 (commits between classic checkpoints)
//   delta.dataSkippingNumIndexedCols       32 (leaf columns with stats; -1 = all)
//   delta.dataSkippingStatsColumns         unset (comma-separated column names; overrides the
//   above) delta.checkpoint.writeStatsAsJson      true delta.checkpoint.writeStatsAsStruct    false
//   delta.parquet.compression.codec        zstd (PROTOCOL.md "Table Properties")
//   delta.deletedFileRetentionDuration     interval 1 week (tombstones kept in checkpoints)
//   delta.setTransactionRetentionDuration  unset (ferry never sets it: positions would expire)
//
// Thread-safety: value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/delta/actions.h"

namespace ferry::delta {

struct TableProperties {
  bool append_only = false;
  bool change_data_feed = false;
  int64_t checkpoint_interval = 10;
  int64_t data_skipping_num_indexed_cols = 32;
  std::optional<std::vector<std::string>> data_skipping_stats_columns;
  bool checkpoint_write_stats_as_json = true;
  bool checkpoint_write_stats_as_struct = false;
  std::string compression_codec = "zstd";
  int64_t deleted_file_retention_ms = 7LL * 24 * 3600 * 1000;
  std::optional<int64_t> set_transaction_retention_ms;
};

// InvalidArgument naming the property when a value does not parse.
Result<TableProperties> ParseTableProperties(const StringMap& configuration);

// Spark's "interval 1 week" / "interval 30 days" / "interval 12 hours" / "1 week" -> millis.
Result<int64_t> ParseIntervalMillis(std::string_view text);

}  // namespace ferry::delta
