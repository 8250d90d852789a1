// Column statistics in a typed form, for callers of the writer (the Delta layer's add-action
// stats) and for tests. The Parquet form (metadata.h Statistics: PLAIN-encoded bytes) is what
// goes into the file; this is the same information with the leaf's columnar type:
//
//   leaf type                                   StatValue alternative
//   kBoolean                                    bool
//   kInt8..kInt64, kDate (days), kTimestamp     int64_t (kTimestamp in the type's unit)
//   kUInt8..kUInt64                             uint64_t
//   kFloat32, kFloat64                          double (NaN never; -0.0 as min, +0.0 as max)
//   kDecimal                                    Int128 (the unscaled value)
//   kString, kJson, kBinary, kFixedBinary       std::string (bytes, compared unsigned)
//
// min/max are absent when the column has no non-null (and non-NaN) value, or when a byte value
// longer than kMaxStatisticsValueBytes would be a bound (such bounds are not written at all;
// WriterOptions::whole_statistics_bounds keeps them here).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ferry/columnar/types.h"

namespace ferry::parquet {

inline constexpr size_t kMaxStatisticsValueBytes = 4096;

using StatValue = std::variant<bool, int64_t, uint64_t, double, columnar::Int128, std::string>;

struct ColumnStatistics {
  std::vector<std::string> path;  // path_in_schema of the leaf
  columnar::DataTypePtr type;     // the leaf's columnar type
  bool repeated = false;          // the leaf is inside a list or map
  int64_t num_values = 0;         // level entries: values, nulls and empty lists
  int64_t null_count = 0;         // entries without a value
  std::optional<StatValue> min;
  std::optional<StatValue> max;
};

}  // namespace ferry::parquet
