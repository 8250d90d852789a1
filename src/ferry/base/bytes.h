// Byte-string order for min/max statistics, inline. Parquet and Delta statistics both order
// strings as unsigned bytes (std::string_view's order); most values differ from a running
// min or max in their first bytes, where a call to memcmp costs more than the comparison.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ferry/base/endian.h"

namespace ferry {

// a < b as unsigned bytes (the same answer as a < b on std::string_view), eight bytes at a time.
inline bool BytesLess(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    auto x = LoadLE<uint64_t>(a.data() + i);
    auto y = LoadLE<uint64_t>(b.data() + i);
    if (x != y) {  // the first differing byte decides: compare the words big-endian
      return __builtin_bswap64(x) < __builtin_bswap64(y);
    }
  }
  for (; i < n; ++i) {
    if (a[i] != b[i]) {
      return static_cast<uint8_t>(a[i]) < static_cast<uint8_t>(b[i]);
    }
  }
  return a.size() < b.size();
}

}  // namespace ferry
