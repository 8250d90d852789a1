#include "ferry/parquet/rle.h"

#include <algorithm>
#include <cstring>

#include "ferry/base/varint.h"

namespace ferry::parquet {
namespace {

// A run longer than this is split, so that count << 1 stays inside a uint32 for every reader.
constexpr size_t kMaxRunLength = size_t{1} << 30;

template <typename T>
void EmitLiterals(const T* values, size_t n, int bit_width, std::string* out) {
  while (n > 0) {
    size_t take = std::min(n, kMaxRunLength);
    size_t groups = (take + 7) / 8;
    AppendVarint(out, (uint64_t{groups} << 1) | 1);
    size_t old = out->size();
    BitPack(values, take, bit_width, out);
    // Zero padding to whole groups (BitPack wrote ceil(take * bit_width / 8) bytes).
    out->resize(old + groups * static_cast<size_t>(bit_width), '\0');
    values += take;
    n -= take;
  }
}

void EmitRun(uint32_t value, size_t count, int bit_width, std::string* out) {
  size_t value_bytes = (static_cast<size_t>(bit_width) + 7) / 8;
  while (count > 0) {
    size_t take = std::min(count, kMaxRunLength);
    AppendVarint(out, uint64_t{take} << 1);
    for (size_t b = 0; b < value_bytes; ++b) {
      out->push_back(static_cast<char>(value >> (8 * b)));
    }
    count -= take;
  }
}

// Loads up to 8 bytes at p (fewer if the input ends first), little-endian, zero-filled.
inline uint64_t LoadUpTo8(const uint8_t* p, size_t avail) {
  uint64_t w = 0;
  std::memcpy(&w, p, avail >= 8 ? 8 : avail);
  return w;
}

}  // namespace

template <typename T>
void BitPack(const T* values, size_t n, int bit_width, std::string* out) {
  size_t bytes = (n * static_cast<size_t>(bit_width) + 7) / 8;
  size_t old = out->size();
  out->resize(old + bytes);
  auto* p = reinterpret_cast<uint8_t*>(out->data() + old);
  if (bit_width == 0) {
    return;
  }
  uint64_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; ++i) {
    acc |= static_cast<uint64_t>(static_cast<uint32_t>(values[i])) << bits;
    bits += bit_width;
    while (bits >= 8) {
      *p++ = static_cast<uint8_t>(acc);
      acc >>= 8;
      bits -= 8;
    }
  }
  if (bits > 0) {
    *p = static_cast<uint8_t>(acc);
  }
}

template <typename T>
void BitUnpack(const uint8_t* data, size_t n, int bit_width, T* out) {
  if (bit_width == 0) {
    std::fill(out, out + n, T{0});
    return;
  }
  size_t avail = (n * static_cast<size_t>(bit_width) + 7) / 8;
  uint64_t mask = (uint64_t{1} << bit_width) - 1;
  uint64_t bit = 0;
  for (size_t i = 0; i < n; ++i, bit += static_cast<uint64_t>(bit_width)) {
    size_t byte = static_cast<size_t>(bit >> 3);
    uint64_t w = LoadUpTo8(data + byte, avail - byte);
    out[i] = static_cast<T>((w >> (bit & 7)) & mask);
  }
}

template <typename T>
void RleBpEncode(const T* values, size_t n, int bit_width, std::string* out) {
  if (bit_width == 0) {
    EmitRun(0, n, 0, out);
    return;
  }
  size_t literal_start = 0;
  size_t i = 0;
  while (i < n) {
    T x = values[i];
    size_t j = i + 1;
    while (j < n && values[j] == x) {
      ++j;
    }
    size_t run = j - i;
    if (run >= 8) {
      // Literal runs hold whole groups of 8: lend the pending literals some of the run.
      size_t pending = i - literal_start;
      size_t pad = (8 - pending % 8) % 8;
      if (run - pad >= 8) {
        EmitLiterals(values + literal_start, pending + pad, bit_width, out);
        EmitRun(static_cast<uint32_t>(x), run - pad, bit_width, out);
        literal_start = j;
      }
    }
    i = j;
  }
  EmitLiterals(values + literal_start, n - literal_start, bit_width, out);
}

size_t RleBpMaxSize(size_t n, int bit_width) {
  // Worst case: all literal (whole groups) plus a header per kMaxRunLength values, or RLE runs
  // of 8 values each (header + value bytes) when that is larger.
  size_t groups = (n + 7) / 8;
  size_t literal = groups * static_cast<size_t>(bit_width) + 10 * (n / kMaxRunLength + 1);
  size_t rle = groups * (5 + (static_cast<size_t>(bit_width) + 7) / 8) + 10;
  return std::max(literal, rle) + 10;
}

Status RleBpDecoder::NextRun() {
  uint64_t header;
  if (!DecodeVarint(&p_, end_, &header)) {
    return DataLoss("RLE/bit-packed: truncated run header");
  }
  if (header & 1) {
    uint64_t groups = std::min<uint64_t>(header >> 1, uint64_t{1} << 40);
    uint64_t avail = remaining();
    uint64_t values = groups * 8;
    uint64_t bytes = 0;
    if (bit_width_ > 0) {
      auto width = static_cast<uint64_t>(bit_width_);
      if (groups <= avail && groups * width <= avail) {
        bytes = groups * width;
      } else {
        // The final run may be cut short: keep only the whole values present.
        bytes = avail;
        values = avail * 8 / width;
      }
    }
    literal_data_ = p_;
    literal_bit_ = 0;
    literal_left_ = static_cast<int64_t>(values);
    p_ += bytes;
  } else {
    uint64_t count = header >> 1;
    size_t value_bytes = (static_cast<size_t>(bit_width_) + 7) / 8;
    if (remaining() < value_bytes) {
      return DataLoss("RLE/bit-packed: truncated run value");
    }
    uint32_t v = 0;
    for (size_t b = 0; b < value_bytes; ++b) {
      v |= static_cast<uint32_t>(p_[b]) << (8 * b);
    }
    p_ += value_bytes;
    rle_value_ = bit_width_ == 32 ? v : v & ((uint32_t{1} << bit_width_) - 1);
    rle_left_ = static_cast<int64_t>(std::min<uint64_t>(count, INT64_MAX / 2));
  }
  return Status::OK();
}

template <typename T>
Result<int64_t> RleBpDecoder::GetBatch(T* out, int64_t n) {
  if (bit_width_ < 0 || bit_width_ > 32) {
    return DataLoss("RLE/bit-packed: bit width {} out of range", bit_width_);
  }
  int64_t done = 0;
  while (done < n) {
    if (rle_left_ > 0) {
      int64_t k = std::min(rle_left_, n - done);
      std::fill(out + done, out + done + k, static_cast<T>(rle_value_));
      rle_left_ -= k;
      done += k;
    } else if (literal_left_ > 0) {
      int64_t k = std::min(literal_left_, n - done);
      uint64_t bit = literal_bit_;
      size_t first_byte = static_cast<size_t>(bit >> 3);
      // Unpack from the byte holding the first value; the run's bytes end at p_.
      const uint8_t* base = literal_data_ + first_byte;
      size_t avail = static_cast<size_t>(p_ - base);
      if (bit_width_ == 0) {
        std::fill(out + done, out + done + k, T{0});
      } else {
        uint64_t mask = bit_width_ == 32 ? 0xFFFFFFFFu : (uint64_t{1} << bit_width_) - 1;
        auto width = static_cast<uint64_t>(bit_width_);
        uint64_t b = bit & 7;
        int64_t i = 0;
        // A value starts at most 7 bits into its first byte and is at most 32 bits wide, so one
        // 8-byte load holds it: whole loads while 8 bytes remain, then loads cut at the end.
        if (avail >= 8) {
          // Value i starts in byte (b + i * width) / 8, which must be at most avail - 8.
          uint64_t last = ((avail - 8) * 8 + 7 - b) / width;
          int64_t whole =
              static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(k), last + 1));
          for (; i < whole; ++i, b += width) {
            uint64_t w;
            std::memcpy(&w, base + (b >> 3), 8);
            out[done + i] = static_cast<T>((w >> (b & 7)) & mask);
          }
        }
        for (; i < k; ++i, b += width) {
          size_t byte = static_cast<size_t>(b >> 3);
          uint64_t w = LoadUpTo8(base + byte, avail - byte);
          out[done + i] = static_cast<T>((w >> (b & 7)) & mask);
        }
      }
      literal_bit_ += static_cast<uint64_t>(k) * static_cast<uint64_t>(bit_width_);
      literal_left_ -= k;
      done += k;
    } else {
      if (p_ >= end_) {
        break;
      }
      FERRY_RETURN_IF_ERROR(NextRun());
    }
  }
  return done;
}

#define FERRY_RLE_INSTANTIATE(T)                                     \
  template void BitPack<T>(const T*, size_t, int, std::string*);     \
  template void BitUnpack<T>(const uint8_t*, size_t, int, T*);       \
  template void RleBpEncode<T>(const T*, size_t, int, std::string*); \
  template Result<int64_t> RleBpDecoder::GetBatch<T>(T*, int64_t);
FERRY_RLE_INSTANTIATE(uint8_t)
FERRY_RLE_INSTANTIATE(int16_t)
FERRY_RLE_INSTANTIATE(uint16_t)
FERRY_RLE_INSTANTIATE(int32_t)
FERRY_RLE_INSTANTIATE(uint32_t)
#undef FERRY_RLE_INSTANTIATE

}  // namespace ferry::parquet
