#include "ferry/base/status.h"

#include <gtest/gtest.h>

#include "ferry/base/result.h"

namespace ferry {
namespace {

TEST(StatusTest, OkIsCheapAndEmpty) {
  Status st;
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kOk);
  EXPECT_EQ(st.ToString(), "OK");
  EXPECT_TRUE(st.WithContext("ignored").ok());
}

TEST(StatusTest, FactoriesFormatAndContextPrepends) {
  Status st = InvalidArgument("{}:{}: unknown key '{}'", "ferry.toml", 7, "bathc");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "ferry.toml:7: unknown key 'bathc'");
  Status wrapped = st.WithContext("pipeline {}", "events");
  EXPECT_EQ(wrapped.ToString(),
            "InvalidArgument: pipeline events: ferry.toml:7: unknown key 'bathc'");
  EXPECT_EQ(st.message(), "ferry.toml:7: unknown key 'bathc'");  // original unchanged
}

TEST(StatusTest, ErrnoMapsCodes) {
  EXPECT_EQ(ErrnoStatus(ENOENT, "open", "/x").code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus(EEXIST, "link", "/x").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(ErrnoStatus(ENOSPC, "write", "/x").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(ErrnoStatus(EIO, "fsync", "/x").code(), StatusCode::kIOError);
  EXPECT_NE(ErrnoStatus(EIO, "fsync", "/x").message().find("fsync /x"), std::string::npos);
}

TEST(StatusTest, DataLossUnlessRetryableKeepsWhatARetryCanMend) {
  // The store did not answer, the disk failed, the call was stopped: the code stays, for a retry.
  for (const Status& st : {Unavailable("503 Slow Down"), IOError("read: EIO"), Cancelled("stop")}) {
    Status out = DataLossUnlessRetryable(st, "live file is unreadable");
    EXPECT_EQ(out.code(), st.code()) << out.ToString();
    EXPECT_EQ(out.message(), "live file is unreadable: " + st.message());
  }
  // Missing or damaged: lost data, naming what and the first error whole.
  Status lost =
      DataLossUnlessRetryable(NotFound("no such key t/part-1.parquet"), "live file is unreadable");
  EXPECT_EQ(lost.code(), StatusCode::kDataLoss);
  EXPECT_EQ(lost.message(), "live file is unreadable: NotFound: no such key t/part-1.parquet");
  EXPECT_EQ(DataLossUnlessRetryable(InvalidArgument("bad footer"), "x").code(),
            StatusCode::kDataLoss);
  EXPECT_TRUE(DataLossUnlessRetryable(Status::OK(), "x").ok());
}

Result<int> Half(int x) {
  if (x % 2 != 0) {
    return InvalidArgument("{} is odd", x);
  }
  return x / 2;
}

Status Quarter(int x, int* out) {
  FERRY_ASSIGN_OR_RETURN(int h, Half(x));
  FERRY_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::OK();
}

TEST(ResultTest, AssignOrReturnPropagates) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status st = Quarter(6, &out);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "3 is odd");
}

TEST(ResultTest, MoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 5);
}

TEST(ResultDeathTest, ValueOfErrorAborts) {
  Result<int> r = Internal("boom");
  EXPECT_DEATH((void)r.value(), "boom");
}

}  // namespace
}  // namespace ferry
