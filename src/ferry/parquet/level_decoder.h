// Definition and repetition levels of a data page (parquet-format Encodings.md): the
// RLE/bit-packed hybrid at the bit width of the column's maximum level, with a 4-byte length
// prefix in data page v1 and without one in v2, or the deprecated BIT_PACKED encoding (v1 only,
// most significant bit first, no prefix). Every level is checked against the maximum.
//
// Thread-safety: thread-safe functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ferry/base/status.h"
#include "ferry/parquet/metadata.h"

namespace ferry::parquet {

// Replaces *out with `count` levels read from the hybrid encoding in `data` (all of it; v2).
// REQUIRES: max_level > 0.
Status DecodeLevelsRle(std::string_view data, int16_t max_level, int64_t count,
                       std::vector<int16_t>* out);

// Replaces *out with `count` levels read from the front of *data in a v1 page's level encoding
// (RLE with its length prefix, or BIT_PACKED) and advances *data past them.
// REQUIRES: max_level > 0.
Status DecodeLevelsV1(Encoding encoding, std::string_view* data, int16_t max_level, int64_t count,
                      std::vector<int16_t>* out);

}  // namespace ferry::parquet
