#include "ferry/delta/parquet_codec.h"

#include <algorithm>
#include <cctype>

namespace ferry::delta {

Result<parquet::CompressionCodec> CodecFromName(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  using C = parquet::CompressionCodec;
  if (lower == "uncompressed" || lower == "none") {
    return C::kUncompressed;
  }
  if (lower == "snappy") {
    return C::kSnappy;
  }
  if (lower == "gzip") {
    return C::kGzip;
  }
  if (lower == "lz4") {
    return C::kLz4;
  }
  if (lower == "lz4_raw") {
    return C::kLz4Raw;
  }
  if (lower == "zstd") {
    return C::kZstd;
  }
  if (lower == "brotli") {
    return C::kBrotli;
  }
  return InvalidArgument(
      "compression codec '{}' is not one of uncompressed, snappy, gzip, lz4, lz4_raw, zstd, "
      "brotli",
      name);
}

std::string CodecFileExtension(parquet::CompressionCodec codec) {
  using C = parquet::CompressionCodec;
  switch (codec) {
    case C::kSnappy:
      return "snappy";
    case C::kGzip:
      return "gz";
    case C::kLz4:
      return "lz4";
    case C::kLz4Raw:
      return "lz4raw";
    case C::kZstd:
      return "zstd";
    case C::kBrotli:
      return "br";
    case C::kLzo:
      return "lzo";
    case C::kUncompressed:
      break;
  }
  return "";
}

}  // namespace ferry::delta
