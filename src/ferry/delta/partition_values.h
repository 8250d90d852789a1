// Partition values and the paths they produce, spelled exactly as Spark writes them
// (FIELD-NOTES "Delta Lake"; PROTOCOL.md "Partition Value Serialization").
//
// A file of a table partitioned by (day date, region string) with values (2024-01-31, "A/B")
// lives in the directory `day=2024-01-31/region=A%2FB/` (Hive escaping of names and values)
// and the log names it `day=2024-01-31/region=A%252FB/part-...parquet` (the relative path
// URI-encoded once more, as Hadoop's Path.toUri does). partitionValues holds the raw strings
// {"day":"2024-01-31","region":"A/B"}; null (and the empty string) is JSON null in the log and
// `__HIVE_DEFAULT_PARTITION__` in the directory name.
//
// Per type, the log value is: integers and decimals as plain numbers; booleans "true"/"false";
// float/double as Java's Double.toString; date "YYYY-MM-DD"; timestamp ISO-8601 UTC with
// microseconds and Z ("2021-09-08T11:11:11.000000Z", the protocol's recommended form; the
// directory uses Spark's "2021-09-08 11:11:11" form); timestamp_ntz "YYYY-MM-DD HH:MM:SS[.f]".
// Every primitive Delta type except binary can be a partition column.
//
// Thread-safety: stateless functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"
#include "ferry/columnar/column.h"
#include "ferry/delta/actions.h"

namespace ferry::delta {

inline constexpr std::string_view kHiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__";

// Hive's escapePathName: 0x01-0x1F, " # % ' * / : = ? \ 0x7F { [ ] ^ become %XX (uppercase).
std::string EscapePartitionPathName(std::string_view text);
// Inverse of EscapePartitionPathName (any %XX is decoded; a stray '%' stays as is).
std::string UnescapePartitionPathName(std::string_view text);

// java.net.URI's quoting of a path (what Spark's Path.toUri.toString produces): every byte
// except ASCII letters, digits, `_-!.~'()*,;:$&+=/@` and non-ASCII bytes becomes %XX.
std::string EncodeUriPath(std::string_view path);
// Decodes every %XX. InvalidArgument for a '%' not followed by two hex digits.
Result<std::string> DecodeUriPath(std::string_view path);

// REQUIRES: nothing. InvalidArgument for types that cannot be partition columns (nested,
// binary, unsigned, JSON, fixed binary, non-micro timestamps).
Status CheckPartitionColumnType(const columnar::Field& field);

struct SerializedPartitionValue {
  std::optional<std::string> log_value;  // partitionValues; nullopt = null
  std::string directory_value;           // unescaped; kHiveDefaultPartition for null
};

// Row `row` of `column` as the log and the directory spell it.
// REQUIRES: CheckPartitionColumnType passed for the column's field.
SerializedPartitionValue SerializePartitionValue(const columnar::Column& column, int64_t row);

// "a=1/b=x%2Fy" from column names and directory values (escaping both).
std::string PartitionDirectory(const std::vector<std::string>& names,
                               const std::vector<std::string>& directory_values);

// Appends the value a log's partitionValues holds (nullopt or "" = null) to `column`, parsed per
// the column's type. InvalidArgument naming the value if it does not parse.
Status AppendPartitionValue(const std::optional<std::string>& value, columnar::Column* column);

}  // namespace ferry::delta
