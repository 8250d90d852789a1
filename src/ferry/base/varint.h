// Variable-length integers: unsigned LEB128 (protobuf/Thrift compact "varint") and zigzag.
// Decoders are bounds-checked and return false on truncated or over-long input, never read past
// `end`.
#pragma once

#include <cstdint>
#include <string>

namespace ferry {

inline uint64_t ZigZagEncode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t ZigZagDecode(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

inline void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Writes at most 10 bytes at `p`; returns the number written.
inline int EncodeVarint(uint8_t* p, uint64_t v) {
  int n = 0;
  while (v >= 0x80) {
    p[n++] = static_cast<uint8_t>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  p[n++] = static_cast<uint8_t>(v);
  return n;
}

// Decodes one varint from [*p, end). On success advances *p and returns true.
inline bool DecodeVarint(const uint8_t** p, const uint8_t* end, uint64_t* v) {
  uint64_t result = 0;
  int shift = 0;
  const uint8_t* q = *p;
  while (q < end && shift <= 63) {
    uint8_t byte = *q++;
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      *p = q;
      *v = result;
      return true;
    }
    shift += 7;
  }
  return false;
}

}  // namespace ferry
