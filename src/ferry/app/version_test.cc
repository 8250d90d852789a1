#include "ferry/app/version.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace ferry::app {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

// The layout bug reports, help2man (the first line) and tests/package/package_test.sh read.
TEST(VersionTest, NamesVersionCommitAndLibraries) {
  std::vector<std::string> lines = Lines(VersionText());
  ASSERT_GE(lines.size(), 5u) << VersionText();
  EXPECT_EQ(lines[0], std::string("ferry ") + FERRY_VERSION);
  EXPECT_TRUE(std::regex_match(lines[1], std::regex("commit ([0-9a-f]{12}(-dirty)?|unknown)")))
      << lines[1];
  EXPECT_EQ(lines[1], std::string("commit ") + BuildCommit());
  const std::regex version("[0-9]+\\.[0-9]+\\.[0-9]+.*");
  const char* libraries[] = {"librdkafka ", "nats.c ", "zstd "};
  for (int i = 0; i < 3; ++i) {
    const std::string prefix = libraries[i];
    const std::string& line = lines[static_cast<size_t>(2 + i)];
    ASSERT_EQ(line.substr(0, prefix.size()), prefix) << line;
    EXPECT_TRUE(std::regex_match(line.substr(prefix.size()), version)) << line;
  }
#if defined(FERRY_FAILPOINTS_ENABLED)
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[5], "failpoints compiled in (a test build, not a release)");
#else
  EXPECT_EQ(lines.size(), 5u);
#endif
}

}  // namespace
}  // namespace ferry::app
