#include "ferry/base/json_escape.h"

#include <gtest/gtest.h>

#include <string>

namespace ferry {
namespace {

std::string Escaped(std::string_view text) {
  std::string out = "<";
  AppendJsonEscaped(text, &out);
  return out;
}

TEST(JsonEscapeTest, QuotesBackslashesAndNamedControls) {
  EXPECT_EQ(Escaped("a\"b\\c\nd\re\tf"), "<a\\\"b\\\\c\\nd\\re\\tf");
}

TEST(JsonEscapeTest, OtherControlsAsUnicodeEscapes) {
  EXPECT_EQ(Escaped(std::string_view("\x00\x01\x1f ", 4)), "<\\u0000\\u0001\\u001f ");
}

TEST(JsonEscapeTest, Utf8AndDeleteCopiedAsTheyAre) {
  EXPECT_EQ(Escaped("h\xc3\xa9\x7f/"), "<h\xc3\xa9\x7f/");
}

}  // namespace
}  // namespace ferry
