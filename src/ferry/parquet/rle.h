// Bit packing and the RLE/bit-packed hybrid encoding of Parquet (parquet-format Encodings.md),
// used for definition and repetition levels, dictionary indices and RLE booleans.
//
//   hybrid     := run*
//   run        := bit-packed-run | rle-run
//   bit-packed := varint((groups << 1) | 1), groups * 8 values of bit_width bits, LSB first
//   rle-run    := varint(count << 1), the value in ceil(bit_width / 8) little-endian bytes
//
// The encoder works on a whole array (a page's levels or indices): runs of 8 or more equal values
// become RLE runs, the rest bit-packed groups of 8; the last group is padded with zeros. No
// length prefix is written (v1 data pages add a 4-byte one for levels; dictionary indices are
// preceded by a 1-byte bit width): callers add those.
//
// The decoder is bounds-checked: it never reads outside its input, every value it returns is
// below 2^bit_width (callers still check values against the maximum level or dictionary size),
// and a final bit-packed run that is shorter than its header claims yields only the values
// present.
//
// Thread-safety: RleBpDecoder is not thread-safe; the functions are.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::parquet {

// Bits needed to represent every value in [0, max_value].
inline int BitWidth(uint64_t max_value) {
  return 64 - std::countl_zero(max_value);
}

// Appends `n` values of `bit_width` bits (0..32), LSB first, in ceil(n * bit_width / 8) bytes.
template <typename T>
void BitPack(const T* values, size_t n, int bit_width, std::string* out);

// Unpacks `n` values of `bit_width` bits (0..32) from `data`, which must hold at least
// ceil(n * bit_width / 8) bytes.
template <typename T>
void BitUnpack(const uint8_t* data, size_t n, int bit_width, T* out);

// Appends the hybrid encoding of values[0..n). REQUIRES: every value < 2^bit_width,
// 0 <= bit_width <= 32.
template <typename T>
void RleBpEncode(const T* values, size_t n, int bit_width, std::string* out);

// An upper bound of the bytes RleBpEncode appends.
size_t RleBpMaxSize(size_t n, int bit_width);

class RleBpDecoder {
 public:
  RleBpDecoder() = default;
  // `data` must outlive the decoder. bit_width outside 0..32 makes GetBatch fail.
  RleBpDecoder(const uint8_t* data, size_t size, int bit_width)
      : p_(data), end_(data + size), bit_width_(bit_width) {}

  // Decodes up to `n` values into `out`; returns how many it decoded (fewer than n only when
  // the input ends). DataLoss if the input is malformed.
  template <typename T>
  Result<int64_t> GetBatch(T* out, int64_t n);

  // Bytes not yet consumed by run headers and runs.
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }

 private:
  Status NextRun();

  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  int bit_width_ = 0;
  // The current run: either `rle_left_` copies of rle_value_, or `literal_left_` bit-packed
  // values starting at bit `literal_bit_` of literal_data_.
  int64_t rle_left_ = 0;
  uint32_t rle_value_ = 0;
  int64_t literal_left_ = 0;
  const uint8_t* literal_data_ = nullptr;
  uint64_t literal_bit_ = 0;
};

// The position of the first decoded value that is not below `bound` (a level above the column's
// maximum, a dictionary index past the dictionary), or -1 when there is none. The largest value
// is found first, in a loop without an exit that vectorizes; the position is searched only when
// the check fails, for the error message.
template <typename T, typename Bound>
int64_t FirstAtOrAbove(const std::vector<T>& values, Bound bound) {
  T largest = 0;
  for (T v : values) {
    largest = std::max(largest, v);
  }
  if (std::cmp_less(largest, bound)) {
    return -1;
  }
  for (size_t i = 0; i < values.size(); i++) {
    if (!std::cmp_less(values[i], bound)) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

}  // namespace ferry::parquet
