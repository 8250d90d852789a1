#include "ferry/parquet/delta_decoder.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "ferry/base/varint.h"

namespace ferry::parquet {
namespace {

using columnar::BinaryColumn;
using columnar::Column;
using columnar::PrimitiveColumn;

// Values decoded per round into a scratch buffer.
constexpr int64_t kChunk = 1024;

// The `width` bits (0..64) at bit `bit` of `base`, LSB first.
// REQUIRES: bit + width <= avail * 8.
uint64_t ReadBits(const uint8_t* base, size_t avail, uint64_t bit, int width) {
  if (width == 0) {
    return 0;
  }
  size_t byte = static_cast<size_t>(bit >> 3);
  int shift = static_cast<int>(bit & 7);
  uint64_t word = 0;
  std::memcpy(&word, base + byte, std::min<size_t>(8, avail - byte));
  uint64_t v = word >> shift;
  if (shift + width > 64) {
    v |= static_cast<uint64_t>(base[byte + 8]) << (64 - shift);
  }
  return width == 64 ? v : v & ((uint64_t{1} << width) - 1);
}

bool ReadUleb(const uint8_t* data, size_t size, size_t* pos, uint64_t* v) {
  const uint8_t* p = data + *pos;
  if (!DecodeVarint(&p, data + size, v)) {
    return false;
  }
  *pos = static_cast<size_t>(p - data);
  return true;
}

// Decodes `count` values of a DELTA_BINARY_PACKED stream whose header must announce exactly
// `count` (the lengths of the byte-array encodings). Returns the bytes the stream took.
Result<size_t> DecodeLengths(std::string_view data, int64_t count, std::string_view what,
                             std::vector<int64_t>* out) {
  DeltaBitPackReader reader;
  FERRY_RETURN_IF_ERROR(reader.Init(data, 32).WithContext(what));
  if (reader.total_values() != static_cast<uint64_t>(count)) {
    return DataLoss("{}: {} lengths for a page of {} values", what, reader.total_values(), count);
  }
  out->resize(static_cast<size_t>(count));
  FERRY_RETURN_IF_ERROR(reader.Next(out->data(), count).WithContext(what));
  return reader.consumed();
}

}  // namespace

Status DeltaBitPackReader::Init(std::string_view data, int value_bits) {
  data_ = reinterpret_cast<const uint8_t*>(data.data());
  size_ = data.size();
  pos_ = 0;
  value_bits_ = value_bits;
  uint64_t first = 0;
  if (!ReadUleb(data_, size_, &pos_, &block_size_) ||
      !ReadUleb(data_, size_, &pos_, &miniblocks_) ||
      !ReadUleb(data_, size_, &pos_, &total_values_) || !ReadUleb(data_, size_, &pos_, &first)) {
    return DataLoss("DELTA_BINARY_PACKED: truncated header");
  }
  // The spec: block size a multiple of 128, miniblocks of a multiple of 32 values. The upper
  // bound only keeps the arithmetic below far from overflow.
  if (block_size_ == 0 || block_size_ % 128 != 0 || block_size_ > (uint64_t{1} << 31) ||
      miniblocks_ == 0 || block_size_ % miniblocks_ != 0 || (block_size_ / miniblocks_) % 32 != 0) {
    return DataLoss("DELTA_BINARY_PACKED: bad block size {} with {} miniblocks", block_size_,
                    miniblocks_);
  }
  miniblock_values_ = block_size_ / miniblocks_;
  last_value_ = static_cast<uint64_t>(ZigZagDecode(first));
  values_read_ = 0;
  miniblock_index_ = miniblocks_;
  miniblock_left_ = 0;
  return Status::OK();
}

Status DeltaBitPackReader::StartBlock() {
  uint64_t zigzag = 0;
  if (!ReadUleb(data_, size_, &pos_, &zigzag)) {
    return DataLoss("DELTA_BINARY_PACKED: truncated block header at byte {}", pos_);
  }
  min_delta_ = static_cast<uint64_t>(ZigZagDecode(zigzag));
  if (size_ - pos_ < miniblocks_) {
    return DataLoss("DELTA_BINARY_PACKED: truncated miniblock widths at byte {}", pos_);
  }
  widths_pos_ = pos_;
  pos_ += static_cast<size_t>(miniblocks_);
  miniblock_index_ = 0;
  return Status::OK();
}

Status DeltaBitPackReader::StartMiniblock() {
  if (miniblock_index_ >= miniblocks_) {
    FERRY_RETURN_IF_ERROR(StartBlock());
  }
  width_ = data_[widths_pos_ + miniblock_index_];
  // Writers use at most the type's width; wrapping arithmetic makes wider ones harmless up to 64.
  if (width_ > 64) {
    return DataLoss("DELTA_BINARY_PACKED: miniblock bit width {} above 64", width_);
  }
  miniblock_index_++;
  miniblock_left_ = miniblock_values_;
  // The body is padded to the full miniblock; a last one cut short still yields what it holds.
  uint64_t body = miniblock_values_ * static_cast<uint64_t>(width_) / 8;
  bits_pos_ = pos_;
  bits_avail_ = static_cast<size_t>(std::min<uint64_t>(body, size_ - pos_));
  pos_ += bits_avail_;
  bit_offset_ = 0;
  return Status::OK();
}

Status DeltaBitPackReader::Next(int64_t* out, int64_t n) {
  FERRY_CHECK(n >= 0 && static_cast<uint64_t>(n) <= values_left());
  for (int64_t i = 0; i < n; i++) {
    if (values_read_ > 0) {
      if (miniblock_left_ == 0) {
        FERRY_RETURN_IF_ERROR(StartMiniblock());
      }
      if (bit_offset_ + static_cast<uint64_t>(width_) > uint64_t{bits_avail_} * 8) {
        return DataLoss("DELTA_BINARY_PACKED: value {} of {} is past the end of the data",
                        values_read_, total_values_);
      }
      uint64_t bits = ReadBits(data_ + bits_pos_, bits_avail_, bit_offset_, width_);
      bit_offset_ += static_cast<uint64_t>(width_);
      miniblock_left_--;
      last_value_ += min_delta_ + bits;
    }
    values_read_++;
    out[i] = value_bits_ == 32
                 ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(last_value_)))
                 : static_cast<int64_t>(last_value_);
  }
  return Status::OK();
}

Status DecodeDeltaBinaryPacked(const PhysicalSpec& spec, std::string_view data, int64_t count,
                               Column* out) {
  if (spec.type != PhysicalType::kInt32 && spec.type != PhysicalType::kInt64) {
    return NotSupported("DELTA_BINARY_PACKED is not defined for {}", PhysicalTypeName(spec.type));
  }
  if (count == 0) {
    return Status::OK();
  }
  bool is32 = spec.type == PhysicalType::kInt32;
  DeltaBitPackReader reader;
  FERRY_RETURN_IF_ERROR(reader.Init(data, is32 ? 32 : 64));
  if (reader.total_values() < static_cast<uint64_t>(count)) {
    return DataLoss("DELTA_BINARY_PACKED: {} values, page needs {}", reader.total_values(), count);
  }
  std::vector<int64_t> chunk(static_cast<size_t>(std::min(count, kChunk)));
  out->Reserve(out->length() + count);
  for (int64_t done = 0; done < count;) {
    int64_t n = std::min(count - done, kChunk);
    FERRY_RETURN_IF_ERROR(reader.Next(chunk.data(), n));
    for (int64_t i = 0; i < n; i++) {
      if (is32) {
        static_cast<PrimitiveColumn<int32_t>*>(out)->Append(
            static_cast<int32_t>(chunk[static_cast<size_t>(i)]));
      } else {
        static_cast<PrimitiveColumn<int64_t>*>(out)->Append(chunk[static_cast<size_t>(i)]);
      }
    }
    done += n;
  }
  return Status::OK();
}

Status DecodeDeltaLengthByteArray(std::string_view data, int64_t count, Column* out) {
  if (count == 0) {
    return Status::OK();
  }
  std::vector<int64_t> lengths;
  FERRY_ASSIGN_OR_RETURN(size_t pos,
                         DecodeLengths(data, count, "DELTA_LENGTH_BYTE_ARRAY", &lengths));
  auto* col = static_cast<BinaryColumn*>(out);
  col->Reserve(col->length() + count);
  for (int64_t i = 0; i < count; i++) {
    int64_t len = lengths[static_cast<size_t>(i)];
    if (len < 0 || static_cast<uint64_t>(len) > data.size() - pos) {
      return DataLoss("DELTA_LENGTH_BYTE_ARRAY: value {} of {}: length {} past the end of the page",
                      i, count, len);
    }
    col->Append(data.substr(pos, static_cast<size_t>(len)));
    pos += static_cast<size_t>(len);
  }
  return Status::OK();
}

Status DecodeDeltaByteArray(const PhysicalSpec& spec, std::string_view data, int64_t count,
                            int64_t max_output_bytes, Column* out) {
  if (spec.type != PhysicalType::kByteArray && spec.type != PhysicalType::kFixedLenByteArray) {
    return NotSupported("DELTA_BYTE_ARRAY is not defined for {}", PhysicalTypeName(spec.type));
  }
  if (count == 0) {
    return Status::OK();
  }
  std::vector<int64_t> prefixes;
  std::vector<int64_t> suffixes;
  FERRY_ASSIGN_OR_RETURN(size_t pos,
                         DecodeLengths(data, count, "DELTA_BYTE_ARRAY prefixes", &prefixes));
  FERRY_ASSIGN_OR_RETURN(
      size_t taken, DecodeLengths(data.substr(pos), count, "DELTA_BYTE_ARRAY suffixes", &suffixes));
  pos += taken;
  auto* col = static_cast<BinaryColumn*>(out);
  col->Reserve(col->length() + count);
  std::string value;
  int64_t produced = 0;
  for (int64_t i = 0; i < count; i++) {
    int64_t prefix = prefixes[static_cast<size_t>(i)];
    int64_t suffix = suffixes[static_cast<size_t>(i)];
    if (prefix < 0 || static_cast<uint64_t>(prefix) > value.size()) {
      return DataLoss("DELTA_BYTE_ARRAY: value {}: prefix {} longer than the previous value ({})",
                      i, prefix, value.size());
    }
    if (suffix < 0 || static_cast<uint64_t>(suffix) > data.size() - pos) {
      return DataLoss("DELTA_BYTE_ARRAY: value {}: suffix {} past the end of the page", i, suffix);
    }
    produced += prefix + suffix;
    if (produced > max_output_bytes) {
      return ResourceExhausted(
          "DELTA_BYTE_ARRAY: the page decodes to more than {} bytes (raise "
          "ReaderOptions::max_page_size to read it)",
          max_output_bytes);
    }
    value.resize(static_cast<size_t>(prefix));
    value.append(data.substr(pos, static_cast<size_t>(suffix)));
    pos += static_cast<size_t>(suffix);
    if (spec.type == PhysicalType::kFixedLenByteArray &&
        value.size() != static_cast<size_t>(spec.type_length)) {
      return DataLoss("DELTA_BYTE_ARRAY: value {} has {} bytes, FIXED_LEN_BYTE_ARRAY({})", i,
                      value.size(), spec.type_length);
    }
    col->Append(value);
  }
  return Status::OK();
}

}  // namespace ferry::parquet
