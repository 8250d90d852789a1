// Tests and benchmarks only: Avro binary values written by hand from the specification's
// "Binary Encoding" section (a long as a zigzag varint, a string or bytes as its length then the
// bytes), so the reader and decoder tests do not build their input with the code under test.
#pragma once

#include <cstdint>
#include <string>

namespace ferry::transform::avro_test {

inline std::string Long(int64_t v) {
  auto u = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  std::string out;
  while (u >= 0x80) {
    out.push_back(static_cast<char>((u & 0x7f) | 0x80));
    u >>= 7;
  }
  out.push_back(static_cast<char>(u));
  return out;
}

inline std::string Str(const std::string& s) {
  return Long(static_cast<int64_t>(s.size())) + s;
}

}  // namespace ferry::transform::avro_test
