// The delta encodings of Parquet (parquet-format Encodings.md): DELTA_BINARY_PACKED for INT32 and
// INT64, DELTA_LENGTH_BYTE_ARRAY for BYTE_ARRAY, DELTA_BYTE_ARRAY for BYTE_ARRAY and
// FIXED_LEN_BYTE_ARRAY. Part of value decoding (value_decoder.h, which dispatches here).
//
// DELTA_BINARY_PACKED layout:
//   1. header: <block size> <miniblocks per block> <total values> as ULEB128, <first value> as
//      zigzag ULEB128
//   2. blocks: <min delta> (zigzag ULEB128), one bit-width byte per miniblock, then the
//      miniblocks, each (block size / miniblocks) values bit-packed LSB first at its width
//   3. the last block may stop after the miniblock holding the last value; the widths of the
//      unused miniblocks are still present, their bodies are not
// Arithmetic wraps in two's complement, as the spec requires.
//
// Thread-safety: DeltaBitPackReader is not thread-safe; the functions are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ferry/base/status.h"
#include "ferry/columnar/column.h"
#include "ferry/parquet/value_decoder.h"

namespace ferry::parquet {

// Reads one DELTA_BINARY_PACKED stream.
class DeltaBitPackReader {
 public:
  // Parses the header at the front of `data`, which must outlive the reader. `value_bits` is 32
  // or 64: miniblocks wider than that are corrupt.
  Status Init(std::string_view data, int value_bits);

  // Values the header announces (not yet validated against anything but the caller's needs).
  uint64_t total_values() const { return total_values_; }
  uint64_t values_left() const { return total_values_ - values_read_; }

  // Decodes the next `n` values. REQUIRES: n <= values_left().
  Status Next(int64_t* out, int64_t n);
  // Bytes of `data` taken by the stream once every value has been read: where the data that
  // follows it (DELTA_LENGTH_BYTE_ARRAY bytes) begins.
  size_t consumed() const { return pos_; }

 private:
  Status StartBlock();
  Status StartMiniblock();

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t pos_ = 0;
  int value_bits_ = 64;
  uint64_t block_size_ = 0;
  uint64_t miniblocks_ = 0;
  uint64_t miniblock_values_ = 0;
  uint64_t total_values_ = 0;
  uint64_t values_read_ = 0;
  uint64_t last_value_ = 0;
  uint64_t min_delta_ = 0;
  // Bit widths of the current block's miniblocks start here.
  size_t widths_pos_ = 0;
  uint64_t miniblock_index_ = 0;  // within the block; == miniblocks_ when the block is done
  uint64_t miniblock_left_ = 0;   // values left in the current miniblock
  int width_ = 0;
  size_t bits_pos_ = 0;      // byte offset of the current miniblock's body
  size_t bits_avail_ = 0;    // bytes of the body present in the input
  uint64_t bit_offset_ = 0;  // next value's bit offset within the body
};

Status DecodeDeltaBinaryPacked(const PhysicalSpec& spec, std::string_view data, int64_t count,
                               columnar::Column* out);
Status DecodeDeltaLengthByteArray(std::string_view data, int64_t count, columnar::Column* out);
Status DecodeDeltaByteArray(const PhysicalSpec& spec, std::string_view data, int64_t count,
                            int64_t max_output_bytes, columnar::Column* out);

}  // namespace ferry::parquet
