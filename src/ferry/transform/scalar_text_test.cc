// Tests of the text helpers under the decoders: exact number text, base64, UTF-8, JSON syntax.
#include <gtest/gtest.h>

#include "ferry/transform/base64.h"
#include "ferry/transform/json_syntax.h"
#include "ferry/transform/number_text.h"
#include "ferry/transform/row_text_for_test.h"
#include "ferry/transform/utf8.h"

namespace ferry::transform {
namespace {

using columnar::Int128;

std::string Dec(std::string_view text, int32_t precision, int32_t scale, bool lenient = false) {
  Int128 v = 0;
  switch (ParseDecimalText(text, lenient, precision, scale, &v)) {
    case NumberTextError::kOk:
      return DecimalText(v, scale);
    case NumberTextError::kSyntax:
      return "syntax";
    case NumberTextError::kOverflow:
      return "overflow";
    default:
      return "fraction";
  }
}

TEST(NumberTextTest, DecimalsExactAndRoundedHalfUp) {
  EXPECT_EQ(Dec("0.1", 3, 2), "0.10");
  EXPECT_EQ(Dec("-0.125", 5, 2), "-0.13");
  EXPECT_EQ(Dec("0.124999999999999999999999", 5, 2), "0.12");
  EXPECT_EQ(Dec("1e2", 5, 0), "100");
  EXPECT_EQ(Dec("1.5E-1", 5, 3), "0.150");
  EXPECT_EQ(Dec("5e-1", 5, 0), "1");
  EXPECT_EQ(Dec("4e-1", 5, 0), "0");
  EXPECT_EQ(Dec("1e-400", 5, 2), "0.00");
  EXPECT_EQ(Dec("0e400", 5, 2), "0.00");
  EXPECT_EQ(Dec("1e400", 38, 0), "overflow");
  EXPECT_EQ(Dec("99999999999999999999999999999999999999", 38, 0),
            "99999999999999999999999999999999999999");
  EXPECT_EQ(Dec("100000000000000000000000000000000000000", 38, 0), "overflow");
  EXPECT_EQ(Dec("999.995", 5, 2), "overflow");
  EXPECT_EQ(Dec("01", 5, 0), "syntax");
  EXPECT_EQ(Dec("1.", 5, 0), "syntax");
  EXPECT_EQ(Dec(".5", 5, 1), "syntax");
  EXPECT_EQ(Dec(" +01.50 ", 5, 2, true), "1.50");
  EXPECT_EQ(Dec(".5", 5, 1, true), "0.5");
  EXPECT_EQ(Dec("1e", 5, 0, true), "syntax");
  EXPECT_EQ(Dec("--1", 5, 0, true), "syntax");
}

TEST(NumberTextTest, IntegersAndDoubles) {
  Int128 v = 0;
  EXPECT_EQ(ParseIntegerText("-9223372036854775808", false, INT64_MIN, INT64_MAX, &v),
            NumberTextError::kOk);
  EXPECT_TRUE(v == INT64_MIN);
  EXPECT_EQ(ParseIntegerText("9223372036854775808", false, INT64_MIN, INT64_MAX, &v),
            NumberTextError::kOverflow);
  EXPECT_EQ(ParseIntegerText("2.55e1", false, 0, 100, &v), NumberTextError::kFraction);
  EXPECT_EQ(ParseIntegerText("2.500e3", false, 0, 10000, &v), NumberTextError::kOk);
  EXPECT_TRUE(v == 2500);
  double d = 0;
  EXPECT_EQ(ParseDoubleText(" 2.5e3 ", &d), NumberTextError::kOk);
  EXPECT_EQ(d, 2500.0);
  EXPECT_EQ(ParseDoubleText("0x10", &d), NumberTextError::kSyntax);
  EXPECT_EQ(ParseDoubleText("inf", &d), NumberTextError::kSyntax);
  EXPECT_EQ(ParseDoubleText("-Infinity", &d), NumberTextError::kOk);
  EXPECT_LT(d, 0);
}

TEST(Base64Test, RoundTripsAndRejects) {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    std::string out;
    ASSERT_TRUE(DecodeBase64(EncodeBase64(s), &out)) << s;
    EXPECT_EQ(out, s);
  }
  EXPECT_EQ(EncodeBase64("hi"), "aGk=");
  std::string out;
  EXPECT_TRUE(DecodeBase64("aGk", &out));
  EXPECT_FALSE(DecodeBase64("aGl=", &out));  // non-zero leftover bits
  EXPECT_FALSE(DecodeBase64("a", &out));
  EXPECT_FALSE(DecodeBase64("aG k", &out));
  EXPECT_FALSE(DecodeBase64("a===", &out));
}

TEST(Utf8Test, ValidationAndCodePoints) {
  EXPECT_TRUE(IsValidUtf8("h\xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // beyond U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("ab\xe2\x82"), 2u);
  EXPECT_EQ(FindInvalidUtf8("ok"), std::string_view::npos);
  EXPECT_EQ(CountCodePoints("h\xc3\xa9\xf0\x9f\x98\x80"), 3u);
  EXPECT_EQ(CodePointOffset("h\xc3\xa9x", 2), 3u);
  size_t pos = 1;
  EXPECT_EQ(NextCodePoint("h\xc3\xa9", &pos), 0xE9u);
  std::string s;
  AppendCodePoint(0x1F600, &s);
  EXPECT_EQ(s, "\xf0\x9f\x98\x80");
}

TEST(JsonSyntaxTest, StrictAndIterative) {
  std::string err;
  for (const char* ok :
       {"1", "-0.5e+3", "\"a\\u00e9\\n\"", "[]", "{}", " [1, {\"a\": [null]}] ", "true"}) {
    EXPECT_TRUE(CheckJsonSyntax(ok, 100, &err)) << ok << ": " << err;
  }
  for (const char* bad : {"tru", "[1,]", "{\"a\" 1}", "[1}", "01", "1.", "\"\\x\"", "\"a", "[",
                          "1 2", "{\"a\":1,}", "-", "\"\x01\""}) {
    EXPECT_FALSE(CheckJsonSyntax(bad, 100, &err)) << bad;
  }
  std::string deep(100000, '[');
  EXPECT_FALSE(CheckJsonSyntax(deep + std::string(100000, ']'), 1000, &err));
  EXPECT_EQ(err, "nesting deeper than 1000 at offset 1000");
}

}  // namespace
}  // namespace ferry::transform
