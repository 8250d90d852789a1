// KeyTable (key_table.h) against std::unordered_map under random inserts and erasures, with
// growth, id reuse and arena compaction.
#include "ferry/pipeline/key_table.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace ferry::pipeline {
namespace {

TEST(KeyTableTest, FindsInsertsAndErasesLikeAMap) {
  KeyTable table;
  std::unordered_map<std::string, uint32_t> model;
  std::mt19937_64 rng(42);
  std::vector<std::string> universe;
  for (int i = 0; i < 5000; ++i) {
    // Keys of many lengths, some empty-prefixed binary, some long.
    std::string key(static_cast<size_t>(rng() % 40), '\0');
    for (char& c : key) {
      c = static_cast<char>(rng() & 0xFF);
    }
    key += std::to_string(i);
    universe.push_back(std::move(key));
  }
  for (int step = 0; step < 200000; ++step) {
    const std::string& key = universe[rng() % universe.size()];
    auto it = model.find(key);
    if (rng() % 3 == 0 && it != model.end()) {
      table.Erase(it->second);
      model.erase(it);
    } else {
      bool inserted = false;
      const uint32_t id = table.Insert(key, &inserted);
      EXPECT_EQ(inserted, it == model.end());
      if (it != model.end()) {
        EXPECT_EQ(id, it->second);
      }
      model[key] = id;
    }
    if (step % 997 == 0) {
      table.MaybeCompact();
    }
  }
  ASSERT_EQ(table.size(), model.size());
  size_t bytes = 0;
  for (const auto& [key, id] : model) {
    ASSERT_TRUE(table.live(id));
    EXPECT_EQ(table.key(id), key);
    EXPECT_EQ(table.Find(key), id);
    bytes += key.size();
  }
  EXPECT_EQ(table.key_bytes(), bytes);
  for (const std::string& key : universe) {
    if (model.count(key) == 0) {
      EXPECT_EQ(table.Find(key), KeyTable::kNoKey);
    }
  }
  // Ids are reused: never more than the most keys held at once plus the free ones.
  EXPECT_LE(table.id_limit(), universe.size());
}

TEST(KeyTableTest, ReserveAndClear) {
  KeyTable table;
  table.Reserve(100000, 900000);
  const size_t reserved = table.MemoryBytes();
  bool inserted = false;
  for (int i = 0; i < 100000; ++i) {
    table.Insert("k" + std::to_string(i), &inserted);
    ASSERT_TRUE(inserted);
  }
  EXPECT_EQ(table.MemoryBytes(), reserved);  // no growth
  EXPECT_EQ(table.Find("k99999"), 99999u);
  table.Clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.Find("k1"), KeyTable::kNoKey);
  EXPECT_EQ(table.Insert("k1", &inserted), 0u);
}

}  // namespace
}  // namespace ferry::pipeline
