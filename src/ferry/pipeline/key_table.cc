#include "ferry/pipeline/key_table.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>

#include "ferry/base/check.h"
#include "ferry/base/varint.h"

namespace ferry::pipeline {
namespace {

constexpr size_t kMinKeySlots = 16;

// Whether `n` keys fit `capacity` slots (at most 70 % full).
bool SlotsFit(size_t n, size_t capacity) {
  return n * 10 <= capacity * 7;
}

}  // namespace

uint32_t KeyTable::Hash(std::string_view key) {
  return static_cast<uint32_t>(XXH3_64bits(key.data(), key.size()) >> 32);
}

void KeyTable::Reserve(size_t keys, size_t key_bytes) {
  offsets_.reserve(keys);
  if (key_bytes > 0) {
    arena_.reserve(key_bytes + keys * 2);
  }
  size_t capacity = std::max(kMinKeySlots, slots_.size());
  while (!SlotsFit(keys, capacity)) {
    capacity *= 2;
  }
  if (capacity > slots_.size()) {
    Grow(capacity);
  }
}

void KeyTable::Grow(size_t min_capacity) {
  const size_t capacity = std::bit_ceil(std::max(min_capacity, kMinKeySlots));
  FERRY_CHECK(capacity <= (size_t{1} << 32));  // Home() needs the hash's bits
  std::vector<uint64_t> old = std::move(slots_);
  slots_.assign(capacity, 0);
  mask_ = capacity - 1;
  shift_ = 32 - std::countr_zero(capacity);
  for (uint64_t slot : old) {
    if (slot != 0) {
      Place(slot);
    }
  }
}

void KeyTable::Place(uint64_t slot) {
  size_t i = Home(static_cast<uint32_t>(slot >> 32));
  while (slots_[i] != 0) {
    i = (i + 1) & mask_;
  }
  slots_[i] = slot;
}

std::string_view KeyTable::key(uint32_t id) const {
  const auto* p = reinterpret_cast<const uint8_t*>(arena_.data()) + offsets_[id];
  const auto* end = reinterpret_cast<const uint8_t*>(arena_.data()) + arena_.size();
  uint64_t n = 0;
  FERRY_CHECK(DecodeVarint(&p, end, &n));
  return std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
}

uint32_t KeyTable::Find(std::string_view key) const {
  if (size_ == 0) {
    return kNoKey;
  }
  const uint32_t hash = Hash(key);
  for (size_t i = Home(hash);; i = (i + 1) & mask_) {
    const uint64_t slot = slots_[i];
    if (slot == 0) {
      return kNoKey;
    }
    const auto id = static_cast<uint32_t>((slot & 0xFFFFFFFFu) - 1);
    if (static_cast<uint32_t>(slot >> 32) == hash && this->key(id) == key) {
      return id;
    }
  }
}

uint32_t KeyTable::Insert(std::string_view key, bool* inserted) {
  if (!SlotsFit(size_ + 1, slots_.size())) {
    Grow(std::max(kMinKeySlots, slots_.size() * 2));
  }
  const uint32_t hash = Hash(key);
  size_t i = Home(hash);
  for (;; i = (i + 1) & mask_) {
    const uint64_t slot = slots_[i];
    if (slot == 0) {
      break;
    }
    const auto id = static_cast<uint32_t>((slot & 0xFFFFFFFFu) - 1);
    if (static_cast<uint32_t>(slot >> 32) == hash && this->key(id) == key) {
      *inserted = false;
      return id;
    }
  }
  uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    FERRY_CHECK(offsets_.size() < kNoKey - 1);
    id = static_cast<uint32_t>(offsets_.size());
    offsets_.push_back(kFree);
  }
  offsets_[id] = arena_.size();
  AppendVarint(&arena_, key.size());
  arena_.append(key);
  slots_[i] = (static_cast<uint64_t>(hash) << 32) | (static_cast<uint64_t>(id) + 1);
  ++size_;
  key_bytes_ += key.size();
  *inserted = true;
  return id;
}

void KeyTable::Erase(uint32_t id) {
  FERRY_CHECK(live(id));
  const std::string_view bytes = key(id);
  size_t i = Home(Hash(bytes));
  while ((slots_[i] & 0xFFFFFFFFu) != static_cast<uint64_t>(id) + 1) {
    FERRY_CHECK(slots_[i] != 0);
    i = (i + 1) & mask_;
  }
  // Backward shift: move later entries of the run whose home is not in (i, j] into the hole.
  slots_[i] = 0;
  for (size_t j = (i + 1) & mask_; slots_[j] != 0; j = (j + 1) & mask_) {
    const size_t home = Home(static_cast<uint32_t>(slots_[j] >> 32));
    const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      slots_[i] = slots_[j];
      slots_[j] = 0;
      i = j;
    }
  }
  uint8_t prefix[10];
  garbage_ += bytes.size() + static_cast<size_t>(EncodeVarint(prefix, bytes.size()));
  key_bytes_ -= bytes.size();
  offsets_[id] = kFree;
  free_ids_.push_back(id);
  --size_;
}

void KeyTable::MaybeCompact() {
  if (garbage_ < (size_t{1} << 20) || garbage_ * 2 < arena_.size()) {
    return;
  }
  std::string arena;
  arena.reserve(arena_.size() - garbage_);
  for (uint64_t& offset : offsets_) {
    if (offset == kFree) {
      continue;
    }
    const auto* p = reinterpret_cast<const uint8_t*>(arena_.data()) + offset;
    const auto* end = reinterpret_cast<const uint8_t*>(arena_.data()) + arena_.size();
    const uint8_t* start = p;
    uint64_t n = 0;
    FERRY_CHECK(DecodeVarint(&p, end, &n));
    const size_t length = static_cast<size_t>(p - start) + static_cast<size_t>(n);
    const size_t new_offset = arena.size();
    arena.append(arena_, static_cast<size_t>(offset), length);
    offset = new_offset;
  }
  arena_ = std::move(arena);
  garbage_ = 0;
}

void KeyTable::Clear() {
  *this = KeyTable();
}

size_t KeyTable::MemoryBytes() const {
  return arena_.capacity() + offsets_.capacity() * sizeof(uint64_t) +
         free_ids_.capacity() * sizeof(uint32_t) + slots_.capacity() * sizeof(uint64_t);
}

}  // namespace ferry::pipeline
