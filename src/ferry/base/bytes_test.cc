#include "ferry/base/bytes.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace ferry {
namespace {

// Against std::string_view's own order on strings with long shared prefixes, bytes >= 0x80,
// NULs and prefixes of each other.
TEST(BytesTest, BytesLessIsStringViewOrder) {
  std::mt19937 rng(7);
  const char alphabet[] = {'\0', 'a', 'b', '\x7f', '\x80', '\xff'};
  auto make = [&] {
    std::string s(rng() % 20, 'a');
    for (char& c : s) {
      c = alphabet[rng() % sizeof(alphabet)];
    }
    return s;
  };
  for (int i = 0; i < 20000; ++i) {
    std::string a = make();
    std::string b = i % 3 == 0 ? a.substr(0, rng() % (a.size() + 1)) : make();
    if (i % 5 == 0 && !b.empty()) {
      a = b + a;  // a long shared prefix
    }
    EXPECT_EQ(BytesLess(a, b), std::string_view(a) < std::string_view(b)) << i;
    EXPECT_EQ(BytesLess(b, a), std::string_view(b) < std::string_view(a)) << i;
  }
}

}  // namespace
}  // namespace ferry
