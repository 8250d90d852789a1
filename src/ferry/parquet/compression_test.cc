#include "ferry/parquet/compression.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

#include <lz4.h>
#include <lz4frame.h>

namespace ferry::parquet {
namespace {

std::string SampleData(size_t n) {
  std::mt19937 rng(42);
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    // Compressible but not trivial.
    s.push_back(static_cast<char>('a' + (rng() % 7) + (i % 100 < 50 ? 0 : 10)));
  }
  return s;
}

const CompressionCodec kAllCodecs[] = {CompressionCodec::kUncompressed, CompressionCodec::kSnappy,
                                       CompressionCodec::kGzip,         CompressionCodec::kBrotli,
                                       CompressionCodec::kZstd,         CompressionCodec::kLz4Raw,
                                       CompressionCodec::kLz4};

TEST(CompressionTest, RoundTripEveryCodec) {
  for (CompressionCodec c : kAllCodecs) {
    auto codec = Codec::Create(c);
    ASSERT_TRUE(codec.ok());
    for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{300000}}) {
      std::string input = SampleData(n);
      std::string compressed;
      ASSERT_TRUE((*codec)->Compress(input, &compressed).ok()) << CompressionCodecName(c);
      if (n == 300000 && c != CompressionCodec::kUncompressed) {
        EXPECT_LT(compressed.size(), input.size()) << CompressionCodecName(c);
      }
      std::string output;
      Status s = (*codec)->Decompress(compressed, input.size(), &output);
      ASSERT_TRUE(s.ok()) << CompressionCodecName(c) << " " << n << ": " << s.ToString();
      EXPECT_EQ(output, input) << CompressionCodecName(c);
    }
  }
}

// CompressToBuffer (what the writer uses) gives the bytes Compress gives, for every codec and size,
// including random bytes whose ZSTD frame is close to the compress bound, and a buffer reused
// for a smaller input holds only the new bytes.
TEST(CompressionTest, CompressToBufferEqualsCompress) {
  std::mt19937 rng(7);
  std::string random(200000, '\0');
  for (char& c : random) {
    c = static_cast<char>(rng());
  }
  for (CompressionCodec c : kAllCodecs) {
    SCOPED_TRACE(CompressionCodecName(c));
    auto codec = Codec::Create(c);
    ASSERT_TRUE(codec.ok());
    ByteBuffer buffer;
    for (const std::string& input :
         {SampleData(300000), random, SampleData(0), SampleData(1), SampleData(5000)}) {
      std::string expected;
      ASSERT_TRUE((*codec)->Compress(input, &expected).ok());
      ASSERT_TRUE((*codec)->CompressToBuffer(input, &buffer).ok());
      EXPECT_TRUE(buffer.view() == expected) << input.size();
      std::string back;
      ASSERT_TRUE((*codec)->Decompress(buffer.view(), input.size(), &back).ok());
      EXPECT_TRUE(back == input) << input.size();
    }
  }
}

// CompressInto (the writer's page arena) writes what Compress writes, within the bound, for the
// codecs that offer it; the others say so with a bound of 0.
TEST(CompressionTest, CompressIntoEqualsCompress) {
  std::mt19937 rng(11);
  std::string random(200000, '\0');
  for (char& c : random) {
    c = static_cast<char>(rng());
  }
  for (CompressionCodec c : kAllCodecs) {
    SCOPED_TRACE(CompressionCodecName(c));
    auto codec = Codec::Create(c);
    ASSERT_TRUE(codec.ok());
    bool can = c == CompressionCodec::kZstd || c == CompressionCodec::kSnappy ||
               c == CompressionCodec::kLz4Raw || c == CompressionCodec::kUncompressed;
    EXPECT_EQ((*codec)->MaxCompressedSize(1000) > 0, can);
    if (!can) {
      continue;
    }
    for (const std::string& input : {SampleData(300000), random, SampleData(0), SampleData(7)}) {
      size_t bound = (*codec)->MaxCompressedSize(input.size());
      ASSERT_GT(bound, 0u);
      std::string room(bound, '\0');
      Result<size_t> n = (*codec)->CompressInto(input, room.data(), room.size());
      ASSERT_TRUE(n.ok()) << n.status().ToString();
      ASSERT_LE(*n, bound);
      std::string expected;
      ASSERT_TRUE((*codec)->Compress(input, &expected).ok());
      EXPECT_TRUE(room.substr(0, *n) == expected) << input.size();
    }
  }
}

TEST(CompressionTest, WrongDeclaredSizeIsDataLoss) {
  std::string input = SampleData(10000);
  for (CompressionCodec c : kAllCodecs) {
    auto codec = Codec::Create(c);
    ASSERT_TRUE(codec.ok());
    std::string compressed;
    ASSERT_TRUE((*codec)->Compress(input, &compressed).ok());
    std::string out;
    // A header that understates the size (a bomb) and one that overstates it (a lie).
    for (size_t declared : {input.size() - 1, input.size() / 100, input.size() + 1}) {
      Status s = (*codec)->Decompress(compressed, declared, &out);
      EXPECT_EQ(s.code(), StatusCode::kDataLoss) << CompressionCodecName(c) << " " << declared;
    }
  }
}

TEST(CompressionTest, DecompressionBombNeverAllocatesMore) {
  // 100 MB of zeros compress to a few KB; declared as 1 KB, decompression must fail without
  // producing more than 1 KB.
  std::string zeros(100 << 20, '\0');
  for (CompressionCodec c :
       {CompressionCodec::kZstd, CompressionCodec::kGzip, CompressionCodec::kSnappy,
        CompressionCodec::kLz4Raw, CompressionCodec::kBrotli}) {
    auto codec = Codec::Create(c);
    ASSERT_TRUE(codec.ok());
    std::string compressed;
    ASSERT_TRUE((*codec)->Compress(zeros, &compressed).ok());
    std::string out;
    EXPECT_FALSE((*codec)->Decompress(compressed, 1024, &out).ok()) << CompressionCodecName(c);
    EXPECT_LE(out.capacity(), size_t{1} << 20);
  }
}

TEST(CompressionTest, GarbageInputIsDataLossForEveryCodec) {
  std::string garbage = SampleData(500);
  for (CompressionCodec c : kAllCodecs) {
    if (c == CompressionCodec::kUncompressed) {
      continue;
    }
    auto codec = Codec::Create(c);
    ASSERT_TRUE(codec.ok());
    std::string out;
    EXPECT_FALSE((*codec)->Decompress(garbage, 2000, &out).ok()) << CompressionCodecName(c);
    // Truncations of a valid stream.
    std::string compressed;
    ASSERT_TRUE((*codec)->Compress(SampleData(5000), &compressed).ok());
    for (size_t cut = 0; cut < compressed.size(); cut += 7) {
      EXPECT_FALSE((*codec)->Decompress(compressed.substr(0, cut), 5000, &out).ok())
          << CompressionCodecName(c) << " cut " << cut;
    }
  }
}

TEST(CompressionTest, GzipAcceptsConcatenatedMembers) {
  auto codec = Codec::Create(CompressionCodec::kGzip);
  ASSERT_TRUE(codec.ok());
  std::string a = SampleData(3000);
  std::string b = "second member";
  std::string ca;
  std::string cb;
  ASSERT_TRUE((*codec)->Compress(a, &ca).ok());
  ASSERT_TRUE((*codec)->Compress(b, &cb).ok());
  std::string out;
  ASSERT_TRUE((*codec)->Decompress(ca + cb, a.size() + b.size(), &out).ok());
  EXPECT_EQ(out, a + b);
}

TEST(CompressionTest, GzipAcceptsZlibWrapper) {
  std::string input = SampleData(4000);
  uLongf n = compressBound(static_cast<uLong>(input.size()));
  std::string z(n, '\0');
  ASSERT_EQ(
      compress(reinterpret_cast<Bytef*>(z.data()), &n, reinterpret_cast<const Bytef*>(input.data()),
               static_cast<uLong>(input.size())),
      Z_OK);
  z.resize(n);
  auto codec = Codec::Create(CompressionCodec::kGzip);
  std::string out;
  ASSERT_TRUE((*codec)->Decompress(z, input.size(), &out).ok());
  EXPECT_EQ(out, input);
}

TEST(CompressionTest, LegacyLz4AcceptsFrameAndRawBlock) {
  std::string input = SampleData(7000);
  auto codec = Codec::Create(CompressionCodec::kLz4);
  ASSERT_TRUE(codec.ok());
  std::string out;

  std::string raw(static_cast<size_t>(LZ4_compressBound(static_cast<int>(input.size()))), '\0');
  int n = LZ4_compress_default(input.data(), raw.data(), static_cast<int>(input.size()),
                               static_cast<int>(raw.size()));
  raw.resize(static_cast<size_t>(n));
  ASSERT_TRUE((*codec)->Decompress(raw, input.size(), &out).ok());
  EXPECT_EQ(out, input);

  std::string frame(LZ4F_compressFrameBound(input.size(), nullptr), '\0');
  size_t fn = LZ4F_compressFrame(frame.data(), frame.size(), input.data(), input.size(), nullptr);
  ASSERT_FALSE(LZ4F_isError(fn));
  frame.resize(fn);
  ASSERT_TRUE((*codec)->Decompress(frame, input.size(), &out).ok());
  EXPECT_EQ(out, input);

  // Hadoop framing with two blocks.
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  std::string first = input.substr(0, 3000);
  std::string second = input.substr(3000);
  std::string hadoop;
  for (const std::string& part : {first, second}) {
    std::string block(static_cast<size_t>(LZ4_compressBound(static_cast<int>(part.size()))), '\0');
    int bn = LZ4_compress_default(part.data(), block.data(), static_cast<int>(part.size()),
                                  static_cast<int>(block.size()));
    block.resize(static_cast<size_t>(bn));
    hadoop += be32(static_cast<uint32_t>(part.size())) + be32(static_cast<uint32_t>(bn)) + block;
  }
  ASSERT_TRUE((*codec)->Decompress(hadoop, input.size(), &out).ok());
  EXPECT_EQ(out, input);
}

TEST(CompressionTest, ZstdLevelChangesOutput) {
  std::string input = SampleData(200000);
  auto fast = Codec::Create(CompressionCodec::kZstd, 1);
  auto strong = Codec::Create(CompressionCodec::kZstd, 19);
  std::string a;
  std::string b;
  ASSERT_TRUE((*fast)->Compress(input, &a).ok());
  ASSERT_TRUE((*strong)->Compress(input, &b).ok());
  EXPECT_NE(a, b);
  EXPECT_LE(b.size(), a.size());
}

TEST(CompressionTest, LzoIsNotSupported) {
  EXPECT_EQ(Codec::Create(CompressionCodec::kLzo).status().code(), StatusCode::kNotSupported);
}

TEST(CompressionTest, ParsesCodecNames) {
  EXPECT_EQ(*ParseCompressionCodec("ZSTD"), CompressionCodec::kZstd);
  EXPECT_EQ(*ParseCompressionCodec("lz4_raw"), CompressionCodec::kLz4Raw);
  EXPECT_EQ(*ParseCompressionCodec("none"), CompressionCodec::kUncompressed);
  EXPECT_FALSE(ParseCompressionCodec("lzma").ok());
}

}  // namespace
}  // namespace ferry::parquet
