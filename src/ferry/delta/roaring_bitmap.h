// RoaringBitmap64: a set of 64-bit row indexes in memory, with the codec of the RoaringBitmap
// "portable" 64-bit serialization (RoaringFormatSpec, "Extension for 64-bit implementations"),
// the payload of a Delta deletion vector (deletion_vector.h adds the magic number and the file
// framing around it).
//
// The 64-bit format, all little-endian:
//   1. numBuckets: uint64;
//   2. per bucket, keys ascending: key (uint32, the high 32 bits of its values; Delta requires
//      the top bit clear), then a 32-bit RoaringBitmap of the low 32 bits:
//      a. cookie: uint32. 12346 = no run containers, followed by the container count (uint32);
//         or 12347 in the low 16 bits with count - 1 in the high 16 bits, followed by a bitset
//         of (count + 7) / 8 bytes saying which containers are runs;
//      b. per container: its key (uint16, the next 16 bits) and cardinality - 1 (uint16);
//      c. per container a uint32 byte offset, present unless the cookie is 12347 and there are
//         fewer than 4 containers (readers here rely on the order, not the offsets);
//      d. the containers: a run container is a run count (uint16) and (start, length - 1)
//         uint16 pairs; otherwise cardinality <= 4096 is a sorted uint16 array and more is a
//         bitmap of 1024 uint64 words.
//
// Deserialize checks every count and size against the bytes left and the total cardinality
// against a caller's bound before it allocates, so damaged input costs at most the memory its
// claims would need within that bound (DataLoss otherwise). Serialize picks, per container, the
// smallest of array, bitmap and runs, as the Java library's runOptimize does.
//
// Thread-safety: a value type; const methods may run concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/base/result.h"

namespace ferry::delta {

class RoaringBitmap64 {
 public:
  void Add(uint64_t value);
  // Adds [begin, end).
  void AddRange(uint64_t begin, uint64_t end);
  bool Contains(uint64_t value) const;
  uint64_t Cardinality() const { return cardinality_; }
  bool Empty() const { return cardinality_ == 0; }
  std::optional<uint64_t> Max() const;
  // Every value, ascending (for tests and small sets).
  std::vector<uint64_t> ToVector() const;

  std::string Serialize() const;
  // DataLoss for malformed bytes, trailing bytes, a key with its top bit set, or more than
  // `max_cardinality` values.
  static Result<RoaringBitmap64> Deserialize(std::string_view bytes, uint64_t max_cardinality);

  bool operator==(const RoaringBitmap64& other) const;

 private:
  // The low 16 bits of the values of one 2^16 block: a sorted array (up to 4096 values) or a
  // bitmap of 1024 words.
  struct Container {
    std::vector<uint16_t> array;
    std::vector<uint64_t> bits;  // empty unless a bitmap
    uint32_t cardinality = 0;
    bool Contains(uint16_t low) const;
    void Add(uint16_t low);
    void ToBitmap();
  };

  // Keyed by value >> 16.
  std::map<uint64_t, Container> containers_;
  uint64_t cardinality_ = 0;
};

}  // namespace ferry::delta
