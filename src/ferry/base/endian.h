// Little-endian loads and stores of fixed-width integers and floats on unaligned bytes.
// Parquet and the Thrift compact protocol are little-endian; ferry runs on little-endian hosts
// (checked at compile time below), so these compile to plain moves.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

namespace ferry {

static_assert(std::endian::native == std::endian::little, "ferry assumes a little-endian host");

template <typename T>
inline T LoadLE(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
inline void StoreLE(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

template <typename T>
inline void AppendLE(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

}  // namespace ferry
