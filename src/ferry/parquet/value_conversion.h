// Conversion of raw physical values (value_decoder.h storage) to the columnar type a leaf is read
// as, when the two differ in storage: narrow and unsigned integers, decimals, INT96 timestamps and
// FLOAT16. The reader converts each page (and each dictionary once) after decoding it.
//
//   INT96        → Timestamp(kMicros, UTC): bytes 0..7 nanoseconds of the day, bytes 8..11 the
//                  Julian day (2440588 = 1970-01-01), both little-endian, as Spark and Impala
//                  write it; computed in wrapping arithmetic like Spark, so every timestamp
//                  Spark wrote comes back exact (nanos would overflow in 2262).
//   FLOAT16      → Float32: IEEE half, little-endian, exact.
//   decimals     → Int128 unscaled: INT32/INT64 widened; BYTE_ARRAY/FIXED big-endian two's
//                  complement (longer than 16 bytes only with pure sign extension).
//   INT(8/16)    → int8/int16 by truncation; unsigned INT(8/16/32/64) → uint8..uint64 (the
//                  spec leaves values outside the annotated range to the implementation).
//
// Thread-safety: thread-safe functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "ferry/base/result.h"
#include "ferry/columnar/column.h"
#include "ferry/columnar/types.h"

namespace ferry::parquet {

enum class ValueConversion : uint8_t {
  kNone,  // the raw storage is the target's storage
  kInt32ToInt8,
  kInt32ToInt16,
  kInt32ToUInt8,
  kInt32ToUInt16,
  kInt32ToUInt32,
  kInt64ToUInt64,
  kInt32ToDecimal,
  kInt64ToDecimal,
  kBytesToDecimal,  // BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY
  kInt96ToTimestamp,
  kFloat16ToFloat32,
};

// Appends every row of `raw` (dense, no nulls) converted to `out`.
// REQUIRES: `raw` has the storage of the conversion's source, `out` of its target.
// Errors: DataLoss for a value that has no image (a decimal wider than 128 bits, a FLOAT16 that
// is not 2 bytes).
Status ConvertValues(ValueConversion conversion, const columnar::Column& raw,
                     columnar::Column* out);

// Single-value conversions (also used to print statistics).
Result<int64_t> Int96ToMicros(std::string_view bytes);
float HalfToFloat(uint16_t half);
Result<columnar::Int128> DecimalFromBigEndian(std::string_view bytes);

}  // namespace ferry::parquet
