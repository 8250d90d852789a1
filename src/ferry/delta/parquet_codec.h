// The Parquet compression codec of a table's files: delta.parquet.compression.codec (PROTOCOL.md
// "Table Properties"; default zstd) to the writer's codec, and the codec's part of a data file
// name, as parquet-mr spells it (part-00000-<uuid>-c000.zstd.parquet).
//
// Thread-safety: stateless functions.
#pragma once

#include <string>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/parquet/metadata.h"

namespace ferry::delta {

// uncompressed/none, snappy, gzip, lz4, lz4_raw, zstd, brotli (case-insensitive).
// InvalidArgument otherwise.
Result<parquet::CompressionCodec> CodecFromName(std::string_view name);

// "zstd", "snappy", "gz", "lz4", "lz4raw", "br"; "" for uncompressed.
std::string CodecFileExtension(parquet::CompressionCodec codec);

}  // namespace ferry::delta
