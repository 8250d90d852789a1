#include "ferry/http/digest.h"

#include <gtest/gtest.h>

namespace ferry::http {
namespace {

TEST(DigestTest, KnownVectors) {
  // FIPS 180-2 and RFC 1321 test vectors.
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HexEncode(Md5("")), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(HexEncode(Md5("message digest")), "f96b697d7cb7938d525a2f31aaf161d0");
  // RFC 4231 test case 2.
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // The body of the S3 PutObject signing example.
  EXPECT_EQ(Sha256Hex("Welcome to Amazon S3."),
            "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
}

TEST(DigestTest, ContentMd5IsBase64OfTheDigest) {
  EXPECT_EQ(ContentMd5(""), "1B2M2Y8AsgTpgAmY7PhCfg==");
  EXPECT_EQ(ContentMd5("hello world"), "XrY7u+Ae7tCTyyK7j1rNww==");
}

TEST(DigestTest, Md5StreamMatchesOneShot) {
  std::string data(100'000, 'x');
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>(i * 31 + 7);
  }
  Md5Stream s;
  for (size_t off = 0; off < data.size(); off += 4093) {
    s.Update(std::string_view(data).substr(off, 4093));
  }
  EXPECT_EQ(s.Finish(), Md5(data));
  s.Update("message digest");  // starts over after Finish
  EXPECT_EQ(HexEncode(s.Finish()), "f96b697d7cb7938d525a2f31aaf161d0");
}

// RFC 3720's check value, and what GCS (fake-gcs-server) reports for "hello\n"; any split of
// the data gives the same CRC.
TEST(DigestTest, Crc32cKnownValuesAndPieces) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32cBase64(Crc32c("hello\n")), "NT3Yvg==");
  std::string data;
  for (int i = 0; i < 1000; ++i) {
    data.push_back(static_cast<char>(i * 31 + i / 7));
  }
  const uint32_t whole = Crc32c(data);
  for (size_t cut : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    EXPECT_EQ(
        Crc32c(std::string_view(data).substr(cut), Crc32c(std::string_view(data).substr(0, cut))),
        whole)
        << cut;
  }
}

TEST(HttpBase64Test, RoundTripsEveryLength) {
  // RFC 4648 section 10.
  EXPECT_EQ(Base64Encode(std::string_view("")), "");
  EXPECT_EQ(Base64Encode(std::string_view("f")), "Zg==");
  EXPECT_EQ(Base64Encode(std::string_view("fo")), "Zm8=");
  EXPECT_EQ(Base64Encode(std::string_view("foobar")), "Zm9vYmFy");
  std::string bytes;
  for (int n = 0; n < 70; ++n) {
    std::string out;
    ASSERT_TRUE(Base64Decode(Base64Encode(bytes), &out)) << n;
    EXPECT_EQ(out, bytes);
    bytes.push_back(static_cast<char>(n * 37));
  }
  std::string out;
  EXPECT_FALSE(Base64Decode("Zm9v!mFy", &out));
  EXPECT_FALSE(Base64Decode("Zh==", &out));  // non-zero padding bits
  EXPECT_FALSE(Base64Decode("Z", &out));
}

}  // namespace
}  // namespace ferry::http
