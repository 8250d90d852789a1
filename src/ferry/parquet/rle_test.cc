#include "ferry/parquet/rle.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace ferry::parquet {
namespace {

std::vector<uint32_t> Decode(const std::string& bytes, int bit_width, size_t n) {
  RleBpDecoder d(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), bit_width);
  std::vector<uint32_t> out(n + 10);
  Result<int64_t> got = d.GetBatch(out.data(), static_cast<int64_t>(n));
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  out.resize(got.ok() ? static_cast<size_t>(*got) : 0);
  return out;
}

TEST(RleTest, BitWidth) {
  EXPECT_EQ(BitWidth(0), 0);
  EXPECT_EQ(BitWidth(1), 1);
  EXPECT_EQ(BitWidth(2), 2);
  EXPECT_EQ(BitWidth(255), 8);
  EXPECT_EQ(BitWidth(256), 9);
  EXPECT_EQ(BitWidth(0xFFFFFFFFu), 32);
}

// The example of parquet-format Encodings.md: values 0..7 with bit width 3 bit-pack to
// 0x88 0xC6 0xFA.
TEST(RleTest, BitPackMatchesSpecExample) {
  std::vector<uint32_t> v = {0, 1, 2, 3, 4, 5, 6, 7};
  std::string out;
  BitPack(v.data(), v.size(), 3, &out);
  EXPECT_EQ(out, std::string("\x88\xC6\xFA", 3));
  std::vector<uint32_t> back(8);
  BitUnpack(reinterpret_cast<const uint8_t*>(out.data()), 8, 3, back.data());
  EXPECT_EQ(back, v);
}

TEST(RleTest, EncodesRunsAsRle) {
  std::vector<uint16_t> v(100, 1);
  std::string out;
  RleBpEncode(v.data(), v.size(), 1, &out);
  // One RLE run: header varint(100 << 1) = 0xC8 0x01, value byte 0x01.
  EXPECT_EQ(out, std::string("\xC8\x01\x01", 3));
}

TEST(RleTest, LiteralRunsAreWholeGroups) {
  std::vector<uint16_t> v = {1, 0, 1};
  std::string out;
  RleBpEncode(v.data(), v.size(), 1, &out);
  // Header (1 << 1) | 1 = 3, then 0b101 padded.
  EXPECT_EQ(out, std::string("\x03\x05", 2));
}

TEST(RleTest, RoundTripRandomPatterns) {
  std::mt19937 rng(7);
  for (int bit_width : {0, 1, 2, 3, 5, 8, 13, 16, 20, 31, 32}) {
    for (int trial = 0; trial < 20; ++trial) {
      size_t n = rng() % 3000;
      uint64_t max = bit_width == 0 ? 0 : (uint64_t{1} << bit_width) - 1;
      std::vector<uint32_t> v(n);
      for (size_t i = 0; i < n;) {
        // Alternate runs of repeats and random stretches.
        size_t len = 1 + rng() % 40;
        bool repeat = rng() % 2 == 0;
        auto x = static_cast<uint32_t>(rng() & max);
        for (size_t k = 0; k < len && i < n; ++k, ++i) {
          v[i] = repeat ? x : static_cast<uint32_t>(rng() & max);
        }
      }
      std::string out;
      RleBpEncode(v.data(), v.size(), bit_width, &out);
      EXPECT_LE(out.size(), RleBpMaxSize(n, bit_width));
      EXPECT_EQ(Decode(out, bit_width, n), v) << "bw " << bit_width << " n " << n;
    }
  }
}

TEST(RleTest, DecodesInSmallBatches) {
  std::vector<int16_t> v;
  for (int i = 0; i < 1000; ++i) {
    v.push_back(static_cast<int16_t>((i / 13) % 3 == 0 ? 2 : i % 3));
  }
  std::string out;
  RleBpEncode(v.data(), v.size(), 2, &out);
  RleBpDecoder d(reinterpret_cast<const uint8_t*>(out.data()), out.size(), 2);
  std::vector<int16_t> got;
  int16_t buf[7];
  while (true) {
    Result<int64_t> k = d.GetBatch(buf, 7);
    ASSERT_TRUE(k.ok());
    if (*k == 0) {
      break;
    }
    got.insert(got.end(), buf, buf + *k);
  }
  // The last group is padded with zeros up to a multiple of 8.
  ASSERT_GE(got.size(), v.size());
  got.resize(v.size());
  EXPECT_EQ(got, v);
}

// Bit-packed values are read with 8-byte loads while 8 bytes of the run remain and with shorter
// loads at its end: every width, run lengths around the edge, in batches of several sizes.
TEST(RleTest, LiteralRunsDecodeUpToTheirLastByteInAnyBatchSize) {
  std::mt19937 rng(11);
  for (int bit_width = 1; bit_width <= 32; ++bit_width) {
    uint64_t max = (uint64_t{1} << bit_width) - 1;
    for (size_t n : {1, 7, 8, 9, 16, 63, 64, 65, 200}) {
      std::vector<uint32_t> v(n);
      for (uint32_t& x : v) {
        x = static_cast<uint32_t>(rng() & max);
      }
      v[0] = static_cast<uint32_t>(max);  // the widest value, at a run's first bit
      v[n - 1] = static_cast<uint32_t>(max);
      std::string out;
      RleBpEncode(v.data(), v.size(), bit_width, &out);
      for (int64_t batch : {1, 3, 8, 1000}) {
        RleBpDecoder d(reinterpret_cast<const uint8_t*>(out.data()), out.size(), bit_width);
        std::vector<uint32_t> got;
        std::vector<uint32_t> buf(static_cast<size_t>(batch));
        while (got.size() < n) {
          Result<int64_t> k = d.GetBatch(buf.data(), batch);
          ASSERT_TRUE(k.ok());
          ASSERT_GT(*k, 0);
          got.insert(got.end(), buf.begin(), buf.begin() + *k);
        }
        got.resize(n);  // the last group's zero padding
        ASSERT_EQ(got, v) << "bit width " << bit_width << " n " << n << " batch " << batch;
      }
    }
  }
}

TEST(RleTest, DecoderIsBoundsChecked) {
  std::mt19937 rng(3);
  // Random garbage: never crash, values always < 2^bit_width.
  for (int trial = 0; trial < 500; ++trial) {
    std::string junk(rng() % 64, '\0');
    for (char& c : junk) {
      c = static_cast<char>(rng());
    }
    int bw = static_cast<int>(rng() % 33);
    RleBpDecoder d(reinterpret_cast<const uint8_t*>(junk.data()), junk.size(), bw);
    std::vector<uint32_t> out(4096);
    Result<int64_t> k = d.GetBatch(out.data(), 4096);
    if (k.ok() && bw < 32) {
      for (int64_t i = 0; i < *k; ++i) {
        ASSERT_LT(out[static_cast<size_t>(i)], uint32_t{1} << bw);
      }
    }
  }
  // A bit-packed run whose header claims more groups than there are bytes.
  std::string cut = "\x09\xFF";  // 4 groups of width 8 announced, 1 byte present
  EXPECT_EQ(Decode(cut, 8, 32).size(), 1u);
  // An RLE run without its value byte.
  std::string no_value = "\x10";
  RleBpDecoder d(reinterpret_cast<const uint8_t*>(no_value.data()), 1, 8);
  uint32_t x[8];
  EXPECT_FALSE(d.GetBatch(x, 8).ok());
  // An impossible bit width.
  RleBpDecoder bad(reinterpret_cast<const uint8_t*>(no_value.data()), 1, 40);
  EXPECT_FALSE(bad.GetBatch(x, 8).ok());
}

}  // namespace
}  // namespace ferry::parquet
