// StatsCollector: string bounds across batches compared as unsigned bytes, nulls counted.
#include "ferry/delta/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferry/columnar/column.h"

namespace ferry::delta {
namespace {

using columnar::DataType;
using columnar::Field;

columnar::RecordBatch StringBatch(const columnar::SchemaPtr& schema,
                                  const std::vector<std::optional<std::string>>& values) {
  auto batch = columnar::RecordBatch::MakeEmpty(schema);
  auto* column = batch.mutable_column(0)->As<columnar::BinaryColumn>();
  for (const auto& v : values) {
    if (v) {
      column->Append(*v);
    } else {
      column->AppendNull();
    }
  }
  return batch;
}

TEST(StatsCollectorTest, StringBoundsAreUnsignedByteOrderAcrossBatches) {
  auto schema = std::make_shared<const columnar::Schema>(
      std::vector<Field>{{"s", DataType::String(), true, {}}});
  // Values that differ in the first byte, share a prefix, are prefixes of each other, are empty,
  // or start with bytes >= 0x80 (which a signed char comparison would put first).
  std::vector<std::vector<std::optional<std::string>>> batches = {
      {"m", "\xc3\xa9t\xc3\xa9", std::nullopt, "ma", "b"},
      {"abc", std::nullopt, "ab", "\xc3\xa9", "zz"},
      {"", "ab\x7f", "\xff", "mb"},
  };
  StatsCollector stats(*schema, StatsOptions{});
  std::vector<std::string> all;
  int64_t nulls = 0;
  for (const auto& values : batches) {
    stats.Update(StringBatch(schema, values));
    for (const auto& v : values) {
      v ? all.push_back(*v) : void(++nulls);
    }
  }
  // std::string compares as unsigned bytes (char_traits<char>::compare is memcmp).
  std::string min = *std::min_element(all.begin(), all.end());
  std::string max = *std::max_element(all.begin(), all.end());
  EXPECT_EQ(min, "");
  EXPECT_EQ(max, "\xff");
  nlohmann::json json = nlohmann::json::parse(stats.ToJson(), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded()) << stats.ToJson();
  EXPECT_EQ(json["numRecords"], 14);
  EXPECT_EQ(json["nullCount"]["s"], nulls);
  EXPECT_EQ(json["minValues"]["s"], min);
  // "\xff" is not valid UTF-8: the max bound, if written, must not be below the real max.
  if (json["maxValues"].contains("s")) {
    EXPECT_GE(json["maxValues"]["s"].get<std::string>(), "\xc3\xa9t\xc3\xa9");
  }
}

TEST(StatsCollectorTest, StringBoundsOfOneBatchMatchASort) {
  auto schema = std::make_shared<const columnar::Schema>(
      std::vector<Field>{{"s", DataType::String(), false, {}}});
  std::vector<std::optional<std::string>> values;
  std::vector<std::string> plain;
  uint32_t x = 12345;
  for (int i = 0; i < 500; ++i) {
    x = x * 1103515245 + 12345;
    std::string v(1 + (x >> 8) % 5, 'a');
    for (char& c : v) {
      x = x * 1103515245 + 12345;
      c = static_cast<char>('a' + (x >> 16) % 3);  // few letters: many shared prefixes
    }
    values.push_back(v);
    plain.push_back(v);
  }
  StatsCollector stats(*schema, StatsOptions{});
  stats.Update(StringBatch(schema, values));
  nlohmann::json json = nlohmann::json::parse(stats.ToJson());
  std::sort(plain.begin(), plain.end());
  EXPECT_EQ(json["minValues"]["s"], plain.front());
  EXPECT_EQ(json["maxValues"]["s"], plain.back());
}

}  // namespace
}  // namespace ferry::delta
