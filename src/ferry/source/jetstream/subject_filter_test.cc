#include "ferry/source/jetstream/subject_filter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ferry::source::jetstream {
namespace {

TEST(SubjectFilterTest, Validates) {
  for (const char* good : {"a", "a.b", "a.*", "a.>", ">", "*", "*.b.>", "newsub"}) {
    EXPECT_TRUE(ValidateSubjectFilter(good).ok()) << good;
  }
  for (const char* bad : {"", ".", "a.", ".a", "a..b", "a b", "a.>.b", "a*", "a.b>", "a.\t"}) {
    EXPECT_EQ(ValidateSubjectFilter(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(SubjectFilterTest, Covers) {
  EXPECT_TRUE(SubjectFilterCovers("a", "a"));
  EXPECT_FALSE(SubjectFilterCovers("a", "b"));
  EXPECT_TRUE(SubjectFilterCovers("a.*", "a.b"));
  EXPECT_TRUE(SubjectFilterCovers("a.*", "a.*"));
  EXPECT_FALSE(SubjectFilterCovers("a.b", "a.*"));
  EXPECT_FALSE(SubjectFilterCovers("a.*", "a.>"));
  EXPECT_TRUE(SubjectFilterCovers("a.>", "a.>"));
  EXPECT_TRUE(SubjectFilterCovers("a.>", "a.b.c"));
  EXPECT_TRUE(SubjectFilterCovers("a.>", "a.*.c"));
  EXPECT_FALSE(SubjectFilterCovers("a.>", "a"));
  EXPECT_TRUE(SubjectFilterCovers(">", "a.b"));
  EXPECT_FALSE(SubjectFilterCovers("a.*", "a.b.c"));
  EXPECT_FALSE(SubjectFilterCovers("a.b.c", "a.b"));
}

TEST(SubjectFilterTest, Overlap) {
  EXPECT_TRUE(SubjectFiltersOverlap("a", "a"));
  EXPECT_FALSE(SubjectFiltersOverlap("a", "b"));
  EXPECT_TRUE(SubjectFiltersOverlap("a.*", "a.b"));
  EXPECT_TRUE(SubjectFiltersOverlap("*.b", "a.*"));
  EXPECT_FALSE(SubjectFiltersOverlap("a.*", "b.*"));
  EXPECT_TRUE(SubjectFiltersOverlap("a.>", "a.b.c"));
  EXPECT_FALSE(SubjectFiltersOverlap("a.>", "a"));
  EXPECT_FALSE(SubjectFiltersOverlap("a.*", "a.b.c"));
  EXPECT_TRUE(SubjectFiltersOverlap(">", "x"));
  EXPECT_FALSE(SubjectFiltersOverlap("orders.eu", "orders.us"));
}

TEST(SubjectFilterTest, CoversAll) {
  std::vector<std::string> one = {"newsub"};
  std::vector<std::string> two = {"a.*", "b"};
  std::vector<std::string> none;
  EXPECT_TRUE(FilterCoversAll("newsub", one));
  EXPECT_TRUE(FilterCoversAll(">", two));
  EXPECT_TRUE(FilterCoversAll(">", none));
  EXPECT_FALSE(FilterCoversAll("a.*", two));
  EXPECT_FALSE(FilterCoversAll("a.x", none));
}

}  // namespace
}  // namespace ferry::source::jetstream
