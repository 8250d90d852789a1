// KeyTable: a set of byte-string keys, each held once, with a dense id per key: the key store of
// the upsert key index (key_index.h), which keeps millions of keys and must not pay a heap node
// and a std::string per key (nor free them one by one at exit).
//
//   KeyTable table;
//   table.Reserve(n);
//   bool inserted = false;
//   uint32_t id = table.Insert(key, &inserted);     // the key's id, new or not
//   uint32_t same = table.Find(key);                // kNoKey when absent
//   std::string_view bytes = table.key(id);         // valid until the next Insert or Compact
//   table.Erase(id);                                // the id may be given to a later key
//
// Layout: the keys' bytes in one arena (a varint length, then the bytes), an offset per id, and
// an open-addressing table (linear probing, at most 70 % full, erasure by backward shift, no
// tombstones) of 64-bit slots holding a 32-bit hash of the key and its id + 1. Growing the table
// needs no key bytes (the slot's hash places it). Erased keys leave garbage in the arena until
// Compact(), which the owner calls where no key() view is held. About 8 bytes of offset, 10-14
// bytes of slot and the key's length + 1 per key.
//
// Thread-safety: none (one thread, or const use only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::pipeline {

class KeyTable {
 public:
  static constexpr uint32_t kNoKey = UINT32_MAX;

  // Room for `keys` keys and `key_bytes` bytes of them without growing.
  void Reserve(size_t keys, size_t key_bytes = 0);
  // The id of `key`, inserted when absent (`*inserted` says which). `key` must not be a view of
  // this table's own bytes.
  uint32_t Insert(std::string_view key, bool* inserted);
  uint32_t Find(std::string_view key) const;
  // REQUIRES: `id` is live.
  void Erase(uint32_t id);
  // REQUIRES: `id` is live.
  std::string_view key(uint32_t id) const;
  bool live(uint32_t id) const { return id < offsets_.size() && offsets_[id] != kFree; }
  // Every id ever handed out is below this (live or not).
  uint32_t id_limit() const { return static_cast<uint32_t>(offsets_.size()); }
  size_t size() const { return size_; }
  // Bytes of the live keys (their lengths, without the length prefixes).
  size_t key_bytes() const { return key_bytes_; }
  // Rewrites the arena without the erased keys' bytes when they are more than half of it
  // (invalidates key() views). Ids do not change.
  void MaybeCompact();
  void Clear();
  // The heap bytes held (capacities), for logs and benchmarks.
  size_t MemoryBytes() const;

 private:
  static constexpr uint64_t kFree = UINT64_MAX;
  static uint32_t Hash(std::string_view key);
  size_t Home(uint32_t hash) const { return static_cast<size_t>(hash) >> shift_; }
  void Grow(size_t min_capacity);
  void Place(uint64_t slot);  // into an empty slot of its probe sequence

  std::string arena_;
  std::vector<uint64_t> offsets_;  // by id: offset of the key's length prefix; kFree when erased
  std::vector<uint32_t> free_ids_;
  std::vector<uint64_t> slots_;  // (hash << 32) | (id + 1); 0: empty
  size_t mask_ = 0;
  int shift_ = 32;  // Home() takes the hash's top log2(capacity) bits
  size_t size_ = 0;
  size_t key_bytes_ = 0;
  size_t garbage_ = 0;  // arena bytes of erased keys
};

}  // namespace ferry::pipeline
